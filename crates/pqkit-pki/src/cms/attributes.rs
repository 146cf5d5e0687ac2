//! Signed attributes (RFC 5652 §5.3, §11; RFC 6211): the ones pqkit writes, and the checks a
//! verifier makes before the signature over them means anything.

use std::collections::BTreeSet;
use std::time::SystemTime;

use const_oid::ObjectIdentifier;
use der::asn1::{OctetString, SetOfVec};
use der::{Any, Decode, Encode, Sequence};
use spki::AlgorithmIdentifierOwned;
use x509_cert::attr::{Attribute, Attributes};
use x509_cert::time::Time;

use super::oids::{
    ALGORITHM_PROTECTION, CONTENT_TYPE, MESSAGE_DIGEST, SIGNING_CERTIFICATE,
    SIGNING_CERTIFICATE_V2, SIGNING_TIME,
};
use super::refusal::Refusal;
use crate::error::Error;

/// CMSAlgorithmProtection (RFC 6211 §2): the algorithms the signer used, signed, so that
/// neither can be swapped.
#[derive(Clone, Debug, PartialEq, Eq, Sequence)]
pub(crate) struct AlgorithmProtection {
    pub(crate) digest_algorithm: AlgorithmIdentifierOwned,
    #[asn1(
        context_specific = "1",
        tag_mode = "IMPLICIT",
        constructed = "true",
        optional = "true"
    )]
    pub(crate) signature_algorithm: Option<AlgorithmIdentifierOwned>,
    #[asn1(
        context_specific = "2",
        tag_mode = "IMPLICIT",
        constructed = "true",
        optional = "true"
    )]
    pub(crate) mac_algorithm: Option<AlgorithmIdentifierOwned>,
}

/// ESSCertIDv2 (RFC 5035 §4): a certificate's hash; hashAlgorithm DEFAULT id-sha256, so absent
/// (`None`) means SHA-256.
#[derive(Clone, Debug, PartialEq, Eq, Sequence)]
pub(crate) struct EssCertIdV2 {
    pub(crate) hash_algorithm: Option<AlgorithmIdentifierOwned>,
    pub(crate) cert_hash: OctetString,
    pub(crate) issuer_serial: Option<Any>,
}

/// SigningCertificateV2 (RFC 5035 §3): the signer's certificate, first.
#[derive(Clone, Debug, PartialEq, Eq, Sequence)]
pub(crate) struct SigningCertificateV2 {
    pub(crate) certs: Vec<EssCertIdV2>,
    pub(crate) policies: Option<Any>,
}

/// ESSCertID (RFC 2634 §5.4.1): a certificate's SHA-1 hash.
#[derive(Clone, Debug, PartialEq, Eq, Sequence)]
pub(crate) struct EssCertId {
    pub(crate) cert_hash: OctetString,
    pub(crate) issuer_serial: Option<Any>,
}

/// SigningCertificate (RFC 2634 §5.4).
#[derive(Clone, Debug, PartialEq, Eq, Sequence)]
pub(crate) struct SigningCertificate {
    pub(crate) certs: Vec<EssCertId>,
    pub(crate) policies: Option<Any>,
}

/// Whether `attrs` name `certificate` (DER) as the signer's in an ESS signingCertificateV2
/// (any SHA-2 or SHA-3 hash) or signingCertificate (SHA-1) attribute, its first ESSCertID:
/// `None` when neither attribute is there (RFC 5035 §3, RFC 2634 §5.4).
pub(crate) fn names_signing_certificate(attrs: &Attributes, certificate: &[u8]) -> Option<bool> {
    let value = |oid| {
        attrs
            .iter()
            .find(|a| a.oid == oid)
            .and_then(|a| a.values.get(0))
            .and_then(|v| v.to_der().ok())
    };
    if let Some(der) = value(SIGNING_CERTIFICATE_V2) {
        let Ok(sc) = SigningCertificateV2::from_der(&der) else {
            return Some(false);
        };
        return Some(sc.certs.first().is_some_and(|id| {
            let hash = match &id.hash_algorithm {
                None => Some(super::digest::DigestAlgorithm::Sha256),
                Some(h) => super::digest::DigestAlgorithm::from_identifier(h),
            };
            hash.is_some_and(|d| d.digest(certificate) == id.cert_hash.as_bytes())
        }));
    }
    let der = value(SIGNING_CERTIFICATE)?;
    let Ok(sc) = SigningCertificate::from_der(&der) else {
        return Some(false);
    };
    let sha1 = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA1_FOR_LEGACY_USE_ONLY, certificate);
    Some(
        sc.certs
            .first()
            .is_some_and(|id| sha1.as_ref() == id.cert_hash.as_bytes()),
    )
}

fn attribute(oid: ObjectIdentifier, value: Any) -> Result<Attribute, Error> {
    let bad = |e| Error::malformed("signed attribute", e);
    Ok(Attribute {
        oid,
        values: SetOfVec::try_from(vec![value]).map_err(bad)?,
    })
}

