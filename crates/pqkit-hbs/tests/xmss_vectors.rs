//! XMSS against `pqc-kat/XMSS` (keyGen, sigGen, sigVer) and Botan (`xmss_keygen_reference`,
//! `xmss_verify`, `xmss_sig`).
//!
//! - keyGen: the public key regenerated from (S_XMSS, SK_PRF, SEED) — two cases of each H10
//!   set; every case with `PQKIT_HBS_LONG=1` (H16/H20: 2^16–2^20 leaves).
//! - sigGen (H10): the signature at the vector's index, byte for byte (pqc-kat signatures are
//!   xmss-reference signed messages: signature ‖ message).
//! - sigVer / Botan verify: the verdict; Botan's SHA2_*_512 and RFC 8391 SHAKE128 sets are
//!   outside the SP 800-208 sets pqkit has and are counted as skipped.

#[path = "../../pqkit-core/tests/common/mod.rs"]
mod common;

use common::{Case, hex, join, read_text};
use pqkit_hbs::hazmat::SignAt as _;
use pqkit_hbs::xmss::{XmssParams, XmssPublicKey, XmssSigner, by_name, by_oid};
use serde_json::Value;

fn long() -> bool {
    std::env::var_os("PQKIT_HBS_LONG").is_some()
}

fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn kat_dirs(prefix: &str) -> Vec<String> {
    common::dirs("pqc-kat/XMSS", prefix)
}

/// A number, or a number in a string.
fn number(v: &Value) -> u64 {
    v.as_u64()
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        .unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The group's parameter set, by its `OID` (one pqc-kat directory has no `param` name).
fn params(c: &Case) -> &'static XmssParams {
    let oid = u32::try_from(number(&c.group["OID"])).expect("OID");
    let p = by_oid(oid, false).expect("OID");
    if let Some(name) = c.group["param"].as_str() {
        assert_eq!(p.name, name, "OID {oid}");
    }
    p
}

fn kat_cases(dir: &str) -> Vec<Case> {
    join(
        &format!("pqc-kat/XMSS/{dir}"),
        "prompt.json",
        "expectedResults.json",
    )
}

#[test]
fn pqc_kat_xmss_keygen() {
    let (mut done, mut skipped) = (0, 0);
    for dir in kat_dirs("XMSS-keyGen") {
        let mut first_of_group = (Value::Null, 0);
        for c in kat_cases(&dir) {
            let params = params(&c);
            if first_of_group.0 != c.group["tgId"] {
                first_of_group = (c.group["tgId"].clone(), 0);
            }
            first_of_group.1 += 1;
            if !long() && (params.h > 10 || first_of_group.1 > 2) {
                skipped += 1;
                continue;
            }
            // One directory (XMSS-keyGen-SHAKE256-N24-H10) has xmss-reference's form: `seed` =
            // S_XMSS ‖ SK_PRF ‖ SEED and a public key without its OID.
            let (s_xmss, sk_prf, seed) = match c.test.get("seed") {
                Some(v) => {
                    let b = hex(v);
                    let n = params.n;
                    (b[..n].to_vec(), b[n..2 * n].to_vec(), b[2 * n..].to_vec())
                }
                None => (
                    hex(&c.test["S_XMSS"]),
                    hex(&c.test["SK_PRF"]),
                    hex(&c.test["I"]),
                ),
            };
            let key =
                XmssSigner::generate(params, &s_xmss, &sk_prf, &seed, threads()).expect("keygen");
            let expected = hex(&c.expected["publicKey"]);
            let public = key.public_key().to_bytes();
            let public = if expected.len() == public.len() {
                &public[..]
            } else {
                &public[4..]
            };
            assert_eq!(
                hex::encode(public),
                hex::encode(&expected),
                "{dir} {}",
                c.id()
            );
            done += 1;
        }
    }
    println!("pqc-kat XMSS keyGen: {done} regenerated, {skipped} left for PQKIT_HBS_LONG");
    // Two of each H10 set (4 sets); every case, H16 and H20 too, with PQKIT_HBS_LONG=1.
    assert!(done >= 8, "{done}");
}

#[test]
fn pqc_kat_xmss_siggen_and_sigver() {
    let (mut signed, mut verified) = (0, 0);
    for dir in kat_dirs("XMSS-sigGen") {
        let cases = kat_cases(&dir);
        let g = &cases[0].group;
        let params = params(&cases[0]);
        let mut key = XmssSigner::generate(
            params,
            &hex(&g["S_XMSS"]),
            &hex(&g["SK_PRF"]),
            &hex(&g["I"]),
            threads(),
        )
        .expect("keygen");
        let pk = key.public_key();
        assert_eq!(
            pk.to_bytes(),
            hex(&cases[0].expected_group["publicKey"]),
            "{dir}"
        );
        for c in &cases {
            assert_eq!(c.group["tgId"], g["tgId"], "{dir}: one key per directory");
            let message = hex(&c.test["message"]);
            let q = number(&c.test["q"]);
            let signed_message = hex(&c.expected["signature"]);
            let expected = &signed_message[..signed_message.len() - message.len()];
            let signature = key.sign_at(q, &message).expect("sign");
            assert_eq!(
                hex::encode(&signature),
                hex::encode(expected),
                "{dir} {}",
                c.id()
            );
            assert_eq!(pk.verify(&message, &signature), Ok(()));
            signed += 1;
        }
    }
    for dir in kat_dirs("XMSS-sigVer") {
        for c in kat_cases(&dir) {
            let pk =
                XmssPublicKey::from_bytes(&hex(&c.group["publicKey"]), false).expect("public key");
            let message = hex(&c.test["message"]);
            let sm = hex(&c.test["signature"]);
            let sig = &sm[..sm.len().saturating_sub(message.len())];
            let ok = pk.verify(&message, sig).is_ok();
            assert_eq!(
                ok,
                c.expected["testPassed"].as_bool().expect("testPassed"),
                "{dir} {}",
                c.id()
            );
            verified += 1;
        }
    }
    println!("pqc-kat XMSS: {signed} signatures re-made, {verified} verdicts");
    assert_eq!(signed, 40);
    assert!(verified >= 64, "{verified}");
}

