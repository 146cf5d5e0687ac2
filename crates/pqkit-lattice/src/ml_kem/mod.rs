//! ML-KEM (FIPS 203): K-PKE and the ML-KEM internal algorithms for the three parameter sets.
//!
//! The XOF and PRF streams of one operation — the k² SampleNTT streams of Â and the 2k or
//! 2k + 1 SamplePolyCBD streams, and in decapsulation J(z ‖ c)'s blocks — are squeezed
//! together on pqkit-hash's Keccak lanes ([`XofLanes`]), 8 or 4 permutations at once, each
//! stream only as long as its rejection sampling needs. The arithmetic ([`poly`]) is compiled three times — for AVX-512, AVX2 and
//! portable — and the copy run follows the hash path ([`pqkit_hash::dispatch::current`]).
//!
//! The functions that take their randomness as an argument (key generation from d and z,
//! encapsulation from m) are in [`hazmat`]; pqkit-core's `KemAlgorithm` is the everyday API.

mod consts;
mod poly;
mod simd;

use pqkit_hash::{Cleared, Isa, Shake, Sponge, XofLanes};
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use poly::{N, Poly};

/// The largest k (ML-KEM-1024).
const K_MAX: usize = 4;

/// One ML-KEM parameter set (FIPS 203 §8, Table 2): the three statics below are the only
/// values (`non_exhaustive`: no other can be built, so k ≤ 4, η ∈ {2, 3} and d ∈ {4, 5, 10,
/// 11} hold everywhere).
#[derive(Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Params {
    /// The name, e.g. "ML-KEM-768".
    pub name: &'static str,
    /// k: the module rank.
    pub k: usize,
    /// η₁: the CBD parameter of s, e and y.
    pub eta1: usize,
    /// η₂: the CBD parameter of e₁ and e₂.
    pub eta2: usize,
    /// d_u: bits per coefficient of u in the ciphertext.
    pub du: u32,
    /// d_v: bits per coefficient of v in the ciphertext.
    pub dv: u32,
}

/// ML-KEM-512 (FIPS 203 §8, Table 2).
pub static ML_KEM_512: Params = Params {
    name: "ML-KEM-512",
    k: 2,
    eta1: 3,
    eta2: 2,
    du: 10,
    dv: 4,
};
/// ML-KEM-768 (FIPS 203 §8, Table 2).
pub static ML_KEM_768: Params = Params {
    name: "ML-KEM-768",
    k: 3,
    eta1: 2,
    eta2: 2,
    du: 10,
    dv: 4,
};
/// ML-KEM-1024 (FIPS 203 §8, Table 2).
pub static ML_KEM_1024: Params = Params {
    name: "ML-KEM-1024",
    k: 4,
    eta1: 2,
    eta2: 2,
    du: 11,
    dv: 5,
};

impl Params {
    /// Encapsulation key size in bytes: 384·k + 32 (FIPS 203 §8, Table 3).
    pub const fn encapsulation_key_size(&self) -> usize {
        384 * self.k + 32
    }

    /// Decapsulation key size in bytes: 768·k + 96 (FIPS 203 §8, Table 3).
    pub const fn decapsulation_key_size(&self) -> usize {
        768 * self.k + 96
    }

    /// Ciphertext size in bytes: 32·(d_u·k + d_v) (FIPS 203 §8, Table 3).
    pub const fn ciphertext_size(&self) -> usize {
        32 * (self.du as usize * self.k + self.dv as usize)
    }
}

/// A byte string of the wrong length for its parameter set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WrongLength {
    /// What it was: "encapsulation key", "decapsulation key", "ciphertext".
    pub what: &'static str,
    /// The length the parameter set has, in bytes.
    pub expected: usize,
    /// The length given, in bytes.
    pub got: usize,
}

impl core::fmt::Display for WrongLength {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "ML-KEM {} of {} bytes, not {}",
            self.what, self.got, self.expected
        )
    }
}

impl std::error::Error for WrongLength {}

fn check_len(what: &'static str, bytes: &[u8], expected: usize) -> Result<(), WrongLength> {
    if bytes.len() == expected {
        Ok(())
    } else {
        Err(WrongLength {
            what,
            expected,
            got: bytes.len(),
        })
    }
}

