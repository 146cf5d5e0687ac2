//! Polynomials of R_q = Z_q\[X\]/(X^256 + 1), q = 3329, and of its NTT domain T_q (FIPS 203
//! §2.4, §4.3): the number-theoretic transform, base-case multiplication, compression and the
//! byte encodings.
//!
//! Coefficients are `i16`. Products are reduced by Montgomery reduction (R = 2^16), sums by
//! Barrett reduction, as in the Kyber reference implementation; the NTT's twiddle factors are
//! kept times R, so that a Montgomery product by one is an exact product. No function here
//! branches on, indexes by or divides a secret coefficient (FIPS 203 §3.3); the two that
//! branch — [`all_below_q`] and [`rej_uniform`] — see public data only (an encapsulation key,
//! the XOF of ρ).
//!
//! The arithmetic is `#[inline(always)]`: `simd::key_gen_on` and its siblings compile the
//! algorithms that call it once per instruction set, and its loops are vectorized inside each
//! copy.

use pqkit_hash::Isa;

pub(crate) use super::consts::{N, Q, REJ_BUF};
/// q⁻¹ mod 2^16, as a signed 16-bit integer.
const QINV: i16 = -3327;
/// 2^32 mod q (centred): a Montgomery product by it multiplies by R = 2^16 mod q.
const R2: i16 = 1353;
/// R²/128 mod q (centred): the inverse NTT's final factor, 128⁻¹ times R (FIPS 203
/// Algorithm 10, line 14's 3303 = 128⁻¹, here leaving the result times R).
const INV_128_R2: i16 = 1441;

/// Coefficients per row: one AVX2 register of 16-bit lanes (half an AVX-512 one).
const W: usize = 16;

/// A polynomial: 256 coefficients as 16 rows of 16, in R_q or T_q depending on where it is in
/// an algorithm.
///
/// In R_q (standard order) coefficient i is row i / 16, lane i mod 16. In T_q (after [`ntt`])
/// the rows are transposed: coefficient i is row i mod 16, lane i / 16 — so that every
/// butterfly of the NTT, and base-case multiplication's pairs (2i, 2i + 1), are between rows,
/// lane by lane, which the compiler vectorizes; the encodings of T_q elements
/// ([`encode12_ntt`], [`decode12_ntt`]) and [`rej_uniform`] translate to the standard's order.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub(crate) struct Poly(pub(crate) [[i16; W]; W]);

impl Poly {
    pub(crate) const ZERO: Self = Self([[0; W]; W]);

    /// The 256 coefficients, row after row.
    #[inline(always)]
    fn flat(&self) -> &[i16] {
        self.0.as_flattened()
    }

    /// The 256 coefficients, row after row.
    #[inline(always)]
    fn flat_mut(&mut self) -> &mut [i16] {
        self.0.as_flattened_mut()
    }
}

impl pqkit_hash::Zero for Poly {
    const ZERO: Self = Self::ZERO;
}

/// BitRev7(i) (FIPS 203 §4.3).
const fn bit_rev7(i: usize) -> usize {
    let mut r = 0;
    let mut b = 0;
    while b < 7 {
        r |= ((i >> b) & 1) << (6 - b);
        b += 1;
    }
    r
}

/// ζ^e mod q for ζ = 17, the primitive 256th root of unity (FIPS 203 §4.3).
const fn zeta_pow(e: usize) -> i32 {
    let mut r: i32 = 1;
    let mut k = 0;
    while k < e {
        r = r * 17 % Q as i32;
        k += 1;
    }
    r
}

/// A residue times 2^16 mod q, centred in (−q/2, q/2].
const fn to_mont_centred(x: i32) -> i16 {
    let v = (x * 65536) % Q as i32;
    let v = if v > Q as i32 / 2 { v - Q as i32 } else { v };
    v as i16
}

/// ZETAS\[i\] = ζ^BitRev7(i) · 2^16 mod q: the NTT's twiddle factors (FIPS 203 Appendix A,
/// first table) in Montgomery form. Entries 64..128 also give BaseCaseMultiply's
/// γ = ζ^(2·BitRev7(j)+1): ±ZETAS\[64 + j/2\] (FIPS 203 Appendix A, second table).
const ZETAS: [i16; 128] = {
    let mut z = [0i16; 128];
    let mut i = 0;
    while i < 128 {
        z[i] = to_mont_centred(zeta_pow(bit_rev7(i)));
        i += 1;
    }
    z
};

