//! ML-DSA (FIPS 204): key generation, signing and verification of the three parameter sets,
//! from μ on (Algorithms 6, 7 and 8, the internal functions).
//!
//! The XOF streams of one operation are squeezed together on pqkit-hash's Keccak lanes
//! ([`XofLanes`]): key generation's k·ℓ RejNTTPoly streams of Â and k + ℓ RejBoundedPoly
//! streams of s₁ and s₂; verification's k·ℓ streams of Â with SampleInBall's stream of c̃
//! and, given M′, tr = H(pk)'s blocks; signing's ℓ ExpandMask streams of y, each attempt's
//! with the previous attempt's c̃ = H(μ ‖ w1Encode(w₁)). The arithmetic ([`poly`]) is
//! compiled three times — for AVX-512, AVX2 and portable — and the copy run follows the hash
//! path ([`pqkit_hash::dispatch::current`]).
//!
//! A [`SigningKey`] keeps what every signature needs — Â (public, from ρ) in the NTT domain,
//! and from its first signature on s₁ and s₂ laid out for the challenge products cs₁ and cs₂
//! (sums of τ shifted copies: fewer operations than an inverse NTT each) and t̂₀ — so that
//! signing starts at FIPS 204 Algorithm 7 line 7. Loading an expanded key recomputes t from
//! ρ, s₁ and s₂ and refuses the key unless its t₀ and tr match (FIPS 204 §7.2's skDecode
//! checks nothing; a damaged t₀ would make signatures that do not verify).
//!
//! μ for signing (Algorithm 2 lines 5–10, Algorithm 7 line 6) is the caller's: pqkit-core's
//! signing keys format M′ — pure, HashML-DSA or external μ — and hash it; verification takes
//! M′ ([`verify`]) or μ ([`verify_mu`]), from the encoded key or from a [`VerifyingKey`] that
//! keeps Â and tr for the next signature under it. The functions that take ξ or `rnd` as an
//! argument are in [`hazmat`].

mod consts;
mod poly;
mod simd;

use pqkit_hash::{Absorber, Cleared, Shake, Sponge, Wiped, XofLanes, Zero};
use std::sync::OnceLock;
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use crate::valgrind;
use poly::{Challenge, D, N, Poly, Q, Shifts, Short};

/// The largest k (ML-DSA-87).
const K_MAX: usize = 8;
/// The largest ℓ (ML-DSA-87).
const L_MAX: usize = 7;
/// Size of μ in bytes (FIPS 204 Algorithm 7 line 6).
pub const MU_SIZE: usize = 64;
/// Size of ξ in bytes (FIPS 204 Algorithm 1 line 1).
pub const SEED_SIZE: usize = 32;
/// Size of `rnd` in bytes (FIPS 204 Algorithm 2 line 5).
pub const RND_SIZE: usize = 32;

/// One ML-DSA parameter set (FIPS 204 §4, Table 1): the three statics below are the only
/// values (`non_exhaustive`), so k ≤ 8, ℓ ≤ 7, η ∈ {2, 4} and γ₁ ∈ {2^17, 2^19} hold
/// everywhere.
#[derive(Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Params {
    /// The name, e.g. "ML-DSA-65".
    pub name: &'static str,
    /// k: rows of Â.
    pub k: usize,
    /// ℓ: columns of Â.
    pub l: usize,
    /// η: the bound of s₁ and s₂'s coefficients.
    pub eta: i32,
    /// τ: the number of ±1 in c.
    pub tau: usize,
    /// λ: the collision strength of c̃, in bits (c̃ is λ/4 bytes).
    pub lambda: usize,
    /// log₂ γ₁: y's coefficient range.
    pub gamma1_bits: u32,
    /// γ₂: the low-order rounding range.
    pub gamma2: i32,
    /// β = τ·η.
    pub beta: i32,
    /// ω: the most ones in the hint h.
    pub omega: usize,
}

/// ML-DSA-44 (FIPS 204 §4, Table 1).
pub static ML_DSA_44: Params = Params {
    name: "ML-DSA-44",
    k: 4,
    l: 4,
    eta: 2,
    tau: 39,
    lambda: 128,
    gamma1_bits: 17,
    gamma2: (Q - 1) / 88,
    beta: 78,
    omega: 80,
};
/// ML-DSA-65 (FIPS 204 §4, Table 1).
pub static ML_DSA_65: Params = Params {
    name: "ML-DSA-65",
    k: 6,
    l: 5,
    eta: 4,
    tau: 49,
    lambda: 192,
    gamma1_bits: 19,
    gamma2: (Q - 1) / 32,
    beta: 196,
    omega: 55,
};
/// ML-DSA-87 (FIPS 204 §4, Table 1).
pub static ML_DSA_87: Params = Params {
    name: "ML-DSA-87",
    k: 8,
    l: 7,
    eta: 2,
    tau: 60,
    lambda: 256,
    gamma1_bits: 19,
    gamma2: (Q - 1) / 32,
    beta: 120,
    omega: 75,
};

impl Params {
    /// Verifying key size in bytes: 32 + 32·k·(bitlen(q − 1) − d) (FIPS 204 §4, Table 2).
    pub const fn verifying_key_size(&self) -> usize {
        32 + 320 * self.k
    }

    /// Expanded signing key size in bytes: 128 + 32·((k + ℓ)·bitlen(2η) + d·k) (Table 2).
    pub const fn signing_key_size(&self) -> usize {
        128 + 32 * ((self.k + self.l) * self.eta_bits() + D as usize * self.k)
    }

    /// Signature size in bytes: λ/4 + 32·ℓ·(1 + bitlen(γ₁ − 1)) + ω + k (Table 2).
    pub const fn signature_size(&self) -> usize {
        self.c_tilde_size() + self.l * self.z_size() + self.omega + self.k
    }

    /// bitlen(2η): bits per packed coefficient of s₁ and s₂.
    const fn eta_bits(&self) -> usize {
        if self.eta == 2 { 3 } else { 4 }
    }

    /// λ/4: the size of c̃ in bytes.
    const fn c_tilde_size(&self) -> usize {
        self.lambda / 4
    }

    /// 32·(1 + bitlen(γ₁ − 1)): the packed size of one polynomial of z (and of y's stream).
    const fn z_size(&self) -> usize {
        32 * (1 + self.gamma1_bits as usize)
    }

    /// bitlen((q − 1)/(2γ₂) − 1): bits per coefficient of w₁Encode.
    const fn w1_bits(&self) -> usize {
        if self.gamma2 == (Q - 1) / 88 { 6 } else { 4 }
    }
}

/// Why ML-DSA refused an input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A byte string of the wrong length for its parameter set.
    WrongLength {
        /// What it was: "signing key", "signature", …
        what: &'static str,
        /// The length the parameter set has, in bytes.
        expected: usize,
        /// The length given, in bytes.
        got: usize,
    },
    /// An expanded signing key that is not one ML-DSA.KeyGen makes: what was refused and why,
    /// e.g. "ML-DSA expanded private key (t₀ or tr is not …)".
    InvalidSigningKey(&'static str),
}