/// H(s) = SHA3-256(s) (FIPS 203 §4.1, (4.4)).
fn h(parts: &[&[u8]]) -> [u8; 32] {
    let mut out = [0u8; 32];
    Sponge::Sha3_256.hash(parts, &mut out);
    out
}

/// G(c) = SHA3-512(c), split into two 32-byte halves (FIPS 203 §4.1, (4.5)).
fn g(parts: &[&[u8]]) -> Zeroizing<[u8; 64]> {
    let mut out = Zeroizing::new([0u8; 64]);
    Sponge::Sha3_512.hash(parts, &mut out[..]);
    out
}

/// Squeezes every stream of `x` ([`XofLanes::squeeze_with`]): the first `a.len()` are
/// SampleNTT's XOF (FIPS 203 Algorithm 7) filling `a`; the next `cbd.len()` are PRF_η (FIPS
/// 203 (4.3), 64·η bytes) sampled by SamplePolyCBD_η (Algorithm 8) into `cbd[i]`, η =
/// `etas[i]`; and with `digest`, the last is a long message's hash (H or J, pushed with
/// [`XofLanes::push_long`]), whose first 32 bytes go there. `M` = k² (the Âᵀ streams); `S`
/// is room for the PRF streams (2k + 1).
#[inline(always)]
fn sample<const M: usize, const S: usize>(
    isa: Isa,
    x: &mut XofLanes,
    a: &mut [Poly; M],
    cbd: &mut [Poly],
    etas: &[usize],
    mut digest: Option<&mut [u8; 32]>,
) {
    const RATE_256: usize = 136;
    let mut filled = [0usize; M];
    let mut rejected = [[0i16; poly::REJ_BUF]; M];
    // PRF outputs: at most 192 bytes (η = 3), two SHAKE256 blocks.
    let mut prf = Cleared([[0u8; 2 * RATE_256]; S]);
    let mut got = [0usize; S];
    x.squeeze_with(|x, l| {
        if l < M {
            // Read in place: the kernel loads 32 bytes at once.
            // SampleNTT reads a SHAKE128 stream (push_matrix, k_pke_key_gen): 21 words.
            let block = x.block_words(l).try_into().expect("a SHAKE128 stream");
            filled[l] = poly::rej_uniform(&mut rejected[l], filled[l], block, isa);
            filled[l] >= N
        } else if l < M + etas.len() {
            let i = l - M;
            let need = 64 * etas[i];
            let take = (need - got[i]).min(RATE_256);
            x.block(l, &mut prf[i][got[i]..got[i] + take]);
            got[i] += take;
            got[i] == need
        } else {
            if let Some(d) = digest.as_deref_mut() {
                x.block(l, d);
            }
            true
        }
    });
    for (a, buf) in a.iter_mut().zip(&rejected) {
        poly::from_rejected(buf, a, isa);
    }
    for ((p, buf), &eta) in cbd.iter_mut().zip(prf.iter()).zip(etas) {
        poly::cbd(&buf[..64 * eta], eta, p);
    }
}

/// [`poly::compress_encode`] for d ∈ {4, 5, 10, 11}, the d_u and d_v of Table 2.
#[inline(always)]
fn compress_encode(f: &Poly, d: u32, out: &mut [u8]) {
    match d {
        4 => poly::compress_encode::<4>(f, out),
        5 => poly::compress_encode::<5>(f, out),
        10 => poly::compress_encode::<10>(f, out),
        11 => poly::compress_encode::<11>(f, out),
        _ => unreachable!("ML-KEM has d_u ∈ {{10, 11}}, d_v ∈ {{4, 5}}"),
    }
}

/// [`poly::decode_decompress`] for d ∈ {4, 5, 10, 11}.
#[inline(always)]
fn decode_decompress(b: &[u8], d: u32, f: &mut Poly) {
    match d {
        4 => poly::decode_decompress::<4>(b, f),
        5 => poly::decode_decompress::<5>(b, f),
        10 => poly::decode_decompress::<10>(b, f),
        11 => poly::decode_decompress::<11>(b, f),
        _ => unreachable!("ML-KEM has d_u ∈ {{10, 11}}, d_v ∈ {{4, 5}}"),
    }
}