/// Rows of twiddle factors for the transposed layers: `rows[g][r] = ±ZETAS[base + r·per +
/// g]` (negated for odd g when `alternate`), over lane r.
const fn zeta_rows<const G: usize>(base: usize, per: usize, alternate: bool) -> [[i16; W]; G] {
    let mut rows = [[0i16; W]; G];
    let mut g = 0;
    while g < G {
        let mut r = 0;
        while r < W {
            let z = ZETAS[base + r * per + if alternate { g / 2 } else { g }];
            rows[g][r] = if alternate && g % 2 == 1 { -z } else { z };
            r += 1;
        }
        g += 1;
    }
    rows
}

/// The NTT's layers of length 8, 4 and 2 (Algorithm 9, ζ index k = 16 + i/16, 32 + i/8,
/// 64 + i/4 for coefficient i = 16r + c), as rows over lane r, by c / (2·len).
const NTT_8: [[i16; W]; 1] = zeta_rows(16, 1, false);
const NTT_4: [[i16; W]; 2] = zeta_rows(32, 2, false);
const NTT_2: [[i16; W]; 4] = zeta_rows(64, 4, false);
/// BaseCaseMultiply's γ for pair rows (2m, 2m + 1): pair j = 8r + m, γ = (−1)^m ·
/// ZETAS\[64 + 4r + m/2\].
const GAMMA: [[i16; W]; 8] = zeta_rows(64, 4, true);

/// The high half of a 16 × 16-bit signed product (one `vpmulhw`).
#[inline(always)]
fn mulhi(a: i16, b: i16) -> i16 {
    ((i32::from(a) * i32::from(b)) >> 16) as i16
}

/// a · b · 2^−16 mod q, in (−q, q): Montgomery reduction of a·b in 16-bit lanes —
/// hi(a·b) − hi(q · lo(lo(a·b) · q⁻¹)), exact because both products agree mod 2^16.
#[inline(always)]
fn fqmul(a: i16, b: i16) -> i16 {
    let t = a.wrapping_mul(b).wrapping_mul(QINV);
    mulhi(a, b).wrapping_sub(mulhi(t, Q))
}

/// a mod q, centred in [−(q−1)/2, (q−1)/2] (Barrett reduction: t = ⌊(v·a + 2^25) / 2^26⌋,
/// v = ⌊(2^26 + q/2) / q⌋, computed as ⌊(hi(v·a) + 2^9) / 2^10⌋, the same integer).
#[inline(always)]
fn barrett_reduce(a: i16) -> i16 {
    const V: i16 = (((1 << 26) + Q as i32 / 2) / Q as i32) as i16;
    let t = mulhi(V, a).wrapping_add(1 << 9) >> 10;
    a.wrapping_sub(t.wrapping_mul(Q))
}

/// a mod q in [0, q), for a centred residue in (−q, q).
#[inline(always)]
fn to_unsigned(a: i16) -> i16 {
    a.wrapping_add((a >> 15) & Q)
}

/// The forward butterfly of rows a, b with twiddle row z (Algorithm 9, lines 7–9).
#[inline(always)]
fn butterfly(a: &mut [i16; W], b: &mut [i16; W], z: &[i16; W]) {
    for l in 0..W {
        let t = fqmul(z[l], b[l]);
        b[l] = a[l].wrapping_sub(t);
        a[l] = a[l].wrapping_add(t);
    }
}

/// The inverse butterfly of rows a, b with twiddle row z (Algorithm 10, lines 7–9).
#[inline(always)]
fn inv_butterfly(a: &mut [i16; W], b: &mut [i16; W], z: &[i16; W]) {
    for l in 0..W {
        let t = a[l];
        a[l] = barrett_reduce(t.wrapping_add(b[l]));
        b[l] = fqmul(z[l], b[l].wrapping_sub(t));
    }
}

/// Rows `r` and `r + d` of a polynomial, both mutable.
#[inline(always)]
fn pair(rows: &mut [[i16; W]; W], r: usize, d: usize) -> (&mut [i16; W], &mut [i16; W]) {
    let (lo, hi) = rows.split_at_mut(r + d);
    (&mut lo[r], &mut hi[0])
}

