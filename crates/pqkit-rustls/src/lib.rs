//! pqkit-rustls: a rustls 0.23 `CryptoProvider` with post-quantum key exchange and
//! ML-DSA authentication, built on rustls's aws-lc-rs provider.
//!
//! - Named groups ([`kx`]): X25519MLKEM768, SecP256r1MLKEM768, SecP384r1MLKEM1024 (RFC 10024)
//!   and MLKEM512/768/1024 (draft-ietf-tls-mlkem), on pqkit-core; X25519, secp256r1 and
//!   secp384r1 from aws-lc-rs for classical peers. On request, BIKE and FrodoKEM alone and as
//!   ECDHE hybrids at oqs-provider's code points ([`kx::other_kx_groups`]).
//! - Signature schemes ([`scheme`]): ML-DSA-44/65/87 (draft-ietf-tls-mldsa) for
//!   CertificateVerify ([`sign`]) and certificate chains ([`verify`]); ECDSA, Ed25519 and RSA
//!   from aws-lc-rs.
//! - TLS 1.3 only; cipher suites TLS_AES_256_GCM_SHA384, TLS_AES_128_GCM_SHA256,
//!   TLS_CHACHA20_POLY1305_SHA256 in that order.
//!
//! - [`session`]: one TLS 1.3 connection over TCP driven to completion, with its bytes counted
//!   at the socket and deadlines kept: what `pqkit server`, `pqkit client` and `pqkit bench`
//!   run.
//!
//! One call gives the provider: [`provider()`]. [`server_config`] and [`client_config`] build
//! mutually authenticated configurations from PEM-decoded certificates and keys.

pub mod ffdhe;
pub mod kx;
pub mod observe;
pub mod scheme;
pub mod session;
pub mod sign;
pub mod verify;

use std::sync::Arc;

use rustls::crypto::{CryptoProvider, SupportedKxGroup, aws_lc_rs};
use rustls::{ClientConfig, Error, ServerConfig};
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use crate::observe::PeerScheme;
use crate::verify::{ClientVerifier, ServerVerifier};

/// The pqkit provider: every pqkit named group (hybrids first), then X25519, secp256r1 and
/// secp384r1; pqkit's signature schemes before aws-lc-rs's.
pub fn provider() -> CryptoProvider {
    let groups: Vec<&'static dyn SupportedKxGroup> = kx::ALL_KX_GROUPS
        .iter()
        .map(|g| *g as &'static dyn SupportedKxGroup)
        .chain(CLASSICAL_GROUPS.iter().map(|(_, g)| *g))
        .collect();
    provider_with_groups(groups)
}

/// The pqkit provider restricted to `groups`, in that preference order.
pub fn provider_with_groups(groups: Vec<&'static dyn SupportedKxGroup>) -> CryptoProvider {
    let base = aws_lc_rs::default_provider();
    CryptoProvider {
        cipher_suites: vec![
            aws_lc_rs::cipher_suite::TLS13_AES_256_GCM_SHA384,
            aws_lc_rs::cipher_suite::TLS13_AES_128_GCM_SHA256,
            aws_lc_rs::cipher_suite::TLS13_CHACHA20_POLY1305_SHA256,
        ],
        kx_groups: groups,
        signature_verification_algorithms: verify::supported_algorithms(),
        key_provider: &sign::PqKeyProvider,
        ..base
    }
}

/// Finds a named group by name, alias or code point: pqkit's groups, the classical
/// X25519 / secp256r1 (P-256) / secp384r1 (P-384), or ffdhe3072 (RFC 7919; offered only when
/// named).
///
/// # Errors
/// [`pqkit_core::Error::UnknownAlgorithm`].
pub fn find_group(name: &str) -> Result<&'static dyn SupportedKxGroup, pqkit_core::Error> {
    let classical = CLASSICAL_GROUPS
        .iter()
        .find(|(names, _)| names.iter().any(|n| n.eq_ignore_ascii_case(name)));
    if let Some((_, g)) = classical {
        return Ok(*g);
    }
    let named_only = NAMED_ONLY_GROUPS
        .iter()
        .find(|(names, _)| names.iter().any(|n| n.eq_ignore_ascii_case(name)));
    if let Some((_, g)) = named_only {
        return Ok(*g);
    }
    Ok(kx::find(name)?)
}

/// The IANA name of a negotiated group (its code point in hex when pqkit does not know it).
pub fn group_name(group: &dyn SupportedKxGroup) -> String {
    let wire = u16::from(group.name());
    kx::every_kx_group()
        .find(|g| g.group.code_point.value == wire)
        .map(|g| g.group.name.to_owned())
        .or_else(|| {
            CLASSICAL_GROUPS
                .iter()
                .chain(NAMED_ONLY_GROUPS)
                .find(|(_, g)| u16::from(g.name()) == wire)
                .map(|(names, _)| names[0].to_owned())
        })
        .unwrap_or_else(|| format!("{wire:#06x}"))
}

