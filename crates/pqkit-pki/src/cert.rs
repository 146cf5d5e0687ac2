//! X.509 v3 certificates (RFC 5280) signed with any catalogue algorithm.
//!
//! ML-DSA certificates follow RFC 9881: the SPKI and signature `AlgorithmIdentifier`s carry the
//! id-ml-dsa-NN OID with parameters absent, and the signature is pure ML-DSA over the DER
//! `TBSCertificate` with an empty context.

use std::net::IpAddr;
use std::str::FromStr;
use std::time::{Duration, SystemTime};

use const_oid::AssociatedOid;
use der::asn1::{BitString, Ia5String, OctetString};
use der::{Decode, Encode};
use pqkit_core::sig::{SigningKey, VerifyingKey};
use spki::{AlgorithmIdentifierOwned, SubjectPublicKeyInfoOwned};
use x509_cert::ext::Extension;
use x509_cert::ext::pkix::name::GeneralName;
use x509_cert::ext::pkix::{
    AuthorityKeyIdentifier, BasicConstraints, ExtendedKeyUsage, KeyUsage, KeyUsages,
    SubjectAltName, SubjectKeyIdentifier,
};
use x509_cert::name::Name;
use x509_cert::serial_number::SerialNumber;
use x509_cert::time::{Time, Validity};
use x509_cert::{Certificate, TbsCertificate, Version};

use crate::error::Error;
use crate::key::{algorithm_identifier, spki};
pub use crate::signature::verify_signed_by;

/// What a certificate is for; decides its extensions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// A self-signed root CA: basicConstraints cA, keyCertSign and cRLSign.
    RootCa,
    /// An intermediate CA: basicConstraints cA with pathLenConstraint 0, keyCertSign, cRLSign.
    IntermediateCa,
    /// A TLS server: digitalSignature, serverAuth, SAN from the request.
    Server,
    /// A TLS client: digitalSignature, clientAuth, SAN from the request.
    Client,
    /// Code or firmware signing: digitalSignature, codeSigning (RFC 5280 §4.2.1.12), no SAN
    /// unless the request has one.
    CodeSigning,
    /// A time-stamping authority (RFC 3161 §2.3): digitalSignature, and timeStamping as the
    /// only extendedKeyUsage, critical.
    TimeStamping,
}

impl core::fmt::Display for Profile {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Self::RootCa => "root CA",
            Self::IntermediateCa => "intermediate CA",
            Self::Server => "server",
            Self::Client => "client",
            Self::CodeSigning => "code-signing",
            Self::TimeStamping => "time-stamping",
        })
    }
}

impl Profile {
    /// Whether certificates of this profile are CA certificates.
    pub fn is_ca(self) -> bool {
        matches!(self, Self::RootCa | Self::IntermediateCa)
    }
}

/// A distinguished name from its RFC 4514 text, e.g. `CN=device 7,O=pqkit`.
///
/// # Errors
/// [`Error::Malformed`] saying what was given and what is expected.
pub fn parse_subject(text: &str) -> Result<Name, Error> {
    Name::from_str(text).map_err(|e| {
        Error::malformed(
            "subject",
            format!(
                "{text:?} is not an RFC 4514 distinguished name such as \"CN=device 7,O=pqkit\" \
                 ({e})"
            ),
        )
    })
}

/// The subject-specific fields of a certificate to issue.
#[derive(Clone, Debug)]
pub struct CertRequest {
    /// Subject distinguished name in RFC 4514 form, e.g. "CN=pqkit server,O=pqkit".
    pub subject: String,
    /// DNS names for the subjectAltName.
    pub dns_names: Vec<String>,
    /// IP addresses for the subjectAltName.
    pub ip_addresses: Vec<IpAddr>,
    /// Validity period from now.
    pub validity: Duration,
    /// The extensions profile.
    pub profile: Profile,
}

