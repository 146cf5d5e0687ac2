//! NIST ACVP known-answer tests (ACVP-Server v1.1.0.43, read from `../shared/vectors/acvp` or
//! `$PQKIT_VECTORS/acvp`): ML-KEM keyGen and encapDecap with the key-check groups, ML-DSA keyGen
//! and sigVer (external interface, pure). Each test prints how many cases it ran.

use std::path::PathBuf;

use pqkit_core::catalogue;
use pqkit_core::kem::KemAlgorithm;
use pqkit_core::ml_dsa::backend::{self, Backend};
use pqkit_core::sig::{SignatureAlgorithm, SigningRandomness};
use serde_json::Value;

/// The vectors directory: `$PQKIT_VECTORS`, else `../shared/vectors` beside the repository.
fn vectors_dir() -> PathBuf {
    std::env::var_os("PQKIT_VECTORS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/vectors")
        })
}

/// Reads `acvp/<dir>/<file>` (or its `.gz` twin); a missing file fails the test with its path.
fn read(dir: &str, file: &str) -> Value {
    let path = vectors_dir().join("acvp").join(dir).join(file);
    let gz = path.with_file_name(format!("{file}.gz"));
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(_) if gz.exists() => {
            let mut text = String::new();
            let file = std::fs::File::open(&gz).expect("open .gz");
            std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(file), &mut text)
                .unwrap_or_else(|e| panic!("{}: bad gzip: {e}", gz.display()));
            text
        }
        Err(e) => panic!(
            "vector file {} is missing or unreadable: {e}",
            path.display()
        ),
    };
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: bad JSON: {e}", path.display()))
}

/// Joins prompt and expectedResults on (tgId, tcId): yields (group, test, expected).
fn cases(dir: &str) -> Vec<(Value, Value, Value)> {
    let prompt = read(dir, "prompt.json");
    let expected = read(dir, "expectedResults.json");
    let mut out = Vec::new();
    for group in prompt["testGroups"].as_array().expect("testGroups") {
        let eg = expected["testGroups"]
            .as_array()
            .expect("testGroups")
            .iter()
            .find(|g| g["tgId"] == group["tgId"])
            .expect("expected group");
        for test in group["tests"].as_array().expect("tests") {
            let et = eg["tests"]
                .as_array()
                .expect("tests")
                .iter()
                .find(|t| t["tcId"] == test["tcId"])
                .expect("expected test")
                .clone();
            out.push((group.clone(), test.clone(), et));
        }
    }
    assert!(!out.is_empty(), "{dir}: no test cases");
    out
}

fn hex(v: &Value) -> Vec<u8> {
    hex::decode(v.as_str().expect("hex string")).expect("valid hex")
}

fn kem(group: &Value) -> &'static KemAlgorithm {
    catalogue::kem(group["parameterSet"].as_str().expect("parameterSet")).expect("known set")
}

fn dsa(group: &Value) -> &'static SignatureAlgorithm {
    catalogue::signature(group["parameterSet"].as_str().expect("parameterSet")).expect("known set")
}

#[test]
fn ml_kem_keygen() {
    let mut n = 0;
    for (g, t, e) in cases("ML-KEM-keyGen-FIPS203") {
        let seed = [hex(&t["d"]), hex(&t["z"])].concat();
        let dk = kem(&g).generate_from_seed(&seed).expect("keygen");
        assert_eq!(
            dk.encapsulation_key().as_bytes(),
            hex(&e["ek"]),
            "tcId {}",
            t["tcId"]
        );
        assert_eq!(dk.expanded(), hex(&e["dk"]), "tcId {}", t["tcId"]);
        assert_eq!(dk.seed(), Some(&seed[..]));
        n += 1;
    }
    println!("ML-KEM keyGen: {n} cases passed (libcrux-ml-kem)");
    assert_eq!(n, 75);
}

