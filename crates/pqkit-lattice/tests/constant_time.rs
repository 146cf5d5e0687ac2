//! Secret-independent control flow and memory access of ML-KEM decapsulation and
//! encapsulation and of ML-DSA signing, checked by Valgrind's memcheck (the approach of Adam
//! Langley's ctgrind): the secret inputs — the decapsulation key's ŝ and z, the encapsulation
//! randomness m; the signing key's K, s₁, s₂, t̂₀ and rnd — are marked undefined, so that
//! memcheck reports every branch and every address that depends on them ("Conditional jump
//! or move depends on uninitialised value(s)", "Use of uninitialised value of size 8"). The
//! outputs are marked defined again before the test compares them.
//!
//! The client requests are `pqkit_lattice::valgrind`'s. Run natively, they are no-ops and the
//! test only checks the results. The ML-DSA part needs the `ct-test` feature, which makes the
//! library's declassifications requests too. CI runs this binary (with the feature) under
//! `valgrind --error-exitcode=…` on the AVX2 and portable paths (Valgrind does not decode
//! AVX-512), with `PQKIT_EXPECT_VALGRIND=1` so that it fails if it was not really under
//! Valgrind.
//!
//! Key generation (of either scheme) is not covered: ρ = G(d ‖ k) is derived from the secret seed
//! and then rejection-sampled (SampleNTT branches on it by design — FIPS 203 makes Â public); its
//! secret-dependent parts (SamplePolyCBD, NTT, encoding) are the functions checked here. ML-DSA key
//! generation's RejBoundedPoly keeps a secret number of candidates per block.
use pqkit_lattice::ml_kem::{
    ML_KEM_512, ML_KEM_768, ML_KEM_1024, decapsulate,
    hazmat::{encaps_internal, key_gen_internal},
};
use pqkit_lattice::valgrind;

fn secret(bytes: &[u8]) {
    valgrind::secret(bytes);
}

fn public(bytes: &[u8]) {
    valgrind::public(bytes);
}

/// Fails when `PQKIT_EXPECT_VALGRIND` is set but this is not Valgrind; whether it is.
fn under_valgrind() -> bool {
    let running = valgrind::running();
    if std::env::var_os("PQKIT_EXPECT_VALGRIND").is_some() {
        assert!(
            running,
            "PQKIT_EXPECT_VALGRIND is set, but this is not Valgrind"
        );
    }
    running
}

/// The hash path (and so the lattice kernels) under test: the one `PQKIT_HASH` names (CI runs
/// this file once per path), else the detected one.
fn hash_path() -> pqkit_hash::Isa {
    if let Ok(name) = std::env::var("PQKIT_HASH") {
        pqkit_hash::dispatch::set_process_by_name(&name)
            .unwrap_or_else(|e| panic!("PQKIT_HASH={name}: {e}"));
    }
    pqkit_hash::dispatch::current()
}

fn how(under_valgrind: bool) -> &'static str {
    if under_valgrind {
        "under Valgrind memcheck"
    } else {
        "natively (results only)"
    }
}

#[test]
fn ml_kem_secrets_do_not_steer_branches_or_addresses() {
    let under_valgrind = under_valgrind();
    let isa = hash_path();
    for p in [&ML_KEM_512, &ML_KEM_768, &ML_KEM_1024] {
        let k = p.k;
        let mut ek = vec![0u8; p.encapsulation_key_size()];
        let mut dk = vec![0u8; p.decapsulation_key_size()];
        key_gen_internal(p, &[0x11; 32], &[0x22; 32], &mut ek, &mut dk).expect("lengths");

        // Encapsulation with a secret m.
        let m = [0x33u8; 32];
        secret(&m);
        let mut c = vec![0u8; p.ciphertext_size()];
        let key = encaps_internal(p, &ek, &m, &mut c).expect("lengths");
        public(&c);
        public(&key[..]);

        // Decapsulation with a secret ŝ and z, of the valid ciphertext and of one with a
        // flipped bit (the implicit rejection).
        let mut bad = c.clone();
        bad[7] ^= 0x10;
        for (ct, valid) in [(&c, true), (&bad, false)] {
            secret(&dk[..384 * k]);
            secret(&dk[768 * k + 64..]);
            let got = decapsulate(p, &dk, ct).expect("lengths");
            public(&got[..]);
            public(&dk);
            assert_eq!(got[..] == key[..], valid, "{} on {isa}", p.name);
        }
    }
    eprintln!(
        "ML-KEM constant-time check on {isa}: {}",
        how(under_valgrind)
    );
}

/// ML-DSA signing with secret K, s₁, s₂ (as laid out for the challenge products), t̂₀ and
/// rnd. The library declassifies (with the `ct-test` feature) what FIPS 204 signing reveals
/// by design: each attempt's rejection and challenge c̃, and the signature.
#[cfg(feature = "ct-test")]
#[test]
fn ml_dsa_signing_secrets_do_not_steer_branches_or_addresses() {
    use pqkit_lattice::ml_dsa::{
        ML_DSA_44, ML_DSA_65, ML_DSA_87,
        hazmat::{key_gen_internal, sign_internal},
        verify_mu,
    };
    let under_valgrind = under_valgrind();
    let isa = hash_path();
    for p in [&ML_DSA_44, &ML_DSA_65, &ML_DSA_87] {
        let key = key_gen_internal(p, &[0x44; 32]);
        // Six messages: about 4–5 attempts each on average, most rejected by the r₀ or z check
        // (ct₀'s and the hint count's rejections are rare and may not occur).
        for i in 0..6u8 {
            key.mark_secret_for_valgrind();
            let rnd = [0x55 ^ i; 32];
            secret(&rnd);
            let mu = [i; 64];
            let mut sig = vec![0u8; p.signature_size()];
            sign_internal(&key, &mu, &rnd, &mut sig).expect("length");
            public(&sig);
            public(&rnd);
            assert!(
                verify_mu(p, key.verifying_key(), &mu, &sig),
                "{} on {isa}",
                p.name
            );
        }
    }
    eprintln!(
        "ML-DSA signing constant-time check on {isa}: {}",
        how(under_valgrind)
    );
}
