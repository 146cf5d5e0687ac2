//! Certificate path validation (RFC 5280 §6) — the one validator behind `pqkit x509 verify`,
//! `pqkit csr sign`, `pqkit hbs issue`, pqkit's TLS client and server, and the library.
//!
//! The path is built and checked by rustls-webpki (the validator rustls uses): issuer/subject
//! name chaining (§6.1.3 (a)(4)), every signature with the algorithms of [`algorithms`] (the
//! catalogue's post-quantum schemes, HSS/XMSS/XMSS^MT of RFC 9802, and aws-lc-rs's ECDSA,
//! EdDSA and RSA), the signature algorithm inside the TBSCertificate equal to the outer one
//! (§4.1.1.2), validity at the given time (§6.1.3 (a)(2)), basicConstraints cA and
//! pathLenConstraint (§6.1.4 (k), (l), (m)), name constraints (§6.1.4 (g)), extendedKeyUsage
//! for the [`Purpose`] (§4.2.1.12), and unknown critical extensions (§4.2) in the leaf and the
//! intermediates.
//!
//! What webpki does not check, [`TrustAnchors::verify`] checks on each path webpki builds
//! (webpki's `verify_path` hook, so a path that fails here lets webpki try another):
//! keyUsage keyCertSign on every issuer (§4.2.1.3, §6.1.4 (n)) and digitalSignature on the
//! leaf for a signing purpose; and the trust anchor certificate itself — its validity, its
//! critical extensions and, when it issues, that it is a CA, its keyUsage, its
//! pathLenConstraint and its extendedKeyUsage — as OpenSSL checks them.
//!
//! [`TrustAnchors::validate`] takes a [`Policy`]: purposes, the names the leaf must present
//! ([`PeerName`], RFC 9525), CRLs (RFC 5280 §6.3, through webpki's revocation checking, with
//! the CRL profile of §5 checked here), a maximum depth, and a [`Profile`]; `rules` adds
//! RFC 5280 §4's certificate profile and, under [`Profile::WebPki`], the CA/Browser Forum
//! Baseline Requirements. x509-limbo's 9 780 cases run through it in the `limbo` test.
//!
//! A failure is a [`PathError`]: which certificate, and which rule it broke, in words. webpki's
//! own errors say the rule but not the certificate; [`locate`] finds the certificate by
//! looking at the chain with RFC 5280's eyes (x509-cert), so the message can name it.

use std::cell::RefCell;
use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use const_oid::ObjectIdentifier;
use const_oid::db::rfc5280;
use der::Decode;
use pqkit_core::sig::{PreparedKeys, SignatureAlgorithm};
use rustls_pki_types::{
    AlgorithmIdentifier, CertificateDer, InvalidSignature, SignatureVerificationAlgorithm,
    TrustAnchor, UnixTime,
};
use webpki::{EndEntityCert, ExtendedKeyUsageValidator, KeyPurposeIdIter};
use x509_cert::Certificate;
use x509_cert::ext::pkix::{BasicConstraints, ExtendedKeyUsage, KeyUsage, KeyUsages};

use crate::error::Error;

mod name;
mod rules;

pub use name::{PeerName, dns_name, issued_dns_name, san_dns_name};

pub use crate::rule::{PathError, Purpose, Rule};

/// Which rules apply beyond RFC 5280 (`pqkit x509 verify --profile`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Profile {
    /// RFC 5280 §6 and its §4.2 profile, as strict validators (OpenSSL `-x509_strict`,
    /// rustls-webpki) apply them.
    #[default]
    Rfc5280,
    /// RFC 5280 and the CA/Browser Forum Baseline Requirements for TLS server certificates
    /// (§7.1): the Web PKI's rules on keys, serial numbers, extensions and names.
    WebPki,
}

impl Profile {
    /// From the names `--profile` takes: rfc5280, webpki.
    ///
    /// # Errors
    /// The list of names, for an unknown one.
    pub fn from_name(name: &str) -> Result<Self, String> {
        match name.to_ascii_lowercase().as_str() {
            "rfc5280" => Ok(Self::Rfc5280),
            "webpki" | "cabf" => Ok(Self::WebPki),
            _ => Err(format!("{name:?}: expected rfc5280 or webpki")),
        }
    }
}

/// What a path is validated for: everything but the certificates.
#[derive(Clone, Debug)]
pub struct Policy {
    /// Purposes the leaf (and every CA's extendedKeyUsage, when present) must allow; empty is
    /// [`Purpose::Any`].
    pub purposes: Vec<Purpose>,
    /// Names the leaf must present, each of them (RFC 9525).
    pub names: Vec<PeerName>,
    /// The validation time.
    pub time: SystemTime,
    /// CRLs (DER) to check every certificate of the path against (RFC 5280 §6.3); a
    /// certificate that no CRL given covers is not checked.
    pub crls: Vec<Vec<u8>>,
    /// At most this many intermediate CA certificates between the leaf and the trust anchor,
    /// self-issued ones not counted (RFC 5280 §6.1.4 (l)); `None`: rustls-webpki's limit (6).
    pub max_depth: Option<usize>,
    /// RFC 5280 alone or with the Web PKI's rules.
    pub profile: Profile,
    /// Require authorityKeyIdentifier in every certificate but a self-signed one and
    /// subjectKeyIdentifier in every CA certificate (RFC 5280 §4.2.1.1, §4.2.1.2: a
    /// conforming CA's duty, which OpenSSL's `-x509_strict` and x509-limbo check and
    /// rustls-webpki and Go do not). On by default; pqkit's TLS verifiers turn it off, so a
    /// peer whose private CA omits them (Go's `x509.CreateCertificate` may) still connects.
    pub key_identifiers: bool,
}

