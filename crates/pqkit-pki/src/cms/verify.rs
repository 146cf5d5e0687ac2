//! Verifying a SignedData (RFC 5652 §5.6): each signer's certificate found by its identifier,
//! its digest and signature algorithms checked against the key, its signed attributes
//! checked (RFC 5652 §11, RFC 6211), its signature verified, and its certificate path
//! validated ([`crate::path`]); then the policy over several signers.

use std::io::Read;
use std::time::SystemTime;

use cms::signed_data::{SignedData, SignerIdentifier, SignerInfo};
use const_oid::ObjectIdentifier;
use der::asn1::{BitString, Null};
use der::{Any, Encode};
use pqkit_core::sig::{Family, MuHasher, VerifyingKey};
use rustls_pki_types::CertificateDer;
use spki::{AlgorithmIdentifierOwned, SubjectPublicKeyInfoOwned};

use super::content::{Pass, PassError};
use super::decode::{
    CertPool, algorithm_name, attached_content, carried_certificates, decode, expected_version,
    sid_words, subject_of, version_number,
};
use super::digest::{DigestAlgorithm, allowed};
use super::error::{CmsError, Require, SignerVerdict};
use super::oids::{ID_DATA, RSA_ENCRYPTION, SHA256_WITH_RSA};
use super::refusal::Refusal;
use crate::error::Error;
use crate::path::{Policy, TrustAnchors};

/// What to verify against.
pub struct VerifyOptions<'a> {
    /// The trusted CA certificates.
    pub anchors: &'a TrustAnchors,
    /// Purposes (code signing by default in the CLI), validation time, CRLs.
    pub policy: Policy,
    /// More certificates (DER) to find signers' certificates and intermediate CAs among.
    pub certificates: Vec<Vec<u8>>,
    /// Only the signers whose certificate (DER) is one of these; empty: every signer.
    pub signers: Vec<Vec<u8>>,
    /// How many signers must verify.
    pub require: Require,
    /// The trusted time-stamping authorities' CA certificates, for signers' RFC 3161 tokens;
    /// `None`: `anchors` (a TSA under the code-signing CAs).
    pub tsa_anchors: Option<&'a TrustAnchors>,
}

/// A SignedData that satisfied the policy.
#[derive(Clone, Debug)]
pub struct Verified {
    /// Every signer considered, those that failed too (under [`Require::Any`]).
    pub signers: Vec<SignerVerdict>,
    /// The attached content (`None` when detached).
    pub content: Option<Vec<u8>>,
    /// The encapsulated content type (id-data for pqkit's).
    pub content_type: ObjectIdentifier,
}

/// How a signer's signature is checked.
enum Checker {
    Key(VerifyingKey),
    Stateful(SubjectPublicKeyInfoOwned, AlgorithmIdentifierOwned),
}

/// A signer with its certificate found and its algorithms checked.
struct Resolved {
    certificate: Vec<u8>,
    /// The signature algorithm's name.
    name: String,
    checker: Checker,
    digest: DigestAlgorithm,
}

