//! Polynomials of R_q = Z_q\[X\]/(X^256 + 1), q = 8380417, and of its NTT domain T_q (FIPS 204
//! §2.3, §7.5): the number-theoretic transform, pointwise multiplication, the rounding
//! functions of §7.4, the samplers' rejection steps (§7.3) and the bit packings (§7.1).
//!
//! Coefficients are `i32`, in plain order (T_q elements in the bit-reversed order of FIPS 204
//! Algorithm 41), so that the compiler vectorizes the loops in 8 (AVX2) or 16 (AVX-512) lanes.
//! Products are reduced by Montgomery reduction (R = 2^32), sums by a rounding reduction, as
//! in the Dilithium reference implementation; the NTT's twiddle factors are kept times R.
//! Nothing here branches on, indexes by or divides a secret coefficient, except where FIPS 204
//! allows it: the norm checks and hints of a signing attempt that is then rejected or
//! published (§3.6.2), and the rejection of candidates independent of the values kept.
//!
//! The arithmetic is `#[inline(always)]`: `simd::sign_on` and its siblings compile the
//! algorithms that call it once per instruction set.

use pqkit_hash::Isa;

pub(crate) use super::consts::{D, INV_256_R2, IZ1, IZ2, IZ4, N, Q, QINV, W, Z1, Z2, Z4, ZETAS};

/// A polynomial: 256 coefficients, in R_q or T_q depending on where it is in an algorithm.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub(crate) struct Poly(pub(crate) [i32; N]);

impl Poly {
    pub(crate) const ZERO: Self = Self([0; N]);
}

impl pqkit_hash::Zero for Poly {
    const ZERO: Self = Self::ZERO;
}

/// a · R⁻¹ mod q for |a| < 2^31 · q, in (−q, q). The subtraction cannot overflow in that
/// range; it wraps explicitly so that no build checks it (a check is a branch on a secret).
#[inline(always)]
fn mont_reduce(a: i64) -> i32 {
    let t = (a as i32).wrapping_mul(QINV);
    (a.wrapping_sub(i64::from(t) * i64::from(Q)) >> 32) as i32
}

/// The Montgomery product a · b · R⁻¹ mod q.
#[inline(always)]
fn mont_mul(a: i32, b: i32) -> i32 {
    mont_reduce(i64::from(a) * i64::from(b))
}

/// a mod± q, roughly: in [−6283009, 6283008] for a ≤ 2^31 − 2^22.
#[inline(always)]
fn reduce32(a: i32) -> i32 {
    let t = (a.wrapping_add(1 << 22)) >> 23;
    a.wrapping_sub(t.wrapping_mul(Q))
}

/// a + q when a is negative (a ∈ (−q, q) → [0, q)), without a branch.
#[inline(always)]
fn caddq(a: i32) -> i32 {
    a.wrapping_add((a >> 31) & Q)
}

/// A polynomial's 256 coefficients as 32 rows of 8.
#[inline(always)]
fn rows(a: &mut [i32; N]) -> &mut [[i32; W]] {
    a.as_chunks_mut::<W>().0
}

/// rows[r] and rows[r + d], both mutable.
#[inline(always)]
fn pair(rows: &mut [[i32; W]], r: usize, d: usize) -> (&mut [i32; W], &mut [i32; W]) {
    let (lo, hi) = rows.split_at_mut(r + d);
    (&mut lo[r], &mut hi[0])
}

/// The forward butterfly, lane by lane: (x, y) ← (x + ζy, x − ζy).
#[inline(always)]
fn butterfly(x: &mut [i32; W], y: &mut [i32; W], z: &[i32; W]) {
    for l in 0..W {
        let t = mont_mul(z[l], y[l]);
        y[l] = x[l].wrapping_sub(t);
        x[l] = x[l].wrapping_add(t);
    }
}

/// The inverse butterfly, lane by lane: (x, y) ← (x + y, ζ(x − y)) (ζ already negated).
#[inline(always)]
fn inv_butterfly(x: &mut [i32; W], y: &mut [i32; W], z: &[i32; W]) {
    for l in 0..W {
        let t = x[l];
        x[l] = t.wrapping_add(y[l]);
        y[l] = mont_mul(z[l], t.wrapping_sub(y[l]));
    }
}