fn ml_kem_encap_decap(dir: &str, expected_total: usize) {
    let (mut encap, mut decap, mut ek_check, mut dk_check) = (0, 0, 0, 0);
    for (g, t, e) in cases(dir) {
        let alg = kem(&g);
        let id = format!("{dir} tgId {} tcId {}", g["tgId"], t["tcId"]);
        match g["function"].as_str().expect("function") {
            "encapsulation" => {
                let ek = alg.encapsulation_key(&hex(&t["ek"])).expect("valid ek");
                let m: [u8; 32] = hex(&t["m"]).try_into().expect("32-byte m");
                let (c, k) = ek.encapsulate_deterministic(&m).expect("encapsulate");
                assert_eq!(c, hex(&e["c"]), "{id}");
                assert_eq!(k.as_bytes(), hex(&e["k"]), "{id}");
                encap += 1;
            }
            "decapsulation" => {
                let dk = match g["keyFormat"].as_str() {
                    Some("seed") => {
                        let seed = [hex(&t["d"]), hex(&t["z"])].concat();
                        alg.generate_from_seed(&seed).expect("keygen")
                    }
                    _ => alg
                        .decapsulation_key_from_expanded(&hex(&t["dk"]))
                        .expect("valid dk"),
                };
                let k = dk.decapsulate(&hex(&t["c"])).expect("decapsulate");
                assert_eq!(k.as_bytes(), hex(&e["k"]), "{id}");
                decap += 1;
            }
            "encapsulationKeyCheck" => {
                let ok = alg.encapsulation_key(&hex(&t["ek"])).is_ok();
                assert_eq!(ok, e["testPassed"].as_bool().expect("testPassed"), "{id}");
                ek_check += 1;
            }
            "decapsulationKeyCheck" => {
                let ok = alg.decapsulation_key_from_expanded(&hex(&t["dk"])).is_ok();
                assert_eq!(ok, e["testPassed"].as_bool().expect("testPassed"), "{id}");
                dk_check += 1;
            }
            other => panic!("{id}: unknown function {other}"),
        }
    }
    println!(
        "{dir}: {} cases passed (encapsulation {encap}, decapsulation {decap}, \
         encapsulationKeyCheck {ek_check}, decapsulationKeyCheck {dk_check})",
        encap + decap + ek_check + dk_check
    );
    assert_eq!(encap + decap + ek_check + dk_check, expected_total);
}

#[test]
fn ml_kem_encap_decap_fips203() {
    ml_kem_encap_decap("ML-KEM-encapDecap-FIPS203", 165);
}

#[test]
fn ml_kem_encap_decap_fips203_tr1() {
    ml_kem_encap_decap("ML-KEM-encapDecap-FIPS203-tr1", 195);
}

#[test]
fn ml_dsa_keygen_every_backend() {
    for b in backend::ALL {
        let mut n = 0;
        for (g, t, e) in cases("ML-DSA-keyGen-FIPS204") {
            let (pk, sk) = b.keygen(dsa(&g), &hex(&t["seed"])).expect("keygen");
            assert_eq!(pk, hex(&e["pk"]), "{} tcId {}", b.name(), t["tcId"]);
            assert_eq!(*sk, hex(&e["sk"]), "{} tcId {}", b.name(), t["tcId"]);
            n += 1;
        }
        println!("ML-DSA keyGen: {n} cases passed ({})", b.name());
        assert_eq!(n, 75);
    }
    // The catalogue path: SigningKey::from_seed gives the same verifying key.
    let mut n = 0;
    for (g, t, e) in cases("ML-DSA-keyGen-FIPS204") {
        let key = dsa(&g)
            .signing_key_from_seed(&hex(&t["seed"]))
            .expect("keygen");
        assert_eq!(key.verifying_key().as_bytes(), hex(&e["pk"]));
        assert_eq!(key.expanded().expect("expanded").to_vec(), hex(&e["sk"]));
        n += 1;
    }
    println!("ML-DSA keyGen: {n} cases passed (catalogue SigningKey)");
}

