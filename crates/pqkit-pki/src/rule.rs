//! What a certification path is validated for ([`Purpose`]) and, when it fails, which
//! certificate broke which rule of RFC 5280 §6 ([`PathError`], [`Rule`]). A leaf module: the
//! validator ([`crate::path`], which re-exports these) and the crate's [`crate::Error`] both
//! use it.

use std::fmt;

use const_oid::ObjectIdentifier;
use const_oid::db::rfc5280;

/// What the leaf certificate is to be used for (RFC 5280 §4.2.1.12).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// TLS server authentication: id-kp-serverAuth.
    ServerAuth,
    /// TLS client authentication: id-kp-clientAuth.
    ClientAuth,
    /// Code and firmware signing: id-kp-codeSigning.
    CodeSigning,
    /// A time-stamping authority (RFC 3161 §2.3): id-kp-timeStamping.
    TimeStamping,
    /// Any purpose: extendedKeyUsage and the leaf's keyUsage are not checked (OpenSSL's
    /// `verify` without `-purpose`).
    Any,
}

impl Purpose {
    /// From the names `pqkit x509 verify --purpose` takes: serverAuth, clientAuth,
    /// codeSigning, timeStamping, any (case-insensitive, `-` and `_` ignored).
    ///
    /// # Errors
    /// The list of names, for an unknown one.
    pub fn from_name(name: &str) -> Result<Self, String> {
        let n: String = name
            .chars()
            .filter(|c| !matches!(c, '-' | '_'))
            .flat_map(char::to_lowercase)
            .collect();
        match n.as_str() {
            "serverauth" | "server" | "sslserver" => Ok(Self::ServerAuth),
            "clientauth" | "client" | "sslclient" => Ok(Self::ClientAuth),
            "codesigning" | "codesign" | "firmware" => Ok(Self::CodeSigning),
            "timestamping" | "timestamp" => Ok(Self::TimeStamping),
            "any" => Ok(Self::Any),
            _ => Err(format!(
                "{name:?}: expected serverAuth, clientAuth, codeSigning, timeStamping or any"
            )),
        }
    }

    /// The extendedKeyUsage purpose, if this purpose has one.
    pub fn eku(self) -> Option<ObjectIdentifier> {
        match self {
            Self::ServerAuth => Some(rfc5280::ID_KP_SERVER_AUTH),
            Self::ClientAuth => Some(rfc5280::ID_KP_CLIENT_AUTH),
            Self::CodeSigning => Some(rfc5280::ID_KP_CODE_SIGNING),
            Self::TimeStamping => Some(rfc5280::ID_KP_TIME_STAMPING),
            Self::Any => None,
        }
    }
}

impl fmt::Display for Purpose {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::ServerAuth => "serverAuth",
            Self::ClientAuth => "clientAuth",
            Self::CodeSigning => "codeSigning",
            Self::TimeStamping => "timeStamping",
            Self::Any => "any purpose",
        })
    }
}

/// A certificate that broke a rule of path validation.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{certificate}: {rule}")]
pub struct PathError {
    /// Which certificate, e.g. `certificate 1 (intermediate) "CN=pqkit intermediate CA"`.
    pub certificate: String,
    /// The rule it broke.
    pub rule: Rule,
}

