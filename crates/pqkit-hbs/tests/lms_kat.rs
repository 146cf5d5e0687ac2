//! LMS against the ACVP vectors (`acvp/LMS-*`) and the pqc-kat suites (`pqc-kat/LMS/*`, 48
//! directories: SHA-256 and SHAKE256, m = 24 and 32, every height and Winternitz width).
//!
//! - keyGen: the public key regenerated from (SEED, I) — all ACVP cases; for pqc-kat the first
//!   two of each H5/H10 group, and every case (H15–H25 too: 2^15–2^25 one-time keys each)
//!   with `PQKIT_HBS_LONG=1`.
//! - sigGen: ACVP gives no key: its signatures are verified under the expected public key.
//!   pqc-kat gives (SEED, I, q): for H5/H10 the tree is regenerated and the signature re-made
//!   byte for byte (deterministic C, RFC 9858); larger trees are verified only.
//! - sigVer: the verdict equals `testPassed`, for every case.

#[path = "../../pqkit-core/tests/common/mod.rs"]
mod common;

use common::{Case, hex, join};
use pqkit_hbs::hazmat::SignAt as _;
use pqkit_hbs::lms::LmsPublicKey;
use pqkit_hbs::params::{LmsParams, OtsParams, lms_by_name, ots_by_name};
use pqkit_hbs::tree::LmsTree;
use serde_json::Value;

fn long() -> bool {
    std::env::var_os("PQKIT_HBS_LONG").is_some()
}

fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn modes(c: &Case) -> (&'static LmsParams, &'static OtsParams) {
    (
        lms_by_name(c.opt("lmsMode")).expect("lmsMode"),
        ots_by_name(c.opt("lmOtsMode")).expect("lmOtsMode"),
    )
}

fn number(v: &Value) -> u32 {
    v.as_u64()
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or_else(|| panic!("not a number: {v}"))
}

fn identifier(v: &Value) -> [u8; 16] {
    hex(v).try_into().expect("16-byte I")
}

/// The directories of `pqc-kat/LMS` whose names start with `prefix`, sorted.
fn kat_dirs(prefix: &str) -> Vec<String> {
    common::dirs("pqc-kat/LMS", prefix)
}

fn kat_cases(dir: &str) -> Vec<Case> {
    join(
        &format!("pqc-kat/LMS/{dir}"),
        "prompt.json",
        "expectedResults.json",
    )
}

#[derive(Default, Debug)]
struct Tally {
    regenerated: usize,
    resigned: usize,
    verified: usize,
    skipped_long: usize,
}

/// Regenerates the public keys of `cases`; without `PQKIT_HBS_LONG`, only the first
/// `per_group` cases of each group (each is a whole tree of 2^h one-time keys).
fn keygen(cases: &[Case], seed_key: &str, i_key: &str, per_group: usize, tally: &mut Tally) {
    let mut in_group: (Value, usize) = (Value::Null, 0);
    for c in cases {
        let (lms, ots) = modes(c);
        if in_group.0 != c.group["tgId"] {
            in_group = (c.group["tgId"].clone(), 0);
        }
        in_group.1 += 1;
        if (lms.h > 10 || in_group.1 > per_group) && !long() {
            tally.skipped_long += 1;
            continue;
        }
        let tree = LmsTree::generate(
            lms,
            ots,
            identifier(&c.test[i_key]),
            &hex(&c.test[seed_key]),
            threads(),
        );
        assert_eq!(
            hex::encode(tree.public_key().to_bytes()),
            hex::encode(hex(&c.expected["publicKey"])),
            "{}",
            c.id()
        );
        tally.regenerated += 1;
    }
}

