//! Path validation (RFC 5280 §6), rule by rule: each case of `common/chains.rs` is a chain that
//! breaks one rule (or none), and pqkit must name that rule and the certificate.
//!
//! The same cases, generated once and kept in `tests/data/paths/<algorithm>/` with OpenSSL
//! 3.6's verdicts (`openssl verify`, recorded by `tests/data/paths/openssl-verdicts.sh`), check
//! that pqkit and OpenSSL agree on accept or reject. Regenerate with
//! `PQKIT_WRITE_PATH_FIXTURES=1 cargo test -p pqkit-pki --test path_validation -- --ignored`
//! and then run the script with an OpenSSL 3.6 binary.

#[path = "common/chains.rs"]
mod chains;

use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use chains::{AT, Case};
use pqkit_core::sig::SignatureAlgorithm;
use pqkit_pki::path::{PathError, Purpose, Rule, TrustAnchors};
use rustls_pki_types::CertificateDer;

/// The algorithms the table runs with: a lattice and a hash-based-free classical one here, and
/// the fixtures (OpenSSL reads ML-DSA and ECDSA).
const ALGORITHMS: [&SignatureAlgorithm; 4] = [
    &pqkit_core::ml_dsa::ML_DSA_44,
    &pqkit_core::classical::ECDSA_P256_SHA256,
    &pqkit_core::falcon::FALCON_512,
    // The composite ML-DSA set the draft names as its default.
    &pqkit_core::composite::MLDSA65_ECDSA_P256_SHA512,
];

fn rule_name(rule: &Rule) -> &'static str {
    match rule {
        Rule::Expired { .. } => "Expired",
        Rule::NotYetValid { .. } => "NotYetValid",
        Rule::BadValidity => "BadValidity",
        Rule::UnknownIssuer { .. } => "UnknownIssuer",
        Rule::BadSignature { .. } => "BadSignature",
        Rule::SignatureAlgorithmMismatch => "SignatureAlgorithmMismatch",
        Rule::UnsupportedSignatureAlgorithm { .. } => "UnsupportedSignatureAlgorithm",
        Rule::NotACa => "NotACa",
        Rule::CaAsLeaf => "CaAsLeaf",
        Rule::PathLenExceeded => "PathLenExceeded",
        Rule::NoKeyCertSign => "NoKeyCertSign",
        Rule::NoDigitalSignature => "NoDigitalSignature",
        Rule::WrongPurpose { .. } => "WrongPurpose",
        Rule::UnknownCriticalExtension { .. } => "UnknownCriticalExtension",
        Rule::NameConstraints => "NameConstraints",
        Rule::WrongName { .. } => "WrongName",
        Rule::Malformed { .. } => "Malformed",
        _ => "Other",
    }
}

/// The case's trust anchors and chain as the validator takes them.
fn prepared(case: &Case) -> (TrustAnchors, Vec<CertificateDer<'_>>) {
    let anchors = TrustAnchors::new(&case.anchors).expect("anchors");
    let chain = case
        .chain
        .iter()
        .map(|c| CertificateDer::from(&c[..]))
        .collect();
    (anchors, chain)
}

fn run(case: &Case) -> Result<(), PathError> {
    let (anchors, chain) = prepared(case);
    anchors
        .verify(&chain, case.purpose, chains::at())
        .map(|_| ())
}

fn check(alg: &SignatureAlgorithm, case: &Case) {
    let got = run(case);
    match (&got, case.expect) {
        (Ok(()), None) => {}
        (Err(e), Some(want)) => {
            assert_eq!(rule_name(&e.rule), want, "{} {}: {e}", alg.name, case.name);
            // The message names the certificate and says the rule in words.
            let text = e.to_string();
            assert!(text.contains("certificate"), "{text}");
            assert!(!text.contains("Context {"), "a Debug dump: {text}");
        }
        _ => panic!(
            "{} {}: expected {:?}, got {:?}",
            alg.name,
            case.name,
            case.expect,
            got.map_err(|e| e.to_string())
        ),
    }
}

#[test]
fn every_rule_is_enforced_and_named() {
    for alg in ALGORITHMS {
        let cases = chains::cases(alg);
        assert!(cases.len() >= 36, "{}", cases.len());
        for case in &cases {
            check(alg, case);
        }
    }
}