/// Transposes the 16 × 16 rows in place: AVX2 shuffles on the SIMD paths, else
/// [`transpose_portable`].
#[inline(always)]
fn transpose(rows: &mut [[i16; W]; W], isa: Isa) {
    if super::simd::transpose(rows, isa).is_none() {
        transpose_portable(rows);
    }
}

/// Transposes the 16 × 16 rows in place, element by element: the twin of the SIMD kernel.
#[inline(always)]
pub(crate) fn transpose_portable(rows: &mut [[i16; W]; W]) {
    let src = pqkit_hash::Cleared(*rows);
    for (c, row) in rows.iter_mut().enumerate() {
        for (r, x) in row.iter_mut().enumerate() {
            *x = src[r][c];
        }
    }
}

/// NTT (FIPS 203 Algorithm 9), in place, from standard order to the transposed T_q layout
/// (see [`Poly`]); output coefficients bounded by 8q in absolute value for inputs below q.
#[inline(always)]
pub(crate) fn ntt(f: &mut Poly, isa: Isa) {
    crate::stats::ml_kem_ntt();
    let rows = &mut f.0;
    // Layers len = 128 … 16: between rows r and r + len/16, ζ index k = 1 … 15.
    let mut k = 1;
    let mut d = 8;
    while d >= 1 {
        for start in (0..W).step_by(2 * d) {
            let z = [ZETAS[k]; W];
            k += 1;
            for r in start..start + d {
                let (a, b) = pair(rows, r, d);
                butterfly(a, b, &z);
            }
        }
        d /= 2;
    }
    transpose(rows, isa);
    // Layers len = 8, 4, 2: between rows c and c + len, ζ by lane.
    for (d, zetas) in [(8, &NTT_8[..]), (4, &NTT_4[..]), (2, &NTT_2[..])] {
        for (g, start) in (0..W).step_by(2 * d).enumerate() {
            for c in start..start + d {
                let (a, b) = pair(rows, c, d);
                butterfly(a, b, &zetas[g]);
            }
        }
    }
}

/// NTT⁻¹ (FIPS 203 Algorithm 10), in place, from the transposed T_q layout to standard
/// order, times 2^16 (the factor a preceding base-case multiplication divides by); input
/// coefficients below 2^14 in absolute value ([`base_mul_acc`]), output in (−q, q).
#[inline(always)]
pub(crate) fn inv_ntt_to_mont(f: &mut Poly, isa: Isa) {
    crate::stats::ml_kem_ntt();
    let rows = &mut f.0;
    // Layers len = 2, 4, 8 (transposed): between rows c and c + len, ζ index
    // k = 127 − i/4, 63 − i/8, 31 − i/16 for coefficient i = 16r + c, by lane.
    for (d, zetas) in [(2, &INV_2[..]), (4, &INV_4[..]), (8, &INV_8[..])] {
        for (g, start) in (0..W).step_by(2 * d).enumerate() {
            for c in start..start + d {
                let (a, b) = pair(rows, c, d);
                inv_butterfly(a, b, &zetas[g]);
            }
        }
    }
    transpose(rows, isa);
    // Layers len = 16 … 128: ζ index k = 15 … 1 descending, by groups of rows.
    let mut k = 15;
    let mut d = 1;
    while d <= 8 {
        for start in (0..W).step_by(2 * d) {
            let z = [ZETAS[k]; W];
            k -= 1;
            for r in start..start + d {
                let (a, b) = pair(rows, r, d);
                inv_butterfly(a, b, &z);
            }
        }
        d *= 2;
    }
    for c in f.flat_mut().iter_mut() {
        *c = fqmul(*c, INV_128_R2);
    }
}

/// The inverse NTT's transposed layers: `rows[g][r] = ZETAS[top − (r·per + g)]`.
const fn inv_zeta_rows<const G: usize>(top: usize, per: usize) -> [[i16; W]; G] {
    let mut rows = [[0i16; W]; G];
    let mut g = 0;
    while g < G {
        let mut r = 0;
        while r < W {
            rows[g][r] = ZETAS[top - (r * per + g)];
            r += 1;
        }
        g += 1;
    }
    rows
}

const INV_2: [[i16; W]; 4] = inv_zeta_rows(127, 4);
const INV_4: [[i16; W]; 2] = inv_zeta_rows(63, 2);
const INV_8: [[i16; W]; 1] = inv_zeta_rows(31, 1);

