//! Differential tests against fips204 (the independent oracle), on every path this CPU has:
//! the same keys and signatures, byte for byte, from random seeds, messages, contexts and
//! `rnd`; each other's signatures verified; and the refusals — damaged expanded keys,
//! malformed hints, wrong lengths.

use fips204::traits::{KeyGen, SerDes, Signer, Verifier};
use pqkit_hash::{Isa, dispatch};
use rand_core::{OsRng, RngCore};

use super::hazmat::{key_gen_internal, sign_internal};
use super::*;

fn random<const L: usize>() -> [u8; L] {
    let mut b = [0u8; L];
    OsRng.fill_bytes(&mut b);
    b
}

/// (pk, sk) from ξ.
type KeyGenFn = fn(&[u8; 32]) -> (Vec<u8>, Vec<u8>);
/// The signature of (msg, ctx) under sk with `rnd`.
type SignFn = fn(&[u8], &[u8], &[u8], &[u8; 32]) -> Vec<u8>;
/// Whether (pk, msg, ctx, sig) verifies.
type VerifyFn = fn(&[u8], &[u8], &[u8], &[u8]) -> bool;

/// fips204's key generation, signing and verification for one parameter set.
struct Oracle {
    key_gen: KeyGenFn,
    sign: SignFn,
    verify: VerifyFn,
}

macro_rules! oracle {
    ($m:ident) => {
        Oracle {
            key_gen: |xi| {
                let (pk, sk) = fips204::$m::KG::keygen_from_seed(xi);
                (pk.into_bytes().to_vec(), sk.into_bytes().to_vec())
            },
            sign: |sk, msg, ctx, rnd| {
                let sk = fips204::$m::PrivateKey::try_from_bytes(sk.try_into().expect("sk length"))
                    .expect("sk");
                sk.try_sign_with_seed(rnd, msg, ctx).expect("sign").to_vec()
            },
            verify: |pk, msg, ctx, sig| {
                let pk = fips204::$m::PublicKey::try_from_bytes(pk.try_into().expect("pk length"))
                    .expect("pk");
                match sig.try_into() {
                    Ok(sig) => pk.verify(msg, &sig, ctx),
                    Err(_) => false,
                }
            },
        }
    };
}

