//! C2SP Wycheproof ML-KEM and ML-DSA vectors (`wycheproof/testvectors_v1/*.json` under the
//! vectors directory, C2SP/wycheproof @dac1dd47).
//!
//! The directory is listed, not named file by file: every file must carry a schema this file
//! knows (a new schema fails the test instead of being skipped), and each file's checked cases
//! must equal its `numberOfTests`.
//!
//! Semantics: `valid` cases must succeed through the public API and every output the vector
//! gives (ek, dk, c, K, publicKey, mu, sig) must match; `invalid` cases must make the API return
//! an error (bad length, failed key check, context too long, bad signature); `acceptable` may do
//! either. Per schema:
//!
//! - `mlkem_keygen_seed_test_schema.json`: `generate_from_seed(seed)` → ek, dk.
//! - `mlkem_test_schema.json`: `generate_from_seed(seed)` (→ ek when given), `decapsulate(c)` → K.
//! - `mlkem_encaps_test_schema.json`: `encapsulation_key(ek)` (FIPS 203 §7.2 check),
//!   `encapsulate_deterministic(m)` → c, K.
//! - `mlkem_semi_expanded_decaps_test_schema.json`: `decapsulation_key_from_expanded(dk)`
//!   (§7.3 check; → ek), `decapsulate(c)` → K.
//! - `mldsa_sign_seed_schema.json` / `mldsa_sign_noseed_schema.json`: key from `privateSeed`
//!   (`signing_key_from_seed`) or expanded `privateKey` (`signing_key_from_expanded`) →
//!   publicKey; with `msg`: `sign_with(msg, ctx, rnd or deterministic)` → sig,
//!   `external_mu(msg, ctx)` → mu (also computed here), and `sign_mu(mu)` → the same sig; with
//!   only `mu` (flag `Internal`): `sign_mu(mu)` → sig. Every produced signature must verify.
//!   `privateKeyPkcs8` is not read: PKCS#8 is pqkit-pki's, not pqkit-core's.
//! - `mldsa_verify_schema.json`: `verifying_key(publicKey)`, `verify(msg, ctx, sig)`; every
//!   ML-DSA backend on its own too (aws-lc-rs only with an empty context). `publicKeyDer` is not
//!   read (SPKI is pqkit-pki's).

mod common;
mod oracles;

use std::collections::BTreeMap;
use std::path::PathBuf;

use common::{array, ctx_len, hex, hex_opt, ml_dsa_mu, on_every_path, read_json, vectors_dir};
use oracles::{self as backend, Backend};
use pqkit_core::Error;
use pqkit_core::kem::KemAlgorithm;
use pqkit_core::sig::{SignatureAlgorithm, SigningRandomness};
use pqkit_core::{catalogue, kem::SharedSecret};
use serde_json::Value;

const DIR: &str = "wycheproof/testvectors_v1";

/// Named outputs of one case, to compare with the vector's fields of the same name.
type Outputs = Vec<(&'static str, Vec<u8>)>;

/// How one schema's cases run: (alg name from the file, group, test) → outputs or an error.
type Runner = fn(&str, &Value, &Value) -> Result<Outputs, Error>;

/// Every schema this file knows: (schema, family, runner).
const SCHEMAS: [(&str, &str, Runner); 7] = [
    (
        "mlkem_keygen_seed_test_schema.json",
        "ML-KEM",
        ml_kem_keygen,
    ),
    ("mlkem_test_schema.json", "ML-KEM", ml_kem_decaps_from_seed),
    ("mlkem_encaps_test_schema.json", "ML-KEM", ml_kem_encaps),
    (
        "mlkem_semi_expanded_decaps_test_schema.json",
        "ML-KEM",
        ml_kem_decaps_expanded,
    ),
    ("mldsa_sign_seed_schema.json", "ML-DSA", ml_dsa_sign),
    ("mldsa_sign_noseed_schema.json", "ML-DSA", ml_dsa_sign),
    ("mldsa_verify_schema.json", "ML-DSA", ml_dsa_verify),
];

/// The files of the Wycheproof directory, sorted, with the schema each declares. Fails on a
/// file that is not JSON or whose schema is unknown.
fn listing() -> Vec<(String, Value, usize)> {
    let dir: PathBuf = vectors_dir().join(DIR);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("vector directory {} is missing: {e}", dir.display()))
        .map(|entry| {
            entry
                .expect("directory entry")
                .file_name()
                .into_string()
                .expect("UTF-8")
        })
        .collect();
    names.sort();
    let mut out = Vec::new();
    for name in names {
        let stem = name.strip_suffix(".gz").unwrap_or(&name);
        assert!(
            stem.ends_with(".json"),
            "{DIR}/{name}: not a JSON vector file"
        );
        let file = read_json(&format!("{DIR}/{name}"));
        let schema = file["schema"].as_str().unwrap_or("<none>");
        let index = SCHEMAS
            .iter()
            .position(|(s, _, _)| *s == schema)
            .unwrap_or_else(|| panic!("{DIR}/{name}: unknown schema {schema:?}; add a runner"));
        out.push((name, file, index));
    }
    assert!(!out.is_empty(), "{DIR}: no files");
    out
}

