//! Certificate-chain and CertificateVerify verification for pqkit's signature schemes.
//!
//! Chains are validated by [`pqkit_pki::path`] — the validator every pqkit tool uses (RFC 5280
//! §6 on rustls-webpki, plus keyUsage and the trust anchor's own checks) — with the purpose
//! serverAuth or clientAuth, and for a server the name the client asked for (RFC 9525).
//! CertificateVerify signatures go through rustls's own functions with
//! [`supported_algorithms`].

use std::sync::{Arc, OnceLock};
use std::time::{Duration, UNIX_EPOCH};

use pqkit_pki::path::{PathError, PeerName, Policy, Purpose, Rule, TrustAnchors};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{
    CertificateError, DigitallySignedStruct, DistinguishedName, Error, OtherError, SignatureScheme,
};
use rustls_pki_types::{CertificateDer, ServerName, SignatureVerificationAlgorithm, UnixTime};

pub use pqkit_pki::path::PqVerify;

use crate::observe::PeerScheme;
use crate::scheme::schemes;

/// The handshake-signature methods both verifiers share: rustls's own checks with
/// [`supported_algorithms`], recording the scheme of a TLS 1.3 CertificateVerify that
/// verified.
macro_rules! handshake_signatures {
    () => {
        fn verify_tls12_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, Error> {
            rustls::crypto::verify_tls12_signature(message, cert, dss, &supported_algorithms())
        }

        fn verify_tls13_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, Error> {
            tls13_signature(message, cert, dss, &self.seen)
        }

        fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
            supported_algorithms().supported_schemes()
        }
    };
}

/// Verifies a TLS server's chain with [`pqkit_pki::path`] (purpose serverAuth) and its name.
/// What it saw of the server lands in its [`PeerScheme`].
#[derive(Debug)]
pub struct ServerVerifier {
    anchors: TrustAnchors,
    seen: Arc<PeerScheme>,
}

impl ServerVerifier {
    /// Trusts `roots` (DER CA certificates).
    ///
    /// # Errors
    /// [`Error::General`] naming a root that does not decode.
    pub fn new(roots: &[CertificateDer<'_>]) -> Result<(Self, Arc<PeerScheme>), Error> {
        let seen = Arc::new(PeerScheme::default());
        Ok((
            Self {
                anchors: anchors(roots)?,
                seen: seen.clone(),
            },
            seen,
        ))
    }
}

impl ServerCertVerifier for ServerVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        let name = match server_name {
            // rustls checked the syntax (it allows `_`, as webpki's matching does).
            ServerName::DnsName(d) => Ok(PeerName::Dns(d.as_ref().to_ascii_lowercase())),
            ServerName::IpAddress(ip) => Ok(PeerName::Ip(std::net::IpAddr::from(*ip))),
            _ => Err(String::new()),
        }
        .map_err(|_| Error::InvalidCertificate(CertificateError::NotValidForName))?;
        let mut policy = Policy::new(Purpose::ServerAuth, time_of(now));
        policy.names.push(name);
        policy.key_identifiers = false;
        verify_chain(
            &self.anchors,
            end_entity,
            intermediates,
            &policy,
            &self.seen,
        )?;
        Ok(ServerCertVerified::assertion())
    }

    handshake_signatures!();
}

/// Who may connect, among clients whose chain validated: a proxy's allow-list of identities,
/// say. Asked once per handshake, after [`pqkit_pki::path`] accepted the chain.
pub trait ClientPolicy: std::fmt::Debug + Send + Sync {
    /// `Ok` admits the client whose end-entity certificate is `end_entity` (DER); `Err` says
    /// why not, in words naming the certificate — the handshake then ends with the alert
    /// access_denied (RFC 8446 §6.2).
    ///
    /// # Errors
    /// The reason the client is refused.
    fn admit(&self, end_entity: &[u8]) -> Result<(), String>;
}

