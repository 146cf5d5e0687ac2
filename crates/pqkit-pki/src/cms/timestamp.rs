//! RFC 3161 time-stamp tokens on CMS signers: the `signatureTimeStampToken` unsigned attribute
//! (RFC 3161 Appendix A) holds a SignedData by a time-stamping authority over a TSTInfo
//! (§2.4.2) whose messageImprint is the hash of the signer's signature value. A valid token
//! proves the signature existed at its genTime, so the signer's certificate is validated at
//! that time rather than now (an expired code-signing certificate still verifies what it
//! signed while valid).
//!
//! What is checked ([`super::verify`]): one token, one value; it verifies as a SignedData
//! whose signer's path reaches the trust anchors for timeStamping (RFC 3161 §2.3) now; its
//! content is a TSTInfo of version 1; the imprint is the signer's signature value under the
//! imprint's hash. Not checked: the ESS signingCertificate attribute (RFC 3161 §2.4.1), the
//! TSA's policy OID and accuracy. Tokens inside tokens are refused.

use std::time::SystemTime;

use const_oid::ObjectIdentifier;
use der::asn1::{GeneralizedTime, Int, OctetString, SetOfVec};
use der::{Any, Decode, Encode, Sequence};
use spki::AlgorithmIdentifierOwned;
use x509_cert::attr::Attribute;

use super::decode::decode;
use super::digest::DigestAlgorithm;
use super::error::CmsError;
use super::oids::{ID_SIGNED_DATA, TIMESTAMP_TOKEN};
use super::refusal::Refusal;

/// id-ct-TSTInfo (RFC 3161 §2.4.2), the content type of a time-stamp token.
pub const ID_CT_TST_INFO: ObjectIdentifier =
    ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.16.1.4");

/// MessageImprint (RFC 3161 §2.4.1).
#[derive(Clone, Debug, PartialEq, Eq, Sequence)]
pub struct MessageImprint {
    /// The hash algorithm.
    pub hash_algorithm: AlgorithmIdentifierOwned,
    /// The hash of the time-stamped data (here: a SignerInfo's signature value).
    pub hashed_message: OctetString,
}

/// Accuracy (RFC 3161 §2.4.2).
#[derive(Clone, Debug, PartialEq, Eq, Sequence)]
pub struct Accuracy {
    /// Seconds.
    pub seconds: Option<Int>,
    /// Milliseconds, 1–999.
    #[asn1(context_specific = "0", tag_mode = "IMPLICIT", optional = "true")]
    pub millis: Option<Int>,
    /// Microseconds, 1–999.
    #[asn1(context_specific = "1", tag_mode = "IMPLICIT", optional = "true")]
    pub micros: Option<Int>,
}

/// TSTInfo (RFC 3161 §2.4.2).
#[derive(Clone, Debug, PartialEq, Eq, Sequence)]
pub struct TstInfo {
    /// 1.
    pub version: Int,
    /// The TSA's policy.
    pub policy: ObjectIdentifier,
    /// What was time-stamped.
    pub message_imprint: MessageImprint,
    /// The token's serial number.
    pub serial_number: Int,
    /// When.
    pub gen_time: GeneralizedTime,
    /// How precisely.
    pub accuracy: Option<Accuracy>,
    /// Whether tokens of this TSA are ordered by genTime (DEFAULT FALSE).
    #[asn1(default = "Default::default")]
    pub ordering: bool,
    /// The requester's nonce.
    pub nonce: Option<Int>,
    /// The TSA's name, `[0] EXPLICIT GeneralName` (kept as encoded).
    #[asn1(context_specific = "0", tag_mode = "EXPLICIT", optional = "true")]
    pub tsa: Option<Any>,
    /// Extensions, `[1] IMPLICIT`.
    #[asn1(
        context_specific = "1",
        tag_mode = "IMPLICIT",
        constructed = "true",
        optional = "true"
    )]
    pub extensions: Option<x509_cert::ext::Extensions>,
}

