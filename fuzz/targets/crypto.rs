//! Every signature family's verification, ML-KEM decapsulation, and the named groups' key
//! shares, with fixed keys and fuzzed signatures, ciphertexts and shares.

use std::sync::OnceLock;

use pqkit_core::catalogue;
use pqkit_core::kem::DecapsulationKey;
use pqkit_core::sig::VerifyingKey;

/// One verifying key and one signature over `b"fuzz"` per fast signature algorithm of the
/// catalogue (the slowest SLH-DSA sets are left to the 128-bit ones: same code, smaller
/// trees), made once.
fn verifying_keys() -> &'static [(VerifyingKey, Vec<u8>)] {
    static KEYS: OnceLock<Vec<(VerifyingKey, Vec<u8>)>> = OnceLock::new();
    KEYS.get_or_init(|| {
        catalogue::signatures()
            .iter()
            .filter(|a| !a.name.starts_with("SLH-DSA") || a.name.contains("128"))
            // RSA key generation is slow under instrumentation (AFL counts a slow first run
            // as a hang): RSA-2048 only, and no composite ML-DSA set with an RSA half.
            .filter(|a| {
                !a.name.contains("RSA") || a.name.starts_with("RSA") && a.name.contains("2048")
            })
            .map(|a| {
                let k = a.generate().expect("key");
                let sig = k.sign(b"fuzz", &[]).expect("sign");
                (k.verifying_key(), sig)
            })
            .collect()
    })
}

/// The first byte picks an algorithm; the rest is a signature over `b"fuzz"` (and, with the
/// second byte odd, a verifying key of that algorithm too).
pub(crate) fn signature_verify(data: &[u8]) {
    let keys = verifying_keys();
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let (vk, good) = &keys[usize::from(pick) % keys.len()];
    let alg = vk.algorithm();
    if vk.verify(b"fuzz", &[], rest).is_ok() {
        // Without the key, the only signature over b"fuzz" there is to find is the one made —
        // but for ECDSA, where (r, n − s) is a second one (FIPS 186-5 §6.4.2 does not exclude
        // it).
        assert!(
            rest == &good[..] || alg.family == pqkit_core::sig::Family::Ecdsa,
            "{}: a signature pqkit never made verified",
            alg.name
        );
    }
    if let Ok(other) = alg.verifying_key(rest) {
        let _ = other.verify(b"fuzz", &[], good);
    }
    if alg.family.has_external_mu() && rest.len() >= 64 {
        let mut mu = [0u8; 64];
        mu.copy_from_slice(&rest[..64]);
        let _ = vk.verify_mu(&mu, &rest[64..]);
    }
}

fn decapsulation_keys() -> &'static [DecapsulationKey] {
    static KEYS: OnceLock<Vec<DecapsulationKey>> = OnceLock::new();
    KEYS.get_or_init(|| {
        catalogue::kems()
            .iter()
            .map(|k| k.generate().expect("key"))
            .collect()
    })
}

/// The first byte picks an ML-KEM set; the rest is a ciphertext (any length) and an
/// encapsulation key candidate.
pub(crate) fn kem_decapsulate(data: &[u8]) {
    let keys = decapsulation_keys();
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let dk = &keys[usize::from(pick) % keys.len()];
    let _ = dk.decapsulate(rest);
    if let Ok(ek) = dk.algorithm().encapsulation_key(rest) {
        let _ = ek.encapsulate();
    }
}

/// The first byte picks a named group; the rest is a client key share (the server side
/// encapsulates to it) and a server key share (a client completes with it).
pub(crate) fn key_share(data: &[u8]) {
    let groups = catalogue::groups();
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let group = groups[usize::from(pick) % groups.len()];
    let _ = group.encapsulate(rest);
    if let Ok(client) = group.start() {
        let _ = client.complete(rest);
    }
}
