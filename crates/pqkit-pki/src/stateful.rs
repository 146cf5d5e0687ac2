//! X.509 with stateful hash-based signatures (RFC 9802): HSS, XMSS and XMSS^MT public keys in
//! SubjectPublicKeyInfo and as certificate signatures, so that chains with such signatures
//! verify. A CA whose key lives in a pqkit-hbs state file issues certificates through
//! [`crate::stateful_ca`]. The AlgorithmIdentifier is the key's OID with
//! parameters absent (RFC 9802 §3–§4); the signature BIT STRING holds the RFC 8554 / RFC 8391
//! signature.

use der::asn1::BitString;
use der::{Decode, Encode};
use pqkit_hbs::public::{HSS_OID, PublicKey, XMSS_MT_OID, XMSS_OID};
use spki::{AlgorithmIdentifierOwned, SubjectPublicKeyInfoOwned};

use crate::error::Error;

/// Whether `algorithm` is one of the three stateful signature algorithms.
pub fn is_stateful(algorithm: &AlgorithmIdentifierOwned) -> bool {
    [HSS_OID, XMSS_OID, XMSS_MT_OID].contains(&algorithm.oid)
}

fn hbs(e: pqkit_hbs::Error) -> Error {
    Error::malformed("stateful signature", e)
}

/// The SPKI of a stateful public key (RFC 9802).
///
/// # Errors
/// [`Error::Malformed`] if encoding fails.
pub fn spki(key: &PublicKey) -> Result<SubjectPublicKeyInfoOwned, Error> {
    let der = key.to_spki_der().map_err(hbs)?;
    SubjectPublicKeyInfoOwned::from_der(&der).map_err(|e| Error::malformed("SPKI", e))
}

/// Verifies a stateful signature over `signed` with the key in `signer` (whose OID must be
/// the signature's).
///
/// # Errors
/// [`Error::Malformed`] for a mismatched or undecodable key or signature,
/// [`Error::UnknownAlgorithm`] when the key is of another algorithm.
pub fn verify_signature(
    algorithm: &AlgorithmIdentifierOwned,
    signer: &SubjectPublicKeyInfoOwned,
    signed: &[u8],
    signature: &BitString,
) -> Result<(), Error> {
    if algorithm.parameters.is_some() || signer.algorithm.oid != algorithm.oid {
        return Err(Error::UnknownAlgorithm(
            "signature (not one the signer's key makes)",
        ));
    }
    let der = signer.to_der().map_err(|e| Error::malformed("SPKI", e))?;
    let key = PublicKey::from_spki_der(&der).map_err(hbs)?;
    let signature = signature
        .as_bytes()
        .ok_or(Error::malformed("signature", "unused bits"))?;
    key.verify(signed, signature)
        .map_err(|_| Error::Crypto(pqkit_core::Error::BadSignature))
}

/// HSS, XMSS and XMSS^MT as webpki verification algorithms, for [`crate::path`]: RFC 9802
/// puts the key's OID, parameters absent, in both the SPKI and the signature
/// `AlgorithmIdentifier`.
pub(crate) static VERIFIERS: [StatefulVerify; 3] = [
    StatefulVerify {
        name: "HSS",
        oid: HSS_OID,
        // 06 0B 1.2.840.113549.1.9.16.3.17
        alg_id: &[
            0x06, 0x0b, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x10, 0x03, 0x11,
        ],
    },
    StatefulVerify {
        name: "XMSS",
        oid: XMSS_OID,
        // 06 08 1.3.6.1.5.5.7.6.34
        alg_id: &[0x06, 0x08, 0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x06, 0x22],
    },
    StatefulVerify {
        name: "XMSS^MT",
        oid: XMSS_MT_OID,
        // 06 08 1.3.6.1.5.5.7.6.35
        alg_id: &[0x06, 0x08, 0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x06, 0x23],
    },
];

/// One stateful scheme as a webpki verification algorithm.
pub(crate) struct StatefulVerify {
    name: &'static str,
    oid: spki::ObjectIdentifier,
    alg_id: &'static [u8],
}

impl rustls_pki_types::SignatureVerificationAlgorithm for StatefulVerify {
    fn verify_signature(
        &self,
        public_key: &[u8],
        message: &[u8],
        signature: &[u8],
    ) -> Result<(), rustls_pki_types::InvalidSignature> {
        let bad = |_| rustls_pki_types::InvalidSignature;
        let spki = SubjectPublicKeyInfoOwned {
            algorithm: AlgorithmIdentifierOwned {
                oid: self.oid,
                parameters: None,
            },
            subject_public_key: BitString::from_bytes(public_key).map_err(bad)?,
        };
        let der = spki.to_der().map_err(bad)?;
        let key = PublicKey::from_spki_der(&der).map_err(|_| rustls_pki_types::InvalidSignature)?;
        key.verify(message, signature)
            .map_err(|_| rustls_pki_types::InvalidSignature)
    }

    fn public_key_alg_id(&self) -> rustls_pki_types::AlgorithmIdentifier {
        rustls_pki_types::AlgorithmIdentifier::from_slice(self.alg_id)
    }

    fn signature_alg_id(&self) -> rustls_pki_types::AlgorithmIdentifier {
        rustls_pki_types::AlgorithmIdentifier::from_slice(self.alg_id)
    }
}

impl std::fmt::Debug for StatefulVerify {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StatefulVerify({})", self.name)
    }
}