/// The time-stamp token (a DER ContentInfo) on a signer, if it has one.
///
/// # Errors
/// [`Refusal::DuplicateAttribute`] for two tokens or a token attribute of two values;
/// [`Refusal::MalformedAttribute`] for one that does not encode.
pub(crate) fn token_of(
    unsigned: Option<&x509_cert::attr::Attributes>,
) -> Result<Option<Vec<u8>>, Refusal> {
    let mut found = unsigned
        .into_iter()
        .flat_map(|a| a.iter())
        .filter(|a| a.oid == TIMESTAMP_TOKEN);
    let Some(attr) = found.next() else {
        return Ok(None);
    };
    let duplicate = || Refusal::DuplicateAttribute("signatureTimeStampToken".into());
    if found.next().is_some() {
        return Err(duplicate());
    }
    match attr.values.as_slice() {
        [one] => one
            .to_der()
            .map(Some)
            .map_err(|_| Refusal::MalformedAttribute("signatureTimeStampToken")),
        _ => Err(duplicate()),
    }
}

/// The genTime a verified token's content proves for `signature`.
///
/// # Errors
/// [`Refusal::Timestamp`] when the content is not a TSTInfo of version 1 over `signature`.
pub(crate) fn proven_time(
    content_type: &ObjectIdentifier,
    content: Option<&[u8]>,
    signature: &[u8],
) -> Result<SystemTime, Refusal> {
    let bad = |why: &str| Refusal::Timestamp(why.to_owned());
    if *content_type != ID_CT_TST_INFO {
        return Err(bad("its content is not a TSTInfo"));
    }
    let tst = TstInfo::from_der(content.ok_or_else(|| bad("it holds no TSTInfo"))?)
        .map_err(|_| bad("its TSTInfo does not decode"))?;
    if tst.version.as_bytes() != [1] {
        return Err(bad("TSTInfo version is not 1"));
    }
    let imprint = &tst.message_imprint;
    let hash = DigestAlgorithm::from_identifier(&imprint.hash_algorithm)
        .ok_or_else(|| bad("its messageImprint hash algorithm is unknown"))?;
    if hash.digest(signature) != imprint.hashed_message.as_bytes() {
        return Err(bad("its messageImprint is not of this signature"));
    }
    Ok(tst.gen_time.to_system_time())
}

/// Adds a time-stamp token (a DER ContentInfo from a TSA, e.g. `openssl ts -reply
/// -token_out`) to signer `index` of the SignedData in `signed` as its
/// signatureTimeStampToken, and returns the new SignedData (DER). The token is checked to be a
/// SignedData; its imprint is checked when the result is verified.
///
/// # Errors
/// [`CmsError::Malformed`] for a SignedData or token that does not decode, or no signer
/// `index`.
pub fn attach(signed: &[u8], index: usize, token: &[u8]) -> Result<Vec<u8>, CmsError> {
    let bad = |e: der::Error| CmsError::Malformed(e.to_string());
    let _token_sd = decode(token)?;
    let mut sd = decode(signed)?;
    let mut infos = sd.signer_infos.0.into_vec();
    let si = infos
        .get_mut(index)
        .ok_or_else(|| CmsError::Malformed(format!("no signer {index}")))?;
    let value = Any::from_der(token).map_err(bad)?;
    let attr = Attribute {
        oid: TIMESTAMP_TOKEN,
        values: SetOfVec::try_from(vec![value]).map_err(bad)?,
    };
    let mut attrs = si
        .unsigned_attrs
        .take()
        .map(SetOfVec::into_vec)
        .unwrap_or_default();
    attrs.retain(|a| a.oid != TIMESTAMP_TOKEN);
    attrs.push(attr);
    si.unsigned_attrs = Some(SetOfVec::try_from(attrs).map_err(bad)?);
    sd.signer_infos = cms::signed_data::SignerInfos::try_from(infos).map_err(bad)?;
    cms::content_info::ContentInfo {
        content_type: ID_SIGNED_DATA,
        content: Any::encode_from(&sd).map_err(bad)?,
    }
    .to_der()
    .map_err(bad)
}

/// Signer `index`'s signature value: what a TSA time-stamps for it (`openssl ts -query -data
/// FILE`), the messageImprint being its hash.
///
/// # Errors
/// [`CmsError::Malformed`] for a SignedData that does not decode or no signer `index`.
pub fn signature_value(signed: &[u8], index: usize) -> Result<Vec<u8>, CmsError> {
    let sd = decode(signed)?;
    sd.signer_infos
        .0
        .get(index)
        .map(|si| si.signature.as_bytes().to_vec())
        .ok_or_else(|| CmsError::Malformed(format!("no signer {index}")))
}