#[test]
fn the_rules_name_the_certificate_that_broke_them() {
    let cases = chains::cases(&pqkit_core::ml_dsa::ML_DSA_44);
    let find = |name| cases.iter().find(|c| c.name == name).expect("case");
    let message = |name| run(find(name)).expect_err(name).to_string();
    assert!(
        message("issuer-not-a-ca").contains("\"CN=not a CA"),
        "{}",
        message("issuer-not-a-ca")
    );
    assert!(message("root-expired").contains("trusted CA certificate 0"));
    assert!(
        message("intermediate-unknown-critical-extension").contains("certificate 1 (intermediate)")
    );
    assert!(message("leaf-unknown-critical-extension").contains("1.3.6.1.4.1.55555.1"));
    assert!(message("issuer-name-matches-no-ca").contains("CN=nobody"));
    assert!(message("leaf-expired").contains("certificate 0 (leaf)"));
    // Valid at a time inside its window, not after.
    let (anchors, chain) = prepared(find("good"));
    let late = UNIX_EPOCH + Duration::from_secs(chains::NOT_AFTER + 1);
    let e = anchors
        .verify(&chain, Purpose::ServerAuth, late)
        .expect_err("expired");
    assert_eq!(rule_name(&e.rule), "Expired");
    let path = anchors
        .verify(&chain, Purpose::ServerAuth, chains::at())
        .expect("valid");
    assert_eq!(path.certificates.len(), 3, "leaf, intermediate, anchor");
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/paths")
}

fn purpose_name(p: Purpose) -> &'static str {
    match p {
        Purpose::ServerAuth => "serverAuth",
        Purpose::ClientAuth => "clientAuth",
        Purpose::CodeSigning => "codeSigning",
        Purpose::TimeStamping => "timeStamping",
        Purpose::Any => "any",
    }
}

/// Writes the fixtures: per algorithm and case, `<case>.leaf.pem`, `<case>.untrusted.pem`
/// (intermediates) and `<case>.ca.pem`, and `cases.txt` (case, purpose, expected rule).
#[test]
#[ignore = "writes tests/data/paths; run with PQKIT_WRITE_PATH_FIXTURES=1"]
fn write_fixtures() {
    if std::env::var_os("PQKIT_WRITE_PATH_FIXTURES").is_none() {
        return;
    }
    let pem = |ders: &[Vec<u8>]| -> String {
        ders.iter()
            .map(|d| pqkit_pki::pem::encode(pqkit_pki::pem::CERTIFICATE, d).expect("pem"))
            .collect()
    };
    for alg in &ALGORITHMS[..2] {
        let dir = fixtures().join(alg.name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("mkdir");
        let mut list = String::new();
        for case in chains::cases(alg) {
            std::fs::write(
                dir.join(format!("{}.leaf.pem", case.name)),
                pem(&case.chain[..1]),
            )
            .expect("write");
            std::fs::write(
                dir.join(format!("{}.untrusted.pem", case.name)),
                pem(&case.chain[1..]),
            )
            .expect("write");
            std::fs::write(
                dir.join(format!("{}.ca.pem", case.name)),
                pem(&case.anchors),
            )
            .expect("write");
            list.push_str(&format!(
                "{} {} {}\n",
                case.name,
                purpose_name(case.purpose),
                case.expect.unwrap_or("OK")
            ));
        }
        std::fs::write(dir.join("cases.txt"), list).expect("write");
    }
}

/// pqkit and OpenSSL 3.6 agree on every fixture, and pqkit names the rule the case breaks.
#[test]
fn agrees_with_openssl_on_every_fixture() {
    let mut checked = 0;
    for alg in &ALGORITHMS[..2] {
        let dir = fixtures().join(alg.name);
        let verdicts_path = dir.join("openssl-verdicts.txt");
        let verdicts = std::fs::read_to_string(&verdicts_path)
            .unwrap_or_else(|e| panic!("{}: {e}", verdicts_path.display()));
        let cases = std::fs::read_to_string(dir.join("cases.txt")).expect("cases.txt");
        for line in cases.lines() {
            let [name, purpose, expect] = line.split(' ').collect::<Vec<_>>()[..] else {
                panic!("cases.txt: {line}");
            };
            let openssl = verdicts
                .lines()
                .find_map(|l| l.strip_prefix(&format!("{name} ")))
                .unwrap_or_else(|| panic!("no OpenSSL verdict for {name}"));
            let read = |suffix: &str| -> Vec<Vec<u8>> {
                let p = dir.join(format!("{name}.{suffix}.pem"));
                let text = std::fs::read_to_string(&p).expect("fixture");
                pqkit_pki::pem::decode_all(&text, pqkit_pki::pem::CERTIFICATE).expect("pem")
            };
            let mut chain = read("leaf");
            chain.extend(read("untrusted"));
            let case = Case {
                name: "fixture",
                chain,
                anchors: read("ca"),
                purpose: Purpose::from_name(purpose).expect("purpose"),
                expect: (expect != "OK").then(|| &*Box::leak(expect.to_owned().into_boxed_str())),
            };
            let ours = run(&case);
            assert_eq!(
                ours.is_ok(),
                openssl.starts_with("OK"),
                "{} {name}: pqkit {:?}, OpenSSL {openssl}",
                alg.name,
                ours.as_ref().map_err(|e| e.to_string())
            );
            check(alg, &case);
            checked += 1;
        }
    }
    assert!(checked >= 72, "{checked} fixtures");
    let _ = AT;
}