/// Runs every file of `family`; returns (files, cases).
fn run_family(family: &str) -> (usize, usize) {
    let mut files = 0;
    let mut total = 0;
    for (name, file, index) in listing() {
        let (schema, fam, runner) = SCHEMAS[index];
        if fam != family {
            continue;
        }
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        let mut rejections: BTreeMap<String, usize> = BTreeMap::new();
        for group in array(&file["testGroups"]) {
            // ML-DSA files name the set at the top; ML-KEM files per group.
            let alg = group["parameterSet"]
                .as_str()
                .or(file["algorithm"].as_str())
                .expect("parameter set");
            for test in array(&group["tests"]) {
                let id = format!(
                    "{name} tcId {} ({}; flags {}; {})",
                    test["tcId"],
                    test["result"],
                    test["flags"],
                    test["comment"].as_str().unwrap_or("")
                );
                let result = runner(alg, group, test);
                let verdict = test["result"].as_str().expect("result");
                match (verdict, result) {
                    ("valid", Ok(outputs)) => compare(&id, group, test, &outputs),
                    ("valid", Err(e)) => panic!("{id}: valid case failed: {e}"),
                    ("invalid", Err(e)) => {
                        let kind = format!("{e:?}");
                        let kind = kind.split([' ', '(', '{']).next().unwrap_or("").to_owned();
                        *rejections.entry(kind).or_insert(0) += 1;
                    }
                    ("invalid", Ok(_)) => panic!("{id}: invalid case was accepted"),
                    ("acceptable", _) => {}
                    (other, _) => panic!("{id}: unknown result {other:?}"),
                }
                *counts.entry(verdict).or_insert(0) += 1;
            }
        }
        let n: usize = counts.values().sum();
        eprintln!(
            "{name} ({schema}): {n} cases {counts:?}, invalid ones refused with {rejections:?}"
        );
        assert_eq!(
            Some(n as u64),
            file["numberOfTests"].as_u64(),
            "{name}: checked cases differ from numberOfTests"
        );
        files += 1;
        total += n;
    }
    (files, total)
}

/// Every named output must equal the vector's field of that name (test first, then group),
/// where the vector gives one.
fn compare(id: &str, group: &Value, test: &Value, outputs: &Outputs) {
    assert!(!outputs.is_empty(), "{id}: nothing to compare");
    let mut compared = 0;
    for (name, got) in outputs {
        if let Some(want) = hex_opt(test, name).or_else(|| hex_opt(group, name)) {
            assert!(*got == want, "{id}: {name} differs");
            compared += 1;
        }
    }
    assert!(compared > 0, "{id}: no output had an expected value");
}

fn kem_alg(name: &str) -> &'static KemAlgorithm {
    catalogue::kem(name).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn sig_alg(name: &str) -> &'static SignatureAlgorithm {
    catalogue::signature(name).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn ss(k: &SharedSecret) -> Vec<u8> {
    k.as_bytes().to_vec()
}

fn ml_kem_keygen(alg: &str, _group: &Value, t: &Value) -> Result<Outputs, Error> {
    let dk = kem_alg(alg).generate_from_seed(&hex(&t["seed"]))?;
    Ok(vec![
        ("ek", dk.encapsulation_key().as_bytes().to_vec()),
        ("dk", dk.expanded().to_vec()),
    ])
}

fn ml_kem_decaps_from_seed(alg: &str, _group: &Value, t: &Value) -> Result<Outputs, Error> {
    let dk = kem_alg(alg).generate_from_seed(&hex(&t["seed"]))?;
    let k = dk.decapsulate(&hex(&t["c"]))?;
    Ok(vec![
        ("ek", dk.encapsulation_key().as_bytes().to_vec()),
        ("K", ss(&k)),
    ])
}

fn ml_kem_encaps(alg: &str, _group: &Value, t: &Value) -> Result<Outputs, Error> {
    let ek = kem_alg(alg).encapsulation_key(&hex(&t["ek"]))?;
    let m: [u8; 32] = hex(&t["m"]).try_into().expect("32-byte m");
    let (c, k) = ek.encapsulate_deterministic(&m)?;
    Ok(vec![("c", c), ("K", ss(&k))])
}