/// acc += f ×_T g (FIPS 203 Algorithms 11 and 12) in the transposed T_q layout, times
/// 2^−16, for f in [0, q) (sampled or decoded) and g in [−(q−1)/2, (q−1)/2] (reduced after
/// the NTT), as every caller passes them. Each Montgomery product is then below
/// (q · 2^15 + (q−1)²/2) / 2^16 < 1749 in absolute value, each call adds two to a coefficient,
/// so k ≤ 4 calls leave |acc| < 14 000: below 2^14, which [`inv_ntt_to_mont`]'s first layer
/// needs (its differences b − a stay below 2^15) — `accumulation_bound_holds` tests the
/// extremes.
#[inline(always)]
pub(crate) fn base_mul_acc(acc: &mut Poly, f: &Poly, g: &Poly) {
    for (m, gamma) in GAMMA.iter().enumerate() {
        let (a0, a1) = (&f.0[2 * m], &f.0[2 * m + 1]);
        let (b0, b1) = (&g.0[2 * m], &g.0[2 * m + 1]);
        let (c0, c1) = pair(&mut acc.0, 2 * m, 1);
        for l in 0..W {
            let t0 = fqmul(fqmul(a1[l], b1[l]), gamma[l]).wrapping_add(fqmul(a0[l], b0[l]));
            let t1 = fqmul(a0[l], b1[l]).wrapping_add(fqmul(a1[l], b0[l]));
            c0[l] = c0[l].wrapping_add(t0);
            c1[l] = c1[l].wrapping_add(t1);
        }
    }
}

/// Every coefficient reduced to (−q/2, q/2] (Barrett).
#[inline(always)]
pub(crate) fn reduce(f: &mut Poly) {
    for c in f.flat_mut().iter_mut() {
        *c = barrett_reduce(*c);
    }
}

/// Every coefficient times 2^16, reduced: undoes base-case multiplication's 2^−16.
#[inline(always)]
pub(crate) fn to_mont(f: &mut Poly) {
    for c in f.flat_mut().iter_mut() {
        *c = fqmul(*c, R2);
    }
}

/// f += g, coefficient-wise (no reduction; both in the same layout).
#[inline(always)]
pub(crate) fn add(f: &mut Poly, g: &Poly) {
    for (a, b) in f.flat_mut().iter_mut().zip(g.flat()) {
        *a = a.wrapping_add(*b);
    }
}

/// f = g − f, coefficient-wise (no reduction; both in the same layout).
#[inline(always)]
pub(crate) fn sub_from(f: &mut Poly, g: &Poly) {
    for (a, b) in f.flat_mut().iter_mut().zip(g.flat()) {
        *a = b.wrapping_sub(*a);
    }
}

/// ⌊y / q⌋ for 0 ≤ y < 2^24, without a division instruction: ⌊y · ⌈2^40/q⌉ / 2^40⌋, exact
/// in that range (the error y · (⌈2^40/q⌉ − 2^40/q) / 2^40 stays below 1/q).
#[inline(always)]
fn div_q(y: u32) -> u32 {
    const M: u64 = (1u64 << 40).div_ceil(Q as u64);
    (u64::from(y).wrapping_mul(M) >> 40) as u32
}

/// ByteEncode_D(Compress_D(f)) (FIPS 203 Algorithm 5, §4.2.1 Compress_d(x) = ⌈(2^d/q)·x⌋
/// mod 2^d), for D < 12, of a polynomial in (−q, q) in standard order; `out` is 32·D bytes.
#[inline(always)]
pub(crate) fn compress_encode<const D: u32>(f: &Poly, out: &mut [u8]) {
    debug_assert_eq!(out.len(), 32 * D as usize);
    let mask = (1u32 << D) - 1;
    let mut y = [0u16; N];
    for (y, &c) in y.iter_mut().zip(f.flat()) {
        let x = to_unsigned(c) as u32;
        // ⌈(2^d/q)·x⌋ = ⌊(2^d·x + ⌊q/2⌋) / q⌋ (q odd, so no tie).
        *y = (div_q((x << D).wrapping_add(Q as u32 / 2)) & mask) as u16;
    }
    // Eight D-bit values are D bytes, least significant bit first.
    for (o, y) in out.chunks_exact_mut(D as usize).zip(y.as_chunks::<8>().0) {
        let mut acc: u128 = 0;
        for (j, &v) in y.iter().enumerate() {
            acc |= u128::from(v) << (D as usize * j);
        }
        o.copy_from_slice(&acc.to_le_bytes()[..D as usize]);
    }
    pqkit_hash::wipe(&mut y);
}