impl core::fmt::Display for Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::WrongLength {
                what,
                expected,
                got,
            } => write!(f, "ML-DSA {what} of {got} bytes, not {expected}"),
            Self::InvalidSigningKey(why) => write!(f, "invalid {why}"),
        }
    }
}

impl std::error::Error for Error {}

fn check_len(what: &'static str, bytes: &[u8], expected: usize) -> Result<(), Error> {
    if bytes.len() == expected {
        Ok(())
    } else {
        Err(Error::WrongLength {
            what,
            expected,
            got: bytes.len(),
        })
    }
}

/// H(parts, out.len()) = SHAKE256 (FIPS 204 §3.7), one stream.
fn h(parts: &[&[u8]], out: &mut [u8]) {
    Sponge::Shake256.hash(parts, out);
}

/// The message representative μ = H(tr ‖ M′, 64) (FIPS 204 Algorithm 7 line 6, Algorithm 8
/// line 7), M′ the concatenation of `m_prime` (for pure ML-DSA, 0 ‖ |ctx| ‖ ctx ‖ M,
/// Algorithm 2 line 10; for HashML-DSA, 1 ‖ |ctx| ‖ ctx ‖ OID ‖ PH(M), Algorithm 4 line 23).
/// 64 bytes. The one computation of μ in pqkit: signing, verification, external μ and the
/// token all come here or to [`MuHasher`].
pub fn mu(tr: &[u8; 64], m_prime: &[&[u8]]) -> [u8; MU_SIZE] {
    MuHasher::from_tr(tr, m_prime).finalize()
}

/// [`mu`] of a message fed in pieces (a file streamed through, a token's C_SignUpdate):
/// SHAKE256 absorbing tr, M′'s prefix and then each piece, on pqkit-hash's sponge.
#[derive(Debug)]
pub struct MuHasher(Absorber);

impl MuHasher {
    /// Starts μ for the encoded verifying key `pk` (tr = H(pk, 64), FIPS 204 Algorithm 6
    /// line 3) with the formatted prefix of M′ (`0 ‖ |ctx| ‖ ctx` for pure ML-DSA; empty for
    /// the internal interface).
    pub fn new(pk: &[u8], prefix: &[&[u8]]) -> Self {
        let mut tr = [0u8; 64];
        h(&[pk], &mut tr);
        Self::from_tr(&tr, prefix)
    }

    /// Starts μ from tr (64 bytes) and M′'s prefix.
    pub fn from_tr(tr: &[u8; 64], prefix: &[&[u8]]) -> Self {
        let mut a = Sponge::Shake256.absorber();
        a.update(tr);
        for p in prefix {
            a.update(p);
        }
        Self(a)
    }

    /// Feeds the next piece of the message.
    pub fn update(&mut self, piece: &[u8]) {
        self.0.update(piece);
    }

    /// μ, 64 bytes.
    pub fn finalize(self) -> [u8; MU_SIZE] {
        let mut out = [0u8; MU_SIZE];
        self.0.finalize(&mut out);
        out
    }
}

/// A consumer of one XOF stream, a block at a time.
enum Sampler<'a> {
    /// RejNTTPoly (FIPS 204 Algorithm 30) into an element of T_q, from SHAKE128.
    Uniform { a: &'a mut Poly, filled: usize },
    /// RejBoundedPoly (FIPS 204 Algorithm 31), from SHAKE256.
    Bounded {
        a: &'a mut Poly,
        filled: usize,
        eta: i32,
    },
    /// The first `out.len()` bytes of a SHAKE256 stream (ExpandMask, Algorithm 34 line 4).
    Bytes { out: &'a mut [u8], got: usize },
    /// SampleInBall (FIPS 204 Algorithm 29), from SHAKE256; `a` starts at zero, `i` at 256 − τ.
    Ball {
        a: &'a mut Poly,
        signs: u64,
        i: usize,
        started: bool,
    },
}

impl Sampler<'_> {
    /// Takes stream `lane`'s current block from `x`; whether the sampler has all it needs.
    /// RejNTTPoly reads the state in place (its kernels load 32 or 64 bytes at once), a byte
    /// stream is copied straight to its output, and RejBoundedPoly and SampleInBall read a
    /// copy of their SHAKE256 block in `block`.
    #[inline(always)]
    fn take(
        &mut self,
        x: &XofLanes,
        lane: usize,
        block: &mut [u8; 136],
        isa: pqkit_hash::Isa,
    ) -> bool {
        match self {
            Self::Uniform { a, filled } => {
                // A RejNTTPoly sampler reads a SHAKE128 stream (expand_a pushes it): 21 words.
                let words = x.block_words(lane).try_into().expect("a SHAKE128 stream");
                *filled = poly::rej_ntt(a, *filled, words, isa);
                *filled == N
            }
            Self::Bounded { a, filled, eta } => {
                x.block(lane, block);
                *filled = poly::rej_eta(a, *filled, block, *eta, isa);
                *filled == N
            }
            Self::Bytes { out, got } => {
                let take = (out.len() - *got).min(136);
                x.block(lane, &mut out[*got..*got + take]);
                *got += take;
                *got == out.len()
            }
            Self::Ball {
                a,
                signs,
                i,
                started,
            } => {
                x.block(lane, block);
                let mut bytes = &block[..];
                if !*started {
                    // Lines 4–5: the first 8 bytes are the 64 sign bits h.
                    let (first, rest) = bytes.split_at(8);
                    *signs = u64::from_le_bytes(first.try_into().unwrap_or([0; 8]));
                    bytes = rest;
                    *started = true;
                }
                // Lines 6–11: j ≤ i by rejection; c_i ← c_j, c_j ← (−1)^h[i + τ − 256].
                // Variable time OK: c̃ is public (the signature's challenge; declassified in
                // signing).
                for &j in bytes {
                    if *i == N {
                        break;
                    }
                    let j = usize::from(j);
                    if j > *i {
                        continue;
                    }
                    a.0[*i] = a.0[j];
                    a.0[j] = 1 - 2 * (*signs & 1) as i32;
                    *signs >>= 1;
                    *i += 1;
                }
                *i == N
            }
        }
    }
}

/// Squeezes every stream of `x` into its sampler (`s[i]` consumes stream i) until each has
/// what it needs ([`XofLanes::squeeze_with`]).
#[inline(always)]
fn squeeze(isa: pqkit_hash::Isa, x: &mut XofLanes, s: &mut [Sampler<'_>]) {
    let mut block = Cleared([0u8; 136]);
    x.squeeze_with(|x, l| s[l].take(x, l, &mut block, isa));
}

/// Pushes ExpandA's streams (FIPS 204 Algorithm 32): Â[r, s] from SHAKE128(ρ ‖ s ‖ r), row
/// by row, and returns their samplers over `a` (k·ℓ polynomials).
fn expand_a<'a>(p: &Params, x: &mut XofLanes, rho: &[u8], a: &'a mut [Poly]) -> Vec<Sampler<'a>> {
    let mut out = Vec::with_capacity(a.len() + p.k + p.l + 1);
    for (i, ai) in a.iter_mut().enumerate() {
        let (r, s) = (i / p.l, i % p.l);
        x.push(Shake::SHAKE128, &[rho, &[s as u8, r as u8]]);
        out.push(Sampler::Uniform { a: ai, filled: 0 });
    }
    out
}