/// A server configuration: TLS 1.3, `chain` and `key` for authentication, and — when
/// `client_roots` is given — mandatory client authentication against those roots.
///
/// Returns the configuration and the record of the client's CertificateVerify scheme.
///
/// # Errors
/// rustls errors for unusable certificates or keys.
pub fn server_config(
    provider: Arc<CryptoProvider>,
    chain: Vec<CertificateDer<'static>>,
    key: impl Into<TlsKey>,
    client_roots: Option<&[CertificateDer<'static>]>,
) -> Result<(ServerConfig, Arc<PeerScheme>), Error> {
    server_config_with_policy(provider, chain, key, client_roots, None)
}

/// [`server_config`], with the clients whose chain validates against `client_roots` further
/// filtered by `policy` (refused with the alert access_denied).
///
/// # Errors
/// rustls errors for unusable certificates or keys; [`Error::General`] for a `policy` without
/// `client_roots` (it would admit everyone).
pub fn server_config_with_policy(
    provider: Arc<CryptoProvider>,
    chain: Vec<CertificateDer<'static>>,
    key: impl Into<TlsKey>,
    client_roots: Option<&[CertificateDer<'static>]>,
    policy: Option<Arc<dyn verify::ClientPolicy>>,
) -> Result<(ServerConfig, Arc<PeerScheme>), Error> {
    if policy.is_some() && client_roots.is_none() {
        // A policy over clients that are never asked for a certificate would admit everyone.
        return Err(Error::General(
            "a client policy needs the client certificates' CA".to_owned(),
        ));
    }
    let key = key.into();
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])?;
    let (config, seen) = match client_roots {
        Some(roots) => {
            let (mut verifier, seen) = ClientVerifier::new(roots)?;
            if let Some(policy) = policy {
                verifier = verifier.with_policy(policy);
            }
            (builder.with_client_cert_verifier(Arc::new(verifier)), seen)
        }
        None => (
            builder.with_no_client_auth(),
            Arc::new(PeerScheme::default()),
        ),
    };
    check_chain_fits(&chain, key.signature_size())?;
    Ok(match key {
        TlsKey::Der(key) => (config.with_single_cert(chain, key)?, seen),
        TlsKey::Signing(key) => (config.with_cert_resolver(key.resolver(chain)?), seen),
    })
}

/// The private key of a TLS endpoint: a PKCS#8 key (rustls or pqkit decodes it), or a pqkit
/// signing key — which may live in a PKCS#11 token and sign each CertificateVerify there.
pub enum TlsKey {
    /// A PKCS#8 private key.
    Der(PrivateKeyDer<'static>),
    /// A signing key (e.g. `pqkit_pkcs11::client::TokenKey::into_signing_key`).
    Signing(SigningKeyHandle),
}

/// A pqkit signing key ready for rustls.
pub struct SigningKeyHandle(Arc<sign::PqSigningKey>, usize);

impl TlsKey {
    /// Wraps a pqkit signing key.
    ///
    /// # Errors
    /// [`Error::General`] when its algorithm has no TLS 1.3 signature scheme.
    pub fn signing(key: pqkit_core::sig::SigningKey) -> Result<Self, Error> {
        let size = key.algorithm().signature_size;
        Ok(Self::Signing(SigningKeyHandle(
            Arc::new(sign::PqSigningKey::any(key)?),
            size,
        )))
    }

    fn signature_size(&self) -> usize {
        match self {
            Self::Der(key) => signature_size_of(key),
            Self::Signing(k) => k.1,
        }
    }
}

impl From<PrivateKeyDer<'static>> for TlsKey {
    fn from(key: PrivateKeyDer<'static>) -> Self {
        Self::Der(key)
    }
}

impl SigningKeyHandle {
    fn resolver(
        self,
        chain: Vec<CertificateDer<'static>>,
    ) -> Result<Arc<rustls::sign::SingleCertAndKey>, Error> {
        let certified = rustls::sign::CertifiedKey::new(chain, self.0);
        // The key (in a token, say) must be the certificate's, as with_single_cert checks
        // for a PKCS#8 key: otherwise every handshake would fail at CertificateVerify.
        certified.keys_match()?;
        Ok(Arc::new(rustls::sign::SingleCertAndKey::from(certified)))
    }
}

/// rustls's cap on buffered handshake data, in bytes (`MAX_HANDSHAKE_SIZE` in rustls 0.23;
/// not configurable): one handshake message, and also the bytes of a flight buffered while a
/// large message is being joined — so the Certificate and CertificateVerify messages of one
/// flight must fit in it together.
pub const MAX_HANDSHAKE_MESSAGE_SIZE: usize = 0xFFFF;

