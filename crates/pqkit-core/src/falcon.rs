//! Falcon-512 and Falcon-1024, round 3 — the algorithm behind OQS's code points 0xFED7/0xFEDA
//! and OIDs 1.3.9999.3.11/.14, and Bouncy Castle's Falcon.
//!
//! Backend: `fn-dsa` 0.3 with `HASH_ID_ORIGINAL_FALCON` (round-3 hashing: SHAKE256(nonce ‖ M)).
//! FN-DSA (FIPS 206) is still a draft; `fn-dsa` 0.4 follows that draft and its encoding may
//! change, so pqkit offers round-3 Falcon, which interoperates today.
//!
//! Encodings (Falcon round-3 specification §3.11): verifying key `0x00+logn ‖ h` (897 / 1793
//! bytes), private key `0x50+logn ‖ f ‖ g ‖ F` (1281 / 2305 bytes), signature
//! `0x30+logn ‖ nonce (40) ‖ compressed s2` — variable length, at most 666 / 1280 bytes as pqkit
//! produces it (fn-dsa signs in the padded size; pqkit strips the zero padding, which gives the
//! compressed format OQS and Bouncy Castle use). Verification accepts exactly that encoding:
//! a compressed signature ends in a non-zero byte (the last coefficient's stop bit), so one
//! with trailing zero bytes — a padded signature — is refused, as the round-3 reference
//! `crypto_sign_open` refuses bytes its decoder does not consume. Each signature thus has one
//! encoding.
//!
//! Other signers do not cap the compressed signature at the padded size: the round-3 format
//! allows up to 752 / 1462 bytes (`FALCON_SIG_COMPRESSED_MAXSIZE` of the reference `falcon.h`),
//! and Bouncy Castle and liboqs sign in it — a small fraction of their signatures is longer
//! than 666 / 1280 bytes. fn-dsa verifies only its padded size, so those pqkit verifies with
//! fn-dsa's own building blocks (`fn-dsa-comm`: the compressed decoding, the round-3
//! hash-to-point, the arithmetic mod q) in [`verify_long`], the same steps as fn-dsa's
//! verifier (round-3 specification, Algorithm 16).

use fn_dsa::{
    DOMAIN_NONE, HASH_ID_ORIGINAL_FALCON, KeyPairGenerator, KeyPairGeneratorStandard,
    SigningKey as _, SigningKeyStandard, VerifyingKey as _, VerifyingKeyStandard, sign_key_size,
    signature_size, vrfy_key_size,
};
use zeroize::Zeroizing;

use crate::code_point::TlsCodePoint;
use crate::error::Error;
use crate::sig::{Family, SignatureAlgorithm, SignatureBackend, SigningKeyImpl, SigningRandomness};

/// Falcon-512 (round 3), NIST category 1. OQS code point 0xFED7, OID 1.3.9999.3.11.
pub static FALCON_512: SignatureAlgorithm = SignatureAlgorithm {
    name: "Falcon-512",
    aliases: &["FALCON_LEVEL1", "falcon512", "FN-DSA-512"],
    category: 1,
    verifying_key_size: vrfy_key_size(9),
    signing_key_size: sign_key_size(9),
    seed_size: 0,
    signature_size: signature_size(9),
    oid: "1.3.9999.3.11",
    spki_algorithm_id: &ALG_ID_512,
    signature_algorithm_id: &ALG_ID_512,
    // oqs-provider (private use): falcon512 = 0xFED7.
    tls_scheme: Some(TlsCodePoint {
        value: 0xFED7,
        iana: "falcon512",
        source: "oqs-provider (private use)",
    }),
    standard: "Falcon round 3",
    family: Family::Falcon,
    backend: &Falcon(9),
};