impl Policy {
    /// For `purpose` at `time`: no name, no CRL, RFC 5280.
    pub fn new(purpose: Purpose, time: SystemTime) -> Self {
        Self {
            purposes: vec![purpose],
            names: Vec::new(),
            time,
            crls: Vec::new(),
            max_depth: None,
            profile: Profile::Rfc5280,
            key_identifiers: true,
        }
    }

    /// The purposes asked for, without [`Purpose::Any`].
    fn wanted(&self) -> impl Iterator<Item = Purpose> + '_ {
        self.purposes.iter().copied().filter(|p| *p != Purpose::Any)
    }
}

/// A validated path, leaf first, trust anchor last.
#[derive(Clone, Debug)]
pub struct VerifiedPath {
    /// The certificates (DER), the leaf first and the trust anchor last.
    pub certificates: Vec<Vec<u8>>,
}

/// Trusted CA certificates, ready for path validation.
#[derive(Debug)]
pub struct TrustAnchors {
    certificates: Vec<CertificateDer<'static>>,
    anchors: Vec<TrustAnchor<'static>>,
}

impl TrustAnchors {
    /// Trusts these CA certificates (DER).
    ///
    /// # Errors
    /// [`Error::Malformed`] naming the certificate that does not decode.
    pub fn new(certificates: &[Vec<u8>]) -> Result<Self, Error> {
        let mut anchors = Vec::with_capacity(certificates.len());
        let mut ders = Vec::with_capacity(certificates.len());
        for (i, der) in certificates.iter().enumerate() {
            let cert = CertificateDer::from(der.clone());
            let anchor = webpki::anchor_from_trusted_cert(&cert)
                .map_err(|e| {
                    Error::malformed(
                        "trusted CA certificate",
                        format!("certificate {i}: {}", webpki_words(&e)),
                    )
                })?
                .to_owned();
            anchors.push(anchor);
            ders.push(cert);
        }
        Ok(Self {
            certificates: ders,
            anchors,
        })
    }

    /// The trusted certificates (DER).
    pub fn certificates(&self) -> &[CertificateDer<'static>] {
        &self.certificates
    }

    /// The subject names of the trusted certificates (DER), e.g. for a TLS
    /// CertificateRequest's certificate_authorities.
    pub fn subjects(&self) -> Vec<Vec<u8>> {
        self.anchors.iter().map(|a| a.subject.to_vec()).collect()
    }

