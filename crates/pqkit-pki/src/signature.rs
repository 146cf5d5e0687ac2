//! Checking a signature over DER (a TBSCertificate, a CertificationRequestInfo) with the key in
//! a SubjectPublicKeyInfo: the algorithm pairing of RFC 5280 §4.1.1.2, then the catalogue's
//! verification or, for HSS/XMSS, [`crate::stateful`]'s (RFC 9802).

use der::asn1::BitString;
use der::{Decode, Encode};
use pqkit_core::sig::VerifyingKey;
use spki::{AlgorithmIdentifierOwned, SubjectPublicKeyInfoOwned};
use x509_cert::Certificate;

use crate::error::Error;
use crate::key::algorithm_contents;

/// Verifies that `cert` is signed by the key in `issuer` (signature only; no path rules).
///
/// # Errors
/// [`Error::Malformed`], [`Error::UnknownAlgorithm`] when the certificate's signature algorithm
/// does not match the issuer's key, or [`Error::Crypto`] (`BadSignature`).
pub fn verify_signed_by(cert: &[u8], issuer: &[u8]) -> Result<(), Error> {
    let bad = |e| Error::malformed("certificate", e);
    let cert = Certificate::from_der(cert).map_err(bad)?;
    let issuer = Certificate::from_der(issuer).map_err(bad)?;
    let tbs = cert.tbs_certificate.to_der().map_err(bad)?;
    if crate::stateful::is_stateful(&cert.signature_algorithm) {
        return crate::stateful::verify_signature(
            &cert.signature_algorithm,
            &issuer.tbs_certificate.subject_public_key_info,
            &tbs,
            &cert.signature,
        );
    }
    verify_signature(
        &cert.signature_algorithm,
        &issuer.tbs_certificate.subject_public_key_info,
        &tbs,
        &cert.signature,
    )
    .map(|_| ())
}

/// Verifies `signature` over `signed` (a DER to-be-signed structure) with the key in `signer`,
/// after checking that `signature_algorithm` is the one that key makes (RFC 5280 §4.1.1.2).
/// Returns the key as that algorithm's (an RSA SPKI does not say PSS or PKCS#1; the signature
/// algorithm does).
///
/// # Errors
/// As [`verify_signed_by`].
pub(crate) fn verify_signature(
    signature_algorithm: &AlgorithmIdentifierOwned,
    signer: &SubjectPublicKeyInfoOwned,
    signed: &[u8],
    signature: &BitString,
) -> Result<VerifyingKey, Error> {
    let key_bits = signer
        .subject_public_key
        .as_bytes()
        .ok_or(Error::malformed("public key", "unused bits"))?;
    let alg = pqkit_core::catalogue::signature_by_algorithms(
        &algorithm_contents(signature_algorithm)?,
        &algorithm_contents(&signer.algorithm)?,
        key_bits.len(),
    )
    .ok_or(Error::UnknownAlgorithm(
        "signature (not one the signer's key makes)",
    ))?;
    let key = alg.verifying_key(key_bits)?;
    let signature = signature
        .as_bytes()
        .ok_or(Error::malformed("signature", "unused bits"))?;
    key.verify(signed, &[], signature)?;
    Ok(key)
}