/// Falcon-1024 (round 3), NIST category 5. OQS code point 0xFEDA, OID 1.3.9999.3.14.
pub static FALCON_1024: SignatureAlgorithm = SignatureAlgorithm {
    name: "Falcon-1024",
    aliases: &["FALCON_LEVEL5", "falcon1024", "FN-DSA-1024"],
    category: 5,
    verifying_key_size: vrfy_key_size(10),
    signing_key_size: sign_key_size(10),
    seed_size: 0,
    signature_size: signature_size(10),
    oid: "1.3.9999.3.14",
    spki_algorithm_id: &ALG_ID_1024,
    signature_algorithm_id: &ALG_ID_1024,
    // oqs-provider (private use): falcon1024 = 0xFEDA.
    tls_scheme: Some(TlsCodePoint {
        value: 0xFEDA,
        iana: "falcon1024",
        source: "oqs-provider (private use)",
    }),
    standard: "Falcon round 3",
    family: Family::Falcon,
    backend: &Falcon(10),
};

/// The fn-dsa backend for degree 2^logn.
struct Falcon(u32);

impl Falcon {
    fn key_from(&self, sk: Zeroizing<Vec<u8>>) -> Result<Box<dyn SigningKeyImpl>, Error> {
        let key = SigningKeyStandard::decode(&sk).ok_or(Error::InvalidKey("Falcon private key"))?;
        if key.get_logn() != self.0 {
            return Err(Error::InvalidKey("Falcon private key of another degree"));
        }
        check_key(self.0, &sk)?;
        let mut vk = vec![0u8; vrfy_key_size(self.0)];
        key.to_verifying_key(&mut vk);
        Ok(Box::new(FalconSigningKey {
            logn: self.0,
            sk,
            verifying_key: vk,
        }))
    }
}

impl SignatureBackend for Falcon {
    fn name(&self) -> &'static str {
        "fn-dsa 0.3 (round-3 hashing)"
    }

    /// Round-3 compressed signatures (the catalogue's size is the largest).
    fn signature_size_varies(&self) -> bool {
        true
    }

    fn generate(
        &self,
        _alg: &'static SignatureAlgorithm,
    ) -> Result<Box<dyn SigningKeyImpl>, Error> {
        let mut sk = Zeroizing::new(vec![0u8; sign_key_size(self.0)]);
        let mut vk = vec![0u8; vrfy_key_size(self.0)];
        let seed = crate::random_array::<32>()?;
        KeyPairGeneratorStandard::default().keygen(
            self.0,
            &mut crate::FixedRng::new(&seed[..]),
            &mut sk,
            &mut vk,
        );
        self.key_from(sk)
    }

    fn signing_key_from_seed(
        &self,
        _alg: &'static SignatureAlgorithm,
        _seed: &[u8],
    ) -> Result<Box<dyn SigningKeyImpl>, Error> {
        Err(Error::Unsupported("Falcon keys have no standard seed form"))
    }

    fn signing_key_from_expanded(
        &self,
        _alg: &'static SignatureAlgorithm,
        bytes: &[u8],
    ) -> Result<Box<dyn SigningKeyImpl>, Error> {
        self.key_from(Zeroizing::new(bytes.to_vec()))
    }

    fn verify(
        &self,
        _alg: &'static SignatureAlgorithm,
        pk: &[u8],
        msg: &[u8],
        _ctx: &[u8],
        sig: &[u8],
    ) -> Result<(), Error> {
        let size = signature_size(self.0);
        // 1 header byte + 40-byte nonce + at least one byte of s2, ending in a non-zero byte.
        if sig.len() < 42 || sig.len() > compressed_max_size(self.0) || sig.last() == Some(&0) {
            return Err(Error::BadSignature);
        }
        let valid = if sig.len() > size {
            verify_long(self.0, pk, msg, sig)
        } else {
            let key = VerifyingKeyStandard::decode(pk).ok_or(Error::BadSignature)?;
            let mut padded = sig.to_vec();
            padded.resize(size, 0);
            key.verify(&padded, &DOMAIN_NONE, &HASH_ID_ORIGINAL_FALCON, msg)
        };
        if valid {
            Ok(())
        } else {
            Err(Error::BadSignature)
        }
    }
}

/// The longest round-3 compressed signature, in bytes: 752 (logn 9) / 1462 (logn 10) — the
/// reference `falcon.h`'s `FALCON_SIG_COMPRESSED_MAXSIZE`.
const fn compressed_max_size(logn: u32) -> usize {
    (((11 << logn) + (101 >> (10 - logn)) + 7) >> 3) + 41
}