/// The 8 × 8 blocks of rows transposed in place.
#[inline(always)]
fn transpose_blocks(rows: &mut [[i32; W]]) {
    for block in rows.chunks_exact_mut(W) {
        let mut src = pqkit_hash::Cleared([[0i32; W]; W]);
        src.copy_from_slice(block);
        for (r, row) in block.iter_mut().enumerate() {
            for (c, x) in row.iter_mut().enumerate() {
                *x = src[c][r];
            }
        }
    }
}

/// NTT(w) (FIPS 204 Algorithm 41), in place: the AVX2 kernel when `isa` allows it, else
/// [`ntt_portable`]. Inputs |w_i| < q; outputs |ŵ_i| < 9q.
#[inline(always)]
pub(crate) fn ntt(w: &mut Poly, isa: Isa) {
    crate::stats::ml_dsa_ntt();
    if super::simd::ntt(&mut w.0, isa).is_none() {
        ntt_portable(&mut w.0);
    }
}

/// NTT⁻¹(ŵ) · R (FIPS 204 Algorithm 42, leaving a factor R for the Montgomery products
/// before it), in place: the AVX2 kernel when `isa` allows it, else [`inv_ntt_portable`].
/// Inputs |ŵ_i| < q; outputs |w_i| < q.
#[inline(always)]
pub(crate) fn inv_ntt_to_mont(w: &mut Poly, isa: Isa) {
    crate::stats::ml_dsa_ntt();
    if super::simd::inv_ntt(&mut w.0, isa).is_none() {
        inv_ntt_portable(&mut w.0);
    }
}

/// The portable twin of `simd::ntt`.
///
/// Layers len = 128 … 8 are butterflies between rows (ζ broadcast); then each 8 × 8 block is
/// transposed, so that layers len = 4, 2, 1 are between rows too (per-lane ζ), and transposed
/// back. The kernel applies the same butterflies in the same order: the outputs are equal
/// integers, not only equal mod q.
#[inline(always)]
pub(crate) fn ntt_portable(a: &mut [i32; N]) {
    let rows = rows(a);
    let mut k = 1;
    let mut d = 16;
    while d >= 1 {
        for start in (0..32).step_by(2 * d) {
            let z = [ZETAS[k]; W];
            k += 1;
            for r in start..start + d {
                let (x, y) = pair(rows, r, d);
                butterfly(x, y, &z);
            }
        }
        d /= 2;
    }
    transpose_blocks(rows);
    for (b, block) in rows.chunks_exact_mut(W).enumerate() {
        for j in 0..4 {
            let (x, y) = pair(block, j, 4);
            butterfly(x, y, &Z4[b][0]);
        }
        for j in [0, 1, 4, 5] {
            let (x, y) = pair(block, j, 2);
            butterfly(x, y, &Z2[b][j / 4]);
        }
        for j in [0, 2, 4, 6] {
            let (x, y) = pair(block, j, 1);
            butterfly(x, y, &Z1[b][j / 2]);
        }
    }
    transpose_blocks(rows);
}

/// The portable twin of `simd::inv_ntt`: the layers of [`ntt_portable`] in reverse, then the
/// factor R²/256.
#[inline(always)]
pub(crate) fn inv_ntt_portable(a: &mut [i32; N]) {
    let rows = rows(a);
    transpose_blocks(rows);
    for (b, block) in rows.chunks_exact_mut(W).enumerate() {
        for j in [0, 2, 4, 6] {
            let (x, y) = pair(block, j, 1);
            inv_butterfly(x, y, &IZ1[b][j / 2]);
        }
        for j in [0, 1, 4, 5] {
            let (x, y) = pair(block, j, 2);
            inv_butterfly(x, y, &IZ2[b][j / 4]);
        }
        for j in 0..4 {
            let (x, y) = pair(block, j, 4);
            inv_butterfly(x, y, &IZ4[b][0]);
        }
    }
    transpose_blocks(rows);
    let mut k = 31;
    let mut d = 1;
    while d <= 16 {
        for start in (0..32).step_by(2 * d) {
            let z = [-ZETAS[k]; W];
            k -= 1;
            for r in start..start + d {
                let (x, y) = pair(rows, r, d);
                inv_butterfly(x, y, &z);
            }
        }
        d *= 2;
    }
    for x in a.iter_mut() {
        *x = mont_mul(INV_256_R2, *x);
    }
}

