//! CMS SignedData (RFC 5652) signed and verified by pqkit-pki with every catalogue signature
//! algorithm and with an HSS state file; several signers under `Require`; content streamed past
//! the in-memory bound; and the refusals: every bit flip of a signed object, a digest too weak
//! for the signature algorithm, a missing, duplicated or contradicting signed attribute, a
//! signer without codeSigning, an expired signer.

use std::io::Read;
use std::time::{Duration, SystemTime};

use ::cms::content_info::ContentInfo;
use ::cms::signed_data::{SignedData, SignerInfos};
use const_oid::ObjectIdentifier;
use der::asn1::{OctetString, SetOfVec};
use der::{Any, Decode, Encode};
use pqkit_core::sig::SigningKey;
use pqkit_hbs::ledger::hazmat::in_memory;
use pqkit_hbs::params::{LMS, OTS};
use pqkit_hbs::state::StatefulKey;
use pqkit_pki::cert::{self, CertRequest, Issuer, Profile};
use pqkit_pki::cms::{
    self, CmsError, DigestAlgorithm, Refusal, Require, SignOptions, Signer, SignerKey,
    VerifyOptions, oids,
};
use pqkit_pki::path::Rule;
use pqkit_pki::path::{Policy, Purpose, TrustAnchors};
use pqkit_pki::{Error, stateful_ca};
use x509_cert::attr::Attribute;

const CONTENT: &[u8] = b"firmware image v1.2.3\n";

struct Ca {
    cert: Vec<u8>,
    key: SigningKey,
}

fn alg(name: &str) -> &'static pqkit_core::sig::SignatureAlgorithm {
    pqkit_core::catalogue::signature(name).expect("catalogue name")
}

fn ca(name: &str) -> Ca {
    ca_for(name, Duration::from_secs(365 * 24 * 3600))
}

fn ca_for(name: &str, validity: Duration) -> Ca {
    let key = alg(name).generate().expect("CA key");
    let request = CertRequest {
        validity,
        ..CertRequest::new(Profile::RootCa, "test root")
    };
    let cert = cert::issue_self_signed(&request, &key).expect("root");
    Ca { cert, key }
}

/// A certificate of `profile` for a new `name` key, issued by `ca`.
fn leaf(ca: &Ca, name: &str, profile: Profile) -> (Vec<u8>, SigningKey) {
    let key = alg(name).generate().expect("key");
    let cert = cert::issue(
        &CertRequest::new(profile, &format!("{name} signer")),
        &key.verifying_key(),
        Issuer {
            certificate: &ca.cert,
            key: &ca.key,
        },
    )
    .expect("leaf");
    (cert, key)
}

/// Code signing 400 days from `now`.
fn later_options(anchors: &TrustAnchors, now: SystemTime) -> VerifyOptions<'_> {
    VerifyOptions {
        policy: Policy::new(
            Purpose::CodeSigning,
            now + Duration::from_secs(400 * 24 * 3600),
        ),
        ..options(anchors)
    }
}

fn anchors(ca: &Ca) -> TrustAnchors {
    TrustAnchors::new(std::slice::from_ref(&ca.cert)).expect("anchors")
}

fn options(anchors: &TrustAnchors) -> VerifyOptions<'_> {
    VerifyOptions {
        anchors,
        policy: Policy::new(Purpose::CodeSigning, SystemTime::now()),
        certificates: Vec::new(),
        signers: Vec::new(),
        require: Require::All,
        tsa_anchors: None,
    }
}

fn sign(signers: &mut [Signer<'_>], content: &[u8], attached: bool, attrs: bool) -> Vec<u8> {
    let options = SignOptions {
        attached,
        signed_attributes: attrs,
        ..SignOptions::default()
    };
    cms::sign(signers, &mut &content[..], &options).expect("sign")
}

fn one<'a>(cert: &[u8], key: &'a SigningKey) -> Vec<Signer<'a>> {
    vec![Signer {
        certificate: cert.to_vec(),
        key: SignerKey::Key(key),
        digest: None,
    }]
}

/// The refusal of the first signer, from a rejected verification.
fn refusal(result: Result<cms::Verified, CmsError>) -> Refusal {
    match result {
        Err(CmsError::Rejected { verdicts, .. }) => verdicts
            .into_iter()
            .find_map(|v| v.result.err())
            .expect("a refused signer"),
        Err(e) => panic!("expected a refused signer, got: {e}"),
        Ok(_) => panic!("accepted"),
    }
}

