//! Signing with pqkit-core keys in TLS 1.3 (CertificateVerify), and the key provider that
//! loads them from PKCS#8.

use std::sync::Arc;

use pqkit_core::sig::SigningKey;
use rustls::crypto::KeyProvider;
use rustls::sign::{Signer, SigningKey as RustlsSigningKey};
use rustls::{Error, SignatureAlgorithm, SignatureScheme};
use rustls_pki_types::{PrivateKeyDer, SubjectPublicKeyInfoDer};

use crate::scheme;

/// A pqkit-core signing key that rustls can use for CertificateVerify.
pub struct PqSigningKey {
    key: Arc<SigningKey>,
    scheme: SignatureScheme,
}

impl PqSigningKey {
    /// Wraps `key` when pqkit has a TLS signature scheme for its algorithm.
    ///
    /// # Errors
    /// [`Error::General`] when the algorithm has no pqkit TLS scheme.
    pub fn new(key: SigningKey) -> Result<Self, Error> {
        let scheme = scheme::for_algorithm(key.algorithm())
            .ok_or_else(|| {
                Error::General(format!(
                    "{} has no TLS scheme in pqkit",
                    key.algorithm().name
                ))
            })?
            .scheme;
        Ok(Self {
            key: Arc::new(key),
            scheme,
        })
    }

    /// Wraps any catalogue signing key with a TLS 1.3 signature scheme — a key in a PKCS#11
    /// token included — classical ones too (their scheme from the catalogue: ECDSA-P256 is
    /// ecdsa_secp256r1_sha256, RFC 8446 §4.2.3).
    ///
    /// # Errors
    /// [`Error::General`] when the algorithm has no TLS 1.3 scheme.
    pub fn any(key: SigningKey) -> Result<Self, Error> {
        if let Some(scheme) = scheme::for_algorithm(key.algorithm()) {
            return Ok(Self {
                key: Arc::new(key),
                scheme: scheme.scheme,
            });
        }
        let alg = key.algorithm();
        let code = alg
            .tls_scheme
            .filter(|_| alg.family != pqkit_core::sig::Family::Rsa)
            .ok_or_else(|| Error::General(format!("{} has no TLS 1.3 scheme", alg.name)))?;
        Ok(Self {
            key: Arc::new(key),
            scheme: SignatureScheme::from(code.value),
        })
    }
}

impl RustlsSigningKey for PqSigningKey {
    fn choose_scheme(&self, offered: &[SignatureScheme]) -> Option<Box<dyn Signer>> {
        offered.contains(&self.scheme).then(|| {
            Box::new(PqSigner {
                key: self.key.clone(),
                scheme: self.scheme,
            }) as _
        })
    }

    fn public_key(&self) -> Option<SubjectPublicKeyInfoDer<'_>> {
        pqkit_pki::key::spki_der(&self.key.verifying_key())
            .ok()
            .map(SubjectPublicKeyInfoDer::from)
    }

    fn algorithm(&self) -> SignatureAlgorithm {
        // Only TLS 1.2 uses this; pqkit schemes are TLS 1.3 only.
        SignatureAlgorithm::Unknown(0)
    }
}

impl core::fmt::Debug for PqSigningKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PqSigningKey")
            .field("scheme", &self.scheme)
            .finish_non_exhaustive()
    }
}

struct PqSigner {
    key: Arc<SigningKey>,
    scheme: SignatureScheme,
}

impl Signer for PqSigner {
    /// Pure signing with an empty context (draft-ietf-tls-mldsa §3).
    fn sign(&self, message: &[u8]) -> Result<Vec<u8>, Error> {
        self.key
            .sign(message, &[])
            .map_err(|e| Error::General(e.to_string()))
    }

    fn scheme(&self) -> SignatureScheme {
        self.scheme
    }
}

impl core::fmt::Debug for PqSigner {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PqSigner")
            .field("scheme", &self.scheme)
            .finish_non_exhaustive()
    }
}

/// Loads PKCS#8 keys: keys of pqkit algorithms with a TLS scheme are decoded by pqkit-pki and
/// become [`PqSigningKey`]s; every other key goes to rustls's aws-lc-rs provider.
#[derive(Debug)]
pub struct PqKeyProvider;

impl KeyProvider for PqKeyProvider {
    fn load_private_key(
        &self,
        key_der: PrivateKeyDer<'static>,
    ) -> Result<Arc<dyn RustlsSigningKey>, Error> {
        if let PrivateKeyDer::Pkcs8(pkcs8) = &key_der
            && let Ok(pqkit_pki::key::Algorithm::Signature(alg)) =
                pqkit_pki::key::pkcs8_algorithm(pkcs8.secret_pkcs8_der())
            && scheme::for_algorithm(alg).is_some()
        {
            // pqkit's algorithm: pqkit's decoder decides; its errors (e.g. a "both" key whose
            // halves disagree) are not papered over by another provider.
            let key = pqkit_pki::key::signing_key_from_pkcs8(pkcs8.secret_pkcs8_der())
                .map_err(|e| Error::General(format!("private key: {e}")))?;
            return Ok(Arc::new(PqSigningKey::new(key)?));
        }
        rustls::crypto::aws_lc_rs::default_provider()
            .key_provider
            .load_private_key(key_der)
    }
}
