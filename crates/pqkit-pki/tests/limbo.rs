//! x509-limbo (C2SP): every one of its 9 780 path-validation cases — limbo's own and Netflix
//! BetterTLS's — through the library validator, [`TrustAnchors::validate`].
//!
//! Each case runs under the profile it calls for: `webpki::*` cases and those whose features
//! are the CA/Browser Forum's (`pedantic-webpki-*`, `pedantic-public-suffix-wildcard`) under
//! [`Profile::WebPki`], the rest under [`Profile::Rfc5280`]. The test fails on any wrong
//! accept (FAILURE expected, the chain accepted), on more wrong rejects than the budget below
//! (OpenSSL 3.6.3 `-x509_strict` wrongly rejects 122 of these cases), on a case that cannot be
//! asked, and on a case that takes more than a second. It prints the table the README gives:
//! `cargo test -p pqkit-pki --test limbo -- --nocapture`.
//!
//! The suite is `<vectors>/x509-limbo/limbo.json.gz` (`$PQKIT_VECTORS`, else
//! `../shared/vectors`); schema: limbo's `Testcase` (its README).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use pqkit_pki::path::{PeerName, Policy, Profile, Purpose, TrustAnchors, parse_time};
use rustls_pki_types::CertificateDer;
use serde_json::Value;

/// Wrong rejects allowed: the cases pqkit refuses that limbo expects to validate, each listed
/// with its reason by the test. OpenSSL 3.6.3 has 122 on the same cases.
const WRONG_REJECT_BUDGET: usize = 13;

/// The longest a case may take.
const CASE_LIMIT: Duration = Duration::from_secs(1);

fn limbo() -> Vec<Value> {
    let dir = std::env::var_os("PQKIT_VECTORS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/vectors")
        });
    let path = dir.join("x509-limbo/limbo.json.gz");
    let file = std::fs::File::open(&path).unwrap_or_else(|e| {
        panic!(
            "vector file {} is missing or unreadable: {e}",
            path.display()
        )
    });
    let mut text = String::new();
    flate2::read::GzDecoder::new(file)
        .read_to_string(&mut text)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut all: Value = serde_json::from_str(&text).expect("limbo JSON");
    match all["testcases"].take() {
        Value::Array(cases) => cases,
        _ => panic!("{}: no testcases array", path.display()),
    }
}

/// Cases that exercise the CA/Browser Forum profile.
fn profile_of(case: &Value) -> Profile {
    let id = case["id"].as_str().unwrap_or_default();
    let cabf = case["features"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .any(|f| f.starts_with("pedantic-webpki") || f == "pedantic-public-suffix-wildcard");
    if id.starts_with("webpki::") || cabf {
        Profile::WebPki
    } else {
        Profile::Rfc5280
    }
}

/// The group a case is counted in: `bettertls::<suite>`, or limbo's first two id components.
fn group_of(id: &str) -> String {
    let parts: Vec<&str> = id.split("::").collect();
    match parts.as_slice() {
        [top, second, _, ..] => format!("{top}::{second}"),
        [top, _] => (*top).to_owned(),
        _ => id.to_owned(),
    }
}

fn pems(value: &Value, label: &str) -> Result<Vec<Vec<u8>>, String> {
    let mut out = Vec::new();
    for text in value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        out.extend(pqkit_pki::pem::decode_all(text, label).map_err(|e| e.to_string())?);
    }
    Ok(out)
}

fn name_of(v: &Value) -> Result<PeerName, String> {
    let value = v["value"].as_str().unwrap_or_default();
    let name = PeerName::parse(value)?;
    let kind_ok = matches!(
        (v["kind"].as_str(), &name),
        (Some("DNS"), PeerName::Dns(_))
            | (Some("IP"), PeerName::Ip(_))
            | (Some("RFC822"), PeerName::Email { .. })
    );
    if kind_ok {
        Ok(name)
    } else {
        Err(format!("{value:?} is not a {} name", v["kind"]))
    }
}