#[test]
fn every_signature_algorithm_signs_and_verifies() {
    let root = ca("ECDSA-P256");
    let anchors = anchors(&root);
    for alg in pqkit_core::catalogue::signatures() {
        let (cert, key) = leaf(&root, alg.name, Profile::CodeSigning);
        for attached in [true, false] {
            let der = sign(&mut one(&cert, &key), CONTENT, attached, true);
            let detached: Option<&mut dyn Read> = if attached {
                None
            } else {
                Some(Box::leak(Box::new(CONTENT)))
            };
            let verified = cms::verify(&der, detached, &options(&anchors))
                .unwrap_or_else(|e| panic!("{}: {e}", alg.name));
            assert_eq!(verified.signers.len(), 1);
            assert_eq!(verified.signers[0].signature_algorithm, alg.name);
            assert_eq!(
                verified.content.as_deref(),
                attached.then_some(CONTENT),
                "{}",
                alg.name
            );
            let shown = cms::describe(&der).expect("describe");
            assert_eq!(shown.signers[0].signature_algorithm, alg.name);
        }
    }
}

#[test]
fn profiles_name_each_digest() {
    let root = ca("ECDSA-P256");
    for (name, digest) in [
        ("ML-DSA-44", DigestAlgorithm::Sha512),
        ("ML-DSA-87", DigestAlgorithm::Sha512),
        ("SLH-DSA-SHA2-128f", DigestAlgorithm::Sha256),
        ("SLH-DSA-SHA2-192f", DigestAlgorithm::Sha512),
        ("SLH-DSA-SHAKE-128f", DigestAlgorithm::Shake128),
        ("SLH-DSA-SHAKE-256f", DigestAlgorithm::Shake256),
        ("ECDSA-P384", DigestAlgorithm::Sha384),
        ("Ed25519", DigestAlgorithm::Sha512),
        ("RSA-PKCS1-2048", DigestAlgorithm::Sha256),
        // Composite ML-DSA: its pre-hash (draft-ietf-lamps-cms-composite-sigs §3).
        ("MLDSA44-ECDSA-P256-SHA256", DigestAlgorithm::Sha256),
        ("MLDSA65-ECDSA-P256-SHA512", DigestAlgorithm::Sha512),
        ("MLDSA87-Ed448-SHAKE256", DigestAlgorithm::Shake256),
    ] {
        let (cert, key) = leaf(&root, name, Profile::CodeSigning);
        let der = sign(&mut one(&cert, &key), CONTENT, true, true);
        let shown = cms::describe(&der).expect("describe");
        assert_eq!(shown.signers[0].digest_algorithm, digest.name(), "{name}");
        assert_eq!(shown.digest_algorithms, vec![digest.name()], "{name}");
        let attrs = shown.signers[0]
            .signed_attributes
            .clone()
            .expect("attributes");
        for a in [
            "contentType",
            "messageDigest",
            "signingTime",
            "CMSAlgorithmProtection",
        ] {
            assert!(attrs.iter().any(|x| x == a), "{name}: {a} in {attrs:?}");
        }
    }
}

/// A composite ML-DSA signer takes its pre-hash as the digest and no other: pqkit refuses to
/// sign with another (the verifier's rule is the same function, `digest::allowed`).
#[test]
fn composite_signers_take_their_prehash_only() {
    let root = ca("ECDSA-P256");
    let (cert, key) = leaf(&root, "MLDSA44-ECDSA-P256-SHA256", Profile::CodeSigning);
    let mut signers = vec![Signer {
        certificate: cert.clone(),
        key: SignerKey::Key(&key),
        digest: Some(DigestAlgorithm::Sha512),
    }];
    let refused = cms::sign(&mut signers, &mut &CONTENT[..], &SignOptions::default());
    assert!(refused.is_err(), "SHA-512 with a SHA-256 composite");
}

/// Signers named by subjectKeyIdentifier (SignerInfo and SignedData version 3): found and
/// verified like the others.
#[test]
fn signers_by_subject_key_identifier() {
    let root = ca("ECDSA-P256");
    let anchors = anchors(&root);
    let (cert, key) = leaf(&root, "ML-DSA-65", Profile::CodeSigning);
    let by_ski = SignOptions {
        subject_key_identifier: true,
        ..SignOptions::default()
    };
    let der = cms::sign(&mut one(&cert, &key), &mut &CONTENT[..], &by_ski).expect("sign");
    let shown = cms::describe(&der).expect("describe");
    assert_eq!(shown.version, 3);
    assert!(
        shown.signers[0]
            .identifier
            .starts_with("subjectKeyIdentifier ")
    );
    cms::verify(&der, None, &options(&anchors)).expect("verify");
}