/// Round-3 verification (specification Algorithm 16) of a compressed signature of any length
/// (`0x30+logn ‖ nonce ‖ compressed s2`, the caller having checked its length), from
/// fn-dsa's building blocks: decode h and s2, c = HashToPoint(nonce ‖ M), s1 = c − s2·h mod q,
/// accept when ‖(s1, s2)‖² ≤ ⌊β²⌋ — the steps of fn-dsa's own verifier, which takes only its
/// padded size.
fn verify_long(logn: u32, pk: &[u8], msg: &[u8], sig: &[u8]) -> bool {
    use fn_dsa_comm::{codec, hash_to_point, mq};
    let n = 1usize << logn;
    if pk.len() != vrfy_key_size(logn) || u32::from(pk[0]) != logn || sig[0] != 0x30 + pk[0] {
        return false;
    }
    let mut h = vec![0u16; n];
    if codec::modq_decode(&pk[1..], &mut h) != Some(pk.len() - 1) {
        return false;
    }
    let mut s2 = vec![0i16; n];
    if !codec::comp_decode(&sig[41..], &mut s2) {
        return false;
    }
    let norm2 = mq::signed_poly_sqnorm(logn, &s2);
    // c, the hashed message (the round-3 hashing ignores the hashed key).
    let mut c = vec![0u16; n];
    hash_to_point(
        &sig[1..41],
        &[0u8; 64],
        &DOMAIN_NONE,
        &HASH_ID_ORIGINAL_FALCON,
        msg,
        &mut c,
    );
    mq::mqpoly_ext_to_int(logn, &mut c);
    // s2·h in NTT form, back to integers, subtracted from c: s1.
    mq::mqpoly_ext_to_int(logn, &mut h);
    mq::mqpoly_int_to_NTT(logn, &mut h);
    let mut t = vec![0u16; n];
    mq::mqpoly_signed_to_ext(logn, &s2, &mut t);
    mq::mqpoly_ext_to_int(logn, &mut t);
    mq::mqpoly_int_to_NTT(logn, &mut t);
    mq::mqpoly_mul_ntt(logn, &mut t, &h);
    mq::mqpoly_NTT_to_int(logn, &mut t);
    mq::mqpoly_sub_int(logn, &mut c, &t);
    mq::mqpoly_int_to_ext(logn, &mut c);
    let norm1 = mq::mqpoly_sqnorm(logn, &c);
    // The sum without overflow (each norm below 2^32).
    norm1 < norm2.wrapping_neg() && norm1 + norm2 <= mq::SQBETA[logn as usize]
}

/// A Falcon signing key (round-3 encoding).
///
/// # Security
/// pqkit's encoded copy is zeroized on drop; fn-dsa zeroizes its decoded key.
struct FalconSigningKey {
    logn: u32,
    sk: Zeroizing<Vec<u8>>,
    verifying_key: Vec<u8>,
}

impl SigningKeyImpl for FalconSigningKey {
    fn verifying_key(&self) -> &[u8] {
        &self.verifying_key
    }

    fn seed(&self) -> Option<&[u8]> {
        None
    }

    fn expanded(&self) -> Option<Zeroizing<Vec<u8>>> {
        Some(self.sk.clone())
    }