/// The rules of RFC 5280 path validation, each as a reason a person can act on.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rule {
    /// notAfter is before the validation time (§6.1.3 (a)(2)).
    Expired {
        /// notAfter, RFC 3339.
        not_after: String,
    },
    /// notBefore is after the validation time (§6.1.3 (a)(2)).
    NotYetValid {
        /// notBefore, RFC 3339.
        not_before: String,
    },
    /// notBefore after notAfter.
    BadValidity,
    /// No CA certificate's subject is this certificate's issuer (§6.1.3 (a)(4)).
    UnknownIssuer {
        /// The issuer name the certificate names.
        issuer: String,
    },
    /// Its signature does not verify under the key of the CA named as its issuer
    /// (§6.1.3 (a)(1)).
    BadSignature {
        /// The issuer.
        issuer: String,
    },
    /// The signature algorithm inside the TBSCertificate differs from the outer one
    /// (§4.1.1.2).
    SignatureAlgorithmMismatch,
    /// The signature algorithm is unknown or not one the issuer's key makes.
    UnsupportedSignatureAlgorithm {
        /// The issuer whose key was tried.
        issuer: String,
    },
    /// Used as an issuer but not a CA: basicConstraints cA is absent or false (§4.2.1.9,
    /// §6.1.4 (k)).
    NotACa,
    /// A CA certificate presented as the leaf.
    CaAsLeaf,
    /// More CA certificates below it than its pathLenConstraint allows (§6.1.4 (m)).
    PathLenExceeded,
    /// Used as an issuer but its keyUsage lacks keyCertSign (§4.2.1.3, §6.1.4 (n)).
    NoKeyCertSign,
    /// A leaf used for signing whose keyUsage lacks digitalSignature (§4.2.1.3).
    NoDigitalSignature,
    /// extendedKeyUsage lacks the purpose asked for (§4.2.1.12).
    WrongPurpose {
        /// The purpose asked for.
        purpose: Purpose,
    },
    /// A critical extension this validator does not process (§4.2).
    UnknownCriticalExtension {
        /// Its OID.
        oid: String,
    },
    /// A name outside the name constraints of a CA above it (§4.2.1.10, §6.1.4 (g)).
    NameConstraints,
    /// Revoked by a CRL given (RFC 5280 §6.3).
    Revoked,
    /// More intermediate CA certificates than allowed (`--max-depth`).
    TooDeep {
        /// The most allowed, self-issued ones not counted.
        max: usize,
    },
    /// Breaks a rule of the certificate profile (RFC 5280 §4, or the CA/Browser Forum
    /// Baseline Requirements under [`Profile::WebPki`]).
    Nonconforming {
        /// The rule and where it is written.
        detail: String,
    },
    /// Not valid for the name asked for (RFC 9525).
    WrongName {
        /// The name asked for.
        name: String,
    },
    /// Does not decode as an X.509 v3 certificate.
    Malformed {
        /// The decoder's message.
        detail: String,
    },
    /// Anything else webpki reports, in its words.
    Other {
        /// The reason.
        detail: String,
    },
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Expired { not_after } => write!(
                f,
                "expired: valid until {not_after} (RFC 5280 §6.1.3 (a)(2))"
            ),
            Self::NotYetValid { not_before } => write!(
                f,
                "not yet valid: valid from {not_before} (RFC 5280 §6.1.3 (a)(2))"
            ),
            Self::BadValidity => f.write_str("notBefore is after notAfter"),
            Self::UnknownIssuer { issuer } => write!(
                f,
                "its issuer \"{issuer}\" is the subject of no CA certificate given or trusted \
                 (RFC 5280 §6.1.3 (a)(4))"
            ),
            Self::BadSignature { issuer } => write!(
                f,
                "its signature does not verify under the key of \"{issuer}\" (RFC 5280 §6.1.3 \
                 (a)(1))"
            ),
            Self::SignatureAlgorithmMismatch => f.write_str(
                "the signature algorithm in the TBSCertificate differs from the certificate's \
                 (RFC 5280 §4.1.1.2)",
            ),
            Self::UnsupportedSignatureAlgorithm { issuer } => write!(
                f,
                "its signature algorithm is not one the key of \"{issuer}\" makes (or pqkit does \
                 not know it): another CA of that name, or the wrong CA certificate"
            ),
            Self::NotACa => f.write_str(
                "issues a certificate but is not a CA: basicConstraints cA is absent or false \
                 (RFC 5280 §4.2.1.9, §6.1.4 (k))",
            ),
            Self::CaAsLeaf => f.write_str(
                "is a CA certificate (basicConstraints cA) but is presented as the leaf",
            ),
            Self::PathLenExceeded => f.write_str(
                "more CA certificates follow it than its pathLenConstraint allows (RFC 5280 \
                 §6.1.4 (m))",
            ),
            Self::NoKeyCertSign => f.write_str(
                "issues a certificate but its keyUsage lacks keyCertSign (RFC 5280 §4.2.1.3, \
                 §6.1.4 (n))",
            ),
            Self::NoDigitalSignature => f.write_str(
                "its keyUsage lacks digitalSignature, so it may not sign (RFC 5280 §4.2.1.3)",
            ),
            Self::WrongPurpose { purpose } => write!(
                f,
                "its extendedKeyUsage does not include {purpose} (RFC 5280 §4.2.1.12)"
            ),
            Self::UnknownCriticalExtension { oid } => write!(
                f,
                "has a critical extension pqkit does not process ({oid}); a certificate with \
                 one must be rejected (RFC 5280 §4.2)"
            ),
            Self::NameConstraints => f.write_str(
                "a name in it is outside the name constraints of a CA above it (RFC 5280 \
                 §4.2.1.10)",
            ),
            Self::Revoked => f.write_str("revoked by a CRL given (RFC 5280 §6.3)"),
            Self::TooDeep { max } => write!(
                f,
                "the path has more than {max} intermediate CA certificates (self-issued ones \
                 not counted), the most allowed"
            ),
            Self::Nonconforming { detail } => f.write_str(detail),
            Self::WrongName { name } => write!(
                f,
                "not valid for {name}: no subjectAltName entry matches it (RFC 9525 §6)"
            ),
            Self::Malformed { detail } => write!(f, "malformed certificate: {detail}"),
            Self::Other { detail } => f.write_str(detail),
        }
    }
}