#[test]
fn without_signed_attributes_the_signature_covers_the_content() {
    let root = ca("ECDSA-P256");
    let anchors = anchors(&root);
    // ML-DSA streams μ; the others hold the content.
    for name in [
        "ML-DSA-65",
        "SLH-DSA-SHA2-128f",
        "ECDSA-P256",
        "Ed25519",
        "MLDSA65-Ed25519-SHA512",
    ] {
        let (cert, key) = leaf(&root, name, Profile::CodeSigning);
        for attached in [true, false] {
            let der = sign(&mut one(&cert, &key), CONTENT, attached, false);
            let shown = cms::describe(&der).expect("describe");
            assert!(shown.signers[0].signed_attributes.is_none());
            let content = |c: &'static [u8]| -> Option<&mut dyn Read> {
                (!attached).then(|| Box::leak(Box::new(c)) as &mut dyn Read)
            };
            cms::verify(&der, content(CONTENT), &options(&anchors))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            if !attached {
                let r = refusal(cms::verify(
                    &der,
                    content(b"firmware image v1.2.4\n"),
                    &options(&anchors),
                ));
                assert_eq!(r, Refusal::BadSignature, "{name}");
            }
        }
    }
}

/// Detached content past the in-memory bound streams through the digests, both ways; attached
/// content past it is refused before anything is signed.
#[test]
fn detached_content_streams_past_the_bound() {
    let root = ca("ECDSA-P256");
    let anchors = anchors(&root);
    let (cert, key) = leaf(&root, "ML-DSA-44", Profile::CodeSigning);
    let len = cms::MAX_HELD_CONTENT + 3 * cms::CHUNK as u64 + 17;
    let big = || std::io::repeat(0x5a).take(len);
    let options_detached = SignOptions {
        attached: false,
        ..SignOptions::default()
    };
    let der = cms::sign(&mut one(&cert, &key), &mut big(), &options_detached).expect("sign");
    cms::verify(&der, Some(&mut big()), &options(&anchors)).expect("verify");
    let r = refusal(cms::verify(
        &der,
        Some(&mut std::io::repeat(0x5a).take(len - 1)),
        &options(&anchors),
    ));
    assert_eq!(r, Refusal::MessageDigest("SHA-512"));
    match cms::sign(&mut one(&cert, &key), &mut big(), &SignOptions::default()) {
        Err(Error::Input { reason, .. }) => assert!(reason.contains("detached"), "{reason}"),
        other => panic!(
            "attached content past the bound: {:?}",
            other.map(|d| d.len())
        ),
    }
}

#[test]
fn several_signers_and_the_require_policy() {
    let pq_root = ca("ML-DSA-65");
    let ec_root = ca("ECDSA-P256");
    let (pq_cert, pq_key) = leaf(&pq_root, "ML-DSA-65", Profile::CodeSigning);
    let (ec_cert, ec_key) = leaf(&ec_root, "ECDSA-P256", Profile::CodeSigning);
    let mut signers = one(&pq_cert, &pq_key);
    signers.extend(one(&ec_cert, &ec_key));
    let der = sign(&mut signers, CONTENT, true, true);
    let both = TrustAnchors::new(&[pq_root.cert.clone(), ec_root.cert.clone()]).expect("anchors");
    let v = cms::verify(&der, None, &options(&both)).expect("both signers");
    assert_eq!(v.signers.len(), 2);
    // Only the post-quantum root trusted: `all` refuses and names the ECDSA signer, `any`
    // accepts with the ECDSA signer's refusal reported.
    let pq_only = anchors(&pq_root);
    match cms::verify(&der, None, &options(&pq_only)) {
        Err(CmsError::Rejected { verdicts, .. }) => {
            let bad: Vec<_> = verdicts.iter().filter(|v| v.result.is_err()).collect();
            assert_eq!(bad.len(), 1);
            assert!(bad[0].signer.contains("ECDSA-P256"), "{}", bad[0].signer);
            assert!(matches!(bad[0].result, Err(Refusal::Path(_))));
        }
        other => panic!("{:?}", other.map(|v| v.signers.len())),
    }
    let any = VerifyOptions {
        require: Require::Any,
        ..options(&pq_only)
    };
    let v = cms::verify(&der, None, &any).expect("any");
    assert_eq!(v.signers.iter().filter(|s| s.result.is_ok()).count(), 1);
    // Choosing the signer by certificate.
    let chosen = VerifyOptions {
        signers: vec![pq_cert.clone()],
        ..options(&pq_only)
    };
    let v = cms::verify(&der, None, &chosen).expect("the chosen signer");
    assert_eq!(v.signers.len(), 1);
    let nobody = VerifyOptions {
        signers: vec![pq_root.cert.clone()],
        require: Require::Any,
        ..options(&pq_only)
    };
    assert!(matches!(
        cms::verify(&der, None, &nobody),
        Err(CmsError::NoSigner(_))
    ));
    // Both signers required by certificate: a SignedData whose ECDSA SignerInfo was removed
    // (no signature covers the set of SignerInfos) is refused, naming the missing signer.
    let info = ContentInfo::from_der(&der).expect("ContentInfo");
    let mut sd: SignedData = info.content.decode_as().expect("SignedData");
    let kept: Vec<_> = sd
        .signer_infos
        .0
        .iter()
        .filter(|si| {
            si.signature_algorithm
                .oid
                .to_string()
                .starts_with("2.16.840.1.101.3.4.3")
        })
        .cloned()
        .collect();
    assert_eq!(kept.len(), 1);
    sd.signer_infos = SignerInfos::try_from(kept).expect("infos");
    let stripped = encode(&sd);
    let both_required = VerifyOptions {
        signers: vec![pq_cert.clone(), ec_cert.clone()],
        ..options(&both)
    };
    cms::verify(&der, None, &both_required).expect("both there");
    match cms::verify(&stripped, None, &both_required) {
        Err(CmsError::MissingSigner(who)) => assert!(who.contains("ECDSA-P256"), "{who}"),
        other => panic!("{:?}", other.map(|v| v.signers.len())),
    }
}