/// The case as the validator takes it; `Err` is a case that cannot be asked.
fn ask(case: &Value) -> Result<(TrustAnchorsOrError, Vec<Vec<u8>>, Policy), String> {
    let leaf = pems(
        &Value::Array(vec![case["peer_certificate"].clone()]),
        "CERTIFICATE",
    )?;
    let mut chain = leaf;
    chain.extend(pems(&case["untrusted_intermediates"], "CERTIFICATE")?);
    let roots = pems(&case["trusted_certs"], "CERTIFICATE")?;
    let anchors = TrustAnchors::new(&roots).map_err(|e| e.to_string());
    let mut purposes = vec![match case["validation_kind"].as_str() {
        Some("SERVER") => Purpose::ServerAuth,
        Some("CLIENT") => Purpose::ClientAuth,
        other => return Err(format!("validation_kind {other:?}")),
    }];
    for eku in case["extended_key_usage"].as_array().into_iter().flatten() {
        let p = Purpose::from_name(eku.as_str().unwrap_or_default())?;
        if !purposes.contains(&p) {
            purposes.push(p);
        }
    }
    let mut names = Vec::new();
    if !case["expected_peer_name"].is_null() {
        names.push(name_of(&case["expected_peer_name"])?);
    }
    for n in case["expected_peer_names"].as_array().into_iter().flatten() {
        names.push(name_of(n)?);
    }
    let time = match case["validation_time"].as_str() {
        Some(t) => parse_time(t)?,
        None => SystemTime::now(),
    };
    let policy = Policy {
        purposes,
        names,
        time,
        crls: pems(&case["crls"], "X509 CRL")?,
        max_depth: case["max_chain_depth"]
            .as_u64()
            .map(|d| usize::try_from(d).unwrap_or(usize::MAX)),
        profile: profile_of(case),
        key_identifiers: true,
    };
    Ok((anchors, chain, policy))
}

type TrustAnchorsOrError = Result<TrustAnchors, String>;

#[derive(Default)]
struct Tally {
    agree: usize,
    wrong_accept: usize,
    wrong_reject: usize,
}

#[test]
fn every_limbo_case_agrees_or_is_a_known_wrong_reject() {
    let cases = limbo();
    assert!(cases.len() >= 9_780, "{} cases", cases.len());
    let mut groups: BTreeMap<String, Tally> = BTreeMap::new();
    let mut wrong_accepts = Vec::new();
    let mut wrong_rejects = Vec::new();
    let mut unaskable = Vec::new();
    let mut slow = Vec::new();
    for case in &cases {
        let id = case["id"].as_str().unwrap_or_default().to_owned();
        let expect_ok = case["expected_result"].as_str() == Some("SUCCESS");
        let start = Instant::now();
        let verdict = match ask(case) {
            Err(e) => {
                unaskable.push(format!("{id}: {e}"));
                continue;
            }
            Ok((Err(e), _, _)) => Err(e),
            Ok((Ok(anchors), chain, policy)) => {
                let chain: Vec<CertificateDer<'_>> =
                    chain.iter().map(|c| CertificateDer::from(&c[..])).collect();
                anchors
                    .validate(&chain, &policy)
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            }
        };
        let took = start.elapsed();
        if took > CASE_LIMIT {
            slow.push(format!("{id}: {took:?}"));
        }
        let tally = groups.entry(group_of(&id)).or_default();
        match (expect_ok, verdict) {
            (true, Ok(())) | (false, Err(_)) => tally.agree += 1,
            (false, Ok(())) => {
                tally.wrong_accept += 1;
                wrong_accepts.push(id);
            }
            (true, Err(e)) => {
                tally.wrong_reject += 1;
                wrong_rejects.push(format!("{id}: {e}"));
            }
        }
    }
    println!("| group | cases | agree | wrong-accept | wrong-reject |");
    println!("|---|---|---|---|---|");
    let mut total = Tally::default();
    for (group, t) in &groups {
        println!(
            "| {group} | {} | {} | {} | {} |",
            t.agree + t.wrong_accept + t.wrong_reject,
            t.agree,
            t.wrong_accept,
            t.wrong_reject
        );
        total.agree += t.agree;
        total.wrong_accept += t.wrong_accept;
        total.wrong_reject += t.wrong_reject;
    }
    println!(
        "| **all** | {} | {} | {} | {} |",
        total.agree + total.wrong_accept + total.wrong_reject,
        total.agree,
        total.wrong_accept,
        total.wrong_reject
    );
    for r in &wrong_accepts {
        println!("wrong accept: {r}");
    }
    for r in &wrong_rejects {
        println!("wrong reject: {r}");
    }
    assert!(
        unaskable.is_empty(),
        "cases that cannot be asked:\n{}",
        unaskable.join("\n")
    );
    assert!(
        slow.is_empty(),
        "cases over {CASE_LIMIT:?}:\n{}",
        slow.join("\n")
    );
    assert!(
        wrong_accepts.is_empty(),
        "{} wrong accepts:\n{}",
        wrong_accepts.len(),
        wrong_accepts.join("\n")
    );
    assert!(
        wrong_rejects.len() <= WRONG_REJECT_BUDGET,
        "{} wrong rejects (budget {WRONG_REJECT_BUDGET})",
        wrong_rejects.len()
    );
}