/// K-PKE.KeyGen(d) (FIPS 203 Algorithm 13): writes ek_PKE (384·k + 32 bytes) and dk_PKE
/// (384·k bytes). `KK` = k², `S` = 2k + 1.
#[inline(always)]
fn k_pke_key_gen<const KK: usize, const S: usize>(
    p: &Params,
    isa: Isa,
    d: &[u8; 32],
    ek: &mut [u8],
    dk: &mut [u8],
) {
    let k = p.k;
    debug_assert_eq!(k * k, KK);
    // Line 1: (ρ, σ) ← G(d ‖ k).
    let rs = g(&[d, &[k as u8]]);
    let (rho, sigma) = rs.split_at(32);
    let mut x = XofLanes::new(isa, k * k + 2 * k);
    // Lines 3–7: Â[i, j] ← SampleNTT(ρ ‖ j ‖ i).
    for i in 0..k {
        for jj in 0..k {
            x.push(Shake::SHAKE128, &[rho, &[jj as u8, i as u8]]);
        }
    }
    // Lines 8–15: s[i], e[i] ← SamplePolyCBD_η₁(PRF_η₁(σ, N)), N = 0 … 2k − 1.
    for n in 0..2 * k {
        x.push(Shake::SHAKE256, &[sigma, &[n as u8]]);
    }
    let mut a = [Poly::ZERO; KK];
    let mut se = Cleared([Poly::ZERO; S]);
    sample::<KK, S>(
        isa,
        &mut x,
        &mut a,
        &mut se[..2 * k],
        &[p.eta1; S][..2 * k],
        None,
    );
    drop(x);
    // Lines 16–17: ŝ ← NTT(s), ê ← NTT(e).
    for v in se[..2 * k].iter_mut() {
        poly::ntt(v, isa);
        poly::reduce(v);
    }
    let (s, e) = se.split_at(k);
    // Line 18: t̂ ← Â ∘ ŝ + ê; lines 19–20: ek ← ByteEncode₁₂(t̂) ‖ ρ, dk ← ByteEncode₁₂(ŝ).
    for i in 0..k {
        let mut t = Poly::ZERO;
        for jj in 0..k {
            poly::base_mul_acc(&mut t, &a[i * k + jj], &s[jj]);
        }
        poly::to_mont(&mut t);
        poly::add(&mut t, &e[i]);
        poly::reduce(&mut t);
        poly::encode12_ntt(&t, &mut ek[384 * i..384 * (i + 1)], isa);
        poly::encode12_ntt(&s[i], &mut dk[384 * i..384 * (i + 1)], isa);
    }
    ek[384 * k..].copy_from_slice(rho);
}

/// What K-PKE.Encrypt samples (FIPS 203 Algorithm 14): Âᵀ (`KK` = k² polynomials) and y,
/// e₁, e₂ (`S` = 2k + 1).
struct Sampled<const KK: usize, const S: usize> {
    at: [Poly; KK],
    ye: Cleared<[Poly; S]>,
}

impl<const KK: usize, const S: usize> Sampled<KK, S> {
    fn new() -> Self {
        Self {
            at: [Poly::ZERO; KK],
            ye: Cleared([Poly::ZERO; S]),
        }
    }
}

/// Pushes K-PKE.Encrypt's Âᵀ streams (FIPS 203 Algorithm 14 lines 4–8: Â[i, j] ←
/// SampleNTT(ρ ‖ j ‖ i); stream (i, j) here is Âᵀ[i, j] = Â[j, i]) from ek's ρ.
fn push_matrix(p: &Params, x: &mut XofLanes, ek: &[u8]) {
    let rho = &ek[384 * p.k..];
    for i in 0..p.k {
        for jj in 0..p.k {
            x.push(Shake::SHAKE128, &[rho, &[i as u8, jj as u8]]);
        }
    }
}

