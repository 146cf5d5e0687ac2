//! Making a SignedData (RFC 5652 §5): the content read once, each signer's digest and signed
//! attributes, each signature, then the DER.

use std::io::Read;
use std::time::SystemTime;

use cms::cert::{CertificateChoices, IssuerAndSerialNumber};
use cms::content_info::{CmsVersion, ContentInfo};
use cms::signed_data::{
    CertificateSet, EncapsulatedContentInfo, SignedData, SignerIdentifier, SignerInfo, SignerInfos,
};
use der::asn1::{OctetString, SetOfVec};
use der::{Any, Decode, Encode, Tag};
use pqkit_core::sig::{Family, MuHasher, SigningKey, SigningRandomness};
use pqkit_hbs::state::StatefulKey;
use spki::{AlgorithmIdentifierOwned, SubjectPublicKeyInfoOwned};
use x509_cert::Certificate;
use x509_cert::ext::pkix::SubjectKeyIdentifier;

use super::content::{MAX_HELD_CONTENT, PassError};
use super::digest::{DigestAlgorithm, allowed, default_for};
use super::oids::{ID_DATA, ID_SIGNED_DATA};
use crate::error::Error;

/// The key of one signer.
pub enum SignerKey<'a> {
    /// A key of the catalogue: from a PKCS#8 file or in a PKCS#11 token (the token sees only
    /// the signed attributes' DER, never the content, unless signed attributes are off).
    Key(&'a SigningKey),
    /// An HSS, XMSS or XMSS^MT state file: each signature reserves its one-time key in the
    /// state file and the ledger before it is made (pqkit-hbs `StatefulKey::sign`).
    Stateful(&'a mut StatefulKey),
}

/// One signer: its certificate (DER), its key, and the digest algorithm (`None`: the one its
/// signature algorithm's CMS profile names, [`super::digest::default_for`]).
pub struct Signer<'a> {
    /// The signer's certificate (DER); its public key must be the key's.
    pub certificate: Vec<u8>,
    /// The signing key.
    pub key: SignerKey<'a>,
    /// The digest algorithm; `None` for the profile's.
    pub digest: Option<DigestAlgorithm>,
}

/// How to sign.
#[derive(Clone, Debug)]
pub struct SignOptions {
    /// Put the content inside the SignedData (attached); otherwise the SignedData holds only
    /// the signatures (detached, RFC 5652 §5.2 eContent absent).
    pub attached: bool,
    /// Sign contentType, signingTime, messageDigest and CMSAlgorithmProtection (default);
    /// without them each signature covers the content itself (the Linux kernel module style).
    pub signed_attributes: bool,
    /// The signingTime attribute's value.
    pub signing_time: SystemTime,
    /// Deterministic signing where the algorithm has it (FIPS 204 rnd = 0, FIPS 205
    /// opt_rand = PK.seed); hedged otherwise.
    pub deterministic: bool,
    /// More certificates to include (the signers' intermediate CAs), DER.
    pub certificates: Vec<Vec<u8>>,
    /// The encapsulated content type: id-data (default), or another (a TSA's id-ct-TSTInfo),
    /// which needs signed attributes (RFC 5652 §5.3).
    pub content_type: const_oid::ObjectIdentifier,
    /// Name each signer by its certificate's subjectKeyIdentifier (SignerInfo version 3)
    /// instead of issuer and serial number (RFC 5652 §5.3).
    pub subject_key_identifier: bool,
    /// Add an ESS signingCertificateV2 attribute naming each signer's certificate by its
    /// SHA-256 (RFC 5035): what a TSA's token must carry (RFC 3161 §2.4.1), and CAdES.
    pub signing_certificate: bool,
}

impl Default for SignOptions {
    fn default() -> Self {
        Self {
            attached: true,
            signed_attributes: true,
            signing_time: SystemTime::now(),
            deterministic: false,
            certificates: Vec::new(),
            content_type: ID_DATA,
            signing_certificate: false,
            subject_key_identifier: false,
        }
    }
}

/// A signer made ready: what its SignerInfo will say.
struct Prepared {
    sid: SignerIdentifier,
    digest: DigestAlgorithm,
    signature_algorithm: AlgorithmIdentifierOwned,
    /// ML-DSA without signed attributes: μ of the content, streamed (FIPS 204 Algorithm 7).
    mu: Option<MuHasher>,
}