/// Size in bytes of the body of the TLS 1.3 Certificate message that carries `chain`
/// (RFC 8446 §4.4.2): context length (1) + list length (3) + per certificate a 3-byte length,
/// the DER and 2 bytes of empty extensions.
pub fn certificate_message_size(chain: &[CertificateDer<'_>]) -> usize {
    message_size(chain.iter().map(|c| c.len()))
}

fn message_size(cert_sizes: impl IntoIterator<Item = usize>) -> usize {
    1 + 3 + cert_sizes.into_iter().map(|n| 3 + n + 2).sum::<usize>()
}

/// Bytes on the wire of the Certificate and CertificateVerify messages of one flight, with
/// handshake headers (4 each), the CertificateVerify scheme and length (4) and TLS 1.3 record
/// overhead (22 bytes per 16 KiB record).
pub fn certificate_flight_size(chain: &[CertificateDer<'_>], signature_size: usize) -> usize {
    flight_size(chain.iter().map(|c| c.len()), signature_size)
}

/// [`certificate_flight_size`] from certificate sizes in bytes (for estimates before any
/// certificate exists).
pub fn flight_size(cert_sizes: impl IntoIterator<Item = usize>, signature_size: usize) -> usize {
    let messages = 4 + message_size(cert_sizes) + 4 + 4 + signature_size;
    messages + 22 * messages.div_ceil(16384)
}

/// Checks that a chain and a CertificateVerify of `signature_size` bytes fit rustls's buffer;
/// the peer's rustls would refuse more ("message buffer full"), so the error comes before any
/// connection.
///
/// # Errors
/// [`Error::General`] naming the size and the cap.
pub fn check_chain_fits(chain: &[CertificateDer<'_>], signature_size: usize) -> Result<(), Error> {
    let size = certificate_flight_size(chain, signature_size);
    if size > MAX_HANDSHAKE_MESSAGE_SIZE {
        return Err(Error::General(format!(
            "this {}-certificate chain and its {signature_size}-byte CertificateVerify need \
             {size} bytes in one flight, over rustls's {MAX_HANDSHAKE_MESSAGE_SIZE}-byte \
             handshake buffer; `pqkit list` shows which chains fit (drop the intermediate, or use \
             smaller-signature algorithms for the CA or the leaf)",
            chain.len()
        )));
    }
    Ok(())
}

/// The largest signature the key in a PKCS#8 document makes (pqkit's catalogue; 512 bytes —
/// RSA-4096 — for keys pqkit does not decode).
fn signature_size_of(key: &PrivateKeyDer<'_>) -> usize {
    match key {
        PrivateKeyDer::Pkcs8(k) => match pqkit_pki::key::pkcs8_algorithm(k.secret_pkcs8_der()) {
            Ok(pqkit_pki::key::Algorithm::Signature(a)) => a.signature_size,
            _ => 512,
        },
        _ => 512,
    }
}

/// A client configuration: TLS 1.3, the server verified against `roots`, and client
/// authentication with `auth` (chain, key) when given.
///
/// Returns the configuration and the record of the server's CertificateVerify scheme.
///
/// # Errors
/// rustls errors for unusable roots, certificates or keys.
pub fn client_config(
    provider: Arc<CryptoProvider>,
    roots: &[CertificateDer<'static>],
    auth: Option<(Vec<CertificateDer<'static>>, TlsKey)>,
) -> Result<(ClientConfig, Arc<PeerScheme>), Error> {
    let (verifier, seen) = ServerVerifier::new(roots)?;
    let builder = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier));
    let config = match auth {
        Some((chain, key)) => {
            check_chain_fits(&chain, key.signature_size())?;
            match key {
                TlsKey::Der(key) => builder.with_client_auth_cert(chain, key)?,
                TlsKey::Signing(key) => builder.with_client_cert_resolver(key.resolver(chain)?),
            }
        }
        None => builder.with_no_client_auth(),
    };
    Ok((config, seen))
}

/// Classical groups from rustls's aws-lc-rs provider, by the names users type.
/// Groups offered only when named (`--groups ffdhe3072`, RFC 7919), never by default: the
/// name reports print first (names match without regard to case), then the code point.
static NAMED_ONLY_GROUPS: &[(&[&str], &dyn SupportedKxGroup)] =
    &[(&["FFDHE3072", "0x0101"], &ffdhe::FFDHE3072)];

static CLASSICAL_GROUPS: &[(&[&str], &dyn SupportedKxGroup)] = &[
    (&["X25519", "x25519"], aws_lc_rs::kx_group::X25519),
    (
        &["secp256r1", "P-256", "P256"],
        aws_lc_rs::kx_group::SECP256R1,
    ),
    (
        &["secp384r1", "P-384", "P384"],
        aws_lc_rs::kx_group::SECP384R1,
    ),
];