fn resolve(si: &SignerInfo, sd: &SignedData, certs: &CertPool) -> Result<Resolved, Refusal> {
    let wanted = match si.sid {
        SignerIdentifier::IssuerAndSerialNumber(_) => 1,
        SignerIdentifier::SubjectKeyIdentifier(_) => 3,
    };
    let version = version_number(si.version);
    if version != wanted {
        return Err(Refusal::Version(version));
    }
    // NULL and absent parameters alike (RFC 5754 §2).
    let same = |d: &AlgorithmIdentifierOwned| {
        *d == si.digest_alg
            || DigestAlgorithm::from_identifier(d)
                .is_some_and(|x| DigestAlgorithm::from_identifier(&si.digest_alg) == Some(x))
    };
    if !sd.digest_algorithms.iter().any(same) {
        return Err(Refusal::DigestNotListed(
            DigestAlgorithm::from_identifier(&si.digest_alg)
                .map_or_else(|| si.digest_alg.oid.to_string(), |d| d.name().into()),
        ));
    }
    let (cert_der, cert) = certs
        .find(&si.sid)
        .ok_or_else(|| Refusal::NoCertificate(sid_words(&si.sid)))?;
    let cert_der = cert_der.clone();
    let spki = cert.tbs_certificate.subject_public_key_info.clone();
    let name = algorithm_name(&si.signature_algorithm, Some(&spki));
    let digest =
        DigestAlgorithm::from_identifier(&si.digest_alg).ok_or_else(|| Refusal::Digest {
            digest: si.digest_alg.oid.to_string(),
            signature: name.clone(),
        })?;
    if !allowed(&si.signature_algorithm.oid, digest) {
        return Err(Refusal::Digest {
            digest: digest.name().into(),
            signature: name,
        });
    }
    if crate::stateful::is_stateful(&si.signature_algorithm) {
        return Ok(Resolved {
            certificate: cert_der,
            name,
            checker: Checker::Stateful(spki, si.signature_algorithm.clone()),
            digest,
        });
    }
    // OpenSSL names RSA PKCS#1 v1.5 signers rsaEncryption (RFC 3370 §3.2): the digest says
    // which hash.
    let signature_id = if si.signature_algorithm.oid == RSA_ENCRYPTION {
        if digest != DigestAlgorithm::Sha256 {
            return Err(Refusal::Algorithm(format!("{name} with {digest}")));
        }
        AlgorithmIdentifierOwned {
            oid: SHA256_WITH_RSA,
            parameters: Some(Any::from(Null)),
        }
    } else {
        si.signature_algorithm.clone()
    };
    let key_bits = spki
        .subject_public_key
        .as_bytes()
        .ok_or_else(|| Refusal::Algorithm(name.clone()))?;
    let contents = |id: &AlgorithmIdentifierOwned| {
        crate::key::algorithm_contents(id).map_err(|_| Refusal::Algorithm(name.clone()))
    };
    let alg = pqkit_core::catalogue::signature_by_algorithms(
        &contents(&signature_id)?,
        &contents(&spki.algorithm)?,
        key_bits.len(),
    )
    .ok_or_else(|| Refusal::Algorithm(name.clone()))?;
    let key = alg
        .verifying_key(key_bits)
        .map_err(|_| Refusal::Algorithm(name.clone()))?;
    Ok(Resolved {
        certificate: cert_der,
        name: alg.name.into(),
        checker: Checker::Key(key),
        digest,
    })
}

impl Checker {
    fn verify(&self, message: &[u8], signature: &[u8]) -> Result<(), Refusal> {
        match self {
            Self::Key(k) => k.verify(message, &[], signature),
            Self::Stateful(spki, id) => crate::stateful::verify_signature(
                id,
                spki,
                message,
                &BitString::from_bytes(signature).map_err(|_| Refusal::BadSignature)?,
            )
            .map_err(|_| pqkit_core::Error::BadSignature),
        }
        .map_err(|_| Refusal::BadSignature)
    }

    /// An ML-DSA key's μ hasher for content signed without attributes.
    fn mu(&self) -> Option<MuHasher> {
        match self {
            Self::Key(k) if k.algorithm().family == Family::MlDsa => k.mu_hasher(&[]).ok(),
            _ => None,
        }
    }
}

/// One pass over the content for the signers considered: the digest of each with signed
/// attributes, μ for each ML-DSA one without, the bytes when `hold`.
fn read_content(
    content: &mut dyn Read,
    resolved: &[Option<&Resolved>],
    infos: &[&SignerInfo],
    hold: bool,
) -> Result<Pass, CmsError> {
    let mut digests = Vec::new();
    let mut mus = Vec::new();
    for (r, si) in resolved.iter().zip(infos) {
        match r {
            Some(r) if si.signed_attrs.is_some() => {
                digests.push(r.digest);
                mus.push(None);
            }
            Some(r) => mus.push(r.checker.mu()),
            None => mus.push(None),
        }
    }
    super::content::read(content, &digests, mus, hold).map_err(|e| match e {
        PassError::Io(e) => Error::io(std::path::Path::new("content"), e).into(),
        PassError::TooLarge => CmsError::TooLarge,
    })
}

fn check_signer(
    si: &SignerInfo,
    r: &Resolved,
    pass: &Pass,
    mu: Option<&[u8; 64]>,
    content_type: &ObjectIdentifier,
) -> Result<Option<SystemTime>, Refusal> {
    let signature = si.signature.as_bytes();
    let Some(attrs) = &si.signed_attrs else {
        if *content_type != ID_DATA {
            return Err(Refusal::AttributesRequired);
        }
        return match (mu, &r.checker) {
            (Some(mu), Checker::Key(k)) => k
                .verify_mu(mu, signature)
                .map_err(|_| Refusal::BadSignature)
                .map(|()| None),
            _ => {
                let held = pass.held.as_deref().unwrap_or_default();
                r.checker.verify(held, signature).map(|()| None)
            }
        };
    };
    let signed = super::attributes::check(attrs, content_type)?;
    if !bool::from(subtle::ConstantTimeEq::ct_eq(
        pass.digest(r.digest),
        signed.message_digest.as_slice(),
    )) {
        return Err(Refusal::MessageDigest(r.digest.name()));
    }
    if let Some(p) = &signed.protection {
        let digest_ok = DigestAlgorithm::from_identifier(&p.digest_algorithm) == Some(r.digest);
        let signature_ok = p
            .signature_algorithm
            .as_ref()
            .is_some_and(|s| *s == si.signature_algorithm);
        if !digest_ok || !signature_ok || p.mac_algorithm.is_some() {
            return Err(Refusal::AlgorithmProtection);
        }
    }
    let der = attrs
        .to_der()
        .map_err(|_| Refusal::MalformedAttribute("signedAttrs"))?;
    r.checker.verify(&der, signature)?;
    Ok(signed.signing_time)
}

