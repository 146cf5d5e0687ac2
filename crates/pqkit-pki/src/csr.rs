//! Certificate signing requests: PKCS#10 (RFC 2986) signed with any catalogue signature
//! algorithm, carrying a subjectAltName in the extensionRequest attribute (RFC 2985 §5.4.2).
//!
//! A CSR proves possession of its key by its own signature, so only signature keys can make
//! one; ML-KEM keys need another proof (RFC 9935 §7) and are issued with [`crate::cert::issue`].

use std::net::IpAddr;
use std::time::Duration;

use const_oid::AssociatedOid;
use der::asn1::{BitString, SetOfVec};
use der::{Decode, Encode};
use pqkit_core::sig::{SigningKey, VerifyingKey};
use x509_cert::attr::Attribute;
use x509_cert::ext::pkix::SubjectAltName;
use x509_cert::ext::pkix::name::GeneralName;
use x509_cert::name::Name;
use x509_cert::request::{CertReq, CertReqInfo, ExtensionReq, Version};

use crate::cert::{self, CertRequest, Issuer, Profile};
use crate::error::Error;
use crate::key::{algorithm_identifier, spki};

/// A CSR whose self-signature has been verified.
#[derive(Clone, Debug)]
pub struct VerifiedCsr {
    /// The requested subject, as the requester encoded it.
    pub subject: Name,
    /// The requester's verifying key, as the algorithm of the CSR's signature (which verified
    /// under it).
    pub public_key: VerifyingKey,
    /// DNS names of the requested subjectAltName.
    pub dns_names: Vec<String>,
    /// IP addresses of the requested subjectAltName.
    pub ip_addresses: Vec<IpAddr>,
    /// Size of the CSR's signature in bytes.
    pub signature_size: usize,
}

/// Makes a CSR for `key` with `subject` (RFC 4514 form, e.g. "CN=device 7,O=pqkit") and a
/// subjectAltName of `dns_names` and `ip_addresses` (omitted when both are empty). The
/// signature is the key's algorithm over the DER `CertificationRequestInfo`, with an empty
/// context for ML-DSA and SLH-DSA. Returns the CSR DER.
///
/// # Errors
/// [`Error::Malformed`] for a bad subject or name, [`Error::Crypto`] when signing fails.
pub fn create(
    key: &SigningKey,
    subject: &str,
    dns_names: &[String],
    ip_addresses: &[IpAddr],
) -> Result<Vec<u8>, Error> {
    let enc = |e| Error::malformed("CSR", e);
    let subject = cert::parse_subject(subject)?;
    let mut attributes = SetOfVec::new();
    if let Some(san) = cert::subject_alt_name(dns_names, ip_addresses)? {
        let request = Attribute::try_from(ExtensionReq(vec![san])).map_err(enc)?;
        attributes.insert(request).map_err(enc)?;
    }
    let info = CertReqInfo {
        version: Version::V1,
        subject,
        public_key: spki(&key.verifying_key())?,
        attributes,
    };
    let signature = key.sign(&info.to_der().map_err(enc)?, &[])?;
    CertReq {
        info,
        algorithm: algorithm_identifier(key.algorithm().signature_algorithm_id)?,
        signature: BitString::from_bytes(&signature).map_err(enc)?,
    }
    .to_der()
    .map_err(enc)
}

/// Decodes a CSR and verifies its signature under its own key.
///
/// # Errors
/// [`Error::Malformed`] for bad DER or a subjectAltName entry other than a DNS name or an IP
/// address; [`Error::UnknownAlgorithm`] for a key or signature algorithm outside the catalogue
/// or one the key does not make; [`Error::Crypto`] (`BadSignature`) when the signature fails.
pub fn verify(der: &[u8]) -> Result<VerifiedCsr, Error> {
    let bad = |e| Error::malformed("CSR", e);
    let csr = CertReq::from_der(der).map_err(bad)?;
    let info = csr.info.to_der().map_err(bad)?;
    let public_key = crate::signature::verify_signature(
        &csr.algorithm,
        &csr.info.public_key,
        &info,
        &csr.signature,
    )?;
    let (mut dns_names, mut ip_addresses) = (Vec::new(), Vec::new());
    for attribute in csr.info.attributes.iter() {
        if attribute.oid != ExtensionReq::OID {
            continue;
        }
        for value in attribute.values.iter() {
            let requested: ExtensionReq = value.decode_as().map_err(bad)?;
            for extension in requested.0 {
                if extension.extn_id != SubjectAltName::OID {
                    continue;
                }
                let san = SubjectAltName::from_der(extension.extn_value.as_bytes()).map_err(bad)?;
                for name in san.0 {
                    match name {
                        GeneralName::DnsName(dns) => dns_names.push(dns.as_str().to_owned()),
                        GeneralName::IpAddress(ip) => ip_addresses.push(ip_address(ip.as_bytes())?),
                        _ => {
                            return Err(Error::malformed(
                                "CSR",
                                "subjectAltName holds a name other than a DNS name or an IP address",
                            ));
                        }
                    }
                }
            }
        }
    }
    Ok(VerifiedCsr {
        subject: csr.info.subject,
        public_key,
        dns_names,
        ip_addresses,
        signature_size: csr.signature.raw_bytes().len(),
    })
}

/// Issues a certificate for a verified CSR: its subject, key and subjectAltName, the extensions
/// of `profile` (other requested extensions are not copied), valid for `validity` from now.
/// Returns the certificate DER.
///
/// # Errors
/// As [`cert::issue`].
pub fn issue(
    csr: &VerifiedCsr,
    profile: Profile,
    validity: Duration,
    issuer: Issuer<'_>,
) -> Result<Vec<u8>, Error> {
    let request = CertRequest {
        subject: csr.subject.to_string(),
        dns_names: csr.dns_names.clone(),
        ip_addresses: csr.ip_addresses.clone(),
        validity,
        profile,
    };
    cert::issue_named(&request, csr.subject.clone(), &csr.public_key, issuer)
}

fn ip_address(octets: &[u8]) -> Result<IpAddr, Error> {
    if let Ok(v4) = <[u8; 4]>::try_from(octets) {
        return Ok(IpAddr::from(v4));
    }
    <[u8; 16]>::try_from(octets)
        .map(IpAddr::from)
        .map_err(|_| Error::malformed("CSR", "an IP address is neither 4 nor 16 bytes"))
}