/// Pushes ExpandMask's streams (FIPS 204 Algorithm 34 line 4: y[r] from SHAKE256(ρ″ ‖
/// IntegerToBytes(κ + r, 2)), r < ℓ) and their samplers, the first 32·(1 + bitlen(γ₁ − 1))
/// bytes of each into `out[r]`.
fn push_mask<'a>(
    p: &Params,
    x: &mut XofLanes,
    rho2: &[u8],
    kappa: u16,
    out: &'a mut [[u8; 640]; L_MAX],
    s: &mut Vec<Sampler<'a>>,
) {
    for (r, o) in out[..p.l].iter_mut().enumerate() {
        x.push(
            Shake::SHAKE256,
            &[rho2, &kappa.wrapping_add(r as u16).to_le_bytes()],
        );
        s.push(Sampler::Bytes {
            out: &mut o[..p.z_size()],
            got: 0,
        });
    }
}

/// ExpandMask's bytes (at most ℓ streams of 640) for the current signing attempt and up to
/// two after it, in a ring of three slots.
struct MaskRing {
    slots: Cleared<[[[u8; 640]; L_MAX]; 3]>,
    /// The current attempt's slot; the b-th attempt after it has slot `now + b` (mod 3).
    now: usize,
}

impl MaskRing {
    fn new() -> Self {
        Self {
            slots: Cleared([[[0u8; 640]; L_MAX]; 3]),
            now: 0,
        }
    }

    /// The current attempt's streams.
    fn current(&self) -> &[[u8; 640]; L_MAX] {
        &self.slots[self.now]
    }

    /// Moves on to the next attempt.
    fn advance(&mut self) {
        self.now = (self.now + 1) % 3;
    }

    /// Pushes y ← ExpandMask(ρ″, κ + b·ℓ) ([`push_mask`]) for each attempt b in `attempts`
    /// (counted from the current one, 0), into its slot.
    fn push<'a>(
        &'a mut self,
        p: &Params,
        x: &mut XofLanes,
        rho2: &[u8],
        kappa: u16,
        attempts: core::ops::RangeInclusive<usize>,
        s: &mut Vec<Sampler<'a>>,
    ) {
        for (slot, out) in self.slots.iter_mut().enumerate() {
            let b = (slot + 3 - self.now) % 3;
            if attempts.contains(&b) {
                push_mask(p, x, rho2, kappa.wrapping_add((b * p.l) as u16), out, s);
            }
        }
    }
}

/// Pushes SampleInBall's stream of c̃ (FIPS 204 Algorithm 29) and its sampler over `c`.
fn sample_in_ball<'a>(
    p: &Params,
    x: &mut XofLanes,
    c_tilde: &[u8],
    c: &'a mut Poly,
    s: &mut Vec<Sampler<'a>>,
) {
    *c = Poly::ZERO;
    x.push(Shake::SHAKE256, &[c_tilde]);
    s.push(Sampler::Ball {
        a: c,
        signs: 0,
        i: N - p.tau,
        started: false,
    });
}

/// BitPack(s, η, η) (FIPS 204 Algorithm 17) of a polynomial of s₁ or s₂.
#[inline(always)]
fn pack_eta(p: &Params, a: &Poly, out: &mut [u8]) {
    let eta = p.eta;
    match p.eta_bits() {
        3 => poly::pack::<3>(a, |x| (eta - x) as u32, out),
        _ => poly::pack::<4>(a, |x| (eta - x) as u32, out),
    }
}

/// BitUnpack(b, η, η) (FIPS 204 Algorithm 19); false when a coefficient is outside [−η, η]
/// (a packed value above 2η, which no key generation writes).
#[inline(always)]
fn unpack_eta(p: &Params, b: &[u8], a: &mut Poly) -> bool {
    let eta = p.eta;
    match p.eta_bits() {
        3 => poly::unpack::<3>(b, |x| eta - x as i32, a),
        _ => poly::unpack::<4>(b, |x| eta - x as i32, a),
    }
    !poly::exceeds(a, eta + 1)
}

/// BitPack(t₀, 2^(d−1) − 1, 2^(d−1)) (FIPS 204 Algorithm 17).
#[inline(always)]
fn pack_t0(a: &Poly, out: &mut [u8]) {
    poly::pack::<13>(a, |x| ((1 << (D - 1)) - x) as u32, out);
}

/// BitUnpack(b, 2^(d−1) − 1, 2^(d−1)) (FIPS 204 Algorithm 19).
#[inline(always)]
fn unpack_t0(b: &[u8], a: &mut Poly) {
    poly::unpack::<13>(b, |x| (1 << (D - 1)) - x as i32, a);
}

/// BitPack(z, γ₁ − 1, γ₁) (FIPS 204 Algorithm 17), 18 or 20 bits per coefficient.
#[inline(always)]
fn pack_z(p: &Params, a: &Poly, out: &mut [u8]) {
    let g1 = 1i32 << p.gamma1_bits;
    match p.gamma1_bits {
        17 => poly::pack::<18>(a, |x| (g1 - x) as u32, out),
        _ => poly::pack::<20>(a, |x| (g1 - x) as u32, out),
    }
}

/// BitUnpack(b, γ₁ − 1, γ₁) (FIPS 204 Algorithm 19): z of a signature, y of ExpandMask.
#[inline(always)]
fn unpack_z(p: &Params, b: &[u8], a: &mut Poly) {
    let g1 = 1i32 << p.gamma1_bits;
    match p.gamma1_bits {
        17 => poly::unpack::<18>(b, |x| g1 - x as i32, a),
        _ => poly::unpack::<20>(b, |x| g1 - x as i32, a),
    }
}

/// w₁Encode (FIPS 204 Algorithm 28) of one polynomial: SimpleBitPack(w₁, (q − 1)/(2γ₂) − 1).
#[inline(always)]
fn pack_w1(p: &Params, a: &Poly, out: &mut [u8]) {
    match p.w1_bits() {
        6 => poly::pack::<6>(a, |x| x as u32, out),
        _ => poly::pack::<4>(a, |x| x as u32, out),
    }
}

/// HintBitPack (FIPS 204 Algorithm 20): the positions of the ones of `h` (k polynomials of
/// 0/1, at most ω ones), then each polynomial's running count; ω + k bytes. Variable time OK:
/// h is the signature's, public. Without a branch per coefficient (about ω of k·256 are ones,
/// at random places: a branch on each was mispredicted ω times or more): every position is
/// written at the next free slot of `at`, which advances by the coefficient.
fn hint_pack(p: &Params, h: &[Poly], out: &mut [u8]) {
    // ω ≤ 80 (ML-DSA-44; 55 and 75 for ML-DSA-65, -87); the slot after the last one takes
    // the zeros' writes.
    const OMEGA_MAX: usize = 80;
    debug_assert!(p.omega <= OMEGA_MAX);
    let mut at = [0u8; OMEGA_MAX + 1];
    let mut index = 0;
    for (i, hp) in h.iter().enumerate() {
        for (j, &bit) in hp.0.iter().enumerate() {
            at[index.min(OMEGA_MAX)] = j as u8;
            index += usize::from(bit != 0);
        }
        out[p.omega + i] = index as u8;
    }
    // Signing packs only hints with at most ω ones.
    debug_assert!(index <= p.omega);
    let index = index.min(p.omega);
    out[..index].copy_from_slice(&at[..index]);
    out[index..p.omega].fill(0);
}