fn prepare(signer: &Signer<'_>, options: &SignOptions) -> Result<Prepared, Error> {
    let signed_attributes = options.signed_attributes;
    let bad = |e| Error::malformed("signer certificate", e);
    let cert = Certificate::from_der(&signer.certificate).map_err(bad)?;
    let cert_spki = cert
        .tbs_certificate
        .subject_public_key_info
        .to_der()
        .map_err(bad)?;
    let (key_spki, signature_algorithm, mu) = match &signer.key {
        SignerKey::Key(key) => {
            let alg = key.algorithm();
            let vk = key.verifying_key();
            let mu = if !signed_attributes && alg.family == Family::MlDsa {
                Some(vk.mu_hasher(&[])?)
            } else {
                None
            };
            (
                crate::key::spki_der(&vk)?,
                crate::key::algorithm_identifier(alg.signature_algorithm_id)?,
                mu,
            )
        }
        SignerKey::Stateful(key) => {
            let public = key.public_key();
            let spki = crate::stateful::spki(&public)?;
            let id = AlgorithmIdentifierOwned {
                oid: public.oid(),
                parameters: None,
            };
            (spki.to_der().map_err(bad)?, id, None)
        }
    };
    if !same_key(&cert_spki, &key_spki) {
        return Err(Error::malformed(
            "signer certificate",
            "its public key is not the signing key's",
        ));
    }
    let digest = signer
        .digest
        .unwrap_or_else(|| default_for(&signature_algorithm.oid));
    if !allowed(&signature_algorithm.oid, digest) {
        return Err(Error::malformed(
            "digest algorithm",
            format!(
                "{digest} is weaker than the signature algorithm's profile allows ({})",
                default_for(&signature_algorithm.oid)
            ),
        ));
    }
    Ok(Prepared {
        sid: if options.subject_key_identifier {
            SignerIdentifier::SubjectKeyIdentifier(subject_key_identifier(&cert)?)
        } else {
            SignerIdentifier::IssuerAndSerialNumber(IssuerAndSerialNumber {
                issuer: cert.tbs_certificate.issuer.clone(),
                serial_number: cert.tbs_certificate.serial_number.clone(),
            })
        },
        digest,
        signature_algorithm,
        mu,
    })
}

/// The certificate's subjectKeyIdentifier (RFC 5280 §4.2.1.2).
fn subject_key_identifier(cert: &Certificate) -> Result<SubjectKeyIdentifier, Error> {
    cert.tbs_certificate
        .extensions
        .iter()
        .flatten()
        .find(|e| e.extn_id == const_oid::db::rfc5280::ID_CE_SUBJECT_KEY_IDENTIFIER)
        .and_then(|e| SubjectKeyIdentifier::from_der(e.extn_value.as_bytes()).ok())
        .ok_or_else(|| {
            Error::malformed(
                "signer certificate",
                "no subjectKeyIdentifier to name the signer by",
            )
        })
}

/// Whether two SPKIs hold the same key: equal DER, or (RSA) equal key bits under one OID.
fn same_key(a: &[u8], b: &[u8]) -> bool {
    if a == b {
        return true;
    }
    match (
        SubjectPublicKeyInfoOwned::from_der(a),
        SubjectPublicKeyInfoOwned::from_der(b),
    ) {
        (Ok(a), Ok(b)) => {
            a.algorithm.oid == b.algorithm.oid && a.subject_public_key == b.subject_public_key
        }
        _ => false,
    }
}

