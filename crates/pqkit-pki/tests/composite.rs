//! Composite ML-DSA (draft-ietf-lamps-pq-composite-sigs-19) against the draft's own test
//! vectors (`tests/data/composite/testvectors.json`) and Bouncy Castle's hackathon
//! certificates and keys (`tests/data/composite/bc`): signatures, raw and PKCS#8 private keys,
//! SPKIs and self-signed certificates, read and — for keys — written byte for byte.

use std::path::{Path, PathBuf};

use base64ct::{Base64, Encoding};
use der::{Decode, Encode};
use pqkit_core::catalogue;
use pqkit_core::composite;
use pqkit_core::sig::SignatureAlgorithm;
use pqkit_pki::cert;
use pqkit_pki::key::{self, KeyFormat};
use x509_cert::Certificate;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/composite")
}

fn b64(v: &serde_json::Value) -> Vec<u8> {
    Base64::decode_vec(v.as_str().expect("string")).expect("base64")
}

/// The SPKI of a DER certificate, as DER.
fn spki_of(certificate: &[u8]) -> Vec<u8> {
    Certificate::from_der(certificate)
        .expect("certificate")
        .tbs_certificate
        .subject_public_key_info
        .to_der()
        .expect("SPKI")
}

/// The catalogue entry a test-vector or artifact name names (`id-` prefix or none).
fn by_name(name: &str) -> &'static SignatureAlgorithm {
    let alg = catalogue::signature(name).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(composite::parameters(alg).is_some(), "{name}");
    alg
}

/// Every composite entry of testvectors.json: `s` verifies over `m` with the empty context and
/// `sWithContext` with `ctx` (and neither with the other); `sk` gives `pk`; `sk_pkcs8` decodes
/// to the same key and pqkit writes it back byte for byte; the certificate `x5c` carries `pk`
/// and its self-signature verifies; pqkit's own signature with the key verifies.
#[test]
fn draft_test_vectors() {
    let path = data().join("testvectors.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let json: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let m = b64(&json["m"]);
    let ctx = b64(&json["ctx"]);
    let mut seen = Vec::new();
    for t in json["tests"].as_array().expect("tests") {
        let name = t["tcId"].as_str().expect("tcId");
        if name.starts_with("id-ML-DSA-") {
            continue; // the draft's plain ML-DSA entries, for debugging
        }
        let alg = by_name(name);
        let pk = b64(&t["pk"]);
        let vk = alg.verifying_key(&pk).expect("pk length");
        let s = b64(&t["s"]);
        let s_ctx = b64(&t["sWithContext"]);
        vk.verify(&m, &[], &s)
            .unwrap_or_else(|e| panic!("{name} s: {e}"));
        vk.verify(&m, &ctx, &s_ctx)
            .unwrap_or_else(|e| panic!("{name} sWithContext: {e}"));
        assert!(vk.verify(&m, &ctx, &s).is_err(), "{name}");
        assert!(vk.verify(&m, &[], &s_ctx).is_err(), "{name}");

        let sk = b64(&t["sk"]);
        let key = alg.signing_key_from_expanded(&sk).expect("sk");
        assert_eq!(key.verifying_key(), vk, "{name}: sk gives pk");
        let pkcs8 = b64(&t["sk_pkcs8"]);
        let decoded = key::signing_key_from_pkcs8(&pkcs8).expect("sk_pkcs8");
        assert!(std::ptr::eq(decoded.algorithm(), alg), "{name}");
        assert_eq!(decoded.verifying_key(), vk, "{name}: sk_pkcs8 gives pk");
        let ours = key::signing_key_to_pkcs8(&key, KeyFormat::Seed).expect("encode");
        assert_eq!(
            &ours[..],
            &pkcs8[..],
            "{name}: PKCS#8 written as the draft does"
        );

        let x5c = b64(&t["x5c"]);
        let spki = key::verifying_key_from_spki(&spki_of(&x5c)).expect("SPKI");
        assert_eq!(spki, vk, "{name}: certificate key");
        assert_eq!(key::spki_der(&vk).expect("SPKI"), spki_of(&x5c), "{name}");
        cert::verify_signed_by(&x5c, &x5c).unwrap_or_else(|e| panic!("{name} x5c: {e}"));

        let mine = key.sign(&m, &ctx).expect("sign");
        vk.verify(&m, &ctx, &mine).expect("own signature");
        seen.push(alg.oid);
    }
    let all: Vec<_> = composite::algorithms().map(|a| a.oid).collect();
    assert_eq!(seen, all, "one vector per composite, in OID order");
}

/// Bouncy Castle's hackathon artifacts (`artifacts_certs_r5.zip`): each of the 18 self-signed
/// trust anchors verifies, and its PKCS#8 private key decodes to the certificate's key.
#[test]
fn bouncy_castle_certificates_and_keys() {
    let dir = data().join("bc");
    let mut seen = Vec::new();
    for alg in composite::algorithms() {
        let stem = format!("{}-{}", alg.name, alg.oid);
        let ta = std::fs::read(dir.join(format!("{stem}_ta.der")))
            .unwrap_or_else(|e| panic!("{}/{stem}_ta.der: {e}", dir.display()));
        cert::verify_signed_by(&ta, &ta).unwrap_or_else(|e| panic!("{stem}: {e}"));
        let vk = key::verifying_key_from_spki(&spki_of(&ta)).expect("SPKI");
        assert!(std::ptr::eq(vk.algorithm(), alg), "{stem}");
        let pkcs8 = std::fs::read(dir.join(format!("{stem}_priv.der"))).expect("private key");
        let key = key::signing_key_from_pkcs8(&pkcs8).unwrap_or_else(|e| panic!("{stem}: {e}"));
        assert_eq!(key.verifying_key(), vk, "{stem}");
        let sig = key.sign(b"pqkit", &[]).expect("sign");
        vk.verify(b"pqkit", &[], &sig).expect("verify");
        seen.push(stem);
    }
    assert_eq!(seen.len(), 18);
}

/// Private keys that are not the draft's form are refused, never accepted or a panic: a
/// traditional key of another curve or size, a truncated key, trailing bytes.
#[test]
fn wrong_private_keys_are_refused() {
    let p256 = catalogue::signature("MLDSA65-ECDSA-P256-SHA512").expect("catalogue");
    let p384 = catalogue::signature("MLDSA65-ECDSA-P384-SHA512").expect("catalogue");
    let rsa3072 = catalogue::signature("MLDSA65-RSA3072-PSS-SHA512").expect("catalogue");
    let rsa4096 = catalogue::signature("MLDSA65-RSA4096-PSS-SHA512").expect("catalogue");
    let ed = catalogue::signature("MLDSA65-Ed25519-SHA512").expect("catalogue");
    let sk =
        |alg: &'static SignatureAlgorithm| alg.generate().expect("key").expanded().expect("sk");
    let (a, b) = (sk(p256), sk(rsa3072));
    assert!(
        p384.signing_key_from_expanded(&a).is_err(),
        "P-256 key as P-384"
    );
    assert!(
        rsa4096.signing_key_from_expanded(&b).is_err(),
        "RSA-3072 as 4096"
    );
    assert!(ed.signing_key_from_expanded(&a).is_err());
    for key in [&a, &b] {
        let alg = if key.len() < 100 { p256 } else { rsa3072 };
        for n in [0, 31, 32, 33, key.len() - 1] {
            assert!(alg.signing_key_from_expanded(&key[..n]).is_err(), "{n}");
        }
        let mut long = key.to_vec();
        long.push(0);
        assert!(alg.signing_key_from_expanded(&long).is_err());
    }
}