/// Pushes K-PKE.Encrypt's y, e₁, e₂ streams (FIPS 203 Algorithm 14 lines 9–17: PRF(r, N),
/// N = 0 … 2k) and returns their η.
fn push_noise<const S: usize>(p: &Params, x: &mut XofLanes, r: &[u8]) -> [usize; S] {
    for n in 0..=2 * p.k {
        x.push(Shake::SHAKE256, &[r, &[n as u8]]);
    }
    let mut etas = [p.eta2; S];
    etas[..p.k].fill(p.eta1);
    etas
}

/// K-PKE.Encrypt's sampling (FIPS 203 Algorithm 14 lines 4–17) for `ek` and `r` into
/// `sampled`, all streams together on the lanes; with `beside` = (parts, out), SHAKE256 of
/// the parts (J) absorbed with them, its first 32 bytes into `out`.
#[inline(always)]
fn sample_encrypt<const KK: usize, const S: usize>(
    p: &Params,
    isa: Isa,
    ek: &[u8],
    r: &[u8],
    beside: Option<(&[&[u8]], &mut [u8; 32])>,
    sampled: &mut Sampled<KK, S>,
) {
    let k = p.k;
    let mut x = XofLanes::new(isa, k * k + 2 * k + 2);
    push_matrix(p, &mut x, ek);
    let etas = push_noise::<S>(p, &mut x, r);
    let digest = beside.map(|(parts, out)| {
        x.push_long(Sponge::Shake256, parts);
        out
    });
    sample::<KK, S>(
        isa,
        &mut x,
        &mut sampled.at,
        &mut sampled.ye[..2 * k + 1],
        &etas[..2 * k + 1],
        digest,
    );
}

/// K-PKE.Encrypt(ek, m, r) (FIPS 203 Algorithm 14) from line 2, with its sampling (lines
/// 4–17) done by the caller: writes the ciphertext c.
#[inline(always)]
fn k_pke_encrypt<const KK: usize, const S: usize>(
    p: &Params,
    isa: Isa,
    ek: &[u8],
    m: &[u8; 32],
    sampled: &mut Sampled<KK, S>,
    c: &mut [u8],
) {
    let k = p.k;
    // Lines 2–3: t̂ ← ByteDecode₁₂(ek[0 : 384k]) (ρ went to the sampling).
    let mut t = [Poly::ZERO; K_MAX];
    for (i, ti) in t[..k].iter_mut().enumerate() {
        poly::decode12_ntt(&ek[384 * i..384 * (i + 1)], ti, isa);
    }
    let Sampled { at, ye } = sampled;
    let (y, e) = ye.split_at_mut(k);
    // Line 18: ŷ ← NTT(y).
    for v in y[..k].iter_mut() {
        poly::ntt(v, isa);
        poly::reduce(v);
    }
    // Line 19: u ← NTT⁻¹(Âᵀ ∘ ŷ) + e₁; line 22: c₁ ← ByteEncode_du(Compress_du(u)).
    let du = 32 * p.du as usize;
    for i in 0..k {
        let mut u = Cleared(Poly::ZERO);
        for jj in 0..k {
            poly::base_mul_acc(&mut u, &at[i * k + jj], &y[jj]);
        }
        poly::inv_ntt_to_mont(&mut u, isa);
        poly::add(&mut u, &e[i]);
        poly::reduce(&mut u);
        compress_encode(&u, p.du, &mut c[du * i..du * (i + 1)]);
    }
    // Lines 20–21: μ ← Decompress₁(ByteDecode₁(m)), v ← NTT⁻¹(t̂ᵀ ∘ ŷ) + e₂ + μ;
    // line 23: c₂ ← ByteEncode_dv(Compress_dv(v)).
    let mut v = Cleared(Poly::ZERO);
    for jj in 0..k {
        poly::base_mul_acc(&mut v, &t[jj], &y[jj]);
    }
    poly::inv_ntt_to_mont(&mut v, isa);
    poly::add(&mut v, &e[k]);
    let mut mu = Cleared(Poly::ZERO);
    poly::from_message(m, &mut mu);
    poly::add(&mut v, &mu);
    poly::reduce(&mut v);
    compress_encode(&v, p.dv, &mut c[du * k..]);
}