fn verify_expected(c: &Case, public: &[u8], tally: &mut Tally) {
    let (pk, rest) = LmsPublicKey::parse(public).expect("public key");
    assert!(rest.is_empty());
    let message = hex(&c.test["message"]);
    let signature = hex(&c.expected["signature"]);
    assert_eq!(pk.verify(&message, &signature), Ok(()), "{}", c.id());
    let mut bad = signature.clone();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    assert!(
        pk.verify(&message, &bad).is_err(),
        "{}: altered signature",
        c.id()
    );
    tally.verified += 1;
}

fn sigver(cases: &[Case], tally: &mut Tally) {
    for c in cases {
        let (pk, _) = LmsPublicKey::parse(&hex(&c.group["publicKey"])).expect("public key");
        let ok = pk
            .verify(&hex(&c.test["message"]), &hex(&c.test["signature"]))
            .is_ok();
        let expected = c.expected["testPassed"].as_bool().expect("testPassed");
        assert_eq!(ok, expected, "{}", c.id());
        tally.verified += 1;
    }
}

#[test]
fn acvp_lms() {
    let mut tally = Tally::default();
    keygen(
        &common::acvp_cases("LMS-keyGen-1.0"),
        "seed",
        "i",
        usize::MAX,
        &mut tally,
    );
    for dir in ["LMS-sigGen-1.0", "LMS-sigGen-SP800-208"] {
        for c in common::acvp_cases(dir) {
            verify_expected(&c, &hex(&c.expected_group["publicKey"]), &mut tally);
        }
    }
    for dir in ["LMS-sigVer-1.0", "LMS-sigVer-SP800-208"] {
        sigver(&common::acvp_cases(dir), &mut tally);
    }
    println!("ACVP LMS: {tally:?}");
    assert_eq!((tally.regenerated, tally.verified), (9, 20 + 42 + 8 + 8));
}

#[test]
fn pqc_kat_lms_keygen() {
    let mut tally = Tally::default();
    for dir in kat_dirs("LMS-keyGen") {
        keygen(&kat_cases(&dir), "seed", "i", 2, &mut tally);
    }
    println!("pqc-kat LMS keyGen: {tally:?}");
    // 4 directories × 8 modes × 2 (all 1024 cases with PQKIT_HBS_LONG=1).
    assert!(tally.regenerated >= 64, "{tally:?}");
}

#[test]
fn pqc_kat_lms_siggen_and_sigver() {
    let mut tally = Tally::default();
    for dir in kat_dirs("LMS-sigGen") {
        let cases = kat_cases(&dir);
        let mut tree: Option<(u64, LmsTree)> = None;
        for c in &cases {
            let (lms, ots) = modes(c);
            let public = hex(&c.expected_group["publicKey"]);
            if lms.h > 10 && !long() {
                verify_expected(c, &public, &mut tally);
                continue;
            }
            let tg = c.group["tgId"]
                .as_str()
                .and_then(|s| s.parse().ok())
                .or(c.group["tgId"].as_u64())
                .expect("tgId");
            if tree.as_ref().is_none_or(|(g, _)| *g != tg) {
                let t = LmsTree::generate(
                    lms,
                    ots,
                    identifier(&c.group["i"]),
                    &hex(&c.group["seed"]),
                    threads(),
                );
                assert_eq!(
                    t.public_key().to_bytes(),
                    public,
                    "{dir} {}: public key",
                    c.id()
                );
                tally.regenerated += 1;
                tree = Some((tg, t));
            }
            let (_, t) = tree.as_mut().expect("tree");
            let signature = t.sign_at(number(&c.test["q"]), &hex(&c.test["message"]));
            assert_eq!(
                hex::encode(&signature),
                hex::encode(hex(&c.expected["signature"])),
                "{dir} {}",
                c.id()
            );
            tally.resigned += 1;
        }
    }
    for dir in kat_dirs("LMS-sigVer") {
        sigver(&kat_cases(&dir), &mut tally);
    }
    println!("pqc-kat LMS sigGen/sigVer: {tally:?}");
    assert!(tally.resigned >= 16 && tally.verified >= 100, "{tally:?}");
}