/// Verifies the SignedData in `der` (a DER ContentInfo), over its attached content or over
/// `detached`, read once to its end (streamed through the digests; held in memory, at most
/// [`super::MAX_HELD_CONTENT`] bytes, only for a signer without signed attributes other than
/// ML-DSA). Each signer considered ([`VerifyOptions::signers`]) must have its certificate
/// (carried or given), a digest its signature algorithm's profile allows, valid signed
/// attributes, a valid signature and a certificate path to `anchors` under the policy.
///
/// # Errors
/// [`CmsError::Rejected`] with every signer's verdict when the [`Require`] policy fails; the
/// other [`CmsError`]s for the object as a whole ([`CmsError::Pki`] with [`Error::Io`] from the
/// reader).
pub fn verify(
    der: &[u8],
    detached: Option<&mut dyn Read>,
    options: &VerifyOptions<'_>,
) -> Result<Verified, CmsError> {
    verify_inner(der, detached, options, false)
}

/// The time a signer's time-stamp token proves, once the token verifies as a SignedData by a
/// TSA (timeStamping, now) over a TSTInfo for this signature; `None` without a token.
fn timestamp_of(
    si: &SignerInfo,
    options: &VerifyOptions<'_>,
    nested: bool,
) -> Result<Option<SystemTime>, Refusal> {
    let Some(token) = super::timestamp::token_of(si.unsigned_attrs.as_ref())? else {
        return Ok(None);
    };
    if nested {
        return Err(Refusal::Timestamp(
            "a time-stamp token inside a time-stamp token".into(),
        ));
    }
    let tsa = VerifyOptions {
        anchors: options.tsa_anchors.unwrap_or(options.anchors),
        tsa_anchors: None,
        policy: Policy {
            purposes: vec![crate::path::Purpose::TimeStamping],
            names: Vec::new(),
            ..options.policy.clone()
        },
        certificates: options.certificates.clone(),
        signers: Vec::new(),
        require: Require::All,
    };
    let v =
        verify_inner(&token, None, &tsa, true).map_err(|e| Refusal::Timestamp(e.to_string()))?;
    let [signer] = v.signers.as_slice() else {
        return Err(Refusal::Timestamp("a token has one signer, the TSA".into()));
    };
    let tsa_cert = signer
        .result
        .as_ref()
        .ok()
        .and_then(|path| path.certificates.first())
        .ok_or_else(|| Refusal::Timestamp("the TSA's path is missing".into()))?;
    super::timestamp::check_tsa_certificate(tsa_cert)?;
    // RFC 3161 §2.4.1: the token's signed attributes name the TSA's certificate (ESS).
    let token_sd = decode(&token).map_err(|e| Refusal::Timestamp(e.to_string()))?;
    let named = token_sd
        .signer_infos
        .0
        .get(0)
        .and_then(|tsa| tsa.signed_attrs.as_ref())
        .and_then(|attrs| super::attributes::names_signing_certificate(attrs, tsa_cert));
    match named {
        Some(true) => {}
        Some(false) => {
            return Err(Refusal::Timestamp(
                "its ESS signingCertificate names another certificate than the TSA's".into(),
            ));
        }
        None => {
            return Err(Refusal::Timestamp(
                "it has no ESS signingCertificate attribute (RFC 3161 §2.4.1)".into(),
            ));
        }
    }
    super::timestamp::proven_time(
        &v.content_type,
        v.content.as_deref(),
        si.signature.as_bytes(),
    )
    .map(Some)
}