#[test]
fn ml_dsa_sigver_external_pure_every_backend() {
    let all = cases("ML-DSA-sigVer-FIPS204");
    let pure: Vec<_> = all
        .iter()
        .filter(|(g, _, _)| g["signatureInterface"] == "external" && g["preHash"] == "pure")
        .collect();
    let (mut passed, mut rejected) = (0, 0);
    let mut aws_lc_cases = 0;
    for (g, t, e) in &pure {
        let alg = dsa(g);
        let (pk, msg, ctx, sig) = (
            hex(&t["pk"]),
            hex(&t["message"]),
            hex(&t["context"]),
            hex(&t["signature"]),
        );
        let want = e["testPassed"].as_bool().expect("testPassed");
        let id = format!("tgId {} tcId {}", g["tgId"], t["tcId"]);
        for b in backend::ALL {
            match b.verify(alg, &pk, &msg, &ctx, &sig) {
                Err(pqkit_core::Error::Unsupported(_)) => {
                    assert!(b == Backend::AwsLc && !ctx.is_empty(), "{id}: {}", b.name());
                }
                r => {
                    assert_eq!(r.is_ok(), want, "{id}: {}", b.name());
                    if b == Backend::AwsLc {
                        aws_lc_cases += 1;
                    }
                }
            }
        }
        let key = alg.verifying_key(&pk).expect("pk length");
        assert_eq!(
            key.verify(&msg, &ctx, &sig).is_ok(),
            want,
            "{id}: catalogue"
        );
        if want { passed += 1 } else { rejected += 1 }
    }
    println!(
        "ML-DSA sigVer external/pure: {} cases ({passed} valid, {rejected} invalid) on fips204 \
         and the catalogue path; {aws_lc_cases} of them have an empty context and also ran on \
         aws-lc-rs; {} preHash/internal cases left for HashML-DSA and external mu",
        pure.len(),
        all.len() - pure.len()
    );
    assert_eq!(pure.len(), 45);
    assert!(rejected > 0 && passed > 0);
}

#[test]
fn ml_dsa_siggen_external_pure_seed_form_exact_bytes() {
    let mut det = 0;
    let mut hedged = 0;
    let mut aws_lc_verified = 0;
    for (g, t, e) in cases("ML-DSA-sigGen-FIPS204-tr1") {
        if g["signatureInterface"] != "external"
            || g["preHash"] != "pure"
            || g["keyFormat"] != "seed"
        {
            continue;
        }
        let alg = dsa(&g);
        let key = alg.signing_key_from_seed(&hex(&t["seed"])).expect("keygen");
        let (msg, ctx) = (hex(&t["message"]), hex(&t["context"]));
        let rnd: Option<[u8; 32]> = t
            .get("rnd")
            .map(|r| hex(r).try_into().expect("32-byte rnd"));
        let randomness = match &rnd {
            Some(r) => SigningRandomness::Fixed(r),
            None => SigningRandomness::Deterministic,
        };
        let sig = key.sign_with(&msg, &ctx, randomness).expect("sign");
        assert_eq!(
            sig,
            hex(&e["signature"]),
            "tgId {} tcId {}",
            g["tgId"],
            t["tcId"]
        );
        key.verifying_key()
            .verify(&msg, &ctx, &sig)
            .expect("own signature verifies");
        if ctx.is_empty() {
            Backend::AwsLc
                .verify(alg, key.verifying_key().as_bytes(), &msg, &ctx, &sig)
                .expect("aws-lc-rs verifies");
            aws_lc_verified += 1;
        }
        if rnd.is_some() { hedged += 1 } else { det += 1 }
    }
    println!(
        "ML-DSA sigGen external/pure, seed keys: {} cases, exact bytes ({det} deterministic, \
         {hedged} with given rnd); {aws_lc_verified} empty-context signatures also verified by \
         aws-lc-rs",
        det + hedged
    );
    assert_eq!(det + hedged, 90);
    assert!(
        aws_lc_verified > 0,
        "aws-lc-rs must accept some valid signatures"
    );
}