/// Verifies a TLS client's chain with [`pqkit_pki::path`] (purpose clientAuth), then asks its
/// [`ClientPolicy`] when it has one; client authentication is offered and mandatory. What it
/// saw lands in its [`PeerScheme`].
#[derive(Debug)]
pub struct ClientVerifier {
    anchors: TrustAnchors,
    hints: Vec<DistinguishedName>,
    seen: Arc<PeerScheme>,
    policy: Option<Arc<dyn ClientPolicy>>,
}

impl ClientVerifier {
    /// Trusts `roots` (DER CA certificates); their subjects are the CertificateRequest's
    /// certificate_authorities.
    ///
    /// # Errors
    /// [`Error::General`] naming a root that does not decode.
    pub fn new(roots: &[CertificateDer<'_>]) -> Result<(Self, Arc<PeerScheme>), Error> {
        let anchors = anchors(roots)?;
        let hints = anchors
            .subjects()
            .iter()
            .map(|s| DistinguishedName::in_sequence(s))
            .collect();
        let seen = Arc::new(PeerScheme::default());
        Ok((
            Self {
                anchors,
                hints,
                seen: seen.clone(),
                policy: None,
            },
            seen,
        ))
    }

    /// Admits only the clients `policy` admits, among those whose chain validates.
    #[must_use]
    pub fn with_policy(mut self, policy: Arc<dyn ClientPolicy>) -> Self {
        self.policy = Some(policy);
        self
    }
}

impl ClientCertVerifier for ClientVerifier {
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &self.hints
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, Error> {
        let mut policy = Policy::new(Purpose::ClientAuth, time_of(now));
        policy.key_identifiers = false;
        verify_chain(
            &self.anchors,
            end_entity,
            intermediates,
            &policy,
            &self.seen,
        )?;
        if let Some(admission) = &self.policy
            && let Err(why) = admission.admit(end_entity)
        {
            self.seen.set_rejection(why);
            return Err(Error::InvalidCertificate(
                CertificateError::ApplicationVerificationFailure,
            ));
        }
        Ok(ClientCertVerified::assertion())
    }