/// Records of a Botan `.vec` file: `Key = value` blocks.
fn botan_records(file: &str) -> Vec<std::collections::HashMap<String, String>> {
    let mut out = Vec::new();
    let mut cur = std::collections::HashMap::new();
    for line in read_text(&format!("botan/{file}")).lines() {
        let line = line.trim();
        if line.starts_with('#') || line.starts_with('[') || line.is_empty() {
            continue;
        }
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        let (k, v) = (k.trim().to_owned(), v.trim().to_owned());
        if cur.contains_key(&k) {
            out.push(std::mem::take(&mut cur));
        }
        cur.insert(k, v);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn botan_params(name: &str) -> Option<&'static XmssParams> {
    let full = if name.starts_with("XMSS") {
        name.to_owned()
    } else {
        format!("XMSS-{name}")
    };
    by_name(&full).ok()
}

#[test]
fn botan_xmss() {
    let (mut keygen, mut verified, mut signed, mut skipped) = (0, 0, 0, 0);
    for r in botan_records("xmss_keygen_reference.vec") {
        let Some(params) = botan_params(&r["Params"]) else {
            skipped += 1;
            continue;
        };
        let key = XmssSigner::generate(
            params,
            &hex::decode(&r["SecretSeed"]).expect("hex"),
            &hex::decode(&r["SecretPrf"]).expect("hex"),
            &hex::decode(&r["PublicSeed"]).expect("hex"),
            threads(),
        )
        .expect("keygen");
        assert_eq!(
            hex::encode(key.public_key().to_bytes()),
            r["PublicKey"].to_lowercase(),
            "{}",
            r["Params"]
        );
        keygen += 1;
    }
    for r in botan_records("xmss_verify.vec") {
        let Some(params) = botan_params(&r["Params"]) else {
            skipped += 1;
            continue;
        };
        let pk = XmssPublicKey::from_bytes(&hex::decode(&r["PublicKey"]).expect("hex"), false)
            .expect("pk");
        assert_eq!(pk.params, params);
        let msg = hex::decode(r.get("Msg").map_or("", String::as_str)).expect("hex");
        let sig = hex::decode(&r["Signature"]).expect("hex");
        assert_eq!(pk.verify(&msg, &sig), Ok(()), "{}", r["Params"]);
        let mut bad = sig.clone();
        bad[10] ^= 1;
        assert!(pk.verify(&msg, &bad).is_err());
        verified += 1;
    }
    // xmss_sig.vec: Botan private key OID ‖ root ‖ SEED ‖ idx(4) ‖ SK_PRF ‖ S_XMSS [‖ 0x02 for the
    // SP 800-208 derivation]; records without the trailing 0x02 use Botan-2's own derivation.
    let mut sets_signed = Vec::new();
    for r in botan_records("xmss_sig.vec") {
        let Some(params) = botan_params(&r["Params"]) else {
            skipped += 1;
            continue;
        };
        // One record per set (each is a whole H10 key), all with PQKIT_HBS_LONG=1.
        if sets_signed.contains(&params.oid) && !long() {
            skipped += 1;
            continue;
        }
        let sk = hex::decode(&r["PrivateKey"]).expect("hex");
        let n = params.n;
        if sk.len() != 4 + 4 * n + 4 + 1 || sk[sk.len() - 1] != 0x02 {
            skipped += 1;
            continue;
        }
        let seed = &sk[4 + n..4 + 2 * n];
        let idx = u32::from_be_bytes(sk[4 + 2 * n..8 + 2 * n].try_into().expect("idx"));
        let sk_prf = &sk[8 + 2 * n..8 + 3 * n];
        let s_xmss = &sk[8 + 3 * n..8 + 4 * n];
        let mut key =
            XmssSigner::generate(params, s_xmss, sk_prf, seed, threads()).expect("keygen");
        assert_eq!(
            &key.public_key().to_bytes()[4..4 + n],
            &sk[4..4 + n],
            "{}: root",
            r["Params"]
        );
        let msg = hex::decode(r.get("Msg").map_or("", String::as_str)).expect("hex");
        let sig = key.sign_at(u64::from(idx), &msg).expect("sign");
        assert_eq!(
            hex::encode(sig),
            r["Signature"].to_lowercase(),
            "{}",
            r["Params"]
        );
        sets_signed.push(params.oid);
        signed += 1;
    }
    println!("Botan XMSS: {keygen} keys, {verified} verified, {signed} signed, {skipped} skipped");
    assert!(
        keygen >= 3 && verified >= 36 && signed >= 1,
        "{keygen} {verified} {signed}"
    );
}