/// Signs `content` (read once, to its end) by every signer into a DER ContentInfo holding a
/// SignedData (RFC 5652 §5.1), with the signers' certificates and `options.certificates`.
///
/// The content is held in memory only when the SignedData is attached or a signer without
/// signed attributes needs all of it (other than ML-DSA, whose μ is streamed): at most
/// [`MAX_HELD_CONTENT`] bytes. Otherwise it streams through the digests in
/// [`super::CHUNK`]-byte reads, whatever its length.
///
/// Each signer's certificate must hold its key, and its digest be one its signature
/// algorithm's profile allows, before any signature is made (a stateful key spends a
/// one-time key only after every check).
///
/// # Errors
/// [`Error::Malformed`] for a certificate that does not decode or does not hold the key, or
/// a digest too weak; [`Error::Input`] for content over the bound when it must be held;
/// [`Error::Io`] from the reader; [`Error::Crypto`] from a signer.
pub fn sign(
    signers: &mut [Signer<'_>],
    content: &mut dyn Read,
    options: &SignOptions,
) -> Result<Vec<u8>, Error> {
    if signers.is_empty() {
        return Err(Error::malformed("SignedData", "no signer"));
    }
    if options.content_type != ID_DATA && !options.signed_attributes {
        return Err(Error::malformed(
            "SignedData",
            "content other than id-data needs signed attributes (RFC 5652 §5.3)",
        ));
    }
    let mut prepared = signers
        .iter()
        .map(|s| prepare(s, options))
        .collect::<Result<Vec<_>, _>>()?;
    let must_hold =
        options.attached || (!options.signed_attributes && prepared.iter().any(|p| p.mu.is_none()));
    // One pass over the content: every distinct digest, every μ, and the bytes if held.
    let digests: Vec<DigestAlgorithm> = if options.signed_attributes {
        prepared.iter().map(|p| p.digest).collect()
    } else {
        Vec::new()
    };
    let mus = prepared.iter_mut().map(|p| p.mu.take()).collect();
    let pass = super::content::read(content, &digests, mus, must_hold).map_err(|e| match e {
        PassError::Io(e) => Error::io(std::path::Path::new("content"), e),
        PassError::TooLarge => Error::Input {
            path: "content".into(),
            reason: format!(
                "over {} MiB: sign it detached, with signed attributes, to stream it",
                MAX_HELD_CONTENT >> 20
            ),
        },
    })?;
    let held = pass.held.as_deref().unwrap_or_default();
    let randomness = || {
        if options.deterministic {
            SigningRandomness::Deterministic
        } else {
            SigningRandomness::Hedged
        }
    };
    let bad = |e| Error::malformed("SignedData", e);
    // Everything that can fail is done before the first signature: the certificates, each
    // signer's attributes and what it signs. Then catalogue keys sign, and stateful keys last,
    // so that a failure never leaves a one-time key spent without a SignedData.
    let mut certificates: Vec<CertificateChoices> = Vec::new();
    for der in signers
        .iter()
        .map(|s| &s.certificate)
        .chain(&options.certificates)
    {
        let cert = Certificate::from_der(der).map_err(|e| Error::malformed("certificate", e))?;
        let choice = CertificateChoices::Certificate(cert);
        if !certificates.contains(&choice) {
            certificates.push(choice);
        }
    }
    let mut unsigned = Vec::with_capacity(signers.len());
    for (p, signer) in prepared.into_iter().zip(signers.iter()) {
        let digest_id = p.digest.identifier();
        let attrs = if options.signed_attributes {
            let attrs = super::attributes::build(
                options.content_type,
                pass.digest(p.digest),
                options.signing_time,
                &digest_id,
                &p.signature_algorithm,
                options
                    .signing_certificate
                    .then_some(signer.certificate.as_slice()),
            )?;
            let der = attrs.to_der().map_err(bad)?;
            Some((attrs, der))
        } else {
            None
        };
        unsigned.push((p, digest_id, attrs));
    }
    let mut signatures: Vec<Option<Vec<u8>>> = vec![None; signers.len()];
    for stateful in [false, true] {
        for (k, (signer, (_, _, attrs))) in signers.iter_mut().zip(&unsigned).enumerate() {
            if matches!(signer.key, SignerKey::Stateful(_)) != stateful {
                continue;
            }
            signatures[k] = Some(match (attrs, &pass.mus[k], &signer.key) {
                (Some((_, der)), _, _) => sign_one(&mut signer.key, der, randomness())?,
                (None, Some(mu), SignerKey::Key(key)) => key.sign_mu(mu, randomness())?,
                (None, _, _) => sign_one(&mut signer.key, held, randomness())?,
            });
        }
    }
    let mut infos = Vec::with_capacity(signers.len());
    for ((p, digest_id, attrs), signature) in unsigned.into_iter().zip(signatures) {
        infos.push(SignerInfo {
            // RFC 5652 §5.3: version 3 with a subjectKeyIdentifier.
            version: match p.sid {
                SignerIdentifier::IssuerAndSerialNumber(_) => CmsVersion::V1,
                SignerIdentifier::SubjectKeyIdentifier(_) => CmsVersion::V3,
            },
            sid: p.sid,
            digest_alg: digest_id,
            signed_attrs: attrs.map(|(a, _)| a),
            signature_algorithm: p.signature_algorithm,
            signature: OctetString::new(signature.unwrap_or_default()).map_err(bad)?,
            unsigned_attrs: None,
        });
    }
    let digest_algorithms = dedup_set(infos.iter().map(|i| i.digest_alg.clone()))?;
    let econtent = if options.attached {
        Some(Any::new(Tag::OctetString, held.to_vec()).map_err(bad)?)
    } else {
        None
    };
    // RFC 5652 §5.1: version 3 for content other than id-data or a version-3 SignerInfo.
    let version = if options.content_type == ID_DATA && !options.subject_key_identifier {
        CmsVersion::V1
    } else {
        CmsVersion::V3
    };
    let signed_data = SignedData {
        version,
        digest_algorithms,
        encap_content_info: EncapsulatedContentInfo {
            econtent_type: options.content_type,
            econtent,
        },
        certificates: Some(CertificateSet::try_from(certificates).map_err(bad)?),
        crls: None,
        signer_infos: SignerInfos::try_from(infos).map_err(bad)?,
    };
    ContentInfo {
        content_type: ID_SIGNED_DATA,
        content: Any::encode_from(&signed_data).map_err(bad)?,
    }
    .to_der()
    .map_err(bad)
}

/// A SET OF the distinct algorithm identifiers (several signers may share a digest).
pub(crate) fn dedup_set(
    ids: impl Iterator<Item = AlgorithmIdentifierOwned>,
) -> Result<SetOfVec<AlgorithmIdentifierOwned>, Error> {
    let mut set = SetOfVec::new();
    for id in ids {
        if !set.iter().any(|x| *x == id) {
            set.insert(id)
                .map_err(|e| Error::malformed("digestAlgorithms", e))?;
        }
    }
    Ok(set)
}

fn sign_one(
    key: &mut SignerKey<'_>,
    message: &[u8],
    randomness: SigningRandomness<'_>,
) -> Result<Vec<u8>, Error> {
    match key {
        SignerKey::Key(k) => Ok(k.sign_with(message, &[], randomness)?),
        SignerKey::Stateful(k) => Ok(k.sign(message)?),
    }
}