fn sets() -> [(&'static Params, Oracle); 3] {
    [
        (&ML_DSA_44, oracle!(ml_dsa_44)),
        (&ML_DSA_65, oracle!(ml_dsa_65)),
        (&ML_DSA_87, oracle!(ml_dsa_87)),
    ]
}

/// μ = H(tr ‖ 0 ‖ |ctx| ‖ ctx ‖ M, 64) (FIPS 204 Algorithm 2 line 10, Algorithm 7 line 6).
fn mu(tr: &[u8], msg: &[u8], ctx: &[u8]) -> [u8; 64] {
    let mut mu = [0u8; 64];
    h(&[tr, &[0, ctx.len() as u8], ctx, msg], &mut mu);
    mu
}

/// Random ξ, messages, contexts and rnd (half of them 0³², deterministic): every path gives
/// fips204's keys and signatures, and each side verifies the other's.
#[test]
fn same_as_fips204_on_every_path() {
    for (p, o) in sets() {
        for round in 0..16 {
            let xi = random::<32>();
            let rnd = if round % 2 == 0 {
                [0; 32]
            } else {
                random::<32>()
            };
            let msg = random::<64>();
            let msg = &msg[..usize::from(random::<1>()[0]) % 65];
            let ctx = random::<32>();
            let ctx = &ctx[..round % 3 * 16];
            let (want_pk, want_sk) = (o.key_gen)(&xi);
            let want_sig = (o.sign)(&want_sk, msg, ctx, &rnd);
            let mut firsts: Option<Vec<Poly>> = None;
            for isa in Isa::supported() {
                dispatch::with_isa(isa, || {
                    let id = format!("{} on {isa}, round {round}", p.name);
                    let key = key_gen_internal(p, &xi);
                    assert_eq!(key.verifying_key(), &want_pk[..], "{id}: pk");
                    assert_eq!(key.expanded(), &want_sk[..], "{id}: sk");
                    let loaded = SigningKey::from_expanded(p, &want_sk).expect("expanded key");
                    assert_eq!(loaded.verifying_key(), &want_pk[..], "{id}: pk from sk");
                    let mu = mu(key.tr(), msg, ctx);
                    for k in [&key, &loaded] {
                        let mut sig = vec![0u8; p.signature_size()];
                        sign_internal(k, &mu, &rnd, &mut sig).expect("length");
                        assert!(sig == want_sig, "{id}: signature");
                    }
                    assert!(verify_mu(p, &want_pk, &mu, &want_sig), "{id}: verify");
                    // M′ given: tr on the lanes, μ from it.
                    let m_prime: [&[u8]; 3] = [&[0, ctx.len() as u8], ctx, msg];
                    assert!(verify(p, &want_pk, &m_prime, &want_sig), "{id}: verify M′");
                    // A flipped bit anywhere: both refuse, or (a hint byte that decodes to the
                    // same hints cannot exist, nor a z bit that is ignored) both accept.
                    let mut bad = want_sig.clone();
                    let at = usize::from(u16::from_le_bytes(random::<2>())) % bad.len();
                    bad[at] ^= 1 << (random::<1>()[0] % 8);
                    assert_eq!(
                        verify_mu(p, &want_pk, &mu, &bad),
                        (o.verify)(&want_pk, msg, ctx, &bad),
                        "{id}: flipped bit at {at}"
                    );
                    assert!(
                        !verify_mu(p, &want_pk, &mu, &bad),
                        "{id}: flipped bit at {at}"
                    );
                    assert!(
                        !verify(p, &want_pk, &m_prime, &bad),
                        "{id}: flipped bit at {at}, M′"
                    );
                    // Another message, or another key.
                    let other: [&[u8]; 3] = [&[0, ctx.len() as u8], ctx, b"another message"];
                    assert!(!verify(p, &want_pk, &other, &want_sig), "{id}: other M′");
                    let mut bad_pk = want_pk.clone();
                    let flip = at % bad_pk.len();
                    bad_pk[flip] ^= 1;
                    assert!(!verify(p, &bad_pk, &m_prime, &want_sig), "{id}: other key");
                    // The same answers under the key with Â and tr computed once, which are
                    // the same on every path (a process shares prepared keys between threads,
                    // whose paths may differ).
                    let prepared = VerifyingKey::new(p, &want_pk).expect("length");
                    assert_eq!(prepared.as_bytes(), &want_pk[..], "{id}: prepared pk");
                    let first = firsts.get_or_insert_with(|| prepared.a.clone());
                    let same = prepared.a.iter().zip(first.iter()).all(|(x, y)| x.0 == y.0);
                    assert!(same, "{id}: Â");
                    assert!(prepared.verify_mu(&mu, &want_sig), "{id}: prepared, μ");
                    assert!(prepared.verify(&m_prime, &want_sig), "{id}: prepared, M′");
                    assert!(
                        !prepared.verify_mu(&mu, &bad),
                        "{id}: prepared, flipped bit"
                    );
                    assert!(
                        !prepared.verify(&m_prime, &bad),
                        "{id}: prepared, flipped bit"
                    );
                    assert!(
                        !prepared.verify(&other, &want_sig),
                        "{id}: prepared, other M′"
                    );
                    let bad_key = VerifyingKey::new(p, &bad_pk).expect("length");
                    assert!(
                        !bad_key.verify(&m_prime, &want_sig),
                        "{id}: prepared other key"
                    );
                    // What it keeps is what it verifies with: a damaged Â or tr refuses.
                    let mut damaged = VerifyingKey::new(p, &want_pk).expect("length");
                    damaged.a[0].0[0] ^= 1;
                    assert!(!damaged.verify_mu(&mu, &want_sig), "{id}: damaged Â");
                    let mut damaged = VerifyingKey::new(p, &want_pk).expect("length");
                    damaged.tr[0] ^= 1;
                    assert!(!damaged.verify(&m_prime, &want_sig), "{id}: damaged tr");
                    assert!(damaged.verify_mu(&mu, &want_sig), "{id}: tr unused with μ");
                })
                .expect("supported path");
            }
            // pqkit's hedged signatures (fresh rnd) verify under fips204.
            let key = key_gen_internal(p, &xi);
            let mut sig = vec![0u8; p.signature_size()];
            sign_internal(&key, &mu(key.tr(), msg, ctx), &random::<32>(), &mut sig)
                .expect("length");
            assert!(
                (o.verify)(&want_pk, msg, ctx, &sig),
                "{}: fips204 verifies",
                p.name
            );
        }
    }
}

/// Damage to any part of an expanded key that the key ties together is refused: ρ, K is free
/// (any K is valid), tr, s₁, s₂ (in or out of range) and t₀.
#[test]
fn damaged_expanded_keys_are_refused() {
    for (p, _) in sets() {
        let key = key_gen_internal(p, &[9; 32]);
        let sk = key.expanded().to_vec();
        let s_start = 128;
        let t0_start = 128 + 32 * (p.k + p.l) * p.eta_bits();
        for (what, at) in [
            ("ρ", 3),
            ("tr", 64 + 17),
            ("s₁", s_start + 5),
            ("s₂", t0_start - 7),
            ("t₀", t0_start + 100),
            ("t₀ end", sk.len() - 1),
        ] {
            for bit in 0..8 {
                let mut bad = sk.clone();
                bad[at] ^= 1 << bit;
                assert!(
                    matches!(
                        SigningKey::from_expanded(p, &bad),
                        Err(Error::InvalidSigningKey(_))
                    ),
                    "{}: {what} bit {bit}",
                    p.name
                );
            }
        }
        // K is any 32 bytes: a changed K is a different valid key with the same pk.
        let mut other = sk.clone();
        other[40] ^= 1;
        let k2 = SigningKey::from_expanded(p, &other).expect("K is free");
        assert_eq!(k2.verifying_key(), key.verifying_key());
    }
}

/// Hint encodings that HintBitUnpack refuses (FIPS 204 Algorithm 21) do not verify.
#[test]
fn malformed_hints_are_refused() {
    for (p, _) in sets() {
        let key = key_gen_internal(p, &[5; 32]);
        let mu = [7u8; 64];
        let mut sig = vec![0u8; p.signature_size()];
        sign_internal(&key, &mu, &[0; 32], &mut sig).expect("length");
        let pk = key.verifying_key();
        assert!(verify_mu(p, pk, &mu, &sig));
        let hb = sig.len() - p.omega - p.k;
        let count = |s: &[u8], i: usize| usize::from(s[hb + p.omega + i]);
        // A count above ω.
        let mut bad = sig.clone();
        bad[hb + p.omega + p.k - 1] = (p.omega + 1) as u8;
        assert!(!verify_mu(p, pk, &mu, &bad), "{}: count > ω", p.name);
        // A decreasing count.
        let mut bad = sig.clone();
        if count(&sig, 1) > 0 {
            bad[hb + p.omega] = count(&sig, 1) as u8 + 1;
            assert!(!verify_mu(p, pk, &mu, &bad), "{}: decreasing count", p.name);
        }
        // Positions not increasing: the first two of polynomial 0 swapped (when it has two).
        if count(&sig, 0) >= 2 {
            let mut bad = sig.clone();
            bad.swap(hb, hb + 1);
            assert!(!verify_mu(p, pk, &mu, &bad), "{}: order", p.name);
        }
        // A nonzero byte after the last position.
        let total = count(&sig, p.k - 1);
        if total < p.omega {
            let mut bad = sig.clone();
            bad[hb + p.omega - 1] = 1;
            assert!(!verify_mu(p, pk, &mu, &bad), "{}: trailing byte", p.name);
        }
    }
}

/// Every wrong length is an error or false, never a panic.
#[test]
fn wrong_lengths_are_refused() {
    for (p, _) in sets() {
        let key = key_gen_internal(p, &[1; 32]);
        let mu = [0u8; 64];
        let mut sig = vec![0u8; p.signature_size()];
        sign_internal(&key, &mu, &[0; 32], &mut sig).expect("length");
        let sizes = [
            p.verifying_key_size(),
            p.signing_key_size(),
            p.signature_size(),
        ];
        let prepared = VerifyingKey::new(p, key.verifying_key()).expect("length");
        for n in (0..=sizes[1] + 1).filter(|n| !sizes.contains(n)) {
            let v = vec![0u8; n];
            let mut w = vec![0u8; n];
            assert!(matches!(
                SigningKey::from_expanded(p, &v),
                Err(Error::WrongLength { .. })
            ));
            assert!(sign_internal(&key, &mu, &[0; 32], &mut w).is_err());
            assert!(!verify_mu(p, &v, &mu, &sig));
            assert!(!verify_mu(p, key.verifying_key(), &mu, &v));
            assert!(!verify(p, &v, &[b"M"], &sig));
            assert!(!verify(p, key.verifying_key(), &[b"M"], &v));
            assert!(matches!(
                VerifyingKey::new(p, &v),
                Err(Error::WrongLength { .. })
            ));
            assert!(!prepared.verify(&[b"M"], &v));
            assert!(!prepared.verify_mu(&mu, &v));
        }
    }
}

/// c · s by the definition of R_q = Z_q[X]/(X²⁵⁶ + 1) (FIPS 204 §2.3), in i64.
fn schoolbook(c: &Poly, s: &Poly) -> [i64; N] {
    let mut out = [0i64; N];
    for (j, &cj) in c.0.iter().enumerate() {
        for (i, &si) in s.0.iter().enumerate() {
            let (k, sign) = if i + j < N {
                (i + j, 1)
            } else {
                (i + j - N, -1)
            };
            out[k] += sign * i64::from(cj) * i64::from(si);
        }
    }
    out
}

/// `poly::mul_challenge` gives c · s exactly, for each set's τ, in both lane widths: s with
/// coefficients in [−η, η] in i8 lanes (s₁, s₂) and in [0, 1023] in i16 lanes (t₁). Random
/// challenges and vectors, and the extremes — every coefficient at the bound, against c all
/// 1 or all −1 — whose last coefficient is ±τ · bound, the largest sum the lanes must hold.
#[test]
fn challenge_products_are_exact() {
    for (p, _) in sets() {
        for bound in [p.eta, 1023] {
            let mut cases = Vec::new();
            for (cs, ss) in [(1, bound), (1, -bound), (-1, bound), (-1, -bound)] {
                let mut c = Poly::ZERO;
                for x in &mut c.0[N - p.tau..] {
                    *x = cs;
                }
                cases.push((c, Poly([ss; N])));
            }
            for _ in 0..200 {
                let bytes = random::<{ 4 * N }>();
                let mut c = Poly::ZERO;
                let mut placed = 0;
                for (i, &b) in bytes[..2 * N].iter().enumerate().skip(N) {
                    if placed == p.tau {
                        break;
                    }
                    let j = usize::from(bytes[i - N]);
                    if c.0[j] == 0 {
                        c.0[j] = if b & 1 == 1 { -1 } else { 1 };
                        placed += 1;
                    }
                }
                let s = Poly(core::array::from_fn(|i| {
                    let r = i32::from(u16::from_le_bytes([
                        bytes[2 * N + 2 * i],
                        bytes[2 * N + 2 * i + 1],
                    ]));
                    r % (2 * bound + 1) - bound
                }));
                cases.push((c, s));
            }
            for (c, s) in cases {
                let mut out = Poly::ZERO;
                let ch = Challenge::new(&c);
                if bound == 1023 {
                    let mut wide = Shifts::<i16>::ZERO;
                    wide.fill(&s);
                    poly::mul_challenge(&mut out, &ch, &wide, bound);
                } else {
                    let mut short = Short::ZERO;
                    short.fill(&s);
                    poly::mul_challenge(&mut out, &ch, &short, bound);
                }
                let want = schoolbook(&c, &s);
                assert!(
                    out.0.iter().zip(&want).all(|(a, b)| i64::from(*a) == *b),
                    "{}, bound {bound}: c·s differs",
                    p.name
                );
            }
        }
    }
}