impl CertRequest {
    /// A request for `profile` with subject CN `common_name`, valid for 365 days, with SAN
    /// `localhost` and `127.0.0.1` for servers and clients.
    pub fn new(profile: Profile, common_name: &str) -> Self {
        let (dns_names, ip_addresses) = match profile {
            Profile::RootCa
            | Profile::IntermediateCa
            | Profile::CodeSigning
            | Profile::TimeStamping => (Vec::new(), Vec::new()),
            Profile::Server | Profile::Client => (
                vec!["localhost".to_owned()],
                vec![IpAddr::from([127, 0, 0, 1])],
            ),
        };
        Self {
            subject: format!("CN={common_name},O=pqkit"),
            dns_names,
            ip_addresses,
            validity: Duration::from_secs(365 * 24 * 3600),
            profile,
        }
    }
}

/// The issuing side: a CA certificate and its signing key.
#[derive(Clone, Copy, Debug)]
pub struct Issuer<'a> {
    /// The CA certificate (DER).
    pub certificate: &'a [u8],
    /// The CA's signing key.
    pub key: &'a SigningKey,
}

/// Issues a certificate for `subject_key`, signed by `issuer`. Returns the certificate DER.
///
/// # Errors
/// [`Error::Malformed`] for a bad subject string or issuer certificate, [`Error::Crypto`] when
/// signing fails.
pub fn issue(
    request: &CertRequest,
    subject_key: &VerifyingKey,
    issuer: Issuer<'_>,
) -> Result<Vec<u8>, Error> {
    let subject = parse_subject(&request.subject)?;
    issue_named(request, subject, subject_key, issuer)
}

/// Issues a certificate for the subject key `subject_spki` — a SubjectPublicKeyInfo (DER) of
/// any algorithm pqkit-pki encodes, a stateful HSS / XMSS key's (RFC 9802) too — signed by
/// `issuer`. Returns the certificate DER.
///
/// # Errors
/// As [`issue`]; [`Error::Malformed`] for an SPKI that does not decode.
pub fn issue_for_spki(
    request: &CertRequest,
    subject_spki: &[u8],
    issuer: Issuer<'_>,
) -> Result<Vec<u8>, Error> {
    let subject = parse_subject(&request.subject)?;
    let spki = SubjectPublicKeyInfoOwned::from_der(subject_spki)
        .map_err(|e| Error::malformed("subject SPKI", e))?;
    issue_spki(request, subject, spki, issuer)
}

/// [`issue`] with the subject already decoded (a CSR's subject is kept as its requester encoded
/// it, not re-parsed from text).
pub(crate) fn issue_named(
    request: &CertRequest,
    subject: Name,
    subject_key: &VerifyingKey,
    issuer: Issuer<'_>,
) -> Result<Vec<u8>, Error> {
    issue_spki(request, subject, spki(subject_key)?, issuer)
}

/// [`issue`] for a decoded name and SPKI.
fn issue_spki(
    request: &CertRequest,
    subject: Name,
    subject_spki: SubjectPublicKeyInfoOwned,
    issuer: Issuer<'_>,
) -> Result<Vec<u8>, Error> {
    let bad = |e| Error::malformed("issuer certificate", e);
    crate::path::check_can_issue(
        issuer.certificate,
        request.profile.is_ca(),
        SystemTime::now(),
    )?;
    let ca = Certificate::from_der(issuer.certificate).map_err(bad)?;
    let ca_tbs = &ca.tbs_certificate;
    // The same SPKI, not the same algorithm: an RSA SPKI does not say PSS or PKCS#1.
    let ca_spki = &ca_tbs.subject_public_key_info;
    if *ca_spki != spki(&issuer.key.verifying_key())? {
        return Err(Error::malformed(
            "issuer",
            "the signing key is not the CA certificate's key",
        ));
    }
    let issuer_ski = issuer_ski(ca_tbs)?;
    let ski = key_identifier(subject_spki.subject_public_key.raw_bytes());
    let mut sign = |tbs: &[u8]| Ok(issuer.key.sign(tbs, &[])?);
    build(
        request,
        subject,
        ca_tbs.subject.clone(),
        subject_spki,
        ski,
        issuer_ski,
        Signer::of_key(issuer.key, &mut sign)?,
    )
}