/// K-PKE.Decrypt(dk, c) (FIPS 203 Algorithm 15): the message m.
#[inline(always)]
fn k_pke_decrypt(p: &Params, isa: Isa, dk: &[u8], c: &[u8]) -> Zeroizing<[u8; 32]> {
    let k = p.k;
    let du = 32 * p.du as usize;
    let mut w = Cleared(Poly::ZERO);
    let mut s = Cleared(Poly::ZERO);
    let mut u = Poly::ZERO;
    for i in 0..k {
        // Line 3: u′ ← Decompress_du(ByteDecode_du(c₁)); line 5: ŝ ← ByteDecode₁₂(dk).
        decode_decompress(&c[du * i..du * (i + 1)], p.du, &mut u);
        poly::decode12_ntt(&dk[384 * i..384 * (i + 1)], &mut s, isa);
        // Line 6: ŝᵀ ∘ NTT(u′).
        poly::ntt(&mut u, isa);
        poly::reduce(&mut u);
        poly::base_mul_acc(&mut w, &s, &u);
    }
    poly::inv_ntt_to_mont(&mut w, isa);
    // Line 4: v′ ← Decompress_dv(ByteDecode_dv(c₂)); line 6: w ← v′ − NTT⁻¹(ŝᵀ ∘ NTT(u′)).
    let mut v = Cleared(Poly::ZERO);
    decode_decompress(&c[du * k..], p.dv, &mut v);
    poly::sub_from(&mut w, &v);
    poly::reduce(&mut w);
    // Line 7: m ← ByteEncode₁(Compress₁(w)).
    let mut m = Zeroizing::new([0u8; 32]);
    poly::to_message(&w, &mut m);
    m
}

/// Calls `$f::<KK, S>(…)` with KK = k² and S = 2k + 1 for the parameter set's k (2, 3 or 4):
/// the buffers of Â, of its rejection sampling and of the noise then have as many entries as
/// k needs, not as the largest k (each is zeroed before use and the secret ones wiped after:
/// ML-KEM-512's are a quarter to a half of the size).
macro_rules! with_rank {
    ($k:expr, $f:ident($($arg:expr),* $(,)?)) => {
        match $k {
            2 => $f::<4, 5>($($arg),*),
            3 => $f::<9, 7>($($arg),*),
            _ => $f::<16, 9>($($arg),*),
        }
    };
}

/// ML-KEM.KeyGen_internal(d, z) (FIPS 203 Algorithm 16) on a path.
#[inline(always)]
fn key_gen_any(isa: Isa, p: &Params, d: &[u8; 32], z: &[u8; 32], ek: &mut [u8], dk: &mut [u8]) {
    with_rank!(p.k, key_gen_kk(isa, p, d, z, ek, dk));
}

/// [`key_gen_any`] for KK = k², S = 2k + 1.
#[inline(always)]
fn key_gen_kk<const KK: usize, const S: usize>(
    isa: Isa,
    p: &Params,
    d: &[u8; 32],
    z: &[u8; 32],
    ek: &mut [u8],
    dk: &mut [u8],
) {
    let k = p.k;
    k_pke_key_gen::<KK, S>(p, isa, d, ek, &mut dk[..384 * k]);
    // Line 3: dk ← dk_PKE ‖ ek ‖ H(ek) ‖ z.
    dk[384 * k..768 * k + 32].copy_from_slice(ek);
    dk[768 * k + 32..768 * k + 64].copy_from_slice(&h(&[ek]));
    dk[768 * k + 64..].copy_from_slice(z);
}

/// ML-KEM.Encaps_internal(ek, m) (FIPS 203 Algorithm 17) on a path: writes c, returns K.
#[inline(always)]
fn encaps_any(isa: Isa, p: &Params, ek: &[u8], m: &[u8; 32], c: &mut [u8]) -> Zeroizing<[u8; 32]> {
    with_rank!(p.k, encaps_kk(isa, p, ek, m, c))
}

