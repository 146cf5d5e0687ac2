//! Why a CMS signer, or a whole signed object, is refused.

use crate::rule::PathError;

/// Why a signer of a SignedData does not verify, in words a person can act on.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// No certificate in the SignedData or given beside it matches the signer identifier.
    #[error("no certificate for this signer ({0})")]
    NoCertificate(String),
    /// The signature algorithm is unknown, or not one the certificate's key makes.
    #[error("signature algorithm {0} is not one the signer's key makes")]
    Algorithm(String),
    /// The digest algorithm is unknown or too weak for the signature algorithm.
    #[error("digest algorithm {digest} is not allowed with {signature}")]
    Digest {
        /// The digest algorithm (name or OID).
        digest: String,
        /// The signature algorithm.
        signature: String,
    },
    /// A signed attribute CMS requires is missing (RFC 5652 §5.3, §11).
    #[error("signed attribute {0} is missing")]
    MissingAttribute(&'static str),
    /// A signed attribute appears twice, or with more than one value (RFC 5652 §11).
    #[error("signed attribute {0} appears more than once")]
    DuplicateAttribute(String),
    /// A signed attribute does not decode.
    #[error("signed attribute {0} is malformed")]
    MalformedAttribute(&'static str),
    /// The contentType attribute differs from the encapsulated content's type (RFC 5652 §11.1).
    #[error("the contentType attribute differs from the content's type")]
    ContentType,
    /// The messageDigest attribute is not the content's digest (RFC 5652 §11.2): the content
    /// was changed, or it is not the content signed.
    #[error("the content's {0} digest differs from the signed messageDigest")]
    MessageDigest(&'static str),
    /// The CMSAlgorithmProtection attribute names other algorithms than the signer's
    /// (RFC 6211 §3).
    #[error("CMSAlgorithmProtection names other algorithms than the signer uses")]
    AlgorithmProtection,
    /// Without signed attributes, the content must be id-data (RFC 5652 §5.3).
    #[error("no signed attributes, but the content type is not id-data")]
    AttributesRequired,
    /// The SignerInfo's version is not the one its signer identifier requires (RFC 5652
    /// §5.3: 1 for issuerAndSerialNumber, 3 for subjectKeyIdentifier).
    #[error("SignerInfo version {0} does not match its signer identifier (RFC 5652 §5.3)")]
    Version(u8),
    /// The signer's digest algorithm is not among the SignedData's digestAlgorithms (RFC 5652
    /// §5.1).
    #[error("digest algorithm {0} is not listed in the SignedData's digestAlgorithms")]
    DigestNotListed(String),
    /// The signatureTimeStampToken does not prove a time for this signature (RFC 3161).
    #[error("time-stamp token refused: {0}")]
    Timestamp(String),
    /// The signature does not verify.
    #[error("the signature does not verify")]
    BadSignature,
    /// The signer's certificate path does not validate.
    #[error("{0}")]
    Path(PathError),
}
