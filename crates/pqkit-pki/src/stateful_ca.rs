//! A CA whose key is a stateful hash-based signature key (RFC 9802): certificates signed with
//! HSS, XMSS or XMSS^MT from a pqkit-hbs state file — each signature reserves its one-time key
//! in the state file (and the ledger) before it is made. The public keys and signature checks
//! are [`crate::stateful`]'s.

use std::time::SystemTime;

use der::Decode;
use pqkit_hbs::state::StatefulKey;
use spki::{AlgorithmIdentifierOwned, SubjectPublicKeyInfoOwned};
use x509_cert::Certificate;
use x509_cert::name::Name;

use crate::cert::{CertRequest, Signer, build, issuer_ski, key_identifier};
use crate::error::Error;
use crate::stateful::spki;

/// Issues a self-signed root for the stateful key `ca`. Uses one of its one-time keys.
///
/// # Errors
/// [`Error::Malformed`] for a bad subject; [`Error::State`] for the state file's errors
/// (exhaustion, a failed write).
pub fn issue_self_signed(request: &CertRequest, ca: &mut StatefulKey) -> Result<Vec<u8>, Error> {
    let subject = crate::cert::parse_subject(&request.subject)?;
    let public = ca.public_key();
    let ski = key_identifier(&public.to_bytes());
    let spki = spki(&public)?;
    let algorithm = AlgorithmIdentifierOwned {
        oid: public.oid(),
        parameters: None,
    };
    let mut sign = |tbs: &[u8]| Ok(ca.sign(tbs)?);
    build(
        request,
        subject.clone(),
        subject,
        spki,
        ski.clone(),
        ski,
        Signer {
            algorithm,
            sign: &mut sign,
        },
    )
}

/// Issues a certificate for the subject key `subject_spki` (DER SubjectPublicKeyInfo of any
/// algorithm) under the CA certificate `ca_cert`, signed by its stateful key `ca`.
///
/// # Errors
/// [`Error::Malformed`] when `ca` is not the CA certificate's key or for bad inputs;
/// [`Error::State`] for the state file's errors.
pub fn issue(
    request: &CertRequest,
    subject_spki: &[u8],
    ca_cert: &[u8],
    ca: &mut StatefulKey,
) -> Result<Vec<u8>, Error> {
    let subject = crate::cert::parse_subject(&request.subject)?;
    issue_named(request, subject, subject_spki, ca_cert, ca)
}

/// [`issue`] with the subject already decoded: a CSR's subject as its requester encoded it
/// (PrintableString, IA5String kept), not re-parsed from text.
///
/// # Errors
/// As [`issue`].
pub fn issue_named(
    request: &CertRequest,
    subject: Name,
    subject_spki: &[u8],
    ca_cert: &[u8],
    ca: &mut StatefulKey,
) -> Result<Vec<u8>, Error> {
    let bad = |e| Error::malformed("issuer certificate", e);
    crate::path::check_can_issue(ca_cert, request.profile.is_ca(), SystemTime::now())?;
    let subject_spki = SubjectPublicKeyInfoOwned::from_der(subject_spki)
        .map_err(|e| Error::malformed("subject SPKI", e))?;
    let ca_cert = Certificate::from_der(ca_cert).map_err(bad)?;
    let ca_tbs = &ca_cert.tbs_certificate;
    if ca_tbs.subject_public_key_info != spki(&ca.public_key())? {
        return Err(Error::malformed(
            "issuer",
            "the state file's key is not the CA certificate's key",
        ));
    }
    let issuer_ski = issuer_ski(ca_tbs)?;
    let ski = key_identifier(subject_spki.subject_public_key.raw_bytes());
    let issuer_name = ca_tbs.subject.clone();
    let mut sign = |tbs: &[u8]| Ok(ca.sign(tbs)?);
    let algorithm = AlgorithmIdentifierOwned {
        oid: ca_cert
            .tbs_certificate
            .subject_public_key_info
            .algorithm
            .oid,
        parameters: None,
    };
    build(
        request,
        subject,
        issuer_name,
        subject_spki,
        ski,
        issuer_ski,
        Signer {
            algorithm,
            sign: &mut sign,
        },
    )
}
