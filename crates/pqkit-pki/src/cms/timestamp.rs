//! RFC 3161 time-stamp tokens on CMS signers: the `signatureTimeStampToken` unsigned attribute
//! (RFC 3161 Appendix A) holds a SignedData by a time-stamping authority over a TSTInfo
//! (§2.4.2) whose messageImprint is the hash of the signer's signature value. A valid token
//! proves the signature existed at its genTime, so the signer's certificate is validated at
//! that time rather than now (an expired code-signing certificate still verifies what it
//! signed while valid).
//!
//! What is checked ([`super::verify`]): one token, one value; it verifies as a SignedData
//! whose one signer's path reaches the trust anchors for timeStamping (RFC 3161 §2.3) now, its
//! certificate having timeStamping alone, critical; its signed attributes name that
//! certificate (ESS signingCertificateV2 or signingCertificate, RFC 3161 §2.4.1); its content
//! is a TSTInfo of version 1; the imprint is the signer's signature value under the imprint's
//! hash. Not checked: the TSA's policy OID and accuracy. Tokens inside tokens are refused.

use std::time::SystemTime;

use const_oid::ObjectIdentifier;
use der::asn1::{Int, OctetString, SetOfVec};
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
    /// When: a GeneralizedTime, fractional seconds allowed (RFC 3161 §2.4.2), which the
    /// `der` type refuses — kept as encoded, read by [`gen_time`].
    pub gen_time: Any,
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

/// Checks the TSA's certificate as RFC 3161 §2.3 requires of it: an extendedKeyUsage
/// extension, critical, with id-kp-timeStamping as its only purpose (the path validator
/// accepts a certificate without the extension for any purpose).
///
/// # Errors
/// [`Refusal::Timestamp`] naming what is missing.
pub(crate) fn check_tsa_certificate(der: &[u8]) -> Result<(), Refusal> {
    use x509_cert::ext::pkix::ExtendedKeyUsage;
    let bad = |why: &str| Refusal::Timestamp(format!("the TSA certificate {why} (RFC 3161 §2.3)"));
    let cert = x509_cert::Certificate::from_der(der).map_err(|_| bad("does not decode"))?;
    let eku = cert
        .tbs_certificate
        .extensions
        .iter()
        .flatten()
        .find(|e| e.extn_id == const_oid::db::rfc5280::ID_CE_EXT_KEY_USAGE)
        .ok_or_else(|| bad("has no extendedKeyUsage"))?;
    if !eku.critical {
        return Err(bad("has a non-critical extendedKeyUsage"));
    }
    let purposes = ExtendedKeyUsage::from_der(eku.extn_value.as_bytes())
        .map_err(|_| bad("has an undecodable extendedKeyUsage"))?;
    if purposes.0 != [const_oid::db::rfc5280::ID_KP_TIME_STAMPING] {
        return Err(bad("has purposes other than timeStamping alone"));
    }
    Ok(())
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
    gen_time(&tst.gen_time).ok_or_else(|| bad("its genTime is not a GeneralizedTime"))
}

/// A TSTInfo's genTime: `YYYYMMDDhhmmss[.f+]Z` (RFC 3161 §2.4.2: UTC, fractional seconds
/// without trailing zeros allowed), to the second.
pub fn gen_time(value: &Any) -> Option<SystemTime> {
    if der::Tagged::tag(value) != der::Tag::GeneralizedTime {
        return None;
    }
    let text = core::str::from_utf8(value.value()).ok()?;
    let text = text.strip_suffix('Z')?;
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if whole.len() != 14
        || !whole.bytes().all(|b| b.is_ascii_digit())
        || !fraction.bytes().all(|b| b.is_ascii_digit())
        || (text.contains('.') && (fraction.is_empty() || fraction.ends_with('0')))
    {
        return None;
    }
    let n = |r: core::ops::Range<usize>| whole[r].parse::<u16>().ok();
    let n8 = |r: core::ops::Range<usize>| n(r).and_then(|v| u8::try_from(v).ok());
    let t = der::DateTime::new(
        n(0..4)?,
        n8(4..6)?,
        n8(6..8)?,
        n8(8..10)?,
        n8(10..12)?,
        n8(12..14)?,
    )
    .ok()?;
    Some(t.to_system_time())
}

/// Adds a time-stamp token (a ContentInfo from a TSA, e.g. `openssl ts -reply -token_out`;
/// DER or BER) to the signer whose signature value its messageImprint hashes, as that signer's
/// signatureTimeStampToken (replacing an earlier one), and returns the new SignedData (DER).
/// The token itself is verified when the result is.
///
/// # Errors
/// [`CmsError::Malformed`] for a SignedData or token that does not decode, a token that is
/// not a TSTInfo, or one whose imprint matches no signer.
pub fn attach(signed: &[u8], token: &[u8]) -> Result<Vec<u8>, CmsError> {
    let bad = |e: der::Error| CmsError::Malformed(e.to_string());
    let token = super::ber::to_der(token).map_err(CmsError::Malformed)?;
    let token_sd = decode(&token)?;
    let tst = token_sd
        .encap_content_info
        .econtent
        .as_ref()
        .filter(|_| token_sd.encap_content_info.econtent_type == ID_CT_TST_INFO)
        .and_then(|c| c.decode_as::<OctetString>().ok())
        .and_then(|c| TstInfo::from_der(c.as_bytes()).ok())
        .ok_or_else(|| CmsError::Malformed("the token holds no TSTInfo".into()))?;
    let imprint = &tst.message_imprint;
    let hash = DigestAlgorithm::from_identifier(&imprint.hash_algorithm)
        .ok_or_else(|| CmsError::Malformed("the token's imprint hash is unknown".into()))?;
    let mut sd = decode(signed)?;
    let mut infos = sd.signer_infos.0.into_vec();
    let si = infos
        .iter_mut()
        .find(|si| hash.digest(si.signature.as_bytes()) == imprint.hashed_message.as_bytes())
        .ok_or_else(|| {
            CmsError::Malformed("the token time-stamps none of the signatures".into())
        })?;
    let value = Any::from_der(&token).map_err(bad)?;
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

#[cfg(test)]
mod tests {
    use super::check_tsa_certificate;
    use crate::cert::{self, CertRequest, Issuer, Profile};

    /// RFC 3161 §2.3: timeStamping alone, critical; a certificate without extendedKeyUsage
    /// (which path validation lets through for any purpose) or with another purpose is no TSA.
    #[test]
    fn only_a_tsa_certificate_is_a_tsa() {
        let alg = pqkit_core::catalogue::signature("ECDSA-P256").expect("alg");
        let key = alg.generate().expect("key");
        let root = cert::issue_self_signed(&CertRequest::new(Profile::RootCa, "root"), &key)
            .expect("root");
        let issue = |profile| {
            let leaf = alg.generate().expect("key");
            cert::issue(
                &CertRequest::new(profile, "leaf"),
                &leaf.verifying_key(),
                Issuer {
                    certificate: &root,
                    key: &key,
                },
            )
            .expect("leaf")
        };
        check_tsa_certificate(&issue(Profile::TimeStamping)).expect("a TSA");
        let why = |der: &[u8]| {
            check_tsa_certificate(der)
                .expect_err("not a TSA")
                .to_string()
        };
        assert!(why(&root).contains("no extendedKeyUsage"));
        assert!(why(&issue(Profile::CodeSigning)).contains("non-critical"));
    }
}
