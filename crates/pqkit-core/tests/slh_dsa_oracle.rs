//! pqkit's own SLH-DSA against the implementation it replaced, RustCrypto `slh-dsa` 0.0.3, in
//! all 12 parameter sets: the same keys from the same seeds (Algorithm 18), byte-identical
//! signatures from the same key, message and opt_rand (Algorithm 19, deterministic and with
//! addrnd), and each side's signatures verify on the other (Algorithm 20). Each set runs on
//! one of the hash paths this CPU supports, in turn, so every path signs and verifies.

use pqkit_hash::dispatch::{Isa, with_isa};

/// xorshift64*: reproducible test bytes.
fn bytes(seed: &mut u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|_| {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            (seed.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
        })
        .collect()
}

macro_rules! oracle {
    ($p:ty, $seeds:expr, $m:expr, $addrnd:expr) => {{
        let (seeds, m, addrnd): (&[u8], &[&[u8]], &[u8]) = ($seeds, $m, $addrnd);
        let n = seeds.len() / 3;
        let sk = ::slh_dsa::SigningKey::<$p>::slh_keygen_internal(
            &seeds[..n],
            &seeds[n..2 * n],
            &seeds[2 * n..],
        );
        let det = sk.slh_sign_internal(m, None).to_vec();
        let rnd = sk.slh_sign_internal(m, Some(addrnd)).to_vec();
        let vk_bytes = sk.to_vec()[2 * n..].to_vec();
        let verify = move |sig: &[u8]| {
            let vk = ::slh_dsa::VerifyingKey::<$p>::try_from(&vk_bytes[..]).expect("vk");
            ::slh_dsa::Signature::<$p>::try_from(sig)
                .ok()
                .is_some_and(|s| vk.slh_verify_internal(m, &s).is_ok())
        };
        (
            sk.to_vec(),
            det,
            rnd,
            Box::new(verify) as Box<dyn Fn(&[u8]) -> bool + '_>,
        )
    }};
}

/// Runs the comparison for one set on a 64 MiB stack (RustCrypto keeps signatures on it).
fn compare(index: usize, isa: Isa) {
    let alg = pqkit_core::slh_dsa::ALL[index];
    let n = alg.verifying_key_size / 2;
    let mut seed = 0x5eed_0000 + index as u64;
    let seeds = bytes(&mut seed, 3 * n);
    let addrnd = bytes(&mut seed, n);
    let m_prime = bytes(&mut seed, 100 + index);
    let m: &[&[u8]] = &[&m_prime];
    use ::slh_dsa as s;
    let (their_sk, their_det, their_rnd, their_verify) = match index {
        0 => oracle!(s::Sha2_128s, &seeds, m, &addrnd),
        1 => oracle!(s::Sha2_128f, &seeds, m, &addrnd),
        2 => oracle!(s::Sha2_192s, &seeds, m, &addrnd),
        3 => oracle!(s::Sha2_192f, &seeds, m, &addrnd),
        4 => oracle!(s::Sha2_256s, &seeds, m, &addrnd),
        5 => oracle!(s::Sha2_256f, &seeds, m, &addrnd),
        6 => oracle!(s::Shake128s, &seeds, m, &addrnd),
        7 => oracle!(s::Shake128f, &seeds, m, &addrnd),
        8 => oracle!(s::Shake192s, &seeds, m, &addrnd),
        9 => oracle!(s::Shake192f, &seeds, m, &addrnd),
        10 => oracle!(s::Shake256s, &seeds, m, &addrnd),
        _ => oracle!(s::Shake256f, &seeds, m, &addrnd),
    };
    with_isa(isa, || {
        let name = format!("{} on {isa}", alg.name);
        let (sk, pk) = pqkit_core::slh_dsa::hazmat::keygen_internal(
            alg,
            &seeds[..n],
            &seeds[n..2 * n],
            &seeds[2 * n..],
        )
        .expect("keygen");
        assert_eq!(&sk[..], &their_sk[..], "{name}: private key");
        let det =
            pqkit_core::slh_dsa::hazmat::sign_internal(alg, &sk, &m_prime, None).expect("sign");
        assert!(det == their_det, "{name}: deterministic signatures differ");
        let rnd = pqkit_core::slh_dsa::hazmat::sign_internal(alg, &sk, &m_prime, Some(&addrnd))
            .expect("sign");
        assert!(rnd == their_rnd, "{name}: signatures with addrnd differ");
        assert!(
            their_verify(&rnd),
            "{name}: RustCrypto rejects pqkit's signature"
        );
        pqkit_core::slh_dsa::hazmat::verify_internal(alg, &pk, &m_prime, &their_det)
            .unwrap_or_else(|e| panic!("{name}: pqkit rejects RustCrypto's signature: {e}"));
        let mut bad = their_rnd.clone();
        let mid = bad.len() / 2;
        bad[mid] ^= 1;
        assert!(
            pqkit_core::slh_dsa::hazmat::verify_internal(alg, &pk, &m_prime, &bad).is_err(),
            "{name}: a modified signature verifies"
        );
        assert!(
            !their_verify(&bad),
            "{name}: RustCrypto accepts a modified signature"
        );
        println!("{name}: keys and signatures identical to RustCrypto slh-dsa, verified both ways");
    })
    .expect("supported path");
}

#[test]
fn all_sets_match_rustcrypto_slh_dsa_on_every_path() {
    let paths = Isa::supported();
    std::thread::scope(|scope| {
        for index in 0..12 {
            let isa = paths[index % paths.len()];
            std::thread::Builder::new()
                .stack_size(64 << 20)
                .spawn_scoped(scope, move || compare(index, isa))
                .expect("thread")
                .join()
                .expect("comparison");
        }
    });
}
