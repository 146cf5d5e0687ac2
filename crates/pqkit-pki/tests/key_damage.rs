//! Damaged private keys: for every private-key format and algorithm family, a PKCS#8 key with a
//! bit flipped at many offsets, and every truncation of it, is either refused when loaded or
//! signs (decapsulates) correctly — under the public key of the key as loaded — and either way
//! within a time bound. A key that loads must never hang its signer (a damaged Falcon key used
//! to spin fn-dsa's signing loop forever) nor make invalid signatures (a damaged expanded-only
//! ML-DSA key used to).

use std::sync::mpsc;
use std::time::{Duration, Instant};

use pqkit_core::catalogue;
use pqkit_core::kem::{KemAlgorithm, KemFamily};
use pqkit_core::sig::SignatureAlgorithm;
use pqkit_pki::key::{self, KeyFormat};

/// Load and use of one damaged key may take at most this long (the slowest honest case, an
/// SLH-DSA key load that recomputes PK.root plus a signature, takes milliseconds).
const TIME_BOUND: Duration = Duration::from_secs(20);

const MESSAGE: &[u8] = b"pqkit damaged-key test";

/// Byte offsets to damage: every byte of a short key, else the first 64 bytes (the PKCS#8 and
/// algorithm headers), 96 spread over the rest, and the last 16.
fn offsets(len: usize) -> Vec<usize> {
    if len <= 160 {
        return (0..len).collect();
    }
    let mut v: Vec<usize> = (0..64).collect();
    v.extend((0..96).map(|i| 64 + i * (len - 80) / 96));
    v.extend(len - 16..len);
    v.sort_unstable();
    v.dedup();
    v
}

/// What a damaged signing key did.
#[derive(Debug)]
enum Outcome {
    Refused,
    SignedCorrectly,
    Wrong(String),
}

fn use_signing_key(der: &[u8]) -> Outcome {
    let Ok(key) = key::signing_key_from_pkcs8(der) else {
        return Outcome::Refused;
    };
    match key.sign(MESSAGE, &[]) {
        Err(_) => Outcome::Refused,
        Ok(sig) => match key.verifying_key().verify(MESSAGE, &[], &sig) {
            Ok(()) => Outcome::SignedCorrectly,
            Err(e) => Outcome::Wrong(format!("loaded, signed, and the signature fails: {e}")),
        },
    }
}

fn use_decapsulation_key(der: &[u8]) -> Outcome {
    let Ok(dk) = key::decapsulation_key_from_pkcs8(der) else {
        return Outcome::Refused;
    };
    let Ok((ct, ss)) = dk.encapsulation_key().encapsulate() else {
        return Outcome::Refused;
    };
    match dk.decapsulate(&ct) {
        Ok(back) if back.as_bytes() == ss.as_bytes() => Outcome::SignedCorrectly,
        Ok(_) => Outcome::Wrong("decapsulation gives another shared secret".into()),
        Err(_) => Outcome::Refused,
    }
}

/// Runs `f` on a thread and fails the test if it does not finish within [`TIME_BOUND`].
fn bounded(what: &str, f: impl FnOnce() -> Outcome + Send + 'static) -> Outcome {
    let (tx, rx) = mpsc::channel();
    let start = Instant::now();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(TIME_BOUND) {
        Ok(o) => o,
        Err(_) => panic!("{what}: still running after {:?}", start.elapsed()),
    }
}

fn damage_each(name: &str, der: &[u8], check: fn(&[u8]) -> Outcome) -> (usize, usize) {
    let (mut refused, mut fine) = (0, 0);
    for at in offsets(der.len()) {
        let mut bad = der.to_vec();
        bad[at] ^= 1 << (at % 8);
        match bounded(&format!("{name}: bit flipped at byte {at}"), move || {
            check(&bad)
        }) {
            Outcome::Refused => refused += 1,
            Outcome::SignedCorrectly => fine += 1,
            Outcome::Wrong(why) => panic!("{name}: bit flipped at byte {at}: {why}"),
        }
    }
    for n in 0..der.len() {
        match check(&der[..n]) {
            Outcome::Refused => {}
            other => panic!("{name}: truncated to {n} bytes: {other:?}"),
        }
    }
    (refused, fine)
}

fn signature_keys() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let names = [
        "ML-DSA-44",
        "ML-DSA-87",
        "SLH-DSA-SHA2-128f",
        "SLH-DSA-SHAKE-128f",
        "Falcon-512",
        "Falcon-1024",
        "ECDSA-P256",
        "ECDSA-P384",
        "Ed25519",
        "RSA-PSS-2048",
    ];
    for name in names {
        let alg: &'static SignatureAlgorithm = catalogue::signature(name).expect("algorithm");
        let key = alg.generate().expect("key");
        let formats: &[KeyFormat] = if alg.seed_size > 0 {
            &[KeyFormat::Seed, KeyFormat::Expanded, KeyFormat::Both]
        } else {
            &[KeyFormat::Seed]
        };
        for &format in formats {
            let der = key::signing_key_to_pkcs8(&key, format).expect("pkcs8");
            out.push((format!("{name} ({format:?})"), der.to_vec()));
        }
    }
    out
}

#[test]
fn damaged_signing_keys_are_refused_or_sign_correctly() {
    for (name, der) in signature_keys() {
        assert!(
            matches!(use_signing_key(&der), Outcome::SignedCorrectly),
            "{name}: the undamaged key"
        );
        let (refused, fine) = damage_each(&name, &der, use_signing_key);
        // Most damage must be caught: a key format where flips go unnoticed and still sign is
        // one where the damage does not matter (ML-DSA's K, an unused PKCS#8 field).
        assert!(
            refused > 0,
            "{name}: no damaged key was refused ({fine} signed)"
        );
    }
}

#[test]
fn damaged_decapsulation_keys_are_refused_or_decapsulate_correctly() {
    // Every ML-KEM, and one parameter set of each family from liboqs (the same decoder and
    // checks serve a family's sets); a KEM without a seed form has one encoding.
    let firsts = [
        "HQC-1",
        "BIKE-L1",
        "eFrodoKEM-640-AES",
        "Classic-McEliece-348864",
    ];
    let kems = catalogue::kems()
        .iter()
        .filter(|k| k.family == KemFamily::MlKem || firsts.contains(&k.name));
    for kem in kems {
        let kem: &'static KemAlgorithm = kem;
        let dk = kem.generate().expect("key");
        let formats: &[KeyFormat] = if kem.seed_size > 0 {
            &[KeyFormat::Seed, KeyFormat::Expanded, KeyFormat::Both]
        } else {
            &[KeyFormat::Expanded]
        };
        for &format in formats {
            let der = key::decapsulation_key_to_pkcs8(&dk, format).expect("pkcs8");
            let name = format!("{} ({format:?})", kem.name);
            let (refused, _) = damage_each(&name, &der, use_decapsulation_key);
            assert!(refused > 0, "{name}: no damaged key was refused");
        }
    }
}