/// out = Σⱼ âⱼ ∘ b̂ⱼ · R⁻¹ (FIPS 204 Algorithm 45, MultiplyNTT, summed over a row of Â: one
/// entry of Â ∘ v̂, §2.5), coefficient-wise, in (−q, q). The products are summed in 64 bits and
/// reduced once: with â in [0, q), |b̂| < 9q (NTT outputs) and at most 7 terms, the sum stays
/// below 63q² < 2^31·q, the Montgomery reduction's bound.
#[inline(always)]
pub(crate) fn dot(out: &mut Poly, a: &[Poly], b: &[Poly]) {
    debug_assert!(a.len() == b.len() && a.len() <= 7);
    const W: usize = 16;
    for c in (0..N).step_by(W) {
        let mut acc = [0i64; W];
        for (x, y) in a.iter().zip(b) {
            for ((s, x), y) in acc.iter_mut().zip(&x.0[c..c + W]).zip(&y.0[c..c + W]) {
                // Wrapping: the bound above keeps it exact, and the test build's overflow
                // check would be a branch on the secret (ŝ₁, ŷ).
                *s = s.wrapping_add(i64::from(*x).wrapping_mul(i64::from(*y)));
            }
        }
        for (o, s) in out.0[c..c + W].iter_mut().zip(acc) {
            *o = mont_reduce(s);
        }
    }
}

/// The integer lanes [`mul_challenge`] sums in: i8 for s₁, s₂ (|coefficients| ≤ η ≤ 4),
/// i16 for t₁ (10 bits).
pub(crate) trait Lane: pqkit_hash::Zero {
    /// The largest partial sum the lane holds: [`mul_challenge`] adds at most
    /// `MAX / bound` copies before widening.
    const MAX: i32;
    /// x, which the caller keeps within ±`MAX`.
    fn narrow(x: i32) -> Self;
    /// self + other, wrapping (never reached by the bounds above; no overflow check, which
    /// the test build would turn into a branch on a secret).
    fn plus(self, other: Self) -> Self;
    /// −self.
    fn minus(self) -> Self;
    /// self as i32.
    fn widen(self) -> i32;
}