    handshake_signatures!();
}

/// A TLS 1.3 CertificateVerify, checked by rustls with [`supported_algorithms`]; its scheme is
/// recorded when it verifies.
fn tls13_signature(
    message: &[u8],
    cert: &CertificateDer<'_>,
    dss: &DigitallySignedStruct,
    seen: &PeerScheme,
) -> Result<HandshakeSignatureValid, Error> {
    let valid =
        rustls::crypto::verify_tls13_signature(message, cert, dss, &supported_algorithms())?;
    seen.set(dss.scheme);
    Ok(valid)
}

fn time_of(now: UnixTime) -> std::time::SystemTime {
    UNIX_EPOCH + Duration::from_secs(now.as_secs())
}

fn anchors(roots: &[CertificateDer<'_>]) -> Result<TrustAnchors, Error> {
    let ders: Vec<Vec<u8>> = roots.iter().map(|c| c.to_vec()).collect();
    TrustAnchors::new(&ders).map_err(|e| Error::General(e.to_string()))
}

fn verify_chain(
    anchors: &TrustAnchors,
    end_entity: &CertificateDer<'_>,
    intermediates: &[CertificateDer<'_>],
    policy: &Policy,
    seen: &PeerScheme,
) -> Result<(), Error> {
    let mut chain = Vec::with_capacity(1 + intermediates.len());
    chain.push(CertificateDer::from(end_entity.as_ref()));
    chain.extend(
        intermediates
            .iter()
            .map(|c| CertificateDer::from(c.as_ref())),
    );
    anchors
        .validate(&chain, policy)
        .map(|_| ())
        .map_err(|e| refused(&e, seen))
}

/// The one place a path-validation failure becomes a rustls error, and so a TLS alert
/// (rustls maps the variant: certificate_expired, unknown_ca, decrypt_error,
/// unsupported_certificate, bad_certificate, certificate_unknown; a [`ClientPolicy`] refusal,
/// above, is access_denied). Rules without a variant of
/// their own travel as `Other`, whose text is the [`PathError`] — the certificate and the rule
/// in words.
fn refused(e: &PathError, seen: &PeerScheme) -> Error {
    let variant = match &e.rule {
        Rule::Expired { .. } => CertificateError::Expired,
        Rule::NotYetValid { .. } => CertificateError::NotValidYet,
        Rule::UnknownIssuer { .. } => CertificateError::UnknownIssuer,
        Rule::BadSignature { .. } => CertificateError::BadSignature,
        Rule::WrongPurpose { .. } => CertificateError::InvalidPurpose,
        Rule::WrongName { .. } => CertificateError::NotValidForName,
        Rule::UnknownCriticalExtension { .. } => CertificateError::UnhandledCriticalExtension,
        Rule::Malformed { .. } => CertificateError::BadEncoding,
        _ => CertificateError::Other(OtherError(Arc::new(e.clone()))),
    };
    seen.set_rejection(e.to_string());
    Error::InvalidCertificate(variant)
}

/// pqkit's verification algorithms followed by every algorithm of rustls's aws-lc-rs provider
/// (ECDSA, Ed25519, RSA), with pqkit's schemes mapped to pqkit's verifiers.
pub fn supported_algorithms() -> WebPkiSupportedAlgorithms {
    static ALGORITHMS: OnceLock<WebPkiSupportedAlgorithms> = OnceLock::new();
    *ALGORITHMS.get_or_init(|| {
        let base = rustls::crypto::aws_lc_rs::default_provider().signature_verification_algorithms;
        let ours: Vec<&'static dyn SignatureVerificationAlgorithm> = schemes()
            .iter()
            .map(|s| &*Box::leak(Box::new(PqVerify(s.algorithm))) as _)
            .collect();
        let mapping: Vec<(
            SignatureScheme,
            &'static [&'static dyn SignatureVerificationAlgorithm],
        )> = schemes()
            .iter()
            .zip(&ours)
            .map(|(s, v)| (s.scheme, &*Box::leak(Box::new([*v])) as &'static [_]))
            .chain(
                base.mapping
                    .iter()
                    .filter(|(scheme, _)| schemes().iter().all(|s| s.scheme != *scheme))
                    .copied(),
            )
            .collect();
        // Leaked once per process: rustls needs 'static slices and these are built at run time
        // from rustls's own list, so they track its algorithms instead of copying them.
        let all: Vec<_> = ours
            .iter()
            .copied()
            .chain(base.all.iter().copied())
            .collect();
        WebPkiSupportedAlgorithms {
            all: Box::leak(all.into_boxed_slice()),
            mapping: Box::leak(mapping.into_boxed_slice()),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pqkit_scheme_maps_first_to_pqkit() {
        let algs = supported_algorithms();
        for s in schemes() {
            let (_, verifiers) = algs
                .mapping
                .iter()
                .find(|(scheme, _)| *scheme == s.scheme)
                .expect("scheme mapped");
            let first = format!("{:?}", verifiers[0]);
            assert_eq!(first, format!("PqVerify({})", s.algorithm.name));
        }
    }

    #[test]
    fn verifier_accepts_a_signature_and_rejects_a_flipped_bit() {
        for s in schemes() {
            let key = s.algorithm.generate().expect("key");
            let sig = key.sign(b"transcript", &[]).expect("sign");
            let v = PqVerify(s.algorithm);
            let pk = key.verifying_key();
            assert!(
                v.verify_signature(pk.as_bytes(), b"transcript", &sig)
                    .is_ok()
            );
            let mut bad = sig.clone();
            bad[0] ^= 1;
            assert!(
                v.verify_signature(pk.as_bytes(), b"transcript", &bad)
                    .is_err()
            );
            assert!(
                v.verify_signature(&pk.as_bytes()[1..], b"transcript", &sig)
                    .is_err()
            );
        }
    }
}
