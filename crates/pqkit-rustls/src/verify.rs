//! Certificate-chain and CertificateVerify verification for pqkit's signature schemes.

use std::sync::OnceLock;

use pqkit_core::sig::SignatureAlgorithm;
use rustls::SignatureScheme;
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls_pki_types::{AlgorithmIdentifier, InvalidSignature, SignatureVerificationAlgorithm};

use crate::scheme::schemes;

/// A catalogue signature algorithm as a webpki verification algorithm.
///
/// webpki compares [`Self::public_key_alg_id`] byte for byte with the certificate's SPKI
/// `AlgorithmIdentifier` contents, and [`Self::signature_alg_id`] with its signature algorithm.
pub struct PqVerify(pub &'static SignatureAlgorithm);

impl SignatureVerificationAlgorithm for PqVerify {
    /// Pure verification with an empty context; any failure is the opaque `InvalidSignature`.
    fn verify_signature(
        &self,
        public_key: &[u8],
        message: &[u8],
        signature: &[u8],
    ) -> Result<(), InvalidSignature> {
        self.0
            .verifying_key(public_key)
            .and_then(|key| key.verify(message, &[], signature))
            .map_err(|_| InvalidSignature)
    }

    fn public_key_alg_id(&self) -> AlgorithmIdentifier {
        AlgorithmIdentifier::from_slice(self.0.spki_algorithm_id)
    }

    fn signature_alg_id(&self) -> AlgorithmIdentifier {
        AlgorithmIdentifier::from_slice(self.0.signature_algorithm_id)
    }
}

impl core::fmt::Debug for PqVerify {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "PqVerify({})", self.0.name)
    }
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