fn verify_inner(
    der: &[u8],
    detached: Option<&mut dyn Read>,
    options: &VerifyOptions<'_>,
    nested: bool,
) -> Result<Verified, CmsError> {
    let sd = decode(der)?;
    let (version, wanted) = (version_number(sd.version), expected_version(&sd));
    if version != wanted {
        return Err(CmsError::Malformed(format!(
            "SignedData version {version}; RFC 5652 §5.1 requires {wanted} for what it holds"
        )));
    }
    let attached = attached_content(&sd)?;
    let content_type = sd.encap_content_info.econtent_type;
    let mut ders = carried_certificates(&sd);
    ders.extend(options.certificates.iter().cloned());
    ders.extend(options.signers.iter().cloned());
    let pool = CertPool::new(ders)?;
    let all: Vec<&SignerInfo> = sd.signer_infos.0.iter().collect();
    if all.is_empty() {
        return Err(CmsError::NoSigner(""));
    }
    let resolved: Vec<Result<Resolved, Refusal>> =
        all.iter().map(|si| resolve(si, &sd, &pool)).collect();
    // Under `all`, every signer asked for must be there: removing a SignerInfo (no signature
    // covers the set of them) does not remove a required signature.
    if options.require == Require::All
        && let Some(missing) = options.signers.iter().find(|c| {
            !resolved
                .iter()
                .any(|r| r.as_ref().is_ok_and(|r| r.certificate == **c))
        })
    {
        return Err(CmsError::MissingSigner(subject_of(missing)));
    }
    // The signers considered: all, or those whose certificate was asked for.
    let considered: Vec<usize> = (0..all.len())
        .filter(|&i| {
            options.signers.is_empty()
                || resolved[i]
                    .as_ref()
                    .is_ok_and(|r| options.signers.contains(&r.certificate))
        })
        .collect();
    if considered.is_empty() {
        return Err(CmsError::NoSigner(" with the certificate given"));
    }
    let infos: Vec<&SignerInfo> = considered.iter().map(|&i| all[i]).collect();
    let ready: Vec<Option<&Resolved>> = considered
        .iter()
        .map(|&i| resolved[i].as_ref().ok())
        .collect();
    let needs_all = infos
        .iter()
        .zip(&ready)
        .any(|(si, r)| si.signed_attrs.is_none() && r.is_some_and(|r| r.checker.mu().is_none()));
    let pass = match (&attached, detached) {
        (Some(_), Some(_)) => return Err(CmsError::ContentTwice),
        (None, None) => return Err(CmsError::NoContent),
        (Some(bytes), None) => read_content(&mut bytes.as_slice(), &ready, &infos, needs_all)?,
        (None, Some(reader)) => read_content(reader, &ready, &infos, needs_all)?,
    };
    let mut verdicts = Vec::with_capacity(considered.len());
    for (k, &i) in considered.iter().enumerate() {
        let si = all[i];
        let signature_algorithm = resolved[i].as_ref().map_or_else(
            |_| algorithm_name(&si.signature_algorithm, None),
            |r| r.name.clone(),
        );
        let digest = DigestAlgorithm::from_identifier(&si.digest_alg)
            .map_or_else(|| si.digest_alg.oid.to_string(), |d| d.name().into());
        let mut verdict = SignerVerdict {
            index: i,
            signer: sid_words(&si.sid),
            signature_algorithm,
            digest,
            signing_time: None,
            signed_attributes: si.signed_attrs.is_some(),
            timestamp: None,
            result: Err(Refusal::BadSignature),
        };
        verdict.result = match &resolved[i] {
            Err(r) => Err(r.clone()),
            Ok(r) => {
                verdict.signer = subject_of(&r.certificate);
                check_signer(si, r, &pass, pass.mus[k].as_ref(), &content_type)
                    .and_then(|time| {
                        verdict.signing_time = time;
                        verdict.timestamp = timestamp_of(si, options, nested)?;
                        Ok(())
                    })
                    .and_then(|()| {
                        let chain: Vec<CertificateDer<'_>> = std::iter::once(&r.certificate)
                            .chain(pool.ders().filter(|c| **c != r.certificate))
                            .map(|c| CertificateDer::from(c.as_slice()))
                            .collect();
                        // With a time-stamp token, the certificate is validated when the token
                        // says the signature existed.
                        let policy = Policy {
                            time: verdict.timestamp.unwrap_or(options.policy.time),
                            ..options.policy.clone()
                        };
                        options
                            .anchors
                            .validate(&chain, &policy)
                            .map_err(Refusal::Path)
                    })
            }
        };
        verdicts.push(verdict);
    }
    let ok = verdicts.iter().filter(|v| v.result.is_ok()).count();
    let satisfied = match options.require {
        Require::All => ok == verdicts.len(),
        Require::Any => ok > 0,
    };
    if !satisfied {
        return Err(CmsError::Rejected {
            require: options.require,
            verdicts,
        });
    }
    Ok(Verified {
        signers: verdicts,
        content: attached,
        content_type,
    })
}