/// An HSS signer in a state file: each SignedData spends one one-time key, reserved first; an
/// XMSS one too.
#[test]
fn hss_and_xmss_signers_from_state_files() {
    let dir = std::env::temp_dir().join(format!("pqkit-pki-cms-hss-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    let level = (&LMS[0], &OTS[3]);
    let mut root_key =
        StatefulKey::create(&dir.join("root.hss"), &[level], in_memory(), 2).expect("root");
    let root = stateful_ca::issue_self_signed(
        &CertRequest::new(Profile::RootCa, "HSS root"),
        &mut root_key,
    )
    .expect("root cert");
    let mut signer_key =
        StatefulKey::create(&dir.join("signer.hss"), &[level, level], in_memory(), 2)
            .expect("signer");
    let spki = pqkit_pki::stateful::spki(&signer_key.public_key())
        .expect("spki")
        .to_der()
        .expect("der");
    let cert = stateful_ca::issue(
        &CertRequest::new(Profile::CodeSigning, "HSS firmware signer"),
        &spki,
        &root,
        &mut root_key,
    )
    .expect("signer cert");
    let anchors = TrustAnchors::new(std::slice::from_ref(&root)).expect("anchors");
    let mut ders = Vec::new();
    for attrs in [true, false] {
        let before = signer_key.status();
        let mut signers = vec![Signer {
            certificate: cert.clone(),
            key: SignerKey::Stateful(&mut signer_key),
            digest: None,
        }];
        let der = sign(&mut signers, CONTENT, true, attrs);
        drop(signers);
        assert_ne!(format!("{before:?}"), format!("{:?}", signer_key.status()));
        let v = cms::verify(&der, None, &options(&anchors)).expect("HSS SignedData");
        assert_eq!(v.signers[0].signature_algorithm, "HSS/LMS");
        assert_eq!(v.signers[0].digest, "SHA-256");
        ders.push(der);
    }
    assert_ne!(ders[0], ders[1]);
    // An XMSS signer (RFC 9802 identifiers) under the same root.
    let mut xmss = StatefulKey::create_xmss(
        &dir.join("signer.xmss"),
        pqkit_hbs::xmss::by_name("XMSS-SHA2_10_256").expect("set"),
        in_memory(),
        2,
    )
    .expect("XMSS key");
    let spki = pqkit_pki::stateful::spki(&xmss.public_key())
        .expect("spki")
        .to_der()
        .expect("der");
    let cert = stateful_ca::issue(
        &CertRequest::new(Profile::CodeSigning, "XMSS firmware signer"),
        &spki,
        &root,
        &mut root_key,
    )
    .expect("XMSS signer cert");
    let mut signers = vec![Signer {
        certificate: cert,
        key: SignerKey::Stateful(&mut xmss),
        digest: None,
    }];
    let der = sign(&mut signers, CONTENT, false, true);
    let v = cms::verify(&der, Some(&mut &CONTENT[..]), &options(&anchors)).expect("XMSS");
    assert_eq!(v.signers[0].signature_algorithm, "XMSS");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Re-signs signer 0's signed attributes after `edit` (and the SignerInfo's digest algorithm
/// after `digest`, when given), with `key`.
fn resign(
    der: &[u8],
    key: &SigningKey,
    digest: Option<DigestAlgorithm>,
    edit: impl FnOnce(&mut Vec<Attribute>),
) -> Vec<u8> {
    let info = ContentInfo::from_der(der).expect("ContentInfo");
    let mut sd: SignedData = info.content.decode_as().expect("SignedData");
    let mut infos: Vec<_> = sd.signer_infos.0.into_vec();
    let si = &mut infos[0];
    if let Some(d) = digest {
        si.digest_alg = d.identifier();
        sd.digest_algorithms = SetOfVec::try_from(vec![d.identifier()]).expect("set");
    }
    let mut attrs: Vec<Attribute> = si.signed_attrs.take().expect("attrs").into_vec();
    edit(&mut attrs);
    // Two attributes of one type with different values make a valid SET OF; identical ones
    // would not encode (and would not decode either).
    let attrs = SetOfVec::try_from(attrs).expect("a SET OF");
    si.signature = OctetString::new(
        key.sign(&attrs.to_der().expect("attrs"), &[])
            .expect("sign"),
    )
    .expect("signature");
    si.signed_attrs = Some(attrs);
    sd.signer_infos = SignerInfos::try_from(infos).expect("infos");
    encode(&sd)
}

/// A SignedData in its ContentInfo, DER.
fn encode(sd: &SignedData) -> Vec<u8> {
    ContentInfo {
        content_type: oids::ID_SIGNED_DATA,
        content: Any::encode_from(sd).expect("sd"),
    }
    .to_der()
    .expect("der")
}

/// An attribute of one value.
fn attribute(oid: ObjectIdentifier, value: Any) -> Attribute {
    Attribute {
        oid,
        values: SetOfVec::try_from(vec![value]).expect("values"),
    }
}

fn digest_value(d: DigestAlgorithm, content: &[u8]) -> Any {
    Any::encode_from(&OctetString::new(d.digest(content)).expect("octets")).expect("any")
}

#[test]
fn contradicting_signed_attributes_are_refused() {
    let root = ca("ECDSA-P256");
    let anchors = anchors(&root);
    let (cert, key) = leaf(&root, "ML-DSA-87", Profile::CodeSigning);
    let der = sign(&mut one(&cert, &key), CONTENT, true, true);
    let verify = |der: &[u8]| cms::verify(der, None, &options(&anchors));
    // The re-signing itself is sound: unchanged attributes verify.
    verify(&resign(&der, &key, None, |_| {})).expect("re-signed, unchanged");
    let sha512 = DigestAlgorithm::Sha512;
    let cases: Vec<(&str, Vec<u8>, Refusal)> = vec![
        (
            "SHA-256 with ML-DSA-87",
            resign(&der, &key, Some(DigestAlgorithm::Sha256), |attrs| {
                attrs.retain(|a| {
                    a.oid != oids::MESSAGE_DIGEST && a.oid != oids::ALGORITHM_PROTECTION
                });
                attrs.push(attribute(
                    oids::MESSAGE_DIGEST,
                    digest_value(DigestAlgorithm::Sha256, CONTENT),
                ));
            }),
            Refusal::Digest {
                digest: "SHA-256".into(),
                signature: "ML-DSA-87".into(),
            },
        ),
        (
            "no messageDigest",
            resign(&der, &key, None, |attrs| {
                attrs.retain(|a| a.oid != oids::MESSAGE_DIGEST);
            }),
            Refusal::MissingAttribute("messageDigest"),
        ),
        (
            "no contentType",
            resign(&der, &key, None, |attrs| {
                attrs.retain(|a| a.oid != oids::CONTENT_TYPE);
            }),
            Refusal::MissingAttribute("contentType"),
        ),
        (
            "two messageDigest attributes",
            resign(&der, &key, None, |attrs| {
                attrs.push(attribute(
                    oids::MESSAGE_DIGEST,
                    digest_value(sha512, b"other firmware"),
                ));
            }),
            Refusal::DuplicateAttribute("messageDigest".into()),
        ),
        (
            "two values in messageDigest",
            resign(&der, &key, None, |attrs| {
                let a = attrs
                    .iter_mut()
                    .find(|a| a.oid == oids::MESSAGE_DIGEST)
                    .expect("messageDigest");
                a.values
                    .insert(digest_value(sha512, b"other firmware"))
                    .expect("second value");
            }),
            Refusal::DuplicateAttribute("messageDigest".into()),
        ),
        (
            "messageDigest of other content",
            resign(&der, &key, None, |attrs| {
                attrs.retain(|a| a.oid != oids::MESSAGE_DIGEST);
                attrs.push(attribute(
                    oids::MESSAGE_DIGEST,
                    digest_value(sha512, b"other firmware"),
                ));
            }),
            Refusal::MessageDigest("SHA-512"),
        ),
        (
            "contentType other than the content's",
            resign(&der, &key, None, |attrs| {
                attrs.retain(|a| a.oid != oids::CONTENT_TYPE);
                attrs.push(attribute(
                    oids::CONTENT_TYPE,
                    Any::encode_from(&oids::ID_SIGNED_DATA).expect("oid"),
                ));
            }),
            Refusal::ContentType,
        ),
        (
            "CMSAlgorithmProtection naming SHAKE256",
            resign(&der, &key, None, |attrs| {
                let p = attrs
                    .iter_mut()
                    .find(|a| a.oid == oids::ALGORITHM_PROTECTION)
                    .expect("protection");
                let mut bytes = p.values.get(0).expect("value").to_der().expect("der");
                // The digest OID's last arc: SHA-512 (…2.3) → SHAKE256 (…2.12).
                let at = find(
                    &bytes,
                    &[0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x03],
                )
                .expect("SHA-512 OID");
                bytes[at + 8] = 0x0c;
                p.values =
                    SetOfVec::try_from(vec![Any::from_der(&bytes).expect("any")]).expect("values");
            }),
            Refusal::AlgorithmProtection,
        ),
    ];
    for (what, der, want) in cases {
        assert_eq!(refusal(verify(&der)), want, "{what}");
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[test]
fn signers_without_code_signing_or_expired_are_refused() {
    let root = ca("ECDSA-P256");
    let anchors = anchors(&root);
    let (server, server_key) = leaf(&root, "ML-DSA-44", Profile::Server);
    let der = sign(&mut one(&server, &server_key), CONTENT, true, true);
    match refusal(cms::verify(&der, None, &options(&anchors))) {
        Refusal::Path(e) => assert!(matches!(e.rule, Rule::WrongPurpose { .. }), "{e}"),
        r => panic!("{r}"),
    }
    let (cert, key) = leaf(&root, "ML-DSA-44", Profile::CodeSigning);
    let der = sign(&mut one(&cert, &key), CONTENT, true, true);
    let later = VerifyOptions {
        policy: Policy::new(
            Purpose::CodeSigning,
            SystemTime::now() + Duration::from_secs(400 * 24 * 3600),
        ),
        ..options(&anchors)
    };
    match refusal(cms::verify(&der, None, &later)) {
        Refusal::Path(e) => assert!(matches!(e.rule, Rule::Expired { .. }), "{e}"),
        r => panic!("{r}"),
    }
}

/// Every 1-bit change of a signed object is refused: the signature, the signed attributes,
/// the content, the certificate, and the unsigned fields around them (versions, the
/// digestAlgorithms, the algorithm identifiers, lengths and tags).
#[test]
fn every_bit_flip_is_refused() {
    let root = ca("Ed25519");
    let anchors = anchors(&root);
    let (cert, key) = leaf(&root, "Ed25519", Profile::CodeSigning);
    let der = sign(&mut one(&cert, &key), CONTENT, true, true);
    cms::verify(&der, None, &options(&anchors)).expect("unchanged");
    let mut accepted = Vec::new();
    for bit in 0..der.len() * 8 {
        let mut bad = der.clone();
        bad[bit / 8] ^= 1 << (bit % 8);
        if cms::verify(&bad, None, &options(&anchors)).is_ok() {
            accepted.push(bit);
        }
    }
    assert!(
        accepted.is_empty(),
        "{} of {} bit flips accepted, first at byte {}",
        accepted.len(),
        der.len() * 8,
        accepted[0] / 8
    );
}

/// The IETF hackathon's CMS artifacts (`tests/data/cms-hackathon`: OpenSSL 3.5, CryptoNext and
/// Bouncy Castle, BER included): every ML-DSA, SLH-DSA and composite ML-DSA SignedData
/// verifies against its provider's trust anchor, its content is the provider's plaintext, and
/// a changed content byte is refused.
#[test]
fn hackathon_artifacts_verify() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/cms-hackathon");
    // The artifacts' certificates are valid on 2026-08-01 (Bouncy Castle's for a year from
    // 2026-07-20).
    let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_785_542_400);
    let mut checked = 0;
    for provider in ["ossl35", "cryptonext", "bc"] {
        let dir = root.join(provider);
        let ta = std::fs::read(dir.join("ta.der")).expect("ta.der");
        let anchors = TrustAnchors::new(&[ta]).expect("anchor");
        let plaintext = std::fs::read(dir.join("expected_plaintext.txt")).expect("plaintext");
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .expect("dir")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.to_string_lossy().ends_with("_signed_attrs.der"))
            .collect();
        files.sort();
        // Bouncy Castle's set also has the 18 composite ML-DSA signers.
        let composites = if provider == "bc" { 18 } else { 0 };
        assert_eq!(
            files.len(),
            15 + composites,
            "{provider}: 3 ML-DSA, 12 SLH-DSA and {composites} composite artifacts"
        );
        for file in files {
            let der = std::fs::read(&file).expect("artifact");
            // Bouncy Castle's trust anchor has no subjectKeyIdentifier, which RFC 5280 §4.2.1.2
            // asks of a CA and `Policy::key_identifiers` checks by default; not checked here.
            let policy = Policy {
                key_identifiers: provider != "bc",
                ..Policy::new(Purpose::Any, at)
            };
            let options = VerifyOptions {
                policy,
                ..options(&anchors)
            };
            let v = cms::verify(&der, None, &options)
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let content = v.content.expect("attached");
            assert!(
                content.ends_with(&plaintext),
                "{}: content {:?}",
                file.display(),
                String::from_utf8_lossy(&content)
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 63);
}

#[test]
fn gen_time_takes_fractional_seconds() {
    use cms::timestamp::gen_time;
    use der::Tag;
    let at = |text: &str| gen_time(&Any::new(Tag::GeneralizedTime, text.as_bytes()).expect("any"));
    let t = at("20260801120000.25Z").expect("fraction");
    assert_eq!(t, at("20260801120000Z").expect("whole"));
    for bad in [
        "20260801120000.250Z",
        "20260801120000.Z",
        "20260801120000",
        "2026080112000Z",
    ] {
        assert!(at(bad).is_none(), "{bad}");
    }
}

/// A TSA's time-stamp token (RFC 3161) over `imprint` (the SHA-512 of a signature value) at
/// `at`, signed by `cert`/`key`.
fn tsa_token(cert: &[u8], key: &SigningKey, imprint: &[u8], at: SystemTime) -> Vec<u8> {
    use cms::timestamp::{ID_CT_TST_INFO, MessageImprint, TstInfo};
    use der::asn1::{GeneralizedTime, Int};
    let tst = TstInfo {
        version: Int::new(&[1]).expect("int"),
        policy: ObjectIdentifier::new_unwrap("1.3.6.1.4.1.99999.1"),
        message_imprint: MessageImprint {
            hash_algorithm: DigestAlgorithm::Sha512.identifier(),
            hashed_message: OctetString::new(imprint).expect("octets"),
        },
        serial_number: Int::new(&[7]).expect("int"),
        gen_time: Any::encode_from(&GeneralizedTime::from_system_time(at).expect("time"))
            .expect("any"),
        accuracy: None,
        ordering: false,
        nonce: None,
        tsa: None,
        extensions: None,
    }
    .to_der()
    .expect("TSTInfo");
    let options = SignOptions {
        content_type: ID_CT_TST_INFO,
        signing_certificate: true,
        ..SignOptions::default()
    };
    cms::sign(&mut one(cert, key), &mut &tst[..], &options).expect("token")
}

/// `to` with its first signer's unsigned attributes taken from `from`'s first signer.
fn with_unsigned_of(to: &[u8], from: &[u8]) -> Vec<u8> {
    let decode = |d: &[u8]| -> SignedData {
        ContentInfo::from_der(d)
            .expect("ContentInfo")
            .content
            .decode_as()
            .expect("SignedData")
    };
    let unsigned = decode(from)
        .signer_infos
        .0
        .get(0)
        .expect("signer")
        .unsigned_attrs
        .clone();
    let mut sd = decode(to);
    let mut infos = sd.signer_infos.0.into_vec();
    infos[0].unsigned_attrs = unsigned;
    sd.signer_infos = SignerInfos::try_from(infos).expect("infos");
    encode(&sd)
}

/// The first signer's signature value.
fn signature_value(der: &[u8]) -> Vec<u8> {
    let info = ContentInfo::from_der(der).expect("ContentInfo");
    let sd: SignedData = info.content.decode_as().expect("SignedData");
    sd.signer_infos
        .0
        .get(0)
        .expect("signer")
        .signature
        .as_bytes()
        .to_vec()
}

/// An RFC 3161 time-stamp token on a signer: with it, a signer whose certificate has expired
/// since still verifies (its certificate validated at the token's genTime); a token over
/// another signature, one by a TSA without timeStamping, or one that is not a TSTInfo is
/// refused with its reason.
#[test]
fn a_time_stamp_token_validates_the_signer_when_it_signed() {
    let root = ca_for("ECDSA-P256", Duration::from_secs(10 * 365 * 24 * 3600));
    let anchors = anchors(&root);
    let (cert, key) = leaf(&root, "ML-DSA-44", Profile::CodeSigning);
    let der = sign(&mut one(&cert, &key), CONTENT, true, true);
    // A TSA certificate valid for 3 years, the signer's for one.
    let tsa_key = alg("ML-DSA-65").generate().expect("key");
    let tsa_cert = cert::issue(
        &CertRequest {
            validity: Duration::from_secs(3 * 365 * 24 * 3600),
            ..CertRequest::new(Profile::TimeStamping, "test TSA")
        },
        &tsa_key.verifying_key(),
        Issuer {
            certificate: &root.cert,
            key: &root.key,
        },
    )
    .expect("TSA certificate");
    let now = SystemTime::now();
    let later = later_options(&anchors, now);
    let imprint = DigestAlgorithm::Sha512.digest(&signature_value(&der));
    let token = tsa_token(&tsa_cert, &tsa_key, &imprint, now);
    let stamped = cms::timestamp::attach(&der, &token).expect("attach");
    let v = cms::verify(&stamped, None, &later).expect("time-stamped, so valid then");
    let t = v.signers[0].timestamp.expect("the token's time");
    assert!(t <= now && now.duration_since(t).expect("before").as_secs() < 2);
    assert!(
        cms::describe(&stamped).expect("show").signers[0]
            .unsigned_attributes
            .contains(&"signatureTimeStampToken".to_owned())
    );
    // Without the token the signer has expired.
    assert!(matches!(
        refusal(cms::verify(&der, None, &later)),
        Refusal::Path(_)
    ));
    // A token over another signature: `attach` finds no signer for it, and one moved onto
    // another signature by hand is refused by the verifier.
    let other = tsa_token(&tsa_cert, &tsa_key, &[0u8; 64], now);
    assert!(matches!(
        cms::timestamp::attach(&der, &other),
        Err(CmsError::Malformed(why)) if why.contains("none of the signatures")
    ));
    let resigned = sign(&mut one(&cert, &key), CONTENT, true, true);
    let r = refusal(cms::verify(
        &with_unsigned_of(&resigned, &stamped),
        None,
        &later,
    ));
    assert!(
        matches!(&r, Refusal::Timestamp(why) if why.contains("not of this signature")),
        "{r}"
    );
    // TSAs trusted apart: the same token under other TSA anchors is refused.
    let other_root = ca("ECDSA-P256");
    let other = TrustAnchors::new(std::slice::from_ref(&other_root.cert)).expect("anchors");
    let apart = VerifyOptions {
        tsa_anchors: Some(&other),
        ..later_options(&anchors, now)
    };
    let r = refusal(cms::verify(&stamped, None, &apart));
    assert!(matches!(&r, Refusal::Timestamp(_)), "{r}");
    // A token by a code-signing certificate, not a TSA.
    let (not_tsa, not_tsa_key) = leaf(&root, "ML-DSA-65", Profile::CodeSigning);
    let forged = tsa_token(&not_tsa, &not_tsa_key, &imprint, now);
    let r = refusal(cms::verify(
        &cms::timestamp::attach(&der, &forged).expect("attach"),
        None,
        &options(&anchors),
    ));
    assert!(
        matches!(&r, Refusal::Timestamp(why) if why.contains("timeStamping")),
        "{r}"
    );
    // A token without the ESS signingCertificate attribute (RFC 3161 §2.4.1).
    let bare = {
        use cms::timestamp::ID_CT_TST_INFO;
        let stamped_tst = ContentInfo::from_der(&token)
            .expect("token")
            .content
            .decode_as::<SignedData>()
            .expect("SignedData")
            .encap_content_info
            .econtent
            .expect("TSTInfo")
            .decode_as::<OctetString>()
            .expect("octets");
        let options = SignOptions {
            content_type: ID_CT_TST_INFO,
            ..SignOptions::default()
        };
        cms::sign(
            &mut one(&tsa_cert, &tsa_key),
            &mut stamped_tst.as_bytes(),
            &options,
        )
        .expect("token without ESS")
    };
    let r = refusal(cms::verify(
        &cms::timestamp::attach(&der, &bare).expect("attach"),
        None,
        &later,
    ));
    assert!(
        matches!(&r, Refusal::Timestamp(why) if why.contains("ESS")),
        "{r}"
    );
    // A token by the root CA's own key: refused (a CA is no TSA).
    let by_root = tsa_token(&root.cert, &root.key, &imprint, now);
    let r = refusal(cms::verify(
        &cms::timestamp::attach(&der, &by_root).expect("attach"),
        None,
        &options(&anchors),
    ));
    assert!(matches!(&r, Refusal::Timestamp(_)), "{r}");
    // A SignedData of plain data as the token.
    let plain = sign(&mut one(&tsa_cert, &tsa_key), &imprint, true, true);
    assert!(matches!(
        cms::timestamp::attach(&der, &plain),
        Err(CmsError::Malformed(why)) if why.contains("TSTInfo")
    ));
}