/// [`encaps_any`] for KK = k², S = 2k + 1.
#[inline(always)]
fn encaps_kk<const KK: usize, const S: usize>(
    isa: Isa,
    p: &Params,
    ek: &[u8],
    m: &[u8; 32],
    c: &mut [u8],
) -> Zeroizing<[u8; 32]> {
    // Line 1: (K, r) ← G(m ‖ H(ek)). H(ek) runs alone: the noise streams need r, so riding
    // it beside the Âᵀ streams would take a second set of lanes for them, which costs what
    // its lone permutations do.
    let kr = g(&[m, &h(&[ek])]);
    // Line 2: c ← K-PKE.Encrypt(ek, m, r), its streams together.
    let mut sampled = Sampled::<KK, S>::new();
    sample_encrypt(p, isa, ek, &kr[32..], None, &mut sampled);
    k_pke_encrypt(p, isa, ek, m, &mut sampled, c);
    let mut key = Zeroizing::new([0u8; 32]);
    key.copy_from_slice(&kr[..32]);
    key
}

/// ML-KEM.Decaps_internal(dk, c) (FIPS 203 Algorithm 18) on a path: K.
#[inline(always)]
fn decaps_any(isa: Isa, p: &Params, dk: &[u8], c: &[u8]) -> Zeroizing<[u8; 32]> {
    with_rank!(p.k, decaps_kk(isa, p, dk, c))
}

/// [`decaps_any`] for KK = k², S = 2k + 1.
#[inline(always)]
fn decaps_kk<const KK: usize, const S: usize>(
    isa: Isa,
    p: &Params,
    dk: &[u8],
    c: &[u8],
) -> Zeroizing<[u8; 32]> {
    let k = p.k;
    // Lines 1–4: dk_PKE, ek_PKE, h, z.
    let (dk_pke, rest) = dk.split_at(384 * k);
    let (ek, rest) = rest.split_at(384 * k + 32);
    let (hh, z) = rest.split_at(32);
    // Line 5: m′ ← K-PKE.Decrypt(dk_PKE, c).
    let m = k_pke_decrypt(p, isa, dk_pke, c);
    // Line 6: (K′, r′) ← G(m′ ‖ h); line 7: K̄ ← J(z ‖ c), absorbed on the lanes beside
    // line 8's sampling.
    let kr = g(&[&m[..], hh]);
    let mut reject = Zeroizing::new([0u8; 32]);
    let mut sampled = Sampled::<KK, S>::new();
    let j = Some((&[z, c][..], &mut *reject));
    sample_encrypt(p, isa, ek, &kr[32..], j, &mut sampled);
    // Line 8: c′ ← K-PKE.Encrypt(ek_PKE, m′, r′).
    let mut c2 = Cleared([0u8; 1568]);
    let c2 = &mut c2[..c.len()];
    k_pke_encrypt(p, isa, ek, &m, &mut sampled, c2);
    // Lines 9–11: K′ unless c ≠ c′, then K̄ — compared over the whole ciphertext and
    // selected in constant time.
    // The mask is all ones when c = c′ (subtle's `Choice` keeps the compiler from turning
    // the selection into a branch; its own `conditional_select` negates with an overflow
    // check in test builds, a branch on the secret that the Valgrind test would report).
    let mask = 0u8.wrapping_sub(ct_equal(c, c2).unwrap_u8());
    let mut key = Zeroizing::new([0u8; 32]);
    for ((o, a), b) in key.iter_mut().zip(&kr[..32]).zip(reject.iter()) {
        *o = (a & mask) | (b & !mask);
    }
    key
}

/// Whether a = b (equal lengths), in time independent of their contents: the XOR of every
/// 8-byte word folded with OR, then one constant-time comparison with zero.
#[inline(always)]
fn ct_equal(a: &[u8], b: &[u8]) -> subtle::Choice {
    let (wa, ra) = a.as_chunks::<8>();
    let (wb, rb) = b.as_chunks::<8>();
    let mut diff = wa.iter().zip(wb).fold(0u64, |d, (x, y)| {
        d | (u64::from_le_bytes(*x) ^ u64::from_le_bytes(*y))
    });
    for (x, y) in ra.iter().zip(rb) {
        diff |= u64::from(x ^ y);
    }
    diff.ct_eq(&0)
}