/// HintBitUnpack (FIPS 204 Algorithm 21) into `h` (k polynomials of 0/1); false for a
/// malformed encoding: a count that decreases or exceeds ω, positions not strictly
/// increasing within a polynomial, or a nonzero byte after the last position.
fn hint_unpack(p: &Params, y: &[u8], h: &mut [Poly]) -> bool {
    let mut index = 0;
    for (i, hp) in h.iter_mut().enumerate() {
        *hp = Poly::ZERO;
        let end = usize::from(y[p.omega + i]);
        if end < index || end > p.omega {
            return false;
        }
        let first = index;
        while index < end {
            if index > first && y[index - 1] >= y[index] {
                return false;
            }
            hp.0[usize::from(y[index])] = 1;
            index += 1;
        }
    }
    y[index..p.omega].iter().all(|&b| b == 0)
}

/// A signing key, ready to sign: ρ, K, tr, the encoded key, and Â in the NTT domain; s₁ and
/// s₂ laid out for the challenge products, and t̂₀, join them at the first signature. Secrets
/// are wiped on drop; `Debug` shows the parameter set only.
pub struct SigningKey {
    p: &'static Params,
    /// K, on the heap: moving the key (it is returned by value, then boxed) copies a pointer,
    /// not the secret.
    key: Box<Cleared<[u8; 32]>>,
    tr: [u8; 64],
    /// Â, k·ℓ polynomials, row by row (public: expanded from ρ).
    a: Vec<Poly>,
    /// s₁, s₂ and t̂₀, from `encoded` at the first signature: key generation and loading
    /// skip the work a key that only gets written to a file, or only verified, never needs.
    signing: OnceLock<SigningParts>,
    /// skEncode (FIPS 204 Algorithm 24).
    encoded: Zeroizing<Vec<u8>>,
    /// pkEncode (FIPS 204 Algorithm 22).
    verifying_key: Vec<u8>,
}

impl core::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SigningKey")
            .field("params", &self.p.name)
            .finish_non_exhaustive()
    }
}

impl SigningKey {
    /// skDecode (FIPS 204 Algorithm 25) of an expanded signing key, checked: every coefficient
    /// of s₁ and s₂ in [−η, η], and t₀ and tr equal to what ρ, s₁ and s₂ give (t = Â·s₁ + s₂,
    /// Power2Round; tr = H(pkEncode(ρ, t₁), 64)), compared in constant time. The verifying
    /// key is the one recomputed.
    ///
    /// # Errors
    /// [`Error::WrongLength`] when `sk` is not [`Params::signing_key_size`] bytes;
    /// [`Error::InvalidSigningKey`] when a check fails.
    pub fn from_expanded(p: &'static Params, sk: &[u8]) -> Result<Self, Error> {
        check_len("signing key", sk, p.signing_key_size())?;
        simd::from_expanded_on(pqkit_hash::dispatch::current(), p, sk)
    }

    /// The parameter set.
    pub fn params(&self) -> &'static Params {
        self.p
    }

    /// pkEncode(ρ, t₁) (FIPS 204 Algorithm 22), [`Params::verifying_key_size`] bytes.
    pub fn verifying_key(&self) -> &[u8] {
        &self.verifying_key
    }

    /// skEncode (FIPS 204 Algorithm 24), [`Params::signing_key_size`] bytes.
    pub fn expanded(&self) -> &[u8] {
        &self.encoded
    }

    /// Marks K, s₁, s₂ and t̂₀ undefined for Valgrind (the constant-time test); computes
    /// them first.
    #[cfg(feature = "ct-test")]
    #[doc(hidden)]
    pub fn mark_secret_for_valgrind(&self) {
        valgrind::secret(&self.key[..]);
        let parts = self.signing_parts(pqkit_hash::dispatch::current());
        valgrind::secret(&parts.s[..]);
        valgrind::secret(&parts.t0_hat[..]);
    }

    /// s₁ ‖ s₂ and t̂₀ of skDecode (FIPS 204 Algorithm 25; both were checked when the key
    /// was generated or loaded), computed once, on `isa`.
    #[inline(always)]
    fn signing_parts(&self, isa: pqkit_hash::Isa) -> &SigningParts {
        self.signing.get_or_init(|| {
            let p = self.p;
            let eb = 32 * p.eta_bits();
            let (s_bytes, t0_bytes) = self.encoded[128..].split_at((p.l + p.k) * eb);
            let mut s = Wiped::filled(Short::ZERO, p.l + p.k);
            let mut unpacked = Cleared(Poly::ZERO);
            for (out, b) in s.iter_mut().zip(s_bytes.chunks_exact(eb)) {
                // In range: checked by key generation or loading.
                unpack_eta(p, b, &mut unpacked);
                out.fill(&unpacked);
            }
            let mut t0_hat = Wiped::filled(Poly::ZERO, p.k);
            for (t, b) in t0_hat
                .iter_mut()
                .zip(t0_bytes.chunks_exact(32 * D as usize))
            {
                unpack_t0(b, t);
                poly::ntt(t, isa);
            }
            SigningParts { s, t0_hat }
        })
    }

    /// tr = H(pk, 64) (FIPS 204 Algorithm 6 line 9): the prefix of μ.
    pub fn tr(&self) -> &[u8; 64] {
        &self.tr
    }
}

/// What signing needs of a key's secret vectors (FIPS 204 Algorithm 7 line 1's skDecode, line
/// 4's t̂₀): s₁ (ℓ) and s₂ (k) laid out for the products cs₁ and cs₂ of lines 18–20
/// ([`poly::mul_challenge`], in place of lines 2–3's NTTs), and t̂₀ (k) for line 25's
/// ⟨⟨ct₀⟩⟩ = NTT⁻¹(ĉ ∘ t̂₀).
struct SigningParts {
    s: Wiped<Short>,
    t0_hat: Wiped<Poly>,
}

/// The signing key's vectors s₁ (ℓ) and s₂ (k) in R_q, with K and Â — what key
/// generation and key loading share from there on.
struct Parts<'a> {
    key: &'a [u8],
    a: Vec<Poly>,
    s1s2: &'a [Poly],
}

