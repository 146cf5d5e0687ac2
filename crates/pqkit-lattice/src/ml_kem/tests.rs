//! Differential tests against libcrux-ml-kem (the independent oracle), on every path this CPU
//! has: the same keys, ciphertexts and shared secrets, byte for byte, from random seeds; and
//! the implicit rejection of damaged ciphertexts.

use pqkit_hash::{Isa, dispatch};
use rand_core::{OsRng, RngCore};

use super::hazmat::{encaps_internal, key_gen_internal};
use super::*;

fn random<const L: usize>() -> [u8; L] {
    let mut b = [0u8; L];
    OsRng.fill_bytes(&mut b);
    b
}

/// (encapsulation key, decapsulation key).
type Keys = (Vec<u8>, Vec<u8>);
/// (ciphertext, shared secret).
type Encapsulated = (Vec<u8>, [u8; 32]);

/// libcrux's key generation, encapsulation and decapsulation for one parameter set.
struct Oracle {
    key_gen: fn([u8; 64]) -> Keys,
    encaps: fn(&[u8], [u8; 32]) -> Encapsulated,
    decaps: fn(&[u8], &[u8]) -> [u8; 32],
}

macro_rules! oracle {
    ($m:ident) => {
        Oracle {
            key_gen: |seed| {
                let (sk, pk) = libcrux_ml_kem::$m::generate_key_pair(seed).into_parts();
                (pk.as_slice().to_vec(), sk.as_slice().to_vec())
            },
            encaps: |ek, m| {
                let ek = ek.try_into().expect("ek length");
                let (c, k) = libcrux_ml_kem::$m::encapsulate(&ek, m);
                (c.as_slice().to_vec(), k)
            },
            decaps: |dk, c| {
                let dk = dk.try_into().expect("dk length");
                let c = c.try_into().expect("c length");
                libcrux_ml_kem::$m::decapsulate(&dk, &c)
            },
        }
    };
}

fn sets() -> [(&'static Params, Oracle); 3] {
    [
        (&ML_KEM_512, oracle!(mlkem512)),
        (&ML_KEM_768, oracle!(mlkem768)),
        (&ML_KEM_1024, oracle!(mlkem1024)),
    ]
}

/// Random seeds and messages: every path gives libcrux's bytes.
#[test]
fn same_as_libcrux_on_every_path() {
    for (p, o) in sets() {
        for _ in 0..40 {
            let (d, z, m) = (random::<32>(), random::<32>(), random::<32>());
            let seed: [u8; 64] = [d, z].concat().try_into().expect("64");
            let (want_ek, want_dk) = (o.key_gen)(seed);
            let (want_c, want_k) = (o.encaps)(&want_ek, m);
            let mut bad_c = want_c.clone();
            bad_c[random::<1>()[0] as usize % want_c.len()] ^= 1 << (random::<1>()[0] % 8);
            let want_bad = (o.decaps)(&want_dk, &bad_c);
            for isa in Isa::supported() {
                dispatch::with_isa(isa, || {
                    let id = format!("{} on {isa}", p.name);
                    let mut ek = vec![0u8; p.encapsulation_key_size()];
                    let mut dk = vec![0u8; p.decapsulation_key_size()];
                    key_gen_internal(p, &d, &z, &mut ek, &mut dk).expect("lengths");
                    assert_eq!(ek, want_ek, "{id}: ek");
                    assert_eq!(dk, want_dk, "{id}: dk");
                    assert!(check_encapsulation_key(p, &ek), "{id}");
                    assert!(check_decapsulation_key(p, &dk), "{id}");
                    let mut c = vec![0u8; p.ciphertext_size()];
                    let k = encaps_internal(p, &ek, &m, &mut c).expect("lengths");
                    assert_eq!(c, want_c, "{id}: c");
                    assert_eq!(*k, want_k, "{id}: K");
                    assert_eq!(*decapsulate(p, &dk, &c).expect("lengths"), want_k, "{id}");
                    let rejected = decapsulate(p, &dk, &bad_c).expect("lengths");
                    assert_eq!(*rejected, want_bad, "{id}: implicit rejection");
                    assert_ne!(*rejected, want_k, "{id}");
                })
                .expect("supported path");
            }
        }
    }
}

/// Every wrong length of every input is an error, never a panic.
#[test]
fn wrong_lengths_are_refused() {
    for (p, _) in sets() {
        let sizes = [
            p.encapsulation_key_size(),
            p.decapsulation_key_size(),
            p.ciphertext_size(),
        ];
        let (d, z, m) = ([1u8; 32], [2u8; 32], [3u8; 32]);
        for bad in (0..=sizes[1] + 1).filter(|n| !sizes.contains(n)) {
            let mut v = vec![0u8; bad];
            let mut ek = vec![0u8; sizes[0]];
            let mut dk = vec![0u8; sizes[1]];
            let mut c = vec![0u8; sizes[2]];
            assert!(key_gen_internal(p, &d, &z, &mut v, &mut dk).is_err());
            assert!(key_gen_internal(p, &d, &z, &mut ek, &mut v).is_err());
            assert!(encaps_internal(p, &v, &m, &mut c).is_err());
            assert!(encaps_internal(p, &ek, &m, &mut v).is_err());
            assert!(decapsulate(p, &v, &c).is_err());
            assert!(decapsulate(p, &dk, &v).is_err());
            assert!(!check_encapsulation_key(p, &v));
            assert!(!check_decapsulation_key(p, &v));
        }
    }
}

/// The key checks refuse what FIPS 203 §7.2 and §7.3 refuse: a coefficient ≥ q in t̂, and a
/// decapsulation key whose H(ek) does not match.
#[test]
fn key_checks_refuse_damage() {
    for (p, _) in sets() {
        let mut ek = vec![0u8; p.encapsulation_key_size()];
        let mut dk = vec![0u8; p.decapsulation_key_size()];
        key_gen_internal(p, &[7; 32], &[8; 32], &mut ek, &mut dk).expect("lengths");
        // Coefficient 0 of t̂[k − 1] set to 3329 = q.
        let mut bad = ek.clone();
        let at = 384 * (p.k - 1);
        bad[at] = (3329 & 0xFF) as u8;
        bad[at + 1] = (bad[at + 1] & 0xF0) | (3329 >> 8) as u8;
        assert!(!check_encapsulation_key(p, &bad));
        let mut bad = dk.clone();
        bad[384 * p.k + 5] ^= 1;
        assert!(!check_decapsulation_key(p, &bad));
    }
}