/// ML-KEM.Decaps (FIPS 203 Algorithm 21, with Algorithm 18): the 32-byte shared secret of
/// ciphertext `c` under decapsulation key `dk`, on the current path. An invalid ciphertext of
/// the right length yields the implicit-rejection key J(z ‖ c), as the standard requires.
///
/// The decapsulation key is not checked here (FIPS 203 §7.3: once, when it is loaded;
/// [`check_decapsulation_key`]).
///
/// # Errors
/// [`WrongLength`] when `dk` is not 768·k + 96 bytes or `c` not 32·(d_u·k + d_v).
pub fn decapsulate(p: &Params, dk: &[u8], c: &[u8]) -> Result<Zeroizing<[u8; 32]>, WrongLength> {
    check_len("decapsulation key", dk, p.decapsulation_key_size())?;
    check_len("ciphertext", c, p.ciphertext_size())?;
    Ok(simd::decaps_on(pqkit_hash::dispatch::current(), p, dk, c))
}

/// FIPS 203 §7.2's encapsulation key check: the length (384·k + 32 bytes) and the modulus
/// check (every 12-bit coefficient of t̂ below q).
pub fn check_encapsulation_key(p: &Params, ek: &[u8]) -> bool {
    if ek.len() != p.encapsulation_key_size() {
        return false;
    }
    let mut t = Poly::ZERO;
    ek[..384 * p.k].chunks_exact(384).all(|b| {
        poly::decode12_raw(b, &mut t);
        poly::all_below_q(&t)
    })
}

/// FIPS 203 §7.3's decapsulation key check: the length (768·k + 96 bytes) and the hash
/// check H(dk\[384k : 768k + 32\]) = dk\[768k + 32 : 768k + 64\] (compared in constant time).
pub fn check_decapsulation_key(p: &Params, dk: &[u8]) -> bool {
    let k = p.k;
    if dk.len() != p.decapsulation_key_size() {
        return false;
    }
    h(&[&dk[384 * k..768 * k + 32]])
        .ct_eq(&dk[768 * k + 32..768 * k + 64])
        .into()
}

/// The ML-KEM algorithms that take their randomness as arguments: for seed-form keys and
/// known-answer tests. Randomness from anything but a cryptographic RNG (FIPS 203 §3.3) breaks
/// the scheme.
pub mod hazmat {
    use super::*;

    /// ML-KEM.KeyGen_internal(d, z) (FIPS 203 Algorithm 16): writes the encapsulation key
    /// (384·k + 32 bytes) into `ek` and the decapsulation key (768·k + 96 bytes) into `dk`,
    /// on the current path. FIPS 203 §7.1's seed d ‖ z is 64 bytes.
    ///
    /// # Errors
    /// [`WrongLength`] when `ek` or `dk` has the wrong length.
    pub fn key_gen_internal(
        p: &Params,
        d: &[u8; 32],
        z: &[u8; 32],
        ek: &mut [u8],
        dk: &mut [u8],
    ) -> Result<(), WrongLength> {
        check_len("encapsulation key", ek, p.encapsulation_key_size())?;
        check_len("decapsulation key", dk, p.decapsulation_key_size())?;
        simd::key_gen_on(pqkit_hash::dispatch::current(), p, d, z, ek, dk);
        Ok(())
    }

    /// ML-KEM.Encaps_internal(ek, m) (FIPS 203 Algorithm 17): writes the ciphertext
    /// (32·(d_u·k + d_v) bytes) into `c` and returns the 32-byte shared secret K, on the
    /// current path. The encapsulation key is not checked here (FIPS 203 §7.2:
    /// [`check_encapsulation_key`]).
    ///
    /// # Errors
    /// [`WrongLength`] when `ek` or `c` has the wrong length.
    pub fn encaps_internal(
        p: &Params,
        ek: &[u8],
        m: &[u8; 32],
        c: &mut [u8],
    ) -> Result<Zeroizing<[u8; 32]>, WrongLength> {
        check_len("encapsulation key", ek, p.encapsulation_key_size())?;
        check_len("ciphertext", c, p.ciphertext_size())?;
        Ok(simd::encaps_on(
            pqkit_hash::dispatch::current(),
            p,
            ek,
            m,
            c,
        ))
    }
}

crate::stats::ntt_pairs!();

#[cfg(test)]
mod tests;