/// contentType, signingTime, messageDigest and CMSAlgorithmProtection, and with
/// `signing_certificate` (the signer's certificate, DER) an ESS signingCertificateV2 naming it
/// by its SHA-256 (RFC 5035; RFC 3161 §2.4.1 asks it of a TSA), as a DER SET OF.
pub(crate) fn build(
    content_type: ObjectIdentifier,
    message_digest: &[u8],
    signing_time: SystemTime,
    digest_algorithm: &AlgorithmIdentifierOwned,
    signature_algorithm: &AlgorithmIdentifierOwned,
    signing_certificate: Option<&[u8]>,
) -> Result<Attributes, Error> {
    let bad = |e| Error::malformed("signed attribute", e);
    // UTCTime for 1950–2049, GeneralizedTime after (RFC 5652 §11.3).
    let time = match der::asn1::UtcTime::from_system_time(signing_time) {
        Ok(utc) => Time::UtcTime(utc),
        Err(_) => Time::try_from(signing_time).map_err(bad)?,
    };
    let protection = AlgorithmProtection {
        digest_algorithm: digest_algorithm.clone(),
        signature_algorithm: Some(signature_algorithm.clone()),
        mac_algorithm: None,
    };
    let digest = OctetString::new(message_digest).map_err(bad)?;
    let mut attrs = vec![
        attribute(CONTENT_TYPE, Any::encode_from(&content_type).map_err(bad)?)?,
        attribute(SIGNING_TIME, Any::encode_from(&time).map_err(bad)?)?,
        attribute(MESSAGE_DIGEST, Any::encode_from(&digest).map_err(bad)?)?,
        attribute(
            ALGORITHM_PROTECTION,
            Any::encode_from(&protection).map_err(bad)?,
        )?,
    ];
    if let Some(cert) = signing_certificate {
        let ess = SigningCertificateV2 {
            certs: vec![EssCertIdV2 {
                // DEFAULT id-sha256: omitted, as DER requires.
                hash_algorithm: None,
                cert_hash: OctetString::new(super::digest::DigestAlgorithm::Sha256.digest(cert))
                    .map_err(bad)?,
                issuer_serial: None,
            }],
            policies: None,
        };
        attrs.push(attribute(
            SIGNING_CERTIFICATE_V2,
            Any::encode_from(&ess).map_err(bad)?,
        )?);
    }
    SetOfVec::try_from(attrs).map_err(bad)
}

/// What the signed attributes say, once checked.
#[derive(Clone, Debug, Default)]
pub(crate) struct Signed {
    /// The messageDigest value.
    pub(crate) message_digest: Vec<u8>,
    /// The signingTime, if present.
    pub(crate) signing_time: Option<SystemTime>,
    /// CMSAlgorithmProtection, if present.
    pub(crate) protection: Option<AlgorithmProtection>,
}

/// A signingTime value (a CHOICE of UTCTime and GeneralizedTime, RFC 5652 §11.3).
pub(crate) fn time_of(value: &Any) -> Option<SystemTime> {
    let der = value.to_der().ok()?;
    Time::from_der(&der).ok().map(|t| t.to_system_time())
}

/// The one value of an attribute that must have exactly one (RFC 5652 §11.1–§11.3).
fn single<'a>(a: &'a Attribute, name: &'static str) -> Result<&'a Any, Refusal> {
    match a.values.as_slice() {
        [v] => Ok(v),
        [] => Err(Refusal::MalformedAttribute(name)),
        _ => Err(Refusal::DuplicateAttribute(name.into())),
    }
}

/// Checks signed attributes: no attribute type twice; contentType present, one value, equal to
/// the encapsulated content's type; messageDigest present with one value; signingTime and
/// CMSAlgorithmProtection at most one value each and decodable.
pub(crate) fn check(
    attrs: &Attributes,
    content_type: &ObjectIdentifier,
) -> Result<Signed, Refusal> {
    let mut seen = BTreeSet::new();
    let mut signed = Signed::default();
    let (mut has_type, mut has_digest) = (false, false);
    for a in attrs.iter() {
        if !seen.insert(a.oid) {
            return Err(Refusal::DuplicateAttribute(super::oids::attribute_name(
                &a.oid,
            )));
        }
        match a.oid {
            CONTENT_TYPE => {
                let v = single(a, "contentType")?;
                let t: ObjectIdentifier = v
                    .decode_as()
                    .map_err(|_| Refusal::MalformedAttribute("contentType"))?;
                if t != *content_type {
                    return Err(Refusal::ContentType);
                }
                has_type = true;
            }
            MESSAGE_DIGEST => {
                let v = single(a, "messageDigest")?;
                let d: OctetString = v
                    .decode_as()
                    .map_err(|_| Refusal::MalformedAttribute("messageDigest"))?;
                signed.message_digest = d.into_bytes();
                has_digest = true;
            }
            SIGNING_TIME => {
                let v = single(a, "signingTime")?;
                signed.signing_time =
                    Some(time_of(v).ok_or(Refusal::MalformedAttribute("signingTime"))?);
            }
            ALGORITHM_PROTECTION => {
                let v = single(a, "CMSAlgorithmProtection")?;
                let der = v
                    .to_der()
                    .map_err(|_| Refusal::MalformedAttribute("CMSAlgorithmProtection"))?;
                signed.protection = Some(
                    AlgorithmProtection::from_der(&der)
                        .map_err(|_| Refusal::MalformedAttribute("CMSAlgorithmProtection"))?,
                );
            }
            _ => {}
        }
    }
    if !has_type {
        return Err(Refusal::MissingAttribute("contentType"));
    }
    if !has_digest {
        return Err(Refusal::MissingAttribute("messageDigest"));
    }
    Ok(signed)
}