/// What ρ, Â, s₁ and s₂ give (FIPS 204 Algorithm 6 lines 5–9): t = NTT⁻¹(Â ∘ NTT(s₁)) + s₂
/// with every coefficient in [0, q), (t₁, t₀) ← Power2Round(t), pk ← pkEncode(ρ, t₁)
/// (Algorithm 22) and tr ← H(pk, 64). Writes t₀ into `t0`; returns (pk, tr).
#[inline(always)]
fn derive(
    isa: pqkit_hash::Isa,
    p: &Params,
    rho: &[u8],
    parts: &Parts<'_>,
    t0: &mut [Poly],
) -> (Vec<u8>, [u8; 64]) {
    let (s1, s2) = parts.s1s2.split_at(p.l);
    let mut s1_hat = Wiped::filled(Poly::ZERO, p.l);
    for (h, s) in s1_hat.iter_mut().zip(s1) {
        *h = *s;
        poly::ntt(h, isa);
    }
    let mut pk = vec![0u8; p.verifying_key_size()];
    pk[..32].copy_from_slice(rho);
    let mut t = Cleared(Poly::ZERO);
    for (i, out) in pk[32..].chunks_exact_mut(320).enumerate() {
        // `dot`'s output is in (−q, q): the inverse NTT's input range.
        poly::dot(&mut t, &parts.a[i * p.l..(i + 1) * p.l], &s1_hat);
        poly::inv_ntt_to_mont(&mut t, isa);
        poly::add(&mut t, &s2[i]);
        poly::freeze(&mut t);
        poly::power2round(&mut t, &mut t0[i]);
        poly::pack::<10>(&t, |x| x as u32, out);
    }
    let mut tr = [0u8; 64];
    h(&[&pk], &mut tr);
    (pk, tr)
}

/// A key's encodings: tr, skEncode and pkEncode.
struct Encoded {
    tr: [u8; 64],
    sk: Zeroizing<Vec<u8>>,
    pk: Vec<u8>,
}

/// The key (what signing needs of s₁, s₂ and t₀ waits for the first signature).
#[inline(always)]
fn prepare(p: &'static Params, parts: Parts<'_>, Encoded { tr, sk, pk }: Encoded) -> SigningKey {
    let mut key = Box::new(Cleared([0u8; 32]));
    key.copy_from_slice(parts.key);
    SigningKey {
        p,
        key,
        tr,
        a: parts.a,
        signing: OnceLock::new(),
        encoded: sk,
        verifying_key: pk,
    }
}

/// ML-DSA.KeyGen_internal(ξ) (FIPS 204 Algorithm 6) on a path.
#[inline(always)]
fn key_gen_any(isa: pqkit_hash::Isa, p: &'static Params, xi: &[u8; 32]) -> SigningKey {
    let (k, l) = (p.k, p.l);
    // Line 1: (ρ, ρ′, K) ← H(ξ ‖ IntegerToBytes(k, 1) ‖ IntegerToBytes(ℓ, 1), 128).
    let mut seeds = Cleared([0u8; 128]);
    h(&[xi, &[k as u8, l as u8]], &mut seeds[..]);
    let (rho, rest) = seeds.split_at(32);
    let (rho_prime, key) = rest.split_at(64);
    // Lines 3–4: Â ← ExpandA(ρ), (s₁, s₂) ← ExpandS(ρ′) (Algorithm 33: s₁[r] from
    // ρ′ ‖ r, s₂[r] from ρ′ ‖ r + ℓ, two bytes little-endian), all streams together.
    let mut a = vec![Poly::ZERO; k * l];
    let mut s1s2 = Wiped::filled(Poly::ZERO, l + k);
    let mut x = XofLanes::new(isa, k * l + k + l);
    let mut s = expand_a(p, &mut x, rho, &mut a);
    for (r, si) in s1s2.iter_mut().enumerate() {
        x.push(Shake::SHAKE256, &[rho_prime, &(r as u16).to_le_bytes()]);
        s.push(Sampler::Bounded {
            a: si,
            filled: 0,
            eta: p.eta,
        });
    }
    squeeze(isa, &mut x, &mut s);
    drop(s);
    drop(x);
    let parts = Parts {
        key,
        a,
        s1s2: &s1s2,
    };
    // Lines 5–9: t, (t₁, t₀), pk, tr.
    let mut t0 = Wiped::filled(Poly::ZERO, k);
    let (pk, tr) = derive(isa, p, rho, &parts, &mut t0);
    // Line 10: sk ← skEncode(ρ, K, tr, s₁, s₂, t₀).
    let mut sk = Zeroizing::new(vec![0u8; p.signing_key_size()]);
    sk[..32].copy_from_slice(rho);
    sk[32..64].copy_from_slice(key);
    sk[64..128].copy_from_slice(&tr);
    let eb = 32 * p.eta_bits();
    let (s_bytes, t0_bytes) = sk[128..].split_at_mut((k + l) * eb);
    for (si, out) in parts.s1s2.iter().zip(s_bytes.chunks_exact_mut(eb)) {
        pack_eta(p, si, out);
    }
    for (ti, out) in t0.iter().zip(t0_bytes.chunks_exact_mut(32 * D as usize)) {
        pack_t0(ti, out);
    }
    prepare(p, parts, Encoded { tr, sk, pk })
}

/// [`SigningKey::from_expanded`] on a path (the length checked).
#[inline(always)]
fn from_expanded_any(
    isa: pqkit_hash::Isa,
    p: &'static Params,
    sk: &[u8],
) -> Result<SigningKey, Error> {
    let (k, l) = (p.k, p.l);
    // FIPS 204 Algorithm 25: ρ, K, tr, s₁, s₂, t₀.
    let (rho, rest) = sk.split_at(32);
    let (key, rest) = rest.split_at(32);
    let (tr, rest) = rest.split_at(64);
    let eb = 32 * p.eta_bits();
    let (s_bytes, t0_bytes) = rest.split_at((k + l) * eb);
    let mut s1s2 = Cleared([Poly::ZERO; L_MAX + K_MAX]);
    let mut in_range = true;
    for (si, b) in s1s2[..k + l].iter_mut().zip(s_bytes.chunks_exact(eb)) {
        in_range &= unpack_eta(p, b, si);
    }
    if !in_range {
        return Err(Error::InvalidSigningKey(
            "ML-DSA expanded private key (a coefficient of s₁ or s₂ is outside [−η, η])",
        ));
    }
    let mut t0 = Cleared([Poly::ZERO; K_MAX]);
    for (ti, b) in t0[..k]
        .iter_mut()
        .zip(t0_bytes.chunks_exact(32 * D as usize))
    {
        unpack_t0(b, ti);
    }
    // Â from ρ.
    let mut a = vec![Poly::ZERO; k * l];
    let mut x = XofLanes::new(isa, k * l);
    let mut s = expand_a(p, &mut x, rho, &mut a);
    squeeze(isa, &mut x, &mut s);
    drop(s);
    let parts = Parts {
        key,
        a,
        s1s2: &s1s2[..k + l],
    };
    let mut t0_again = Cleared([Poly::ZERO; K_MAX]);
    let (pk, tr_again) = derive(isa, p, rho, &parts, &mut t0_again[..k]);
    let mut diff = 0i32;
    for (x, y) in t0[..k].iter().zip(&t0_again[..k]) {
        for (a, b) in x.0.iter().zip(&y.0) {
            diff |= a ^ b;
        }
    }
    if !bool::from(diff.ct_eq(&0) & tr_again.ct_eq(tr)) {
        return Err(Error::InvalidSigningKey(
            "ML-DSA expanded private key (t₀ or tr is not what ρ, s₁ and s₂ give: it is damaged)",
        ));
    }
    let encoded = Encoded {
        tr: tr_again,
        sk: Zeroizing::new(sk.to_vec()),
        pk,
    };
    Ok(prepare(p, parts, encoded))
}