fn ml_kem_decaps_expanded(alg: &str, _group: &Value, t: &Value) -> Result<Outputs, Error> {
    let dk = kem_alg(alg).decapsulation_key_from_expanded(&hex(&t["dk"]))?;
    let k = dk.decapsulate(&hex(&t["c"]))?;
    Ok(vec![
        ("ek", dk.encapsulation_key().as_bytes().to_vec()),
        ("K", ss(&k)),
    ])
}

fn ml_dsa_sign(alg: &str, group: &Value, t: &Value) -> Result<Outputs, Error> {
    let alg = sig_alg(alg);
    let key = match (hex_opt(group, "privateSeed"), hex_opt(group, "privateKey")) {
        (Some(seed), None) => alg.signing_key_from_seed(&seed)?,
        (None, Some(sk)) => alg.signing_key_from_expanded(&sk)?,
        _ => panic!("a sign group needs exactly one of privateSeed and privateKey"),
    };
    let vk = key.verifying_key();
    let rnd = hex_opt(t, "rnd");
    let randomness = match &rnd {
        Some(r) => SigningRandomness::Fixed(r),
        None => SigningRandomness::Deterministic,
    };
    let mut out: Outputs = vec![("publicKey", vk.as_bytes().to_vec())];
    match hex_opt(t, "msg") {
        Some(msg) => {
            let ctx = hex_opt(t, "ctx").unwrap_or_default();
            let sig = key.sign_with(&msg, &ctx, randomness)?;
            vk.verify(&msg, &ctx, &sig)?;
            let mu = vk.external_mu(&msg, &ctx)?;
            assert_eq!(
                mu,
                ml_dsa_mu(vk.as_bytes(), &[&[0], &[ctx_len(&ctx)], &ctx, &msg]),
                "external_mu differs from μ computed here"
            );
            let again = key.sign_mu(&mu, randomness)?;
            out.extend([("sig", sig), ("sig", again), ("mu", mu.to_vec())]);
        }
        None => {
            let mu: [u8; 64] = hex(&t["mu"]).try_into().expect("64-byte mu");
            let sig = key.sign_mu(&mu, randomness)?;
            vk.verify_mu(&mu, &sig)?;
            out.push(("sig", sig));
        }
    }
    Ok(out)
}

fn ml_dsa_verify(alg: &str, group: &Value, t: &Value) -> Result<Outputs, Error> {
    let alg = sig_alg(alg);
    let pk = hex(&group["publicKey"]);
    let (msg, sig) = (hex(&t["msg"]), hex(&t["sig"]));
    let ctx = hex_opt(t, "ctx").unwrap_or_default();
    let result = alg
        .verifying_key(&pk)
        .and_then(|vk| vk.verify(&msg, &ctx, &sig));
    // Each backend on its own must agree with the catalogue path.
    for b in backend::ALL {
        match b.verify(alg, &pk, &msg, &ctx, &sig) {
            Err(Error::Unsupported(_)) => assert!(b == Backend::AwsLc && !ctx.is_empty()),
            r => assert_eq!(
                r.is_ok(),
                result.is_ok(),
                "{} backend disagrees with the catalogue: {r:?} vs {result:?}",
                b.name()
            ),
        }
    }
    result?;
    Ok(vec![("publicKey", pk)])
}

#[test]
fn wycheproof_every_file_has_a_known_schema() {
    let files = listing();
    let per_family = files.iter().fold(BTreeMap::new(), |mut m, (_, _, i)| {
        *m.entry(SCHEMAS[*i].1).or_insert(0) += 1;
        m
    });
    eprintln!(
        "Wycheproof: {} files, per family {per_family:?}",
        files.len()
    );
    assert_eq!(files.len(), 21);
}

#[test]
fn wycheproof_ml_kem() {
    let paths = on_every_path(|path| {
        let (files, cases) = run_family("ML-KEM");
        eprintln!("Wycheproof ML-KEM on {path}: {files} files, {cases} cases");
        assert_eq!((files, cases), (12, 1701));
    });
    eprintln!("Wycheproof ML-KEM: on every hash path, {paths:?}");
}

#[test]
fn wycheproof_ml_dsa() {
    let paths = on_every_path(|path| {
        let (files, cases) = run_family("ML-DSA");
        eprintln!("Wycheproof ML-DSA on {path}: {files} files, {cases} cases");
        assert_eq!((files, cases), (9, 1138));
    });
    eprintln!("Wycheproof ML-DSA: on every hash path, {paths:?}");
}