/// Issues a self-signed certificate (a root CA) for `key`.
///
/// # Errors
/// As [`issue`].
pub fn issue_self_signed(request: &CertRequest, key: &SigningKey) -> Result<Vec<u8>, Error> {
    let subject = parse_subject(&request.subject)?;
    let vk = key.verifying_key();
    let ski = key_identifier(vk.as_bytes());
    let mut sign = |tbs: &[u8]| Ok(key.sign(tbs, &[])?);
    build(
        request,
        subject.clone(),
        subject,
        spki(&vk)?,
        ski.clone(),
        ski,
        Signer::of_key(key, &mut sign)?,
    )
}

/// The CA side of [`build`]: its signature AlgorithmIdentifier and how it signs the DER
/// TBSCertificate.
pub(crate) struct Signer<'a> {
    pub(crate) algorithm: AlgorithmIdentifierOwned,
    pub(crate) sign: &'a mut SignFn<'a>,
}

/// Signs a DER TBSCertificate.
pub(crate) type SignFn<'a> = dyn FnMut(&[u8]) -> Result<Vec<u8>, Error> + 'a;

impl<'a> Signer<'a> {
    /// A catalogue signing key's signer (pure signing, empty context).
    fn of_key(key: &'a SigningKey, sign: &'a mut SignFn<'a>) -> Result<Self, Error> {
        Ok(Self {
            algorithm: algorithm_identifier(key.algorithm().signature_algorithm_id)?,
            sign,
        })
    }
}

pub(crate) fn build(
    request: &CertRequest,
    subject: Name,
    issuer: Name,
    subject_public_key_info: SubjectPublicKeyInfoOwned,
    ski: Vec<u8>,
    issuer_ski: Vec<u8>,
    signer: Signer<'_>,
) -> Result<Vec<u8>, Error> {
    let enc = |e| Error::malformed("certificate", e);
    let signature_algorithm = signer.algorithm;
    let tbs = TbsCertificate {
        version: Version::V3,
        serial_number: random_serial()?,
        signature: signature_algorithm.clone(),
        issuer,
        validity: validity(request.validity)?,
        subject,
        subject_public_key_info,
        issuer_unique_id: None,
        subject_unique_id: None,
        extensions: Some(extensions(request, ski, issuer_ski)?),
    };
    let tbs_der = tbs.to_der().map_err(enc)?;
    let signature = (signer.sign)(&tbs_der)?;
    let cert = Certificate {
        tbs_certificate: tbs,
        signature_algorithm,
        signature: BitString::from_bytes(&signature).map_err(enc)?,
    };
    cert.to_der().map_err(enc)
}

fn extensions(
    request: &CertRequest,
    ski: Vec<u8>,
    issuer_ski: Vec<u8>,
) -> Result<Vec<Extension>, Error> {
    let enc = |e| Error::malformed("extension", e);
    let mut out = Vec::new();
    let (ca, path_len, usages) = match request.profile {
        Profile::RootCa => (true, None, KeyUsages::KeyCertSign | KeyUsages::CRLSign),
        Profile::IntermediateCa => (true, Some(0), KeyUsages::KeyCertSign | KeyUsages::CRLSign),
        Profile::Server | Profile::Client | Profile::CodeSigning | Profile::TimeStamping => {
            (false, None, KeyUsages::DigitalSignature.into())
        }
    };
    out.push(extension(
        &BasicConstraints {
            ca,
            path_len_constraint: path_len,
        },
        true,
    )?);
    out.push(extension(&KeyUsage(usages), true)?);
    out.push(extension(
        &SubjectKeyIdentifier(OctetString::new(ski).map_err(enc)?),
        false,
    )?);
    out.push(extension(
        &AuthorityKeyIdentifier {
            key_identifier: Some(OctetString::new(issuer_ski).map_err(enc)?),
            authority_cert_issuer: None,
            authority_cert_serial_number: None,
        },
        false,
    )?);
    let eku = match request.profile {
        Profile::RootCa | Profile::IntermediateCa => None,
        Profile::Server => Some(const_oid::db::rfc5280::ID_KP_SERVER_AUTH),
        Profile::Client => Some(const_oid::db::rfc5280::ID_KP_CLIENT_AUTH),
        Profile::CodeSigning => Some(const_oid::db::rfc5280::ID_KP_CODE_SIGNING),
        Profile::TimeStamping => Some(const_oid::db::rfc5280::ID_KP_TIME_STAMPING),
    };
    if let Some(eku) = eku {
        // RFC 3161 §2.3: a TSA's extendedKeyUsage is critical.
        let critical = request.profile == Profile::TimeStamping;
        out.push(extension(&ExtendedKeyUsage(vec![eku]), critical)?);
    }
    if let Some(san) = subject_alt_name(&request.dns_names, &request.ip_addresses)? {
        out.push(san);
    }
    Ok(out)
}