/// ML-DSA.Sign_internal (FIPS 204 Algorithm 7) from line 7, with μ given: writes the
/// signature into `sig` (its length checked by the caller).
#[inline(always)]
fn sign_any(
    isa: pqkit_hash::Isa,
    sk: &SigningKey,
    mu: &[u8; MU_SIZE],
    rnd: &[u8; RND_SIZE],
    sig: &mut [u8],
) {
    let p = sk.p;
    let (k, l) = (p.k, p.l);
    let parts = sk.signing_parts(isa);
    let (s1, s2) = parts.s.split_at(l);
    let t0_hat = &parts.t0_hat[..];
    let g1 = 1i32 << p.gamma1_bits;
    // Line 7: ρ″ ← H(K ‖ rnd ‖ μ, 64).
    let mut rho2 = Cleared([0u8; 64]);
    h(&[&sk.key[..], rnd, mu], &mut rho2[..]);
    let (c_tilde, rest) = sig.split_at_mut(p.c_tilde_size());
    let (z_bytes, h_bytes) = rest.split_at_mut(l * p.z_size());
    let mut kappa: u16 = 0;
    let mut y = Cleared([Poly::ZERO; L_MAX]);
    let mut y_hat = Cleared([Poly::ZERO; L_MAX]);
    let mut w1 = Cleared([Poly::ZERO; K_MAX]);
    let mut w0 = Cleared([Poly::ZERO; K_MAX]);
    let mut hint = Cleared([Poly::ZERO; K_MAX]);
    let mut z = Cleared([Poly::ZERO; L_MAX]);
    let mut prod = Cleared(Poly::ZERO);
    let mut c = Cleared(Poly::ZERO);
    // ExpandMask's bytes for this attempt and the next one or two: `ahead` of the attempts
    // after this one have theirs.
    let mut masks = MaskRing::new();
    let mut w1_bytes = Cleared([0u8; K_MAX * 192]);
    let w1_size = 32 * p.w1_bits();
    // The streams of every attempt, in one set of lanes emptied between uses.
    let mut x = XofLanes::new(isa, 2 * l + 1);
    // Masks computed at once: two attempts' where their 2ℓ streams fill one kernel call
    // (ML-DSA-44 on AVX-512: 8 lanes, and c̃ beside them as the fused ninth state), else one.
    let batch = if 2 * l <= x.width() { 2 } else { 1 };
    // Line 11 for the first attempt (and the second, with a batch of two): y ← ExpandMask(ρ″,
    // κ) (Algorithm 34: y[r] from ρ″ ‖ κ + r). Later attempts' come with an earlier attempt's
    // c̃ (below).
    {
        let mut s = Vec::with_capacity(2 * l);
        masks.push(p, &mut x, &rho2[..], kappa, 0..=batch - 1, &mut s);
        squeeze(isa, &mut x, &mut s);
    }
    let mut ahead = batch - 1;
    loop {
        for r in 0..l {
            unpack_z(p, &masks.current()[r][..p.z_size()], &mut y[r]);
            y_hat[r] = y[r];
            poly::ntt(&mut y_hat[r], isa);
        }
        // Lines 12–13: w ← NTT⁻¹(Â ∘ NTT(y)), w₁ ← HighBits(w) (and w₀ ← LowBits(w)).
        for i in 0..k {
            let wi = &mut w1[i];
            // `dot`'s output is in (−q, q): the inverse NTT's input range.
            poly::dot(wi, &sk.a[i * l..(i + 1) * l], &y_hat[..l]);
            poly::inv_ntt_to_mont(wi, isa);
            poly::freeze(wi);
            poly::decompose_all(wi, &mut w0[i], p.gamma2);
            pack_w1(p, wi, &mut w1_bytes[i * w1_size..(i + 1) * w1_size]);
        }
        // Line 15: c̃ ← H(μ ‖ w1Encode(w₁), λ/4). When the next attempt has no mask yet, c̃
        // is absorbed on the lanes beside the next `batch` attempts' ExpandMask(ρ″, κ + ℓ…)
        // streams (line 11 of the next attempts, computed whether or not they come: their
        // permutations ride with c̃'s, which run one at a time otherwise); else alone. c̃ is
        // public: the signature's challenge, or for a rejected attempt the hash of a w₁ whose
        // y is discarded — SampleInBall may branch on it.
        {
            x.clear();
            let mut s = Vec::with_capacity(2 * l + 1);
            if ahead == 0 {
                masks.push(p, &mut x, &rho2[..], kappa, 1..=batch, &mut s);
                ahead = batch;
            }
            x.push_long(Sponge::Shake256, &[mu, &w1_bytes[..k * w1_size]]);
            s.push(Sampler::Bytes {
                out: c_tilde,
                got: 0,
            });
            squeeze(isa, &mut x, &mut s);
        }
        valgrind::declassify(&*c_tilde);
        // Line 16: c ← SampleInBall(c̃) (line 17's ĉ ← NTT(c) waits for ⟨⟨ct₀⟩⟩, below).
        {
            x.clear();
            let mut s = Vec::with_capacity(1);
            sample_in_ball(p, &mut x, c_tilde, &mut c, &mut s);
            squeeze(isa, &mut x, &mut s);
        }
        let challenge = Challenge::new(&c);
        kappa = kappa.wrapping_add(l as u16);
        masks.advance();
        ahead -= 1;
        // Lines 20, 23: r₀ ← LowBits(w − ⟨⟨cs₂⟩⟩), rejected when ‖r₀‖∞ ≥ γ₂ − β. Checked
        // before z: it rejects more often (about two attempts in three for ML-DSA-65 against
        // one in three) for k products against ℓ. The order changes no output. cs₂ is exact
        // (|cs₂| ≤ τη = β) and |w₀| ≤ γ₂, so r₀ is centred as it is.
        let mut reject = false;
        for i in 0..k {
            poly::mul_challenge(&mut prod, &challenge, &s2[i], p.eta);
            poly::sub(&mut w0[i], &prod);
            reject |= poly::exceeds(&w0[i], p.gamma2 - p.beta);
        }
        // Variable time OK: whether an attempt is rejected, and by which check, is public
        // (FIPS 204 signing is a rejection loop; the number of attempts is observable) — but
        // not which coefficient failed.
        if valgrind::declassified(reject) {
            continue;
        }
        // Lines 18–19, 22–23: z ← y + ⟨⟨cs₁⟩⟩, rejected when ‖z‖∞ ≥ γ₁ − β; centred as it is
        // (|y| ≤ γ₁, |cs₁| ≤ β).
        for r in 0..l {
            poly::mul_challenge(&mut z[r], &challenge, &s1[r], p.eta);
            poly::add(&mut z[r], &y[r]);
            reject |= poly::exceeds(&z[r], g1 - p.beta);
        }
        // Variable time OK: as above.
        if valgrind::declassified(reject) {
            continue;
        }
        // Lines 25–28: ⟨⟨ct₀⟩⟩, h ← MakeHint(−ct₀, w − cs₂ + ct₀); rejected when
        // ‖ct₀‖∞ ≥ γ₂ or h has more than ω ones.
        // Line 17: ĉ ← NTT(c), needed from here on only.
        poly::ntt(&mut c, isa);
        let mut ones = 0usize;
        for i in 0..k {
            poly::mul(&mut prod, &c, &t0_hat[i]);
            poly::inv_ntt_to_mont(&mut prod, isa);
            poly::reduce(&mut prod);
            reject |= poly::exceeds(&prod, p.gamma2);
            poly::add(&mut w0[i], &prod);
            ones = ones.wrapping_add(poly::make_hint(&mut hint[i], &w0[i], &w1[i], p.gamma2));
        }
        // Variable time OK: as above; the number of hints of an accepted attempt is in the
        // signature.
        if valgrind::declassified(reject) || valgrind::declassified(ones) > p.omega {
            continue;
        }
        // The signature: public from here on.
        valgrind::declassify(&z[..l]);
        valgrind::declassify(&hint[..k]);
        // Line 33: σ ← sigEncode(c̃, z mod± q, h) (Algorithm 26).
        for (zr, out) in z[..l].iter().zip(z_bytes.chunks_exact_mut(p.z_size())) {
            pack_z(p, zr, out);
        }
        hint_pack(p, &hint[..k], h_bytes);
        return;
    }
}