    /// Validates `chain` (the leaf first, then any intermediate CA certificates in any order)
    /// for `purpose` at `time`: [`Self::validate`] with [`Policy::new`].
    ///
    /// # Errors
    /// [`PathError`] naming the certificate and the rule it broke.
    pub fn verify(
        &self,
        chain: &[CertificateDer<'_>],
        purpose: Purpose,
        time: SystemTime,
    ) -> Result<VerifiedPath, PathError> {
        self.validate(chain, &Policy::new(purpose, time))
    }

    /// Validates `chain` — the leaf first, then untrusted certificates that may serve as
    /// intermediates, in any order — under `policy`. See the module docs for the rules.
    ///
    /// # Errors
    /// [`PathError`] naming the certificate (or CRL) and the rule it broke.
    pub fn validate(
        &self,
        chain: &[CertificateDer<'_>],
        policy: &Policy,
    ) -> Result<VerifiedPath, PathError> {
        let view = ChainView::new(chain, &self.certificates)?;
        let leaf = &chain[0];
        let any = policy.wanted().next().is_none();
        // A trust anchor presented alone for any purpose (`x509 verify --ca ca.pem ca.pem`):
        // only its own checks apply. For a purpose it goes through webpki like any leaf (a
        // self-signed end-entity certificate that is trusted validates; a CA does not).
        if any
            && policy.names.is_empty()
            && let Some(i) = self
                .certificates
                .iter()
                .position(|c| c.as_ref() == leaf.as_ref())
        {
            check_anchor(&view, i, policy, AnchorUse::Alone)?;
            return Ok(VerifiedPath {
                certificates: vec![leaf.to_vec()],
            });
        }
        rules::check_leaf(&view, policy)?;
        rules::check_crls(&view, policy)?;
        if let Some(name) = policy.names.iter().find(|n| !n.matches(leaf.as_ref())) {
            return Err(view.error(
                0,
                Rule::WrongName {
                    name: name.to_string(),
                },
            ));
        }
        let crls = policy
            .crls
            .iter()
            .enumerate()
            .map(|(i, der)| {
                webpki::OwnedCertRevocationList::from_der(der)
                    .map(webpki::CertRevocationList::from)
                    .map_err(|e| PathError {
                        certificate: format!("CRL {i}"),
                        rule: Rule::Malformed {
                            detail: webpki_words(&e),
                        },
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let end_entity = EndEntityCert::try_from(leaf).map_err(|e| locate(&e, &view, policy))?;
        let intermediates: Vec<CertificateDer<'_>> = chain[1..]
            .iter()
            .map(|c| CertificateDer::from(c.as_ref()))
            .collect();
        // One path build with these CRLs and this policy for a certificate whose status no CRL
        // gives.
        let build = |crls: &[&webpki::CertRevocationList<'_>],
                     unknown: webpki::UnknownStatusPolicy|
         -> Result<VerifiedPath, PathError> {
            let revocation = webpki::RevocationOptionsBuilder::new(crls).ok().map(|b| {
                b.with_depth(webpki::RevocationCheckDepth::Chain)
                    .with_status_policy(unknown)
                    .with_expiration_policy(webpki::ExpirationPolicy::Enforce)
                    .build()
            });
            let recorded: RefCell<Option<PathError>> = RefCell::new(None);
            let extra = |path: &webpki::VerifiedPath<'_>| -> Result<(), webpki::Error> {
                match self.check_path(&view, path, policy) {
                    Ok(()) => Ok(()),
                    Err(e) => {
                        recorded.replace(Some(e));
                        Err(SENTINEL)
                    }
                }
            };
            let result = end_entity.verify_for_usage(
                algorithms(),
                &self.anchors,
                &intermediates,
                unix_time(policy.time),
                PurposeCheck(policy.wanted().collect()),
                revocation,
                Some(&extra),
            );
            match result {
                Ok(path) => {
                    let mut certificates = vec![leaf.to_vec()];
                    certificates.extend(path.intermediate_certificates().map(|c| c.der().to_vec()));
                    if let Some(i) = self.anchor_index(path.anchor()) {
                        certificates.push(self.certificates[i].to_vec());
                    }
                    Ok(VerifiedPath { certificates })
                }
                Err(e) => match recorded.into_inner() {
                    Some(ours) if e == SENTINEL => Err(ours),
                    _ => Err(locate(&e, &view, policy)),
                },
            }
        };
        // webpki consults the first CRL of an issuer it finds; each CRL given is consulted on
        // its own too, so that an older CRL listed first cannot hide a revocation in a newer
        // one, and a CRL that is bad (its signature, its dates) is refused wherever it is.
        if crls.len() > 1 {
            for crl in &crls {
                build(&[crl], webpki::UnknownStatusPolicy::Allow)?;
            }
        }
        // With CRLs given, every certificate of the path must have its status in one of them
        // (RFC 5280 §6.3): a CRL that covers none of them is not a check that passed.
        let all: Vec<&webpki::CertRevocationList<'_>> = crls.iter().collect();
        build(&all, webpki::UnknownStatusPolicy::Deny)
    }

    /// The index of the anchor webpki used: `anchor` is a reference into `self.anchors` (two
    /// anchors may share a subject and a key — an expired root and its re-issue — and only the
    /// one used must pass the anchor checks).
    fn anchor_index(&self, anchor: &TrustAnchor<'_>) -> Option<usize> {
        self.anchors
            .iter()
            .position(|a| std::ptr::addr_eq(a, anchor))
    }

    /// The rules webpki leaves out, on one path webpki built (leaf → intermediates → anchor).
    fn check_path(
        &self,
        view: &ChainView,
        path: &webpki::VerifiedPath<'_>,
        policy: &Policy,
    ) -> Result<(), PathError> {
        let anchor = self.anchor_index(path.anchor()).ok_or_else(|| {
            view.error(
                0,
                Rule::Other {
                    detail: "path ends at an unknown trust anchor".to_owned(),
                },
            )
        })?;
        let mut positions = vec![Position::Chain(0)];
        for issuer in path.intermediate_certificates() {
            positions.push(
                view.position_of(issuer.der().as_ref())
                    .unwrap_or(Position::Chain(0)),
            );
        }
        // A trusted self-signed leaf is its own anchor: it issues nothing.
        let alone = self.certificates[anchor].as_ref() == view.leaf().der.as_slice();
        if !alone {
            positions.push(Position::Anchor(anchor));
        }
        rules::check_path(view, &positions, policy)?;
        let used = if alone {
            AnchorUse::Alone
        } else {
            AnchorUse::Issuer {
                intermediates: path.intermediate_certificates().count(),
            }
        };
        check_anchor(view, anchor, policy, used)
    }
}

/// How a trust anchor is used on a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AnchorUse {
    /// Presented alone, validated for any purpose.
    Alone,
    /// Issuer of a path with this many intermediate CAs.
    Issuer { intermediates: usize },
}

/// A trust anchor's own checks, as OpenSSL makes them: validity and critical extensions; and
/// when it issues, that it is a CA — basicConstraints cA, or without basicConstraints a v1
/// certificate —, keyCertSign when it has keyUsage, a pathLenConstraint that allows the
/// intermediates below it, and an extendedKeyUsage (when present) that includes each purpose.
fn check_anchor(
    view: &ChainView,
    index: usize,
    policy: &Policy,
    used: AnchorUse,
) -> Result<(), PathError> {
    let pos = Position::Anchor(index);
    let anchor = view.at(pos);
    let fail = |rule| view.error_at(pos, rule);
    check_validity(&anchor.cert, policy.time).map_err(fail)?;
    if let Some(oid) = unknown_critical_extension(&anchor.cert) {
        return Err(fail(Rule::UnknownCriticalExtension { oid }));
    }
    let AnchorUse::Issuer { intermediates } = used else {
        return Ok(());
    };
    let v1 = anchor.cert.tbs_certificate.version == x509_cert::Version::V1;
    let bc = basic_constraints(&anchor.cert)?;
    let ku = key_usage(&anchor.cert)?;
    let is_ca = match &bc {
        Some(bc) => bc.ca,
        None => v1,
    };
    if !is_ca {
        return Err(fail(Rule::NotACa));
    }
    if bc
        .and_then(|bc| bc.path_len_constraint)
        .is_some_and(|len| intermediates > usize::from(len))
    {
        return Err(fail(Rule::PathLenExceeded));
    }
    if let Some(ku) = ku
        && !ku.0.contains(KeyUsages::KeyCertSign)
    {
        return Err(fail(Rule::NoKeyCertSign));
    }
    if let Some((_, eku)) = anchor
        .cert
        .tbs_certificate
        .get::<ExtendedKeyUsage>()
        .map_err(|e| malformed(&anchor.cert, e))?
    {
        for purpose in policy.wanted() {
            if purpose.eku().is_some_and(|wanted| !eku.0.contains(&wanted)) {
                return Err(fail(Rule::WrongPurpose { purpose }));
            }
        }
    }
    Ok(())
}

/// Checks that `ca` (DER) may issue a certificate now: a CA by basicConstraints, keyCertSign
/// when it has keyUsage, within its validity, no critical extension pqkit does not process, and
/// — when the new certificate is itself a CA — a pathLenConstraint that allows one more CA
/// below it. Issuing refuses a CA certificate that could not issue (RFC 5280 §4.2.1.9,
/// §4.2.1.3).
///
/// # Errors
/// [`PathError`] naming the CA certificate.
pub fn check_can_issue(ca: &[u8], issues_ca: bool, time: SystemTime) -> Result<(), PathError> {
    let cert = Certificate::from_der(ca).map_err(|e| PathError {
        certificate: "the CA certificate".to_owned(),
        rule: Rule::Malformed {
            detail: e.to_string(),
        },
    })?;
    let name = format!("the CA certificate \"{}\"", cert.tbs_certificate.subject);
    let fail = |rule| PathError {
        certificate: name.clone(),
        rule,
    };
    let bc = basic_constraints(&cert).map_err(|e| fail(e.rule))?;
    if !bc.as_ref().is_some_and(|bc| bc.ca) {
        return Err(fail(Rule::NotACa));
    }
    if issues_ca && bc.is_some_and(|bc| bc.path_len_constraint == Some(0)) {
        return Err(fail(Rule::PathLenExceeded));
    }
    if let Some(ku) = key_usage(&cert).map_err(|e| fail(e.rule))?
        && !ku.0.contains(KeyUsages::KeyCertSign)
    {
        return Err(fail(Rule::NoKeyCertSign));
    }
    check_validity(&cert, time).map_err(fail)?;
    if let Some(oid) = unknown_critical_extension(&cert) {
        return Err(fail(Rule::UnknownCriticalExtension { oid }));
    }
    Ok(())
}

/// Every signature verification algorithm a certificate path may use: the catalogue's
/// post-quantum schemes (pqkit-core), the stateful schemes of RFC 9802 (pqkit-hbs), and
/// webpki's aws-lc-rs algorithms (ECDSA, Ed25519, RSA PKCS#1 v1.5 and PSS).
pub fn algorithms() -> &'static [&'static dyn SignatureVerificationAlgorithm] {
    static ALL: std::sync::OnceLock<Vec<&'static dyn SignatureVerificationAlgorithm>> =
        std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        let ours = pqkit_core::catalogue::signatures()
            .iter()
            .filter(|a| a.family.is_post_quantum())
            .map(|a| &*Box::leak(Box::new(PqVerify(a))) as &dyn SignatureVerificationAlgorithm);
        // Leaked once per process: webpki takes 'static algorithm references.
        ours.chain(
            crate::stateful::VERIFIERS
                .iter()
                .map(|v| v as &dyn SignatureVerificationAlgorithm),
        )
        .chain(webpki::ALL_VERIFICATION_ALGS.iter().copied())
        .collect()
    })
}

/// A catalogue signature algorithm as a webpki verification algorithm: pure signing with an
/// empty context, the form X.509 uses (RFC 9881, RFC 9909).
///
/// Each key is used prepared ([`pqkit_core::sig::VerifyingKey::prepared`]), from one
/// process-wide set of the 16 most recently used: the CA keys of every path and
/// a TLS peer's key recur from one validation or connection to the next.
///
/// webpki compares [`Self::public_key_alg_id`] byte for byte with the certificate's SPKI
/// `AlgorithmIdentifier` contents, and [`Self::signature_alg_id`] with its signature algorithm.
pub struct PqVerify(pub &'static SignatureAlgorithm);

impl SignatureVerificationAlgorithm for PqVerify {
    /// Pure verification with an empty context; any failure is the opaque `InvalidSignature`.
    fn verify_signature(
        &self,
        public_key: &[u8],
        message: &[u8],
        signature: &[u8],
    ) -> Result<(), InvalidSignature> {
        static KEYS: PreparedKeys = PreparedKeys::new(PREPARED_KEYS);
        KEYS.get_or_prepare(self.0, public_key)
            .and_then(|key| key.verify(message, &[], signature))
            .map_err(|_| InvalidSignature)
    }

    fn public_key_alg_id(&self) -> AlgorithmIdentifier {
        AlgorithmIdentifier::from_slice(self.0.spki_algorithm_id)
    }

    fn signature_alg_id(&self) -> AlgorithmIdentifier {
        AlgorithmIdentifier::from_slice(self.0.signature_algorithm_id)
    }
}

impl fmt::Debug for PqVerify {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PqVerify({})", self.0.name)
    }
}

/// How many prepared verifying keys [`PqVerify`] keeps: room for the CA and peer keys of
/// several chains at once, in at most 16 × 61 KiB (an ML-DSA-87 key keeps Â, 56 KiB, tr and
/// its encoding twice).
const PREPARED_KEYS: usize = 16;

/// webpki's extendedKeyUsage hook: for each purpose, the extension (when present) must list
/// it — in the leaf and in every CA (RFC 5280 §4.2.1.12; OpenSSL checks CAs the same way),
/// webpki's own `KeyUsage::required_if_present`; without a purpose, nothing is checked.
struct PurposeCheck(Vec<Purpose>);

impl ExtendedKeyUsageValidator for PurposeCheck {
    fn validate(&self, iter: KeyPurposeIdIter<'_, '_>) -> Result<(), webpki::Error> {
        let present = iter
            .map(|id| id.map(|id| id.to_decoded_oid()))
            .collect::<Result<Vec<_>, _>>()?;
        if present.is_empty() {
            return Ok(());
        }
        for purpose in &self.0 {
            let Some(oid) = purpose.eku() else { continue };
            let arcs: Vec<usize> = oid.arcs().map(|a| a as usize).collect();
            if !present.contains(&arcs) {
                // The context variant's fields are webpki's own; `locate` names the purpose.
                #[allow(deprecated)]
                return Err(webpki::Error::RequiredEkuNotFound);
            }
        }
        Ok(())
    }
}

/// Returned to webpki when [`TrustAnchors::check_path`] rejects a path: an error webpki makes
/// only when asked for a name, which path building never does, so it is told apart from
/// webpki's own.
const SENTINEL: webpki::Error = webpki::Error::UnsupportedNameType;

/// Where a certificate sits: the chain given (leaf at 0) or the trust anchors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Position {
    Chain(usize),
    Anchor(usize),
}

struct Parsed {
    cert: Certificate,
    der: Vec<u8>,
    /// "certificate 0 (leaf)", "trusted CA certificate 1", …
    label: String,
}

impl Parsed {
    /// The label and the subject, for an error: formatted only then (a Name's text looks up
    /// every attribute type in const-oid's database).
    fn name(&self) -> String {
        format!("{} \"{}\"", self.label, self.cert.tbs_certificate.subject)
    }
}

/// The chain and the anchors decoded by x509-cert, for the checks webpki does not make and for
/// naming the certificate behind a webpki error.
struct ChainView {
    chain: Vec<Parsed>,
    anchors: Vec<Parsed>,
}

impl ChainView {
    fn new(
        chain: &[CertificateDer<'_>],
        anchors: &[CertificateDer<'static>],
    ) -> Result<Self, PathError> {
        if chain.is_empty() {
            return Err(PathError {
                certificate: "the chain".to_owned(),
                rule: Rule::Malformed {
                    detail: "no certificate".to_owned(),
                },
            });
        }
        let parse = |der: &[u8], label: String| {
            Certificate::from_der(der)
                .map(|cert| Parsed {
                    cert,
                    der: der.to_vec(),
                    label: label.clone(),
                })
                .map_err(|e| PathError {
                    certificate: label,
                    rule: Rule::Malformed {
                        detail: e.to_string(),
                    },
                })
        };
        let chain = chain
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let role = if i == 0 { "leaf" } else { "intermediate" };
                parse(c.as_ref(), format!("certificate {i} ({role})"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let anchors = anchors
            .iter()
            .enumerate()
            .map(|(i, c)| parse(c.as_ref(), format!("trusted CA certificate {i}")))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self { chain, anchors })
    }

    fn leaf(&self) -> &Parsed {
        &self.chain[0]
    }

    fn at(&self, p: Position) -> &Parsed {
        match p {
            Position::Chain(i) => &self.chain[i],
            Position::Anchor(i) => &self.anchors[i],
        }
    }

    fn error(&self, chain_index: usize, rule: Rule) -> PathError {
        self.error_at(Position::Chain(chain_index), rule)
    }

    fn error_at(&self, p: Position, rule: Rule) -> PathError {
        PathError {
            certificate: self.at(p).name(),
            rule,
        }
    }

    fn position_of(&self, der: &[u8]) -> Option<Position> {
        self.chain
            .iter()
            .position(|c| c.der == der)
            .map(Position::Chain)
    }

    /// Every certificate with its position: the chain, then the anchors.
    fn all(&self) -> impl Iterator<Item = (Position, &Parsed)> {
        self.chain
            .iter()
            .enumerate()
            .map(|(i, c)| (Position::Chain(i), c))
            .chain(
                self.anchors
                    .iter()
                    .enumerate()
                    .map(|(i, c)| (Position::Anchor(i), c)),
            )
    }

    /// The issuer candidates of `cert` by name: intermediates (not itself), then anchors.
    fn issuers_of<'a>(&'a self, cert: &'a Parsed) -> impl Iterator<Item = (Position, &'a Parsed)> {
        let issuer = &cert.cert.tbs_certificate.issuer;
        self.all().filter(move |(p, c)| {
            !matches!(p, Position::Chain(0))
                && !core::ptr::eq(*c, cert)
                && c.cert.tbs_certificate.subject == *issuer
        })
    }

    /// The path by names from the leaf (intermediates in the order they chain), at most
    /// as long as the chain.
    fn name_path(&self) -> Vec<Position> {
        let mut path = vec![Position::Chain(0)];
        let mut cur = self.leaf();
        for _ in 0..self.chain.len() {
            let Some((p, next)) = self.issuers_of(cur).next() else {
                break;
            };
            path.push(p);
            if matches!(p, Position::Anchor(_)) {
                break;
            }
            cur = next;
        }
        path
    }
}

/// Names the certificate behind a webpki error, with the rule in words.
fn locate(e: &webpki::Error, view: &ChainView, policy: &Policy) -> PathError {
    let time = policy.time;
    use webpki::Error as W;
    let path = view.name_path();
    let find = |pred: &dyn Fn(&Parsed) -> bool| -> Position {
        path.iter()
            .copied()
            .find(|p| pred(view.at(*p)))
            .or_else(|| view.all().find(|(_, c)| pred(c)).map(|(p, _)| p))
            .unwrap_or(Position::Chain(0))
    };
    let at = |p: Position, rule: Rule| view.error_at(p, rule);
    match e {
        W::CertExpired { .. } | W::CertNotValidYet { .. } | W::InvalidCertValidity => {
            let p = find(&|c| check_validity(&c.cert, time).is_err());
            let rule = check_validity(&view.at(p).cert, time)
                .err()
                .unwrap_or(Rule::BadValidity);
            at(p, rule)
        }
        W::CaUsedAsEndEntity => at(Position::Chain(0), Rule::CaAsLeaf),
        W::EndEntityUsedAsCa => at(
            find(&|c| {
                !core::ptr::eq(c, view.leaf())
                    && !basic_constraints(&c.cert)
                        .ok()
                        .flatten()
                        .is_some_and(|bc| bc.ca)
            }),
            Rule::NotACa,
        ),
        W::PathLenConstraintViolated => at(
            find(&|c| {
                basic_constraints(&c.cert)
                    .ok()
                    .flatten()
                    .is_some_and(|bc| bc.path_len_constraint.is_some())
            }),
            Rule::PathLenExceeded,
        ),
        W::UnknownIssuer => {
            let last = path.last().copied().unwrap_or(Position::Chain(0));
            at(
                last,
                Rule::UnknownIssuer {
                    issuer: view.at(last).cert.tbs_certificate.issuer.to_string(),
                },
            )
        }
        W::InvalidSignatureForPublicKey
        | W::UnsupportedSignatureAlgorithmContext(_)
        | W::UnsupportedSignatureAlgorithmForPublicKeyContext(_) => {
            // The first certificate on the name path whose signature fails under its issuer.
            for pair in path.windows(2) {
                let (c, i) = (view.at(pair[0]), view.at(pair[1]));
                let issuer = i.cert.tbs_certificate.subject.to_string();
                match crate::signature::verify_signed_by(&c.der, &i.der) {
                    Ok(()) => {}
                    Err(Error::UnknownAlgorithm(_)) => {
                        return at(pair[0], Rule::UnsupportedSignatureAlgorithm { issuer });
                    }
                    Err(_) => return at(pair[0], Rule::BadSignature { issuer }),
                }
            }
            let issuer = view.leaf().cert.tbs_certificate.issuer.to_string();
            if matches!(e, W::InvalidSignatureForPublicKey) {
                at(Position::Chain(0), Rule::BadSignature { issuer })
            } else {
                at(
                    Position::Chain(0),
                    Rule::UnsupportedSignatureAlgorithm { issuer },
                )
            }
        }
        W::SignatureAlgorithmMismatch => at(
            find(&|c| c.cert.signature_algorithm != c.cert.tbs_certificate.signature),
            Rule::SignatureAlgorithmMismatch,
        ),
        W::UnsupportedCriticalExtension => {
            let p = find(&|c| unknown_critical_extension(&c.cert).is_some());
            let oid = unknown_critical_extension(&view.at(p).cert).unwrap_or_default();
            at(p, Rule::UnknownCriticalExtension { oid })
        }
        #[allow(deprecated)]
        W::RequiredEkuNotFound | W::RequiredEkuNotFoundContext(_) | W::EmptyEkuExtension => {
            let lacks = |c: &Parsed, p: Purpose| {
                c.cert
                    .tbs_certificate
                    .get::<ExtendedKeyUsage>()
                    .ok()
                    .flatten()
                    .is_some_and(|(_, eku)| p.eku().is_some_and(|w| !eku.0.contains(&w)))
            };
            let purpose = policy
                .wanted()
                .find(|p| view.all().any(|(_, c)| lacks(c, *p)))
                .unwrap_or(Purpose::Any);
            at(find(&|c| lacks(c, purpose)), Rule::WrongPurpose { purpose })
        }
        W::CertRevoked => {
            let revoked = |c: &Parsed| {
                let serial = c.cert.tbs_certificate.serial_number.as_bytes();
                policy.crls.iter().any(|der| {
                    webpki::BorrowedCertRevocationList::from_der(der)
                        .map(webpki::CertRevocationList::from)
                        .is_ok_and(|crl| crl.find_serial(serial).is_ok_and(|r| r.is_some()))
                })
            };
            at(find(&revoked), Rule::Revoked)
        }
        W::NameConstraintViolation => at(Position::Chain(0), Rule::NameConstraints),
        W::CertNotValidForName(_) => at(
            Position::Chain(0),
            Rule::WrongName {
                name: "the name asked for".to_owned(),
            },
        ),
        W::BadDer | W::BadDerTime | W::TrailingData(_) | W::UnsupportedCertVersion => {
            let p = find(&|c| EndEntityCert::try_from(&CertificateDer::from(&c.der[..])).is_err());
            at(
                p,
                Rule::Malformed {
                    detail: webpki_words(e),
                },
            )
        }
        other => at(
            Position::Chain(0),
            Rule::Other {
                detail: webpki_words(other),
            },
        ),
    }
}

/// A webpki error in words (its `Display` is its variant name).
fn webpki_words(e: &webpki::Error) -> String {
    use webpki::Error as W;
    match e {
        W::BadDer => "bad DER".to_owned(),
        W::BadDerTime => "a time field that does not decode".to_owned(),
        W::TrailingData(_) => "bytes after the end of a DER value".to_owned(),
        W::UnsupportedCertVersion => "not an X.509 v3 certificate".to_owned(),
        W::MaximumPathDepthExceeded => "the path has more than 6 intermediate CAs".to_owned(),
        W::MaximumSignatureChecksExceeded | W::MaximumPathBuildCallsExceeded => {
            "too many candidate paths (more than webpki's budget)".to_owned()
        }
        W::CertDistrusted => "a distrusted key".to_owned(),
        W::MalformedExtensions | W::ExtensionValueInvalid => {
            "an extension that does not decode".to_owned()
        }
        W::UnknownRevocationStatus => "its revocation status is in none of the CRLs given \
                                        (RFC 5280 §6.3)"
            .to_owned(),
        W::CrlExpired { .. } => {
            "a CRL given is past its nextUpdate (RFC 5280 §5.1.2.5): fetch a newer one".to_owned()
        }
        W::InvalidCrlSignatureForPublicKey
        | W::UnsupportedCrlSignatureAlgorithmContext(_)
        | W::UnsupportedCrlSignatureAlgorithmForPublicKeyContext(_) => {
            "a CRL given does not verify under the key of the CA it names as issuer".to_owned()
        }
        W::IssuerNotCrlSigner => {
            "a CRL given is issued by a CA whose keyUsage lacks cRLSign (RFC 5280 §4.2.1.3)"
                .to_owned()
        }
        W::UnsupportedDeltaCrl => "a delta CRL, which pqkit does not process".to_owned(),
        W::UnsupportedIndirectCrl => "an indirect CRL, which pqkit does not process".to_owned(),
        W::UnsupportedCrlIssuingDistributionPoint => {
            "a CRL with an issuingDistributionPoint pqkit does not process".to_owned()
        }
        W::UnsupportedRevocationReasonsPartitioning => {
            "a CRL partitioned by reasons, which pqkit does not process".to_owned()
        }
        W::UnsupportedRevocationReason => "a CRL entry with an unknown reason code".to_owned(),
        W::UnsupportedCrlVersion => "a CRL that is not version 2 (RFC 5280 §5.1.2.1)".to_owned(),
        W::InvalidCrlNumber => "a CRL whose cRLNumber is not a valid integer".to_owned(),
        W::InvalidSerialNumber => "a serial number that is not a valid integer".to_owned(),
        W::MalformedDnsIdentifier => {
            "a DNS name in a subjectAltName that is not well formed (RFC 5280 §4.2.1.6)".to_owned()
        }
        W::MalformedNameConstraint | W::InvalidNetworkMaskConstraint => {
            "a name constraint that is not well formed (RFC 5280 §4.2.1.10)".to_owned()
        }
        W::MaximumNameConstraintComparisonsExceeded => {
            "too many name constraint comparisons (more than webpki's budget)".to_owned()
        }
        W::SignatureAlgorithmMismatch => "its signature algorithm differs from the one its \
                                            to-be-signed part names (RFC 5280 §4.1.1.2)"
            .to_owned(),
        other => format!("rejected by rustls-webpki: {other}"),
    }
}

/// Extensions webpki or this module process; any other critical extension is an error
/// (RFC 5280 §4.2). Certificate policies are not processed, so a critical one is refused
/// as OpenSSL refuses it without a policy check.
fn unknown_critical_extension(cert: &Certificate) -> Option<String> {
    const KNOWN: [ObjectIdentifier; 7] = [
        rfc5280::ID_CE_KEY_USAGE,
        rfc5280::ID_CE_SUBJECT_ALT_NAME,
        rfc5280::ID_CE_BASIC_CONSTRAINTS,
        rfc5280::ID_CE_NAME_CONSTRAINTS,
        rfc5280::ID_CE_CRL_DISTRIBUTION_POINTS,
        rfc5280::ID_CE_EXT_KEY_USAGE,
        rfc5280::ID_CE_SUBJECT_KEY_IDENTIFIER,
    ];
    cert.tbs_certificate
        .extensions
        .iter()
        .flatten()
        .find(|e| e.critical && !KNOWN.contains(&e.extn_id))
        .map(|e| e.extn_id.to_string())
}

fn basic_constraints(cert: &Certificate) -> Result<Option<BasicConstraints>, PathError> {
    cert.tbs_certificate
        .get::<BasicConstraints>()
        .map(|o| o.map(|(_, bc)| bc))
        .map_err(|e| malformed(cert, e))
}

fn key_usage(cert: &Certificate) -> Result<Option<KeyUsage>, PathError> {
    cert.tbs_certificate
        .get::<KeyUsage>()
        .map(|o| o.map(|(_, ku)| ku))
        .map_err(|e| malformed(cert, e))
}

fn malformed(cert: &Certificate, e: der::Error) -> PathError {
    PathError {
        certificate: format!("certificate \"{}\"", cert.tbs_certificate.subject),
        rule: Rule::Malformed {
            detail: e.to_string(),
        },
    }
}

fn check_validity(cert: &Certificate, time: SystemTime) -> Result<(), Rule> {
    let v = &cert.tbs_certificate.validity;
    let (nb, na) = (v.not_before.to_system_time(), v.not_after.to_system_time());
    if nb > na {
        Err(Rule::BadValidity)
    } else if time < nb {
        Err(Rule::NotYetValid {
            not_before: v.not_before.to_string(),
        })
    } else if time > na {
        Err(Rule::Expired {
            not_after: v.not_after.to_string(),
        })
    } else {
        Ok(())
    }
}

fn unix_time(time: SystemTime) -> UnixTime {
    UnixTime::since_unix_epoch(time.duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO))
}

/// A time for `--at`: RFC 3339 (`2030-01-01T00:00:00Z`, `2030-01-01T09:30:00.5+01:00`), a
/// date (`2030-01-01`, midnight UTC) or seconds since the Unix epoch.
///
/// # Errors
/// The text back, with the forms it takes.
pub fn parse_time(s: &str) -> Result<SystemTime, String> {
    use std::time::{Duration, UNIX_EPOCH};
    let bad = || format!("{s:?}: not an RFC 3339 time, a date or Unix seconds");
    if let Ok(secs) = s.parse::<u64>() {
        return Ok(UNIX_EPOCH + Duration::from_secs(secs));
    }
    let full = if s.len() == 10 {
        format!("{s}T00:00:00Z")
    } else {
        s.to_owned()
    };
    // YYYY-MM-DDTHH:MM:SS, then an optional fraction, then Z or ±HH:MM.
    let (main, rest) = full.split_at_checked(19).ok_or_else(bad)?;
    let rest = match rest.strip_prefix('.') {
        Some(frac) => frac.trim_start_matches(|c: char| c.is_ascii_digit()),
        None => rest,
    };
    let offset_secs: i64 = match rest {
        "Z" | "z" => 0,
        _ => {
            let (sign, hm) = match rest.split_at_checked(1) {
                Some(("+", hm)) => (1, hm),
                Some(("-", hm)) => (-1, hm),
                _ => return Err(bad()),
            };
            let (h, m) = hm.split_once(':').ok_or_else(bad)?;
            let h: i64 = h.parse().map_err(|_| bad())?;
            let m: i64 = m.parse().map_err(|_| bad())?;
            if h > 23 || m > 59 {
                return Err(bad());
            }
            sign * (h * 3600 + m * 60)
        }
    };
    use std::str::FromStr;
    let t = der::DateTime::from_str(&format!("{main}Z")).map_err(|_| bad())?;
    let utc = i64::try_from(t.unix_duration().as_secs()).map_err(|_| bad())? - offset_secs;
    let utc = u64::try_from(utc).map_err(|_| bad())?;
    Ok(UNIX_EPOCH + Duration::from_secs(utc))
}

#[cfg(test)]
mod time_tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::parse_time;

    #[test]
    fn times_in_every_form_the_help_promises() {
        let at = |s: &str| {
            parse_time(s)
                .unwrap_or_else(|e| panic!("{e}"))
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0)
        };
        let noon = 1_780_315_200; // 2026-06-01T12:00:00Z
        assert_eq!(at("2026-06-01T12:00:00Z"), noon);
        assert_eq!(at("2026-06-01T13:30:00+01:30"), noon);
        assert_eq!(at("2026-06-01T07:00:00-05:00"), noon);
        assert_eq!(at("2026-06-01T12:00:00.25Z"), noon);
        assert_eq!(at("2026-06-01"), noon - 12 * 3600);
        assert_eq!(at("1780315200"), noon);
        for bad in [
            "",
            "yesterday",
            "2026-06-01T12:00:00",
            "2026-06-01T12:00:00+25:00",
            "2026-13-01",
        ] {
            assert!(parse_time(bad).is_err(), "{bad:?}");
        }
        let _ = Duration::ZERO;
    }
}