/// Decompress_D(ByteDecode_D(b)) (FIPS 203 Algorithm 6, §4.2.1 Decompress_d(y) =
/// ⌈(q/2^d)·y⌋), for D < 12, into standard order; `b` is 32·D bytes. Coefficients in
/// [0, q).
#[inline(always)]
pub(crate) fn decode_decompress<const D: u32>(b: &[u8], f: &mut Poly) {
    debug_assert_eq!(b.len(), 32 * D as usize);
    let mask = (1u64 << D) - 1;
    let d = D as usize;
    // Eight D-bit values are D bytes: the first four from bit 0, the last four from bit 4·D
    // (byte ⌊4D/8⌋, shifted by 4D mod 8), each half in a u64 (at most 44 + 4 bits) read
    // straight from `b` (from a zero-padded copy of the last 16 bytes near the end). (Read as
    // one u128, the shifts were vectorized and then emulated lane by lane.)
    let (at, shift) = (4 * d / 8, 4 * D % 8);
    let mut tail = [0u8; 24];
    tail[..16].copy_from_slice(&b[b.len() - 16..]);
    let word = |i: usize| {
        let w = if i + 8 <= b.len() {
            &b[i..i + 8]
        } else {
            let t = i + 16 - b.len();
            &tail[t..t + 8]
        };
        u64::from_le_bytes(w.try_into().expect("8 bytes"))
    };
    for (g, c) in f.flat_mut().chunks_exact_mut(8).enumerate() {
        let halves = [word(g * d), word(g * d + at) >> shift];
        for (j, c) in c.iter_mut().enumerate() {
            let y = ((halves[j / 4] >> (d * (j % 4))) & mask) as u32;
            *c = (y.wrapping_mul(Q as u32).wrapping_add(1 << (D - 1)) >> D) as i16;
        }
    }
}

/// ByteEncode_12 (FIPS 203 Algorithm 5, d = 12) of an element of T_q (transposed layout,
/// [`Poly`]) in (−q, q), reduced to [0, q) first; `out` is 384 bytes.
#[inline(always)]
pub(crate) fn encode12_ntt(f: &Poly, out: &mut [u8], isa: Isa) {
    debug_assert_eq!(out.len(), 384);
    let mut g = pqkit_hash::Cleared(*f);
    transpose(&mut g.0.0, isa);
    for (o, c) in out.chunks_exact_mut(3).zip(g.flat().chunks_exact(2)) {
        let a = to_unsigned(c[0]) as u16;
        let b = to_unsigned(c[1]) as u16;
        o[0] = a as u8;
        o[1] = ((a >> 8) | (b << 4)) as u8;
        o[2] = (b >> 4) as u8;
    }
}

/// ByteDecode_12 (FIPS 203 Algorithm 6, d = 12) without the reduction mod q: coefficients in
/// [0, 4096). `b` is 384 bytes.
#[inline(always)]
pub(crate) fn decode12_raw(b: &[u8], f: &mut Poly) {
    debug_assert_eq!(b.len(), 384);
    for (c, i) in f.flat_mut().chunks_exact_mut(2).zip(b.chunks_exact(3)) {
        let (b0, b1, b2) = (i16::from(i[0]), i16::from(i[1]), i16::from(i[2]));
        c[0] = b0 | ((b1 & 0x0F) << 8);
        c[1] = (b1 >> 4) | (b2 << 4);
    }
}

/// ByteDecode_12 (FIPS 203 Algorithm 6, d = 12) of an element of T_q, into the transposed
/// layout ([`Poly`]): coefficients reduced mod q, in [0, q) (constant time: one conditional
/// subtraction by mask).
#[inline(always)]
pub(crate) fn decode12_ntt(b: &[u8], f: &mut Poly, isa: Isa) {
    decode12_raw(b, f);
    for c in f.flat_mut().iter_mut() {
        let t = c.wrapping_sub(Q);
        *c = t.wrapping_add((t >> 15) & Q);
    }
    transpose(&mut f.0, isa);
}