/// Lines 5, 6 and 8 of ML-DSA.Verify_internal (FIPS 204 Algorithm 8), every stream on the
/// Keccak lanes together: Â ← ExpandA(ρ) into `a` (nothing when `a` is empty), tr ← H(pk, 64)
/// when `tr` is given (a long message: its blocks ride with ExpandA's instead of running one
/// at a time), and c ← SampleInBall(c̃) when `ball` is given.
#[inline(always)]
fn expand(
    isa: pqkit_hash::Isa,
    p: &Params,
    pk: &[u8],
    a: &mut [Poly],
    tr: Option<&mut [u8; 64]>,
    ball: Option<(&[u8], &mut Poly)>,
) {
    let mut x = XofLanes::new(isa, a.len() + 2);
    let mut s = expand_a(p, &mut x, &pk[..32], a);
    if let Some((c_tilde, c)) = ball {
        sample_in_ball(p, &mut x, c_tilde, c, &mut s);
    }
    if let Some(tr) = tr {
        x.push_long(Sponge::Shake256, &[pk]);
        s.push(Sampler::Bytes { out: tr, got: 0 });
    }
    squeeze(isa, &mut x, &mut s);
}

/// A verifying key as verification takes it: encoded, or prepared (Â and tr computed).
#[derive(Clone, Copy)]
enum Key<'a> {
    /// pkEncode(ρ, t₁) (FIPS 204 Algorithm 22), length checked.
    Encoded(&'a [u8]),
    /// A [`VerifyingKey`].
    Prepared(&'a VerifyingKey),
}

/// ML-DSA.Verify_internal (FIPS 204 Algorithm 8), lines 6–7 (tr, μ) computed from M′ or μ
/// given (lengths checked by the caller).
#[inline(always)]
fn verify_any(
    isa: pqkit_hash::Isa,
    p: &'static Params,
    key: Key<'_>,
    mu: Mu<'_>,
    sig: &[u8],
) -> bool {
    let (k, l) = (p.k, p.l);
    let g1 = 1i32 << p.gamma1_bits;
    // Line 1: (ρ, t₁) ← pkDecode(pk); line 2: (c̃, z, h) ← sigDecode(σ), ⊥ when h is
    // malformed; line 13: ‖z‖∞ < γ₁ − β (checked first: it needs no hashing).
    let pk = match key {
        Key::Encoded(pk) => pk,
        Key::Prepared(key) => &key.encoded,
    };
    let t1_bytes = &pk[32..];
    let (c_tilde, rest) = sig.split_at(p.c_tilde_size());
    let (z_bytes, h_bytes) = rest.split_at(l * p.z_size());
    let mut hint = [Poly::ZERO; K_MAX];
    if !hint_unpack(p, h_bytes, &mut hint[..k]) {
        return false;
    }
    let mut z = [Poly::ZERO; L_MAX];
    let mut short = true;
    for (zr, b) in z[..l].iter_mut().zip(z_bytes.chunks_exact(p.z_size())) {
        unpack_z(p, b, zr);
        short &= !poly::exceeds(zr, g1 - p.beta);
    }
    if !short {
        return false;
    }
    // Lines 5, 6 (with M′ given) and 8, or line 8 alone for a prepared key.
    let mut c = Poly::ZERO;
    let mut fresh;
    let mut fresh_tr = [0u8; 64];
    let (a, tr): (&[Poly], &[u8; 64]) = match key {
        Key::Prepared(key) => {
            expand(isa, p, pk, &mut [], None, Some((c_tilde, &mut c)));
            (&key.a, &key.tr)
        }
        Key::Encoded(_) => {
            fresh = vec![Poly::ZERO; k * l];
            let tr = matches!(mu, Mu::FromMessage(_)).then_some(&mut fresh_tr);
            expand(isa, p, pk, &mut fresh, tr, Some((c_tilde, &mut c)));
            (&fresh, &fresh_tr)
        }
    };
    // Line 7: μ ← H(tr ‖ M′, 64).
    let from_message;
    let mu = match mu {
        Mu::Given(mu) => mu,
        Mu::FromMessage(m_prime) => {
            from_message = self::mu(tr, m_prime);
            &from_message
        }
    };
    // Line 9: w′_Approx ← NTT⁻¹(Â ∘ NTT(z) − NTT(c) ∘ NTT(t₁ · 2^d)), as NTT⁻¹(Â ∘ NTT(z))
    // − (c · t₁) · 2^d: c · t₁ as a sum of τ shifted copies of t₁ (`poly::mul_challenge`),
    // cheaper than k + 1 NTTs. |c · t₁ · 2^d| ≤ 60 · 1023 · 2^13 < 2^29, so the difference
    // stays within `freeze`'s input range; the canonical w′_Approx is the same.
    let challenge = Challenge::new(&c);
    let mut t1 = Shifts::<i16>::ZERO;
    for zr in z[..l].iter_mut() {
        poly::ntt(zr, isa);
    }
    let mut w1_bytes = [0u8; K_MAX * 192];
    let w1_size = 32 * p.w1_bits();
    let mut t = Poly::ZERO;
    let mut ct = Poly::ZERO;
    for i in 0..k {
        let mut w = Poly::ZERO;
        // `dot`'s output is in (−q, q): the inverse NTT's input range.
        poly::dot(&mut w, &a[i * l..(i + 1) * l], &z[..l]);
        poly::inv_ntt_to_mont(&mut w, isa);
        poly::unpack::<10>(&t1_bytes[320 * i..320 * (i + 1)], |x| x as i32, &mut t);
        t1.fill(&t);
        poly::mul_challenge(&mut ct, &challenge, &t1, 1023);
        poly::shift_left_d(&mut ct);
        poly::sub(&mut w, &ct);
        poly::freeze(&mut w);
        // Line 10: w₁′ ← UseHint(h, w′_Approx); line 12's w1Encode.
        poly::use_hint(&mut w, &hint[i], p.gamma2);
        pack_w1(p, &w, &mut w1_bytes[i * w1_size..(i + 1) * w1_size]);
    }
    // Lines 12–13: c̃′ ← H(μ ‖ w1Encode(w₁′), λ/4); c̃ = c̃′ (public values).
    let mut again = [0u8; 64];
    let again = &mut again[..p.c_tilde_size()];
    h(&[mu, &w1_bytes[..k * w1_size]], again);
    again == c_tilde
}

/// Where verification's μ comes from.
#[derive(Clone, Copy)]
enum Mu<'a> {
    /// μ itself (external μ).
    Given(&'a [u8; MU_SIZE]),
    /// μ = H(tr ‖ M′, 64), M′ the concatenation of the parts, tr = H(pk, 64).
    FromMessage(&'a [&'a [u8]]),
}

