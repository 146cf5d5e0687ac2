//! A SignedData in words (what `pqkit cms show` prints): no verification.

use std::time::SystemTime;

use serde::Serialize;

use super::decode::{
    CertPool, algorithm_name, attached_content, carried_certificates, decode, sid_words, subject_of,
};
use super::digest::DigestAlgorithm;
use super::error::CmsError;
use super::oids::{SIGNING_TIME, attribute_name};

/// One signer, as written.
#[derive(Clone, Debug, Serialize)]
pub struct SignerDescription {
    /// The signer identifier (issuer and serial number, or subjectKeyIdentifier).
    pub identifier: String,
    /// The subject of its certificate, when the SignedData carries it.
    pub certificate_subject: Option<String>,
    /// Digest algorithm (name or OID).
    pub digest_algorithm: String,
    /// Signature algorithm (name or OID).
    pub signature_algorithm: String,
    /// Signature bytes.
    pub signature_bytes: usize,
    /// The signed attributes' types, in order; `None` when there are none.
    pub signed_attributes: Option<Vec<String>>,
    /// The signed attributes' DER (what the signature covers), in bytes.
    pub signed_attributes_bytes: Option<usize>,
    /// The signingTime, seconds since the Unix epoch.
    pub signing_time: Option<u64>,
    /// The unsigned attributes' types.
    pub unsigned_attributes: Vec<String>,
}

/// A SignedData, as written.
#[derive(Clone, Debug, Serialize)]
pub struct Description {
    /// The SignedData version.
    pub version: u8,
    /// The encapsulated content type (OID).
    pub content_type: String,
    /// The attached content's length; `None` when detached.
    pub attached_bytes: Option<usize>,
    /// The digestAlgorithms.
    pub digest_algorithms: Vec<String>,
    /// The carried certificates' subjects.
    pub certificates: Vec<String>,
    /// The signers.
    pub signers: Vec<SignerDescription>,
}

/// Describes the SignedData in a DER ContentInfo.
///
/// # Errors
/// [`CmsError::Malformed`].
pub fn describe(der: &[u8]) -> Result<Description, CmsError> {
    let sd = decode(der)?;
    let certs = carried_certificates(&sd);
    let pool = CertPool::new(certs.clone())?;
    let digest_name = |id: &spki::AlgorithmIdentifierOwned| {
        DigestAlgorithm::from_identifier(id).map_or_else(|| id.oid.to_string(), |d| d.name().into())
    };
    let signers = sd
        .signer_infos
        .0
        .iter()
        .map(|si| {
            let signing_time = si.signed_attrs.as_ref().and_then(|attrs| {
                attrs
                    .iter()
                    .find(|a| a.oid == SIGNING_TIME)
                    .and_then(|a| a.values.get(0))
                    .and_then(super::attributes::time_of)
                    .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
                    .map(|d| d.as_secs())
            });
            let cert = pool.find(&si.sid).map(|(_, c)| c);
            SignerDescription {
                identifier: sid_words(&si.sid),
                certificate_subject: cert.map(|c| c.tbs_certificate.subject.to_string()),
                digest_algorithm: digest_name(&si.digest_alg),
                signature_algorithm: algorithm_name(
                    &si.signature_algorithm,
                    cert.map(|c| &c.tbs_certificate.subject_public_key_info),
                ),
                signature_bytes: si.signature.as_bytes().len(),
                signed_attributes: si
                    .signed_attrs
                    .as_ref()
                    .map(|a| a.iter().map(|a| attribute_name(&a.oid)).collect()),
                signed_attributes_bytes: si
                    .signed_attrs
                    .as_ref()
                    .and_then(|a| der::Encode::encoded_len(a).ok())
                    .and_then(|l| usize::try_from(l).ok()),
                signing_time,
                unsigned_attributes: si
                    .unsigned_attrs
                    .iter()
                    .flat_map(|a| a.iter())
                    .map(|a| attribute_name(&a.oid))
                    .collect(),
            }
        })
        .collect();
    let version = super::decode::version_number(sd.version);
    Ok(Description {
        version,
        content_type: sd.encap_content_info.econtent_type.to_string(),
        attached_bytes: attached_content(&sd)?.map(|c| c.len()),
        digest_algorithms: sd.digest_algorithms.iter().map(digest_name).collect(),
        certificates: certs.iter().map(|c| subject_of(c)).collect(),
        signers,
    })
}