/// Whether every coefficient of a [`decode12_raw`] result is below q: FIPS 203 §7.2's
/// modulus check (ByteEncode_12(ByteDecode_12(ek)) = ek). Public data; not constant time.
pub(crate) fn all_below_q(f: &Poly) -> bool {
    f.flat().iter().all(|&c| c < Q)
}

/// Decompress_1(ByteDecode_1(m)) (FIPS 203 Algorithm 14, line 20): bit i of the 32-byte `m`
/// becomes ⌈q/2⌋ = 1665 or 0 (by mask, constant time).
#[inline(always)]
pub(crate) fn from_message(m: &[u8; 32], f: &mut Poly) {
    let mut bits = pqkit_hash::Cleared([0i16; N]);
    for (i, b) in bits.iter_mut().enumerate() {
        *b = i16::from((m[i / 8] >> (i % 8)) & 1);
    }
    // The barrier: past it the compiler cannot know that each entry is 0 or 1, so it cannot
    // turn the mask below into a select or a branch on the (secret) bit. One barrier for the
    // whole array, not one per bit: both loops stay vectorized.
    core::hint::black_box(&mut *bits);
    for (c, &b) in f.flat_mut().iter_mut().zip(bits.iter()) {
        *c = b.wrapping_neg() & (Q / 2 + 1);
    }
}

/// ByteEncode_1(Compress_1(w)) (FIPS 203 Algorithm 15, line 7), of w in (−q, q).
#[inline(always)]
pub(crate) fn to_message(f: &Poly, m: &mut [u8; 32]) {
    compress_encode::<1>(f, m);
}

/// SamplePolyCBD_η (FIPS 203 Algorithm 8) of 64·η bytes, for η ∈ {2, 3}; coefficients in
/// [−η, η]. Bit-sliced: no branch on the (secret) bytes.
#[inline(always)]
pub(crate) fn cbd(b: &[u8], eta: usize, f: &mut Poly) {
    match eta {
        2 => {
            for (c, w) in f.flat_mut().chunks_exact_mut(8).zip(b.chunks_exact(4)) {
                let t = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
                let d = (t & 0x5555_5555).wrapping_add((t >> 1) & 0x5555_5555);
                for (j, c) in c.iter_mut().enumerate() {
                    let a = ((d >> (4 * j)) & 3) as i16;
                    let b = ((d >> (4 * j + 2)) & 3) as i16;
                    *c = a.wrapping_sub(b);
                }
            }
        }
        3 => {
            for (c, w) in f.flat_mut().chunks_exact_mut(4).zip(b.chunks_exact(3)) {
                let t = u32::from_le_bytes([w[0], w[1], w[2], 0]);
                let d = (t & 0x0024_9249)
                    .wrapping_add((t >> 1) & 0x0024_9249)
                    .wrapping_add((t >> 2) & 0x0024_9249);
                for (j, c) in c.iter_mut().enumerate() {
                    let a = ((d >> (6 * j)) & 7) as i16;
                    let b = ((d >> (6 * j + 3)) & 7) as i16;
                    *c = a.wrapping_sub(b);
                }
            }
        }
        _ => unreachable!("ML-KEM has η ∈ {{2, 3}}"),
    }
}

/// SampleNTT's rejection (FIPS 203 Algorithm 7, lines 4–15) over one squeezed block of 168
/// bytes (as [`crate::Words`], read in place): appends the
/// candidates below q to `buf` from `filled`, returning the new count (possibly past 256:
/// only the first 256 are kept, as the standard stops there). Nothing is appended once 256
/// are there. The data is public (the XOF of ρ).
#[inline(always)]
pub(crate) fn rej_uniform(
    buf: &mut [i16; REJ_BUF],
    filled: usize,
    block: &crate::Words,
    isa: Isa,
) -> usize {
    super::simd::rej_uniform(buf, filled, block, isa)
        .unwrap_or_else(|| rej_uniform_portable(buf, filled, &crate::words_to_bytes(block)))
}

/// [`rej_uniform`] one candidate at a time, branch-free (each candidate is written, the
/// count advanced by whether it is below q): the twin of the SIMD kernel.
#[inline(always)]
pub(crate) fn rej_uniform_portable(
    buf: &mut [i16; REJ_BUF],
    mut filled: usize,
    block: &[u8],
) -> usize {
    if filled >= N {
        return filled;
    }
    for c in block.chunks_exact(3) {
        let d1 = u16::from(c[0]) | (u16::from(c[1] & 0x0F) << 8);
        let d2 = (u16::from(c[1]) >> 4) | (u16::from(c[2]) << 4);
        buf[filled] = d1 as i16;
        filled += usize::from(d1 < Q as u16);
        buf[filled] = d2 as i16;
        filled += usize::from(d2 < Q as u16);
    }
    filled
}