macro_rules! lane {
    ($t:ty) => {
        impl Lane for $t {
            const MAX: i32 = <$t>::MAX as i32;
            #[inline(always)]
            fn narrow(x: i32) -> Self {
                x as $t
            }
            #[inline(always)]
            fn plus(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
            #[inline(always)]
            fn minus(self) -> Self {
                self.wrapping_neg()
            }
            #[inline(always)]
            fn widen(self) -> i32 {
                i32::from(self)
            }
        }
    };
}
lane!(i8);
lane!(i16);

/// A polynomial with small coefficients laid out for [`mul_challenge`]: s ‖ −s ‖ s in lanes
/// of `T`. With X²⁵⁶ = −1 in R_q (FIPS 204 §2.3), coefficient i of X^j · s is s_{i−j} for
/// i ≥ j and −s_{i−j+256} below, so X^j · s is the slice starting at 512 − j and −X^j · s
/// the one starting at 256 − j, for every j in [0, 256).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub(crate) struct Shifts<T: Lane>(pub(crate) [T; 3 * N]);

/// s₁ or s₂ laid out for [`mul_challenge`] (768 bytes).
pub(crate) type Short = Shifts<i8>;

impl<T: Lane> Shifts<T> {
    /// Lays out `s`, whose coefficients fit in `T`, in place (a secret s leaves no copy
    /// behind).
    #[inline(always)]
    pub(crate) fn fill(&mut self, s: &Poly) {
        let (first, rest) = self.0.split_at_mut(N);
        let (neg, last) = rest.split_at_mut(N);
        for (((a, n), b), x) in first.iter_mut().zip(neg).zip(last).zip(&s.0) {
            *a = T::narrow(*x);
            *n = a.minus();
            *b = *a;
        }
    }
}

impl<T: Lane> pqkit_hash::Zero for Shifts<T> {
    const ZERO: Self = Self([T::ZERO; 3 * N]);
}

/// The challenge c (FIPS 204 Algorithm 29, SampleInBall) as τ starts in a [`Shifts`]: 512 − j
/// for each c_j = 1, 256 − j for each c_j = −1.
pub(crate) struct Challenge {
    starts: [u16; N],
    len: usize,
}

impl Challenge {
    /// The starts of c's nonzero coefficients.
    // Variable time OK: c is public — the signature's, or a rejected attempt's, derived from
    // the declassified c̃ as SampleInBall's branches are — so its positions may choose
    // branches here and, in `mul_challenge`, which addresses of s are read.
    #[inline(always)]
    pub(crate) fn new(c: &Poly) -> Self {
        let mut out = Self {
            starts: [0; N],
            len: 0,
        };
        let mut n = 0;
        for (w, chunk) in c.0.chunks_exact(64).enumerate() {
            let (mut nonzero, mut negative) = (0u64, 0u64);
            for (i, &x) in chunk.iter().enumerate() {
                nonzero |= u64::from(x != 0) << i;
                negative |= u64::from(x < 0) << i;
            }
            while nonzero != 0 {
                let i = nonzero.trailing_zeros();
                let j = (64 * w) as u16 + i as u16;
                let start = if negative >> i & 1 == 1 { 256 } else { 512 };
                // At most τ ≤ 60 < 256 nonzero coefficients.
                if let Some(s) = out.starts.get_mut(n) {
                    *s = start - j;
                }
                n += 1;
                nonzero &= nonzero - 1;
            }
        }
        out.len = n.min(N);
        out
    }
}

/// out = c · s in R_q, exactly, for s with coefficients in [−bound, bound] (s₁, s₂: η;
/// t₁: 1023): each coefficient is a sum of τ terms ±s_i, in [−τ·bound, τ·bound], the centred
/// representative. The τ shifted copies of s are summed in `T`'s lanes, `T::MAX / bound` at
/// a time (so no partial sum overflows: ⌊127/η⌋ for s in i8, 32 for t₁ in i16), and those
/// sums added in i32. This costs fewer operations than NTT⁻¹(ĉ ∘ ŝ) or NTT(t₁), and gives
/// exact integers. Every lane of every copy is read: the addresses depend on c only.
#[inline(always)]
pub(crate) fn mul_challenge<T: Lane>(out: &mut Poly, c: &Challenge, s: &Shifts<T>, bound: i32) {
    let group = (T::MAX / bound.max(1)).max(1) as usize;
    out.0 = [0; N];
    // Variable time OK: the starts are c's (public, see `Challenge::new`).
    for starts in c.starts[..c.len].chunks(group) {
        // The partial sums stay in registers for the whole inner loop (a `Cleared` buffer,
        // whose address escapes to its wipe, put every addition through memory: signing
        // measured slower); what the compiler spills to widen them is a stack temporary, like
        // the NTT kernels' spills. The caller's `out` is the wiped buffer.
        let mut acc = [T::ZERO; N];
        for &start in starts {
            let from = usize::from(start);
            let Some(copy) = s.0.get(from..from + N) else {
                continue;
            };
            for (a, x) in acc.iter_mut().zip(copy) {
                *a = a.plus(*x);
            }
        }
        for (o, a) in out.0.iter_mut().zip(acc) {
            *o = o.wrapping_add(a.widen());
        }
    }
}

/// out = â ∘ b̂ · R⁻¹, coefficient-wise.
#[inline(always)]
pub(crate) fn mul(out: &mut Poly, a: &Poly, b: &Poly) {
    for ((o, x), y) in out.0.iter_mut().zip(&a.0).zip(&b.0) {
        *o = mont_mul(*x, *y);
    }
}

/// a += b.
#[inline(always)]
pub(crate) fn add(a: &mut Poly, b: &Poly) {
    for (x, y) in a.0.iter_mut().zip(&b.0) {
        *x = x.wrapping_add(*y);
    }
}

/// a −= b.
#[inline(always)]
pub(crate) fn sub(a: &mut Poly, b: &Poly) {
    for (x, y) in a.0.iter_mut().zip(&b.0) {
        *x = x.wrapping_sub(*y);
    }
}

/// Every coefficient reduced to [−6283009, 6283008] ([`reduce32`]), a representative of the
/// same class; one whose class has a representative below 2^22 in absolute value (z, r₀, ct₀
/// of an attempt the norm checks pass) comes out as exactly that, so the norm checks and
/// the packing of z see centred values.
#[inline(always)]
pub(crate) fn reduce(a: &mut Poly) {
    for x in a.0.iter_mut() {
        *x = reduce32(*x);
    }
}

/// Every coefficient reduced to [0, q): the canonical representative.
#[inline(always)]
pub(crate) fn freeze(a: &mut Poly) {
    for x in a.0.iter_mut() {
        *x = caddq(reduce32(*x));
    }
}

/// Every coefficient times 2^d (t₁ · 2^d, FIPS 204 Algorithm 8 line 9).
#[inline(always)]
pub(crate) fn shift_left_d(a: &mut Poly) {
    for x in a.0.iter_mut() {
        *x <<= D;
    }
}

/// Whether ‖a‖∞ ≥ bound, for centred coefficients (|a_i| < 2^31) and 0 < bound. Every
/// coefficient is looked at, without a branch per coefficient.
#[inline(always)]
pub(crate) fn exceeds(a: &Poly, bound: i32) -> bool {
    let mut over = 0i32;
    for &x in &a.0 {
        // |x| without a branch, then the sign of bound − 1 − |x|.
        let abs = x ^ (x >> 31);
        let abs = abs.wrapping_sub(x >> 31);
        over |= (bound - 1).wrapping_sub(abs);
    }
    over < 0
}

/// Power2Round(r) (FIPS 204 Algorithm 35) of every canonical coefficient of `t`: t₁ in `t`,
/// t₀ in `t0`.
#[inline(always)]
pub(crate) fn power2round(t: &mut Poly, t0: &mut Poly) {
    for (a, a0) in t.0.iter_mut().zip(t0.0.iter_mut()) {
        (*a, *a0) = power2round1(*a);
    }
}

/// Power2Round(r) (FIPS 204 Algorithm 35) of a canonical r ∈ [0, q): (r₁, r₀).
#[inline(always)]
fn power2round1(r: i32) -> (i32, i32) {
    let r1 = (r + (1 << (D - 1)) - 1) >> D;
    (r1, r - (r1 << D))
}

/// Decompose(r) (FIPS 204 Algorithm 36) of a canonical r ∈ [0, q): (r₁, r₀), for
/// γ₂ = (q − 1)/88 or (q − 1)/32, without a branch on r.
#[inline(always)]
fn decompose(r: i32, gamma2: i32) -> (i32, i32) {
    // Wrapping operations throughout: no overflow check (a branch on r in test builds).
    let mut r1 = r.wrapping_add(127) >> 7;
    if gamma2 == (Q - 1) / 32 {
        r1 = r1.wrapping_mul(1025).wrapping_add(1 << 21) >> 22;
        r1 &= 15;
    } else {
        r1 = r1.wrapping_mul(11275).wrapping_add(1 << 23) >> 24;
        // r₁ ∈ [0, 44]: 44 becomes 0. (r₁ + 20) >> 6 is 1 exactly for 44 — arithmetic the
        // compiler does not turn into a branch, as it does the reference's mask form.
        r1 = r1.wrapping_sub(44 * (r1.wrapping_add(20) >> 6));
    }
    let mut r0 = r.wrapping_sub(r1.wrapping_mul(2 * gamma2));
    r0 = r0.wrapping_sub((((Q - 1) / 2).wrapping_sub(r0) >> 31) & Q);
    (r1, r0)
}

/// HighBits and LowBits (FIPS 204 Algorithms 37, 38) of every canonical coefficient of `w`:
/// w₁ in `w`, w₀ in `w0`.
#[inline(always)]
pub(crate) fn decompose_all(w: &mut Poly, w0: &mut Poly, gamma2: i32) {
    for (a, a0) in w.0.iter_mut().zip(w0.0.iter_mut()) {
        (*a, *a0) = decompose(*a, gamma2);
    }
}

/// MakeHint (FIPS 204 Algorithm 39) in the form of the reference implementation: with
/// r₀ = LowBits(w − cs₂) + ct₀ in `low` and r₁ = HighBits(w − cs₂) in `high`, the hint is 1
/// exactly when adding −ct₀ changes the high bits. Writes 0/1 into `h`; returns their number.
#[inline(always)]
pub(crate) fn make_hint(h: &mut Poly, low: &Poly, high: &Poly, gamma2: i32) -> usize {
    // Sign masks (all ones when true) instead of comparisons: no branch or conditional move on
    // the secret low bits.
    let nonzero = |x: i32| (x | x.wrapping_neg()) >> 31;
    let mut n = 0i32;
    for ((o, &a0), &a1) in h.0.iter_mut().zip(&low.0).zip(&high.0) {
        let above = gamma2.wrapping_sub(a0) >> 31;
        let below = a0.wrapping_add(gamma2) >> 31;
        let at_minus = !nonzero(a0.wrapping_add(gamma2));
        *o = (above | below | (at_minus & nonzero(a1))) & 1;
        n = n.wrapping_add(*o);
    }
    n as usize
}

/// UseHint(h, r) (FIPS 204 Algorithm 40) of every canonical coefficient of `w` with the
/// hints `h` (0 or 1), in place.
#[inline(always)]
pub(crate) fn use_hint(w: &mut Poly, h: &Poly, gamma2: i32) {
    for (a, &hint) in w.0.iter_mut().zip(&h.0) {
        *a = use_hint1(hint, *a, gamma2);
    }
}

/// UseHint(h, r) (FIPS 204 Algorithm 40) of a canonical r ∈ [0, q) and a hint h ∈ {0, 1}.
#[inline(always)]
fn use_hint1(h: i32, r: i32, gamma2: i32) -> i32 {
    let m = (Q - 1) / (2 * gamma2);
    let (r1, r0) = decompose(r, gamma2);
    if h == 0 {
        r1
    } else if r0 > 0 {
        if r1 == m - 1 { 0 } else { r1 + 1 }
    } else if r1 == 0 {
        m - 1
    } else {
        r1 - 1
    }
}

pub(crate) use crate::Words;

/// RejNTTPoly's rejection (FIPS 204 Algorithm 30 with CoeffFromThreeBytes, Algorithm 14) over one
/// SHAKE128 block (168 bytes, as [`Words`]): appends the accepted coefficients to `a` from
/// `filled`, stopping at 256; returns the new count. Coefficients past the new count are
/// unspecified (the SIMD kernels may leave rejected candidates there, which later blocks
/// overwrite). The XOF output is ρ's, public.
#[inline(always)]
pub(crate) fn rej_ntt(a: &mut Poly, filled: usize, block: &Words, isa: Isa) -> usize {
    super::simd::rej_ntt(&mut a.0, filled, block, isa)
        .unwrap_or_else(|| rej_ntt_portable(&mut a.0, filled, block))
}

/// The portable twin of `simd::rej_ntt`: [`rej_ntt`], three bytes at a time.
#[inline(always)]
pub(crate) fn rej_ntt_portable(a: &mut [i32; N], filled: usize, block: &Words) -> usize {
    let bytes = crate::words_to_bytes(block);
    // Every candidate is written, and the count advances when it is kept: no branch per
    // candidate (almost all are kept: q/2^23 ≈ 0.999).
    let mut kept = [0i32; 56];
    let mut n = 0;
    for b in bytes.chunks_exact(3) {
        let z = i32::from(b[0]) | i32::from(b[1]) << 8 | i32::from(b[2] & 0x7F) << 16;
        kept[n] = z;
        n += usize::from(z < Q);
    }
    let take = n.min(N - filled);
    a[filled..filled + take].copy_from_slice(&kept[..take]);
    filled + take
}

/// RejBoundedPoly's rejection (FIPS 204 Algorithm 31 with CoeffFromHalfByte, Algorithm 15)
/// over one SHAKE256 block, for η ∈ {2, 4}: appends to `a` from `filled`, stopping at 256;
/// returns the new count. Which half-bytes are rejected depends only on themselves, not on
/// the coefficients kept, and the compaction does not branch on them. Variable time OK (key
/// generation only): the number kept per block indexes the copy.
#[inline(always)]
pub(crate) fn rej_eta(a: &mut Poly, filled: usize, block: &[u8; 136], eta: i32, isa: Isa) -> usize {
    super::simd::rej_eta(&mut a.0, filled, block, eta, isa)
        .unwrap_or_else(|| rej_eta_portable(&mut a.0, filled, block, eta))
}

/// The portable twin of `simd::rej_eta`: [`rej_eta`], a half-byte at a time.
#[inline(always)]
pub(crate) fn rej_eta_portable(
    a: &mut [i32; N],
    filled: usize,
    block: &[u8; 136],
    eta: i32,
) -> usize {
    let mut kept = pqkit_hash::Cleared([0i32; 2 * 136]);
    let mut n = 0;
    let bound = if eta == 2 { 15 } else { 9 };
    for &byte in block {
        for z in [i32::from(byte & 15), i32::from(byte >> 4)] {
            kept[n] = if eta == 2 {
                // 2 − (z mod 5), with z mod 5 = z − 5·⌊z·205 / 1024⌋ for z < 16.
                2 - (z - 5 * ((z * 205) >> 10))
            } else {
                4 - z
            };
            n += usize::from(z < bound);
        }
    }
    let take = n.min(N - filled);
    a[filled..filled + take].copy_from_slice(&kept[..take]);
    filled + take
}

/// SimpleBitPack / BitPack's core (FIPS 204 Algorithms 16, 17): the 256 values `f(a_i)`, each
/// below 2^BITS, little-endian, into 32·BITS bytes: groups of 8 coefficients (BITS ≤ 16) or
/// 4 (BITS ∈ {18, 20}), a whole number of bytes each, gathered as two halves in `u64`s (at
/// most 64 bits each) and joined in a `u128`. (Gathered straight into a `u128` with shifts
/// that vary along the loop, the compiler vectorized the loop and then emulated each
/// 128-bit shift on its lanes.)
#[inline(always)]
pub(crate) fn pack<const BITS: u32>(a: &Poly, f: impl Fn(i32) -> u32, out: &mut [u8]) {
    const { assert!(BITS <= 16 || BITS == 18 || BITS == 20) };
    let g = if BITS <= 16 { 8 } else { 4 };
    let bytes = g * BITS as usize / 8;
    let half = g / 2;
    debug_assert_eq!(out.len(), 32 * BITS as usize);
    let gather = |c: &[i32]| {
        let mut acc = 0u64;
        for (i, &x) in c.iter().enumerate() {
            acc |= u64::from(f(x)) << (BITS as usize * i);
        }
        acc
    };
    for (c, o) in a.0.chunks_exact(g).zip(out.chunks_exact_mut(bytes)) {
        let acc = u128::from(gather(&c[..half]))
            | u128::from(gather(&c[half..])) << (BITS as usize * half);
        o.copy_from_slice(&acc.to_le_bytes()[..bytes]);
    }
}

/// SimpleBitUnpack / BitUnpack's core (FIPS 204 Algorithms 18, 19): 256 BITS-bit values
/// (BITS ≤ 25: a value and its bit offset fit a `u32`) from 32·BITS bytes, each mapped
/// through `f`.
#[inline(always)]
pub(crate) fn unpack<const BITS: u32>(b: &[u8], f: impl Fn(u32) -> i32, a: &mut Poly) {
    const { assert!(BITS <= 25) };
    let bits = BITS as usize;
    let mask = (1u32 << BITS) - 1;
    debug_assert_eq!(b.len(), 32 * bits);
    for (c, g) in a.0.chunks_exact_mut(8).zip(b.chunks_exact(bits)) {
        for (j, x) in c.iter_mut().enumerate() {
            let (o, s) = (j * bits / 8, j * bits % 8);
            let n = (bits - o).min(4);
            let mut w = [0u8; 4];
            w[..n].copy_from_slice(&g[o..o + n]);
            *x = f((u32::from_le_bytes(w) >> s) & mask);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The NTT multiplies: NTT⁻¹(NTT(a) ∘ NTT(b)) = a·b mod X^256 + 1 (schoolbook).
    #[test]
    fn ntt_multiplies() {
        let mut seed = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % Q as u64) as i32
        };
        let mut a = Poly::ZERO;
        let mut b = Poly::ZERO;
        a.0.iter_mut().for_each(|x| *x = next());
        b.0.iter_mut().for_each(|x| *x = next() % 1000 - 500);
        let mut want = [0i64; N];
        for i in 0..N {
            for j in 0..N {
                let p = i64::from(a.0[i]) * i64::from(b.0[j]);
                if i + j < N {
                    want[i + j] += p;
                } else {
                    want[i + j - N] -= p;
                }
            }
        }
        let (mut x, mut y) = (a, b);
        ntt(&mut x, Isa::Portable);
        ntt(&mut y, Isa::Portable);
        let mut c = Poly::ZERO;
        mul(&mut c, &x, &y);
        reduce(&mut c);
        inv_ntt_to_mont(&mut c, Isa::Portable);
        freeze(&mut c);
        for (i, (&got, &want)) in c.0.iter().zip(&want).enumerate() {
            assert_eq!(i64::from(got), want.rem_euclid(i64::from(Q)), "{i}");
        }
    }

    /// Decompose equals FIPS 204 Algorithm 36's definition for every r ∈ [0, q), both γ₂.
    #[test]
    fn decompose_matches_the_definition() {
        for gamma2 in [(Q - 1) / 88, (Q - 1) / 32] {
            for r in 0..Q {
                let mut r0 = r % (2 * gamma2);
                if r0 > gamma2 {
                    r0 -= 2 * gamma2;
                }
                let want = if r - r0 == Q - 1 {
                    (0, r0 - 1)
                } else {
                    ((r - r0) / (2 * gamma2), r0)
                };
                assert_eq!(decompose(r, gamma2), want, "r = {r}, γ₂ = {gamma2}");
            }
        }
    }

    /// The branch-free norm check equals the plain one at and around the bound.
    #[test]
    fn exceeds_matches_the_definition() {
        for bound in [1, 77, (Q - 1) / 88, (1 << 19) - 196] {
            for x in [
                -bound - 1,
                -bound,
                -bound + 1,
                -1,
                0,
                1,
                bound - 1,
                bound,
                bound + 1,
            ] {
                let mut a = Poly::ZERO;
                a.0[77] = x;
                assert_eq!(exceeds(&a, bound), x.abs() >= bound, "{x} vs {bound}");
            }
        }
    }

    /// CCTV's accumulated field-operation test (`cctv/ML-DSA/accumulated/README.md` under the
    /// vectors directory): for every r ∈ [0, q), r mod± q, its norm, Power2Round, and for both
    /// γ₂ HighBits, UseHint(1, ·), LowBits and its norm, as decimal lines into SHAKE128; the
    /// digest must be the README's.
    #[test]
    fn cctv_field_operations() {
        use sha3::digest::{ExtendableOutput, Update, XofReader};
        let dir = std::env::var_os("PQKIT_VECTORS")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| {
                std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/vectors")
            });
        let readme = dir.join("cctv/ML-DSA/accumulated/README.md");
        let text = std::fs::read_to_string(&readme)
            .unwrap_or_else(|e| panic!("vector file {} is missing: {e}", readme.display()));
        const WANT: &str = "f930663417278156ab05d940294a77210a809c924d8ab63ec72f4526247602c7";
        assert!(text.contains(WANT), "{} lacks the digest", readme.display());
        let mut shake = sha3::Shake128::default();
        let mut line = Vec::with_capacity(160);
        // v in decimal and a newline, without an allocation (8.4 million r × 12 lines).
        let put = |line: &mut Vec<u8>, v: i32| {
            if v < 0 {
                line.push(b'-');
            }
            let mut digits = [0u8; 10];
            let (mut u, mut n) = (v.unsigned_abs(), 0);
            loop {
                digits[n] = b'0' + (u % 10) as u8;
                n += 1;
                u /= 10;
                if u == 0 {
                    break;
                }
            }
            line.extend(digits[..n].iter().rev());
            line.push(b'\n');
        };
        for r in 0..Q {
            line.clear();
            let centred = if r > (Q - 1) / 2 { r - Q } else { r };
            put(&mut line, centred);
            put(&mut line, centred.abs());
            let (t1, t0) = power2round1(r);
            put(&mut line, t1);
            put(&mut line, caddq(t0));
            for gamma2 in [(Q - 1) / 88, (Q - 1) / 32] {
                let (r1, r0) = decompose(r, gamma2);
                assert_eq!(use_hint1(0, r, gamma2), r1, "UseHint(0, {r}) = HighBits");
                put(&mut line, r1);
                put(&mut line, use_hint1(1, r, gamma2));
                put(&mut line, r0);
                put(&mut line, r0.abs());
            }
            shake.update(&line);
        }
        let mut out = [0u8; 32];
        shake.finalize_xof().read(&mut out);
        let got: String = out.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(got, WANT);
    }

    /// Packing and unpacking are inverse for every width the encodings use.
    #[test]
    fn pack_round_trips() {
        fn check<const BITS: u32>() {
            let mut a = Poly::ZERO;
            for (i, x) in a.0.iter_mut().enumerate() {
                *x = ((i as u64 * 2_654_435_761) % (1 << BITS)) as i32;
            }
            let mut out = vec![0u8; 32 * BITS as usize];
            pack::<BITS>(&a, |x| x as u32, &mut out);
            let mut b = Poly::ZERO;
            unpack::<BITS>(&out, |x| x as i32, &mut b);
            assert_eq!(a.0, b.0, "{BITS} bits");
        }
        check::<3>();
        check::<4>();
        check::<6>();
        check::<10>();
        check::<13>();
        check::<18>();
        check::<20>();
    }
}