    fn sign(
        &self,
        message: &[u8],
        _context: &[u8],
        randomness: SigningRandomness<'_>,
    ) -> Result<Vec<u8>, Error> {
        let mut key =
            SigningKeyStandard::decode(&self.sk).ok_or(Error::InvalidKey("Falcon private key"))?;
        let mut sig = vec![0u8; signature_size(self.logn)];
        // Falcon signing is randomized by design (the nonce); "deterministic" and fixed
        // randomness give repeatable signatures for tests.
        let mut rng = match randomness {
            SigningRandomness::Hedged => crate::FixedRng::new(&crate::random_array::<48>()?[..]),
            SigningRandomness::Deterministic => crate::FixedRng::new(&[0; 48]),
            SigningRandomness::Fixed(r) => crate::FixedRng::new(r),
        };
        // fn-dsa retries until the signature is short enough, drawing fresh randomness for
        // each attempt, with no bound of its own: the draws are bounded here, and running out
        // unwinds out of fn-dsa (without the panic hook) into an error. A key that passed
        // [`check_key`] succeeds at the first attempt almost always.
        let mut bounded = BoundedRng {
            inner: &mut rng,
            left: MAX_SIGNING_RANDOMNESS_BYTES,
        };
        let signed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            key.sign(
                &mut bounded,
                &DOMAIN_NONE,
                &HASH_ID_ORIGINAL_FALCON,
                message,
                &mut sig,
            );
        }));
        if let Err(payload) = signed {
            if payload.is::<AttemptsExhausted>() {
                return Err(Error::InvalidKey(
                    "Falcon private key: no short enough signature after 64 attempts",
                ));
            }
            std::panic::resume_unwind(payload);
        }
        // Strip the zero padding: the compressed encoding ends in a 1 bit (the stop bit of the
        // last coefficient's unary part), so no real byte is lost.
        while sig.last() == Some(&0) {
            sig.pop();
        }
        Ok(sig)
    }
}

/// Checks a decoded round-3 private key `0x50+logn ‖ f ‖ g ‖ F` the way key generation
/// accepts one (round-3 specification §3.8, Algorithm 4 and the reference `keygen`):
///
/// 1. G = g·F/f mod q has coefficients in [−127, 127] (fn-dsa's decoder checked this too);
/// 2. the NTRU equation f·G − g·F = q holds over the integers in Z[x]/(x^n + 1), not only
///    mod q — else (f, g, F, G) spans a sublattice whose vectors are too long to ever sign;
/// 3. ‖(g, −f)‖² and the squared norm of the Gram–Schmidt vector
///    (q·f̄/(f·f̄ + g·ḡ), q·ḡ/(f·f̄ + g·ḡ)) are at most 1.17²·q = 16822.4121 — else signing
///    succeeds rarely or never.
///
/// A key that passes signs at the first attempt with the probability the specification gives
/// for its own keys.
///
/// # Errors
/// [`Error::InvalidKey`] naming the failed check.
fn check_key(logn: u32, sk: &[u8]) -> Result<(), Error> {
    use fn_dsa_comm::{codec, mq};
    let n = 1usize << logn;
    let bad = Error::InvalidKey;
    let nbits = if logn == 9 { 6 } else { 5 };
    let mut f = Zeroizing::new(vec![0i8; n]);
    let mut g = Zeroizing::new(vec![0i8; n]);
    let mut big_f = Zeroizing::new(vec![0i8; n]);
    let mut big_g = Zeroizing::new(vec![0i8; n]);
    let src = sk.get(1..).ok_or(bad("Falcon private key"))?;
    let j = codec::trim_i8_decode(src, &mut f, nbits).ok_or(bad("Falcon private key (f)"))?;
    let j =
        j + codec::trim_i8_decode(&src[j..], &mut g, nbits).ok_or(bad("Falcon private key (g)"))?;
    codec::trim_i8_decode(&src[j..], &mut big_f, 8).ok_or(bad("Falcon private key (F)"))?;
    // 1. G = g·F/f mod q, small.
    let mut w0 = Zeroizing::new(vec![0u16; n]);
    let mut w1 = Zeroizing::new(vec![0u16; n]);
    mq::mqpoly_small_to_int(logn, &g, &mut w0);
    mq::mqpoly_small_to_int(logn, &f, &mut w1);
    mq::mqpoly_int_to_NTT(logn, &mut w0);
    mq::mqpoly_int_to_NTT(logn, &mut w1);
    if !mq::mqpoly_div_ntt(logn, &mut w0, &w1) {
        return Err(bad("Falcon private key (f is not invertible mod q)"));
    }
    mq::mqpoly_small_to_int(logn, &big_f, &mut w1);
    mq::mqpoly_int_to_NTT(logn, &mut w1);
    mq::mqpoly_mul_ntt(logn, &mut w1, &w0);
    mq::mqpoly_NTT_to_int(logn, &mut w1);
    if !mq::mqpoly_int_to_small(logn, &w1, &mut big_g) {
        return Err(bad("Falcon private key (G is not small)"));
    }
    // 2. f·G − g·F = q in Z[x]/(x^n + 1).
    let fg = negacyclic_product(&f, &big_g);
    let gf = negacyclic_product(&g, &big_f);
    let ntru = fg
        .iter()
        .zip(gf.iter())
        .enumerate()
        .all(|(i, (a, b))| a - b == if i == 0 { FALCON_Q } else { 0 });
    if !ntru {
        return Err(bad(
            "Falcon private key (the NTRU equation f·G − g·F = q does not hold)",
        ));
    }
    // 3. Both basis norms within the key generation bound.
    let sq = |v: &[i8]| v.iter().map(|&c| i32::from(c) * i32::from(c)).sum::<i32>();
    if f64::from(sq(&f) + sq(&g)) > NORM_BOUND_SQUARED {
        return Err(bad("Falcon private key (‖(g, −f)‖ over the bound)"));
    }
    if gram_schmidt_norm_squared(&f, &g) > NORM_BOUND_SQUARED {
        return Err(bad("Falcon private key (Gram–Schmidt norm over the bound)"));
    }
    Ok(())
}