/// Verifies signature `sig` of μ under verifying key `pk`: ML-DSA.Verify_internal (FIPS 204
/// Algorithm 8) with μ (64 bytes) given in place of lines 6–7 (external μ), on the current
/// path.
///
/// Returns false for a signature that does not verify, and for a key or signature of the
/// wrong length.
pub fn verify_mu(p: &'static Params, pk: &[u8], mu: &[u8; MU_SIZE], sig: &[u8]) -> bool {
    pk.len() == p.verifying_key_size() && verify_key(p, Key::Encoded(pk), Mu::Given(mu), sig)
}

/// Verifies signature `sig` of M′ under verifying key `pk`: ML-DSA.Verify_internal (FIPS 204
/// Algorithm 8), on the current path, M′ the concatenation of `m_prime` — formatted by the
/// caller (pure ML-DSA: Algorithm 3; HashML-DSA: Algorithm 5). tr = H(pk, 64) is absorbed on
/// the Keccak lanes beside ExpandA.
///
/// Returns false for a signature that does not verify, and for a key or signature of the
/// wrong length.
pub fn verify(p: &'static Params, pk: &[u8], m_prime: &[&[u8]], sig: &[u8]) -> bool {
    pk.len() == p.verifying_key_size()
        && verify_key(p, Key::Encoded(pk), Mu::FromMessage(m_prime), sig)
}

/// Algorithm 8 on the current path, the signature's length checked here.
fn verify_key(p: &'static Params, key: Key<'_>, mu: Mu<'_>, sig: &[u8]) -> bool {
    sig.len() == p.signature_size()
        && simd::verify_on(pqkit_hash::dispatch::current(), p, key, mu, sig)
}

/// A verifying key with the work that depends on the key alone done once: Â = ExpandA(ρ) in
/// the NTT domain (k·ℓ polynomials of 1 KiB: 16, 30 and 56 KiB for ML-DSA-44, 65 and 87) and
/// tr = H(pk, 64) (FIPS 204 Algorithm 8 lines 5–6). A verification under it squeezes only
/// SampleInBall's stream of c̃ before μ, where one from the encoded key squeezes k·ℓ + 2
/// streams (ML-DSA-65: 32). Made for verifiers that meet the same keys again and again — a
/// TLS client's CAs and servers. Everything in it is public.
pub struct VerifyingKey {
    p: &'static Params,
    /// pkEncode(ρ, t₁) (FIPS 204 Algorithm 22).
    encoded: Vec<u8>,
    /// Â, k·ℓ polynomials, row by row.
    a: Vec<Poly>,
    tr: [u8; 64],
}

impl core::fmt::Debug for VerifyingKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("VerifyingKey")
            .field("params", &self.p.name)
            .finish_non_exhaustive()
    }
}

impl VerifyingKey {
    /// pkDecode (FIPS 204 Algorithm 23) of `pk`, with Â and tr computed (Algorithm 8 lines
    /// 5–6), on the current path. Every encoding of the right length is a key (t₁'s 10-bit
    /// fields take any value).
    ///
    /// # Errors
    /// [`Error::WrongLength`] when `pk` is not [`Params::verifying_key_size`] bytes.
    pub fn new(p: &'static Params, pk: &[u8]) -> Result<Self, Error> {
        check_len("verifying key", pk, p.verifying_key_size())?;
        Ok(simd::expand_key_on(pqkit_hash::dispatch::current(), p, pk))
    }

    /// The parameter set.
    pub fn params(&self) -> &'static Params {
        self.p
    }

    /// pkEncode(ρ, t₁), [`Params::verifying_key_size`] bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.encoded
    }

    /// As [`verify`] (M′ the concatenation of `m_prime`), under this key.
    pub fn verify(&self, m_prime: &[&[u8]], sig: &[u8]) -> bool {
        verify_key(self.p, Key::Prepared(self), Mu::FromMessage(m_prime), sig)
    }

    /// As [`verify_mu`], under this key.
    pub fn verify_mu(&self, mu: &[u8; MU_SIZE], sig: &[u8]) -> bool {
        verify_key(self.p, Key::Prepared(self), Mu::Given(mu), sig)
    }
}

/// [`VerifyingKey::new`] on `isa`, the length checked.
#[inline(always)]
fn expand_key_any(isa: pqkit_hash::Isa, p: &'static Params, pk: &[u8]) -> VerifyingKey {
    let mut a = vec![Poly::ZERO; p.k * p.l];
    let mut tr = [0u8; 64];
    expand(isa, p, pk, &mut a, Some(&mut tr), None);
    VerifyingKey {
        p,
        encoded: pk.to_vec(),
        a,
        tr,
    }
}

/// The ML-DSA algorithms that take their randomness as arguments: key generation from ξ (seed
/// form keys, known-answer tests) and signing with a given `rnd`. ξ from anything but a
/// cryptographic RNG breaks the scheme (FIPS 204 §3.6.1); a predictable `rnd` gives FIPS 204's
/// deterministic variant (`rnd` = 0³², §3.4), without hedging's protection against fault and
/// side-channel attacks.
pub mod hazmat {
    use super::*;

    /// ML-DSA.KeyGen_internal(ξ) (FIPS 204 Algorithm 6) on the current path: the signing key,
    /// with its verifying key ([`SigningKey::verifying_key`]).
    pub fn key_gen_internal(p: &'static Params, xi: &[u8; SEED_SIZE]) -> SigningKey {
        simd::key_gen_on(pqkit_hash::dispatch::current(), p, xi)
    }

    /// ML-DSA.Sign_internal (FIPS 204 Algorithm 7) from line 7, with μ (64 bytes) and `rnd`
    /// (32 bytes) given: writes the signature ([`Params::signature_size`] bytes) into `sig`,
    /// on the current path.
    ///
    /// # Errors
    /// [`Error::WrongLength`] when `sig` has the wrong length.
    pub fn sign_internal(
        sk: &SigningKey,
        mu: &[u8; MU_SIZE],
        rnd: &[u8; RND_SIZE],
        sig: &mut [u8],
    ) -> Result<(), Error> {
        check_len("signature", sig, sk.p.signature_size())?;
        simd::sign_on(pqkit_hash::dispatch::current(), sk, mu, rnd, sig);
        Ok(())
    }
}

crate::stats::ntt_pairs!();

#[cfg(test)]
mod tests;