/// The first 256 coefficients [`rej_uniform`] gathered, as an element of T_q (transposed
/// layout, [`Poly`]).
#[inline(always)]
pub(crate) fn from_rejected(buf: &[i16; REJ_BUF], a: &mut Poly, isa: Isa) {
    a.flat_mut().copy_from_slice(&buf[..N]);
    transpose(&mut a.0, isa);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The straightforward definitions of FIPS 203, in i64 arithmetic mod q.
    fn m(x: i64) -> i64 {
        x.rem_euclid(3329)
    }

    /// Montgomery reduction in 32 bits (the Kyber reference's), for a < q · 2^15.
    fn montgomery_reduce(a: i32) -> i16 {
        let t = (a as i16).wrapping_mul(QINV);
        ((a - i32::from(t) * i32::from(Q)) >> 16) as i16
    }

    /// The 16-bit-lane forms equal the 32-bit reference reductions wherever the code uses
    /// them: every a against a spread of b for fqmul, every i16 for Barrett.
    #[test]
    fn reductions_match_reference() {
        for a in i16::MIN..=i16::MAX {
            let want = a as i32 - ((20159 * a as i32 + (1 << 25)) >> 26) * 3329;
            assert_eq!(i32::from(barrett_reduce(a)), want, "barrett {a}");
            for b in [
                -3328i16, -1664, -17, -1, 0, 1, 2, 1353, 1441, 3328, ZETAS[1], ZETAS[127],
            ] {
                assert_eq!(
                    fqmul(a, b),
                    montgomery_reduce(i32::from(a) * i32::from(b)),
                    "{a} · {b}"
                );
            }
        }
    }

    /// k = 4 base-case products of the extreme operands the callers pass (f = q − 1 or 0, g =
    /// ±(q − 1)/2), accumulated and inverted, equal the sum of the schoolbook products: no
    /// i16 overflow on the way.
    #[test]
    fn accumulation_bound_holds() {
        for case in 0..4 {
            let f = |i: usize| -> i16 {
                if (i + case).is_multiple_of(3) {
                    0
                } else {
                    3328
                }
            };
            let g = |i: usize| -> i16 {
                if (i * 7 + case).is_multiple_of(2) {
                    1664
                } else {
                    -1664
                }
            };
            let (mut fa, mut ga) = (Poly::ZERO, Poly::ZERO);
            fa.flat_mut()
                .iter_mut()
                .enumerate()
                .for_each(|(i, c)| *c = f(i));
            ga.flat_mut()
                .iter_mut()
                .enumerate()
                .for_each(|(i, c)| *c = g(i));
            // As a sampled Â entry (transposed layout) and a reduced NTT output.
            let mut acc = Poly::ZERO;
            for _ in 0..4 {
                base_mul_acc(&mut acc, &fa, &ga);
            }
            assert!(acc.flat().iter().all(|c| c.unsigned_abs() < 1 << 14));
            let mut want = Poly::ZERO;
            let mut one = Poly::ZERO;
            base_mul_acc(&mut one, &fa, &ga);
            for (w, o) in want.flat_mut().iter_mut().zip(one.flat()) {
                *w = (i32::from(*o) * 4).rem_euclid(3329) as i16;
            }
            inv_ntt_to_mont(&mut acc, Isa::Portable);
            inv_ntt_to_mont(&mut want, Isa::Portable);
            for (a, w) in acc.flat().iter().zip(want.flat()) {
                assert_eq!(m(i64::from(*a)), m(i64::from(*w)), "case {case}");
            }
        }
    }

    /// The SIMD rejection sampling equals its portable twin on every path, on random blocks
    /// and on blocks full of rejections and of acceptances, from several starting counts.
    #[test]
    fn rej_uniform_twins() {
        let mut seed = 0x1234_5678_9abc_def0u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..300 {
            let block: crate::Words = core::array::from_fn(|_| match round % 3 {
                0 => next(),
                1 => u64::MAX,
                _ => next() & 0x0C0C_0C0C_0C0C_0C0C,
            });
            let start = [0usize, 100, 200, 255, 256][round % 5];
            let mut want = [0i16; REJ_BUF];
            let n = rej_uniform_portable(&mut want, start, &crate::words_to_bytes(&block));
            for isa in Isa::supported() {
                let mut got = [0i16; REJ_BUF];
                assert_eq!(rej_uniform(&mut got, start, &block, isa), n, "{isa}");
                assert_eq!(
                    got[start.min(n)..n.min(N)],
                    want[start.min(n)..n.min(N)],
                    "{isa}"
                );
            }
        }
    }

    /// The SIMD transposition equals its portable twin on every path this CPU has.
    #[test]
    fn transpose_twins() {
        let rows: [[i16; W]; W] =
            core::array::from_fn(|r| core::array::from_fn(|c| (r * 100 + c) as i16 - 800));
        let mut want = rows;
        transpose_portable(&mut want);
        for c in 0..W {
            for r in 0..W {
                assert_eq!(want[c][r], rows[r][c]);
            }
        }
        for isa in Isa::supported() {
            let mut got = rows;
            transpose(&mut got, isa);
            assert_eq!(got, want, "{isa}");
        }
    }

    #[test]
    fn zetas_are_fips_203_appendix_a() {
        // Appendix A's first entries: 1, 1729, 2580, 3289, 2642, 630, 1897, 848.
        let want = [1, 1729, 2580, 3289, 2642, 630, 1897, 848];
        for (i, w) in want.iter().enumerate() {
            assert_eq!(m(i64::from(fqmul(ZETAS[i], 1))), *w, "ζ^BitRev7({i})");
        }
        // R2 = 2^32 mod q, INV_128_R2 = 2^32 / 128 mod q.
        assert_eq!(m(i64::from(R2)), m(1 << 32));
        assert_eq!(m(i64::from(INV_128_R2) * 128), m(1 << 32));
    }

    #[test]
    fn compress_is_exact_rounding() {
        for d in [1u32, 4, 5, 10, 11] {
            for x in 0..3329u32 {
                let want = ((u64::from(x) << (d + 1)) + 3329) / (2 * 3329) % (1 << d);
                let y = div_q((x << d) + 1664) & ((1 << d) - 1);
                assert_eq!(u64::from(y), want, "d = {d}, x = {x}");
            }
        }
        for y in 0..(1u32 << 23) {
            assert_eq!(div_q(y), y / 3329);
        }
    }

    /// NTT then NTT⁻¹ is the identity (times the 2^16 the inverse leaves), and base-case
    /// multiplication is the product in R_q, checked against schoolbook multiplication.
    #[test]
    fn ntt_multiplies() {
        let from = |c: [i16; N]| {
            let mut p = Poly::ZERO;
            p.flat_mut().copy_from_slice(&c);
            p
        };
        let f = from(core::array::from_fn(|i| {
            ((i * 37 + 11) % 3329) as i16 - 1664
        }));
        let g = from(core::array::from_fn(|i| {
            ((i * i * 7 + 5) % 3329) as i16 - 1664
        }));
        let mut want = [0i64; N];
        for i in 0..N {
            for j in 0..N {
                let p = i64::from(f.flat()[i]) * i64::from(g.flat()[j]);
                if i + j < N {
                    want[i + j] += p;
                } else {
                    want[i + j - N] -= p;
                }
            }
        }
        let (mut a, mut b) = (f, g);
        ntt(&mut a, Isa::Portable);
        ntt(&mut b, Isa::Portable);
        reduce(&mut a);
        reduce(&mut b);
        let mut c = Poly::ZERO;
        base_mul_acc(&mut c, &a, &b);
        inv_ntt_to_mont(&mut c, Isa::Portable);
        for (i, (got, want)) in c.flat().iter().zip(want).enumerate() {
            assert_eq!(m(i64::from(*got)), m(want), "coefficient {i}");
        }
        let mut id = f;
        ntt(&mut id, Isa::Portable);
        reduce(&mut id);
        inv_ntt_to_mont(&mut id, Isa::Portable);
        for i in 0..N {
            // NTT⁻¹ leaves the result times 2^16.
            assert_eq!(
                m(i64::from(id.flat()[i])),
                m(i64::from(f.flat()[i]) * 65536)
            );
        }
    }
}