/// a·b in Z[x]/(x^n + 1), schoolbook (|coefficients| < 2^15·n: no overflow in i32).
fn negacyclic_product(a: &[i8], b: &[i8]) -> Zeroizing<Vec<i32>> {
    let n = a.len();
    let mut out = Zeroizing::new(vec![0i32; n]);
    for (i, &ai) in a.iter().enumerate() {
        let ai = i32::from(ai);
        if ai == 0 {
            continue;
        }
        for (j, &bj) in b.iter().enumerate() {
            let p = ai * i32::from(bj);
            let k = i + j;
            if k < n {
                out[k] += p;
            } else {
                out[k - n] -= p;
            }
        }
    }
    out
}

/// ‖(q·f̄/(f·f̄ + g·ḡ), q·ḡ/(f·f̄ + g·ḡ))‖², from f and g evaluated at the n/2 roots
/// ζ_j = e^{iπ(2j+1)/n} of x^n + 1 that represent all n (the others are their conjugates):
/// by Parseval, ‖a‖² = (2/n)·Σ_j |a(ζ_j)|², and here |a(ζ_j)|² = q²/(|f(ζ_j)|² + |g(ζ_j)|²).
fn gram_schmidt_norm_squared(f: &[i8], g: &[i8]) -> f64 {
    let n = f.len();
    let q = f64::from(FALCON_Q);
    let mut sum = 0.0f64;
    for j in 0..n / 2 {
        let angle = core::f64::consts::PI * (2.0 * j as f64 + 1.0) / n as f64;
        let (step_im, step_re) = angle.sin_cos();
        let (mut re, mut im) = (1.0f64, 0.0f64);
        let (mut fr, mut fi, mut gr, mut gi) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
        for k in 0..n {
            fr += f64::from(f[k]) * re;
            fi += f64::from(f[k]) * im;
            gr += f64::from(g[k]) * re;
            gi += f64::from(g[k]) * im;
            (re, im) = (re * step_re - im * step_im, re * step_im + im * step_re);
        }
        let d = fr * fr + fi * fi + gr * gr + gi * gi;
        if d == 0.0 {
            return f64::INFINITY;
        }
        sum += q * q / d;
    }
    2.0 * sum / n as f64
}

/// Falcon's modulus q.
const FALCON_Q: i32 = 12289;

/// 1.17²·q, the squared-norm bound of Falcon key generation (round-3 specification §3.8.2).
const NORM_BOUND_SQUARED: f64 = 16822.4121;

/// Randomness one signature may draw before signing gives up: 64 attempts of fn-dsa's loop
/// (a 40-byte nonce and a 56-byte sampler seed each).
const MAX_SIGNING_RANDOMNESS_BYTES: usize = 64 * (40 + 56);

/// The unwind payload that ends a signing loop that ran out of attempts.
struct AttemptsExhausted;

/// An RNG that gives out at most `left` bytes, then unwinds with [`AttemptsExhausted`].
///
/// Needs `panic = "unwind"` (the default, and pqkit's profiles): under `panic = "abort"` the
/// bound still holds, but ends the process instead of returning an error.
struct BoundedRng<'a, R> {
    inner: &'a mut R,
    left: usize,
}

