//! The object identifiers of CMS SignedData and its attributes.

use const_oid::ObjectIdentifier;

/// id-data (RFC 5652 §4).
pub const ID_DATA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.7.1");
/// id-signedData (RFC 5652 §5.1).
pub const ID_SIGNED_DATA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.7.2");
/// id-contentType (RFC 5652 §11.1).
pub const CONTENT_TYPE: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.3");
/// id-messageDigest (RFC 5652 §11.2).
pub const MESSAGE_DIGEST: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.4");
/// id-signingTime (RFC 5652 §11.3).
pub const SIGNING_TIME: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.5");
/// id-aa-CMSAlgorithmProtection (RFC 6211 §2).
pub const ALGORITHM_PROTECTION: ObjectIdentifier =
    ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.52");
/// id-aa-signingCertificate (RFC 2634 §5.4).
pub const SIGNING_CERTIFICATE: ObjectIdentifier =
    ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.16.2.12");
/// id-aa-signingCertificateV2 (RFC 5035 §3).
pub const SIGNING_CERTIFICATE_V2: ObjectIdentifier =
    ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.16.2.47");
/// id-aa-signatureTimeStampToken (RFC 3161 Appendix A).
pub const TIMESTAMP_TOKEN: ObjectIdentifier =
    ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.16.2.14");
/// rsaEncryption, which OpenSSL writes as a CMS signer's signature algorithm for RSA PKCS#1
/// v1.5 keys (RFC 3370 §3.2 allows it).
pub const RSA_ENCRYPTION: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.1");
/// sha256WithRSAEncryption (RFC 4055 §5).
pub const SHA256_WITH_RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.11");

/// A name for an attribute type, for messages.
pub fn attribute_name(oid: &ObjectIdentifier) -> String {
    match *oid {
        CONTENT_TYPE => "contentType".into(),
        MESSAGE_DIGEST => "messageDigest".into(),
        SIGNING_TIME => "signingTime".into(),
        ALGORITHM_PROTECTION => "CMSAlgorithmProtection".into(),
        TIMESTAMP_TOKEN => "signatureTimeStampToken".into(),
        SIGNING_CERTIFICATE => "signingCertificate".into(),
        SIGNING_CERTIFICATE_V2 => "signingCertificateV2".into(),
        o => const_oid::db::DB
            .by_oid(&o)
            .map_or_else(|| o.to_string(), str::to_string),
    }
}