/// The subjectAltName extension (RFC 5280 §4.2.1.6) for DNS names and IP addresses; `None`
/// when both are empty.
pub(crate) fn subject_alt_name(
    dns_names: &[String],
    ip_addresses: &[IpAddr],
) -> Result<Option<Extension>, Error> {
    let enc = |e| Error::malformed("subjectAltName", e);
    let mut names = Vec::new();
    for dns in dns_names {
        crate::path::issued_dns_name(dns).map_err(|e| Error::malformed("subjectAltName", e))?;
        names.push(GeneralName::DnsName(Ia5String::new(dns).map_err(enc)?));
    }
    for ip in ip_addresses {
        let octets = match ip {
            IpAddr::V4(v4) => v4.octets().to_vec(),
            IpAddr::V6(v6) => v6.octets().to_vec(),
        };
        names.push(GeneralName::IpAddress(
            OctetString::new(octets).map_err(enc)?,
        ));
    }
    if names.is_empty() {
        return Ok(None);
    }
    extension(&SubjectAltName(names), false).map(Some)
}

pub(crate) fn extension<T: AssociatedOid + Encode>(
    value: &T,
    critical: bool,
) -> Result<Extension, Error> {
    let enc = |e| Error::malformed("extension", e);
    Ok(Extension {
        extn_id: T::OID,
        critical,
        extn_value: OctetString::new(value.to_der().map_err(enc)?).map_err(enc)?,
    })
}

/// From [`NOT_BEFORE_SLACK`] ago until `duration` from now.
fn validity(duration: Duration) -> Result<Validity, Error> {
    let enc = |e| Error::malformed("validity", e);
    let now = SystemTime::now();
    Ok(Validity {
        not_before: Time::try_from(now - NOT_BEFORE_SLACK).map_err(enc)?,
        not_after: Time::try_from(now + duration).map_err(enc)?,
    })
}

/// RFC 5280 §4.2.1.2 method: the first 20 bytes of SHA-256 over the public key bits.
/// The key identifier for an AKI: RFC 5280 §4.2.1.1 repeats the issuer's SKI, however the
/// issuer computed it (or ours of its key when it has none).
pub(crate) fn issuer_ski(ca_tbs: &TbsCertificate) -> Result<Vec<u8>, Error> {
    Ok(ca_tbs
        .get::<SubjectKeyIdentifier>()
        .map_err(|e| Error::malformed("issuer certificate", e))?
        .map_or_else(
            || {
                key_identifier(
                    ca_tbs
                        .subject_public_key_info
                        .subject_public_key
                        .raw_bytes(),
                )
            },
            |(_, ski)| ski.0.as_bytes().to_vec(),
        ))
}

pub(crate) fn key_identifier(public_key: &[u8]) -> Vec<u8> {
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, public_key);
    digest.as_ref()[..20].to_vec()
}

/// A positive 16-byte serial number from the OS RNG (RFC 5280 §4.1.2.2: at most 20 bytes).
fn random_serial() -> Result<SerialNumber, Error> {
    let mut bytes = [0u8; 16];
    aws_lc_rs::rand::fill(&mut bytes).map_err(|_| pqkit_core::Error::Rng)?;
    bytes[0] &= 0x7f;
    bytes[0] |= 0x01;
    SerialNumber::new(&bytes).map_err(|e| Error::malformed("serial number", e))
}

/// notBefore is backdated by this much so that peers whose clocks lag a little still accept a
/// certificate issued a moment ago.
const NOT_BEFORE_SLACK: Duration = Duration::from_secs(300);