impl<R: rand_core::RngCore> rand_core::RngCore for BoundedRng<'_, R> {
    fn next_u32(&mut self) -> u32 {
        rand_core::impls::next_u32_via_fill(self)
    }

    fn next_u64(&mut self) -> u64 {
        rand_core::impls::next_u64_via_fill(self)
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        if dest.len() > self.left {
            // Not a panic: no panic hook runs, nothing is printed; `sign` catches it.
            std::panic::resume_unwind(Box::new(AttemptsExhausted));
        }
        self.left -= dest.len();
        self.inner.fill_bytes(dest);
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand_core::Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}

impl<R: rand_core::CryptoRng + rand_core::RngCore> rand_core::CryptoRng for BoundedRng<'_, R> {}

// AlgorithmIdentifier contents for OQS's Falcon OIDs (1.3.9999.3.11 / .14), parameters absent.
const ALG_ID_512: [u8; 7] = [0x06, 0x05, 0x2b, 0xce, 0x0f, 0x03, 0x0b];
const ALG_ID_1024: [u8; 7] = [0x06, 0x05, 0x2b, 0xce, 0x0f, 0x03, 0x0e];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_verify_and_sizes() {
        for alg in [&FALCON_512, &FALCON_1024] {
            let key = alg.generate().expect("key");
            let pk = key.verifying_key();
            assert_eq!(pk.as_bytes().len(), alg.verifying_key_size);
            assert_eq!(
                pk.as_bytes()[0],
                if alg.category == 1 { 0x09 } else { 0x0a }
            );
            let sk = key.expanded().expect("sk");
            assert_eq!(sk.len(), alg.signing_key_size);
            let sig = key.sign(b"m", b"").expect("sign");
            assert!(sig.len() <= alg.signature_size);
            pk.verify(b"m", b"", &sig).expect("verify");
            assert_eq!(pk.verify(b"n", b"", &sig), Err(Error::BadSignature));
            // Round trip through the expanded encoding.
            let again = alg.signing_key_from_expanded(&sk).expect("decode");
            assert_eq!(again.verifying_key(), pk);
            // Every truncation is an error, never a panic.
            for n in 0..sig.len() {
                assert_eq!(
                    pk.verify(b"m", b"", &sig[..n]),
                    Err(Error::BadSignature),
                    "{n}"
                );
            }
            // The padded encoding, and any trailing bytes, are refused: one encoding per
            // signature.
            for extra in 1..=alg.signature_size + 1 - sig.len() {
                for fill in [0u8, 1] {
                    let mut long = sig.clone();
                    long.resize(sig.len() + extra, fill);
                    assert_eq!(pk.verify(b"m", b"", &long), Err(Error::BadSignature));
                }
            }
            assert!(key.sign(b"m", b"ctx").is_err());
            // The long-signature verifier agrees with fn-dsa's on pqkit's own signatures.
            let logn = u32::from(pk.as_bytes()[0]);
            assert!(verify_long(logn, pk.as_bytes(), b"m", &sig));
            assert!(!verify_long(logn, pk.as_bytes(), b"n", &sig));
            let mut bad = sig.clone();
            bad[45] ^= 0x10;
            assert!(!verify_long(logn, pk.as_bytes(), b"m", &bad));
        }
    }

    /// Keys that fn-dsa decodes (G = g·F/f mod q is small) but that are not NTRU bases:
    /// F = f (so G = g: the basis [[g, −f], [G, −F]] is degenerate, f·G − g·F = 0, and fn-dsa's
    /// sampler never finds a short signature — it used to loop forever) and F = G = 0. Both are
    /// refused at load by the NTRU check; no signing attempt is made.
    #[test]
    fn keys_off_the_ntru_equation_are_refused_at_load() {
        for alg in [&FALCON_512, &FALCON_1024] {
            let key = alg.generate().expect("key");
            let sk = key.expanded().expect("sk");
            let logn = u32::from(sk[0] & 0x0f);
            let n = 1usize << logn;
            let nbits = if logn == 9 { 6 } else { 5 };
            let mut f = vec![0i8; n];
            let f_len = fn_dsa_comm::codec::trim_i8_decode(&sk[1..], &mut f, nbits).expect("f");
            let big_f = 1 + 2 * f_len;
            let mut same = sk.to_vec();
            for (b, c) in same[big_f..].iter_mut().zip(&f) {
                *b = *c as u8;
            }
            let mut zero = sk.to_vec();
            zero[big_f..].fill(0);
            for (what, bad) in [("F = f", same), ("F = 0", zero)] {
                assert!(
                    SigningKeyStandard::decode(&bad).is_some(),
                    "{what}: fn-dsa alone accepts it"
                );
                let start = std::time::Instant::now();
                let e = alg.signing_key_from_expanded(&bad).expect_err(what);
                assert!(e.to_string().contains("NTRU"), "{what}: {e}");
                assert!(start.elapsed() < std::time::Duration::from_secs(1));
            }
        }
    }

    /// The signing loop is bounded even for a key that got past the checks: a degenerate key
    /// (F = G = 0) built directly, without `check_key`, gives an error after 64 attempts
    /// instead of spinning.
    #[test]
    fn signing_gives_up_after_a_bounded_number_of_attempts() {
        let key = FALCON_512.generate().expect("key");
        let mut sk = key.expanded().expect("sk");
        sk[1 + 2 * 384..].fill(0);
        let unchecked = FalconSigningKey {
            logn: 9,
            sk,
            verifying_key: key.verifying_key().as_bytes().to_vec(),
        };
        let start = std::time::Instant::now();
        let e = unchecked
            .sign(b"m", b"", SigningRandomness::Hedged)
            .expect_err("no signature from a degenerate key");
        assert!(e.to_string().contains("64 attempts"), "{e}");
        assert!(start.elapsed() < std::time::Duration::from_secs(10));
    }

    /// Honest keys pass the key-generation norm checks, and the Gram–Schmidt norm is computed
    /// the way the specification bounds it (well inside 1.17²·q for generated keys).
    #[test]
    fn generated_keys_pass_the_key_checks() {
        for alg in [&FALCON_512, &FALCON_1024] {
            for _ in 0..3 {
                let key = alg.generate().expect("key");
                let sk = key.expanded().expect("sk");
                let logn = u32::from(sk[0] & 0x0f);
                check_key(logn, &sk).expect("a generated key passes");
            }
        }
    }

    /// A Bouncy Castle 1.86 Falcon-1024 signature of 1282 bytes — longer than fn-dsa's padded
    /// size, within the round-3 compressed maximum — verifies; changed, it does not; with a
    /// byte appended past the maximum, or trailing zeros, it is refused.
    #[test]
    fn long_compressed_signatures_from_other_signers_verify() {
        let data = include_str!("../testdata/falcon1024-bc-long-signature.hex");
        let field = |name: &str| {
            let line = data
                .lines()
                .find_map(|l| l.strip_prefix(name).and_then(|l| l.strip_prefix(' ')))
                .expect("field");
            (0..line.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&line[i..i + 2], 16).expect("hex"))
                .collect::<Vec<u8>>()
        };
        let (pk, msg, sig) = (field("pk"), field("msg"), field("sig"));
        assert!(sig.len() > FALCON_1024.signature_size);
        assert_eq!(
            (compressed_max_size(9), compressed_max_size(10)),
            (752, 1462)
        );
        let vk = FALCON_1024.verifying_key(&pk).expect("BC's public key");
        vk.verify(&msg, b"", &sig).expect("BC's long signature");
        assert_eq!(vk.verify(b"other", b"", &sig), Err(Error::BadSignature));
        for at in [0, 1, 40, 41, 600, sig.len() - 1] {
            let mut bad = sig.clone();
            bad[at] ^= 0x01;
            assert_eq!(vk.verify(&msg, b"", &bad), Err(Error::BadSignature), "{at}");
        }
        let mut long = sig.clone();
        long.resize(1462 + 1, 1);
        assert_eq!(vk.verify(&msg, b"", &long), Err(Error::BadSignature));
        let mut padded = sig.clone();
        padded.push(0);
        assert_eq!(vk.verify(&msg, b"", &padded), Err(Error::BadSignature));
    }
}
