//! Everything in ML-DSA that needs `unsafe`: the choice of the instruction set the algorithms are
//! compiled for ([`key_gen_on`], [`from_expanded_on`], [`sign_on`], [`verify_on`],
//! [`expand_key_on`], through `crate::simd::on_path!`), and the kernels the compiler does not
//! find by itself: in AVX2 the NTT and its inverse, whose Montgomery products need the
//! even/odd-lane 32 × 32 → 64-bit multiplications the vectorizer does not produce; RejNTTPoly's
//! rejection, 8 candidates at a time in AVX2 and 16 in AVX-512 (`vpcompressd`); RejBoundedPoly's,
//! 16 half-bytes at a time in AVX-512. Their portable twins are [`super::poly`]'s
//! `ntt_portable`, `inv_ntt_portable`, `rej_ntt_portable` and `rej_eta_portable`; a test proves
//! each pair identical. An [`Isa`] is a plain value, so each entry point checks the CPU itself.
#![allow(unsafe_code)]

use pqkit_hash::Isa;

use super::consts::N;
#[cfg(target_arch = "x86_64")]
use super::consts::{
    INV_256_R2, IZ1, IZ1Q, IZ2, IZ2Q, IZ4, IZ4Q, Q, QINV, W, Z1, Z1Q, Z2, Z2Q, Z4, Z4Q, ZETAS,
};
use super::{Error, Key, MU_SIZE, Mu, Params, RND_SIZE, SigningKey, VerifyingKey};
use crate::Words;
use crate::simd::{avx2, avx2_kernel, on_path};

on_path!(
    /// ML-DSA.KeyGen_internal (`super::key_gen_any`) compiled for `isa`.
    fn key_gen_on(p: &'static Params, xi: &[u8; 32]) -> SigningKey = super::key_gen_any
);
on_path!(
    /// Expanded-key loading (`super::from_expanded_any`) compiled for `isa`.
    fn from_expanded_on(p: &'static Params, sk: &[u8]) -> Result<SigningKey, Error>
        = super::from_expanded_any
);
on_path!(
    /// ML-DSA.Sign_internal (`super::sign_any`) compiled for `isa`.
    fn sign_on(sk: &SigningKey, mu: &[u8; MU_SIZE], rnd: &[u8; RND_SIZE], sig: &mut [u8]) -> ()
        = super::sign_any
);
on_path!(
    /// `super::ntt_pairs_any` compiled for `isa`.
    fn ntt_pairs_on(pairs: usize) -> () = super::ntt_pairs_any
);
on_path!(
    /// ML-DSA.Verify_internal (`super::verify_any`) compiled for `isa`.
    fn verify_on(p: &'static Params, key: Key<'_>, mu: Mu<'_>, sig: &[u8]) -> bool
        = super::verify_any
);
on_path!(
    /// `VerifyingKey::new` (`super::expand_key_any`) compiled for `isa`.
    fn expand_key_on(p: &'static Params, pk: &[u8]) -> VerifyingKey = super::expand_key_any
);

avx2_kernel!(
    /// NTT (FIPS 204 Algorithm 41) in place with the AVX2 kernel (the contract of
    /// `poly::ntt_portable`).
    fn ntt(a: &mut [i32; N]) -> () = ntt_avx2
);
avx2_kernel!(
    /// NTT⁻¹ · R (FIPS 204 Algorithm 42) in place with the AVX2 kernel (the contract of
    /// `poly::inv_ntt_portable`).
    fn inv_ntt(a: &mut [i32; N]) -> () = inv_ntt_avx2
);
/// RejNTTPoly's rejection over one SHAKE128 block (the contract of `poly::rej_ntt_portable`)
/// with the widest kernel `isa` allows — AVX-512 (16 candidates at a time) or AVX2 (8) —
/// checked here, not trusted; `None`, nothing done, when neither may run.
#[inline(always)]
pub(crate) fn rej_ntt(a: &mut [i32; N], filled: usize, block: &Words, isa: Isa) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        if crate::simd::avx512(isa) {
            // SAFETY: the CPU has AVX-512F, AVX-512BW and AVX2 (checked by `avx512`).
            return Some(unsafe { rej_ntt_avx512(a, filled, block) });
        }
        if avx2(isa) {
            // SAFETY: the CPU has AVX2 (checked by `avx2`).
            return Some(unsafe { rej_ntt_avx2(a, filled, block) });
        }
    }
    let _ = (a, filled, block, isa);
    None
}

/// RejBoundedPoly's rejection over one SHAKE256 block (the contract of
/// `poly::rej_eta_portable`) with the AVX-512 kernel when `isa` allows it (checked here, not
/// trusted); `None`, nothing done, otherwise.
#[inline(always)]
pub(crate) fn rej_eta(
    a: &mut [i32; N],
    filled: usize,
    block: &[u8; 136],
    eta: i32,
    isa: Isa,
) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::avx512(isa) {
        // SAFETY: the CPU has AVX-512F, AVX-512BW and AVX2 (checked by `avx512`).
        return Some(unsafe { rej_eta_avx512(a, filled, block, eta) });
    }
    let _ = (a, filled, block, eta, isa);
    None
}

#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::{
    __m128i, __m256i, __m512i, _mm_and_si128, _mm_loadl_epi64, _mm_set1_epi8, _mm_setr_epi8,
    _mm_srli_epi16, _mm_unpacklo_epi8, _mm256_add_epi32, _mm256_and_si256, _mm256_blend_epi32,
    _mm256_castsi256_ps, _mm256_cmpgt_epi32, _mm256_cvtepu8_epi32, _mm256_loadu_si256,
    _mm256_movemask_ps, _mm256_mul_epi32, _mm256_permute2x128_si256, _mm256_permute4x64_epi64,
    _mm256_permutevar8x32_epi32, _mm256_set1_epi32, _mm256_setr_epi8, _mm256_setzero_si256,
    _mm256_shuffle_epi8, _mm256_srli_epi64, _mm256_storeu_si256, _mm256_sub_epi32,
    _mm256_sub_epi64, _mm256_unpackhi_epi32, _mm256_unpackhi_epi64, _mm256_unpacklo_epi32,
    _mm256_unpacklo_epi64, _mm512_and_si512, _mm512_broadcast_i32x4, _mm512_cmplt_epi32_mask,
    _mm512_cvtepu8_epi32, _mm512_loadu_si512, _mm512_maskz_compress_epi32,
    _mm512_permutexvar_epi32, _mm512_set1_epi32, _mm512_setr_epi32, _mm512_shuffle_epi8,
    _mm512_storeu_si512,
};

/// Eight Montgomery products b·z·R⁻¹ mod q (`poly::mont_mul` lane by lane, the same integers), `zq`
/// = z·q⁻¹ mod 2^32: with m = b·zq mod 2^32 = b·z·q⁻¹ mod 2^32, the 64-bit differences b·z − m·q
/// have zero low halves, and their high halves are the results. Even lanes, then odd lanes shifted
/// down, blended.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
fn mont_mul(b: __m256i, z: __m256i, zq: __m256i) -> __m256i {
    let q = _mm256_set1_epi32(Q);
    let b_odd = _mm256_srli_epi64::<32>(b);
    let z_odd = _mm256_srli_epi64::<32>(z);
    let zq_odd = _mm256_srli_epi64::<32>(zq);
    let even = _mm256_sub_epi64(
        _mm256_mul_epi32(b, z),
        _mm256_mul_epi32(_mm256_mul_epi32(b, zq), q),
    );
    let odd = _mm256_sub_epi64(
        _mm256_mul_epi32(b_odd, z_odd),
        _mm256_mul_epi32(_mm256_mul_epi32(b_odd, zq_odd), q),
    );
    _mm256_blend_epi32::<0xAA>(_mm256_srli_epi64::<32>(even), odd)
}

/// Eight rows in registers.
#[cfg(target_arch = "x86_64")]
type Rows = [__m256i; 8];

/// (x, y) ← (x + ζy, x − ζy), lane by lane, on rows x and y of `v`.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
fn butterfly(v: &mut Rows, x: usize, y: usize, (z, zq): (__m256i, __m256i)) {
    let t = mont_mul(v[y], z, zq);
    v[y] = _mm256_sub_epi32(v[x], t);
    v[x] = _mm256_add_epi32(v[x], t);
}

/// (x, y) ← (x + y, ζ(x − y)), lane by lane (ζ already negated).
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
fn inv_butterfly(v: &mut Rows, x: usize, y: usize, (z, zq): (__m256i, __m256i)) {
    let t = v[x];
    v[x] = _mm256_add_epi32(t, v[y]);
    v[y] = mont_mul(_mm256_sub_epi32(t, v[y]), z, zq);
}

/// The 8 × 8 transposition of eight rows: 32-bit, then 64-bit interleaves within 128-bit
/// halves, then the halves exchanged.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
fn transpose(x: &mut Rows) {
    let a = [
        _mm256_unpacklo_epi32(x[0], x[1]),
        _mm256_unpackhi_epi32(x[0], x[1]),
        _mm256_unpacklo_epi32(x[2], x[3]),
        _mm256_unpackhi_epi32(x[2], x[3]),
        _mm256_unpacklo_epi32(x[4], x[5]),
        _mm256_unpackhi_epi32(x[4], x[5]),
        _mm256_unpacklo_epi32(x[6], x[7]),
        _mm256_unpackhi_epi32(x[6], x[7]),
    ];
    let c = [
        _mm256_unpacklo_epi64(a[0], a[2]),
        _mm256_unpackhi_epi64(a[0], a[2]),
        _mm256_unpacklo_epi64(a[1], a[3]),
        _mm256_unpackhi_epi64(a[1], a[3]),
        _mm256_unpacklo_epi64(a[4], a[6]),
        _mm256_unpackhi_epi64(a[4], a[6]),
        _mm256_unpacklo_epi64(a[5], a[7]),
        _mm256_unpackhi_epi64(a[5], a[7]),
    ];
    // Row j: lanes j of rows 0–3 are in c[j mod 4]'s low or high half, of rows 4–7 in
    // c[4 + j mod 4]'s.
    for j in 0..4 {
        x[j] = _mm256_permute2x128_si256::<0x20>(c[j], c[4 + j]);
        x[j + 4] = _mm256_permute2x128_si256::<0x31>(c[j], c[4 + j]);
    }
}

/// Rows first, first + stride, …, first + 7·stride of `a`.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
fn load(a: &[i32; N], first: usize, stride: usize) -> Rows {
    let mut v = [_mm256_setzero_si256(); 8];
    for (i, x) in v.iter_mut().enumerate() {
        let row = &a[W * (first + stride * i)..W * (first + stride * i + 1)];
        // SAFETY: `row` is 32 readable bytes; the load is unaligned.
        *x = unsafe { _mm256_loadu_si256(row.as_ptr().cast::<__m256i>()) };
    }
    v
}

/// The inverse of [`load`]; the registers are then cleared (they may hold secrets).
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
fn store(v: &mut Rows, a: &mut [i32; N], first: usize, stride: usize) {
    for (i, x) in v.iter().enumerate() {
        let row = &mut a[W * (first + stride * i)..W * (first + stride * i + 1)];
        // SAFETY: `row` is 32 writable bytes; the store is unaligned.
        unsafe { _mm256_storeu_si256(row.as_mut_ptr().cast::<__m256i>(), *x) };
    }
    v.fill(_mm256_setzero_si256());
    core::hint::black_box(&mut *v);
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
}

/// A row of per-lane twiddles and the same times q⁻¹ mod 2^32.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
fn lanes(z: &[i32; W], zq: &[i32; W]) -> (__m256i, __m256i) {
    // SAFETY: `z` and `zq` are 32 readable bytes each; the loads are unaligned.
    unsafe {
        (
            _mm256_loadu_si256(z.as_ptr().cast::<__m256i>()),
            _mm256_loadu_si256(zq.as_ptr().cast::<__m256i>()),
        )
    }
}

/// A twiddle broadcast, and the same times q⁻¹ mod 2^32.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
fn broadcast(z: i32) -> (__m256i, __m256i) {
    (
        _mm256_set1_epi32(z),
        _mm256_set1_epi32(z.wrapping_mul(QINV)),
    )
}

/// A twiddle pair: ζ and ζ·q⁻¹ mod 2^32.
#[cfg(target_arch = "x86_64")]
type Zeta = (__m256i, __m256i);

/// The layer between rows 4 apart of eight registers: (0, 4) … (3, 7), one twiddle.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
fn layer4(v: &mut Rows, z: Zeta, inverse: bool) {
    let f = if inverse { inv_butterfly } else { butterfly };
    f(v, 0, 4, z);
    f(v, 1, 5, z);
    f(v, 2, 6, z);
    f(v, 3, 7, z);
}

/// The layer between rows 2 apart: (0, 2), (1, 3) with z[0]; (4, 6), (5, 7) with z[1].
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
fn layer2(v: &mut Rows, z: [Zeta; 2], inverse: bool) {
    let f = if inverse { inv_butterfly } else { butterfly };
    f(v, 0, 2, z[0]);
    f(v, 1, 3, z[0]);
    f(v, 4, 6, z[1]);
    f(v, 5, 7, z[1]);
}

/// The layer between adjacent rows: (2h, 2h + 1) with z[h].
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
fn layer1(v: &mut Rows, z: [Zeta; 4], inverse: bool) {
    let f = if inverse { inv_butterfly } else { butterfly };
    f(v, 0, 1, z[0]);
    f(v, 2, 3, z[1]);
    f(v, 4, 5, z[2]);
    f(v, 6, 7, z[3]);
}

/// `poly::ntt_portable`'s butterflies, each on the same rows with the same twiddle, in two
/// passes over registers: rows r, r + 4, …, r + 28 (r < 4) through layers len = 128, 64, 32;
/// then rows 8b … 8b + 7 through len = 16, 8 and, transposed, 4, 2, 1. A butterfly's result
/// depends only on its two inputs, so the order within a layer does not change the integers.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn ntt_avx2(a: &mut [i32; N]) {
    let z = |k: usize| broadcast(ZETAS[k]);
    for r in 0..4 {
        let mut v = load(a, r, 4);
        layer4(&mut v, z(1), false);
        layer2(&mut v, [z(2), z(3)], false);
        layer1(&mut v, [z(4), z(5), z(6), z(7)], false);
        store(&mut v, a, r, 4);
    }
    for b in 0..4 {
        let mut v = load(a, 8 * b, 1);
        layer2(&mut v, [z(8 + 2 * b), z(9 + 2 * b)], false);
        let k = 16 + 4 * b;
        layer1(&mut v, [z(k), z(k + 1), z(k + 2), z(k + 3)], false);
        transpose(&mut v);
        let l = |t: &[[i32; W]], tq: &[[i32; W]], h: usize| lanes(&t[h], &tq[h]);
        layer4(&mut v, l(&Z4[b], &Z4Q[b], 0), false);
        layer2(
            &mut v,
            [l(&Z2[b], &Z2Q[b], 0), l(&Z2[b], &Z2Q[b], 1)],
            false,
        );
        let z1 = core::array::from_fn(|h| l(&Z1[b], &Z1Q[b], h));
        layer1(&mut v, z1, false);
        transpose(&mut v);
        store(&mut v, a, 8 * b, 1);
    }
}

/// `poly::inv_ntt_portable`'s butterflies, each on the same rows with the same twiddle: the
/// passes of [`ntt_avx2`] in reverse, the final factor R²/256 applied as the rows are stored.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn inv_ntt_avx2(a: &mut [i32; N]) {
    let z = |k: usize| broadcast(-ZETAS[k]);
    for b in 0..4 {
        let mut v = load(a, 8 * b, 1);
        transpose(&mut v);
        let l = |t: &[[i32; W]], tq: &[[i32; W]], h: usize| lanes(&t[h], &tq[h]);
        let z1 = core::array::from_fn(|h| l(&IZ1[b], &IZ1Q[b], h));
        layer1(&mut v, z1, true);
        layer2(
            &mut v,
            [l(&IZ2[b], &IZ2Q[b], 0), l(&IZ2[b], &IZ2Q[b], 1)],
            true,
        );
        layer4(&mut v, l(&IZ4[b], &IZ4Q[b], 0), true);
        transpose(&mut v);
        let k = 31 - 4 * b;
        layer1(&mut v, [z(k), z(k - 1), z(k - 2), z(k - 3)], true);
        layer2(&mut v, [z(15 - 2 * b), z(14 - 2 * b)], true);
        store(&mut v, a, 8 * b, 1);
    }
    let (f, fq) = broadcast(INV_256_R2);
    for r in 0..4 {
        let mut v = load(a, r, 4);
        layer1(&mut v, [z(7), z(6), z(5), z(4)], true);
        layer2(&mut v, [z(3), z(2)], true);
        layer4(&mut v, z(1), true);
        for x in v.iter_mut() {
            *x = mont_mul(*x, f, fq);
        }
        store(&mut v, a, r, 4);
    }
}

/// For each 8-bit mask, the positions of its set bits, in order (then zeros): the indices
/// that move the kept lanes of a vector to its front.
#[cfg(target_arch = "x86_64")]
const COMPACT: [[u8; 8]; 256] = {
    let mut t = [[0u8; 8]; 256];
    let mut m = 0;
    while m < 256 {
        let (mut bit, mut n) = (0, 0);
        while bit < 8 {
            if m >> bit & 1 == 1 {
                t[m][n] = bit as u8;
                n += 1;
            }
            bit += 1;
        }
        m += 1;
    }
    t
};

/// `poly::rej_ntt_portable`, 8 candidates at a time: 24 bytes spread to 32-bit lanes (the
/// upper 12 moved to the upper half, then a byte shuffle), the top bit cleared, compared with
/// q, and the kept lanes moved to the front by a permutation from [`COMPACT`]. The block is
/// read in place, 32 bytes at a time (the last load starts 8 bytes early, to end at byte 168).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn rej_ntt_avx2(a: &mut [i32; N], filled: usize, block: &Words) -> usize {
    let spread = _mm256_setr_epi8(
        0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1, //
        4, 5, 6, -1, 7, 8, 9, -1, 10, 11, 12, -1, 13, 14, 15, -1,
    );
    let mask23 = _mm256_set1_epi32(0x7F_FFFF);
    let q = _mm256_set1_epi32(Q);
    let bytes = block.as_ptr().cast::<u8>();
    // Eight candidates at a time, compacted and stored at out[n..n + 8] (lanes past the kept
    // ones are overwritten by the next store, or later).
    let compact = |out: &mut [i32], mut n: usize| {
        for i in 0..7 {
            // 64-bit words 0, 1, 1, 2 of the 24 bytes at 24i: bytes 0–15 below, 8–23 above.
            let v = if i < 6 {
                // SAFETY: bytes 24i‥24i + 32 ≤ 168 of the block are readable; unaligned load.
                let raw = unsafe { _mm256_loadu_si256(bytes.add(24 * i).cast::<__m256i>()) };
                _mm256_permute4x64_epi64::<0b10_01_01_00>(raw)
            } else {
                // SAFETY: bytes 136‥168 of the block are readable; unaligned load.
                let raw = unsafe { _mm256_loadu_si256(bytes.add(136).cast::<__m256i>()) };
                _mm256_permute4x64_epi64::<0b11_10_10_01>(raw)
            };
            let v = _mm256_and_si256(_mm256_shuffle_epi8(v, spread), mask23);
            let good = _mm256_cmpgt_epi32(q, v);
            let m = _mm256_movemask_ps(_mm256_castsi256_ps(good)) as usize;
            // SAFETY: COMPACT[m] is 8 readable bytes; the load is unaligned.
            let idx = unsafe { _mm_loadl_epi64(COMPACT[m].as_ptr().cast::<__m128i>()) };
            let packed = _mm256_permutevar8x32_epi32(v, _mm256_cvtepu8_epi32(idx));
            let dst = &mut out[n..n + 8];
            // SAFETY: `dst` is 32 writable bytes; the store is unaligned.
            unsafe { _mm256_storeu_si256(dst.as_mut_ptr().cast::<__m256i>(), packed) };
            n += m.count_ones() as usize;
        }
        n
    };
    compact_into::<{ 56 + 8 }>(a, filled, compact)
}

/// Runs a rejection kernel's `compact(out, n)` — the block's 56 candidates appended from
/// `out[n]`, its stores reaching at most ROOM − 56 lanes past the last kept one — straight
/// into `a` from `filled` when the stores fit, else into a buffer from which what fits is
/// copied: the new count, at most 256.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn compact_into<const ROOM: usize>(
    a: &mut [i32; N],
    filled: usize,
    compact: impl FnOnce(&mut [i32], usize) -> usize,
) -> usize {
    if filled + ROOM <= N {
        return compact(&mut a[..], filled);
    }
    let mut kept = [0i32; 56 + 16];
    let n = compact(&mut kept[..ROOM], 0);
    let take = n.min(N - filled);
    a[filled..filled + take].copy_from_slice(&kept[..take]);
    filled + take
}

/// `poly::rej_ntt_portable`, 16 candidates at a time: 48 bytes of the block (one 64-byte load,
/// in place) placed 12 bytes per 128-bit lane (`vpermd`), spread to 32-bit lanes (`vpshufb`),
/// the top bit cleared, compared with q into a mask, and the kept lanes moved to the front by
/// `vpcompressd` (no table: the mask is the operand). Three such groups, then the last 8
/// candidates (bytes 144‥168, from a load of bytes 104‥168).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,avx512f,avx512bw")]
fn rej_ntt_avx512(a: &mut [i32; N], filled: usize, block: &Words) -> usize {
    // Lane 4j + t (t < 3) takes 32-bit word 3j + t of the 48 bytes; lane 4j + 3 is spread away.
    let place = _mm512_setr_epi32(0, 1, 2, 0, 3, 4, 5, 0, 6, 7, 8, 0, 9, 10, 11, 0);
    // The tail: bytes 144‥168 are words 10‥15 of the load at 104.
    let place_tail = _mm512_setr_epi32(10, 11, 12, 0, 13, 14, 15, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    let spread = _mm512_broadcast_i32x4(_mm_setr_epi8(
        0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1,
    ));
    let mask23 = _mm512_set1_epi32(0x7F_FFFF);
    let q = _mm512_set1_epi32(Q);
    let bytes = block.as_ptr().cast::<u8>();
    let group = |out: &mut [i32], n: usize, at: usize, place: __m512i, lanes: u16| {
        // SAFETY: bytes at‥at + 64 ≤ 168 of the block are readable; the load is unaligned.
        let raw = unsafe { _mm512_loadu_si512(bytes.add(at).cast()) };
        let v = _mm512_permutexvar_epi32(place, raw);
        let v = _mm512_and_si512(_mm512_shuffle_epi8(v, spread), mask23);
        let keep = _mm512_cmplt_epi32_mask(v, q) & lanes;
        let packed = _mm512_maskz_compress_epi32(keep, v);
        let dst = &mut out[n..n + 16];
        // SAFETY: `dst` is 64 writable bytes; the store is unaligned.
        unsafe { _mm512_storeu_si512(dst.as_mut_ptr().cast(), packed) };
        n + keep.count_ones() as usize
    };
    let compact = |out: &mut [i32], mut n: usize| {
        for i in 0..3 {
            n = group(out, n, 48 * i, place, 0xFFFF);
        }
        group(out, n, 104, place_tail, 0x00FF)
    };
    compact_into::<{ 56 + 16 }>(a, filled, compact)
}

/// `poly::rej_eta_portable`, 16 half-bytes at a time: 8 bytes split into their low and high
/// half-bytes, interleaved (low first, FIPS 204 Algorithm 31 lines 5–6) and widened to 32-bit
/// lanes; each lane's coefficient (η − (z mod 5) for η = 2, η − z for η = 4) is a lane of a
/// 16-entry table selected by z (`vpermd`, a register, not memory), the mask z < 15 or z < 9
/// keeps lanes, and `vpcompressd` moves them to the front. No table in memory, no branch on
/// the half-bytes; the number kept per group indexes the next store (as in the twin).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,avx512f,avx512bw")]
fn rej_eta_avx512(a: &mut [i32; N], filled: usize, block: &[u8; 136], eta: i32) -> usize {
    let (values, bound) = if eta == 2 {
        let v: [i32; 16] = core::array::from_fn(|z| 2 - (z as i32 % 5));
        (v, 15)
    } else {
        let v: [i32; 16] = core::array::from_fn(|z| 4 - z as i32);
        (v, 9)
    };
    // SAFETY: `values` is 64 readable bytes; the load is unaligned.
    let table = unsafe { _mm512_loadu_si512(values.as_ptr().cast()) };
    let bound = _mm512_set1_epi32(bound);
    let low = _mm_set1_epi8(15);
    let mut kept = pqkit_hash::Cleared([0i32; 2 * 136 + 16]);
    let mut n = 0;
    for bytes in block.chunks_exact(8) {
        // SAFETY: `bytes` is 8 readable bytes; the load is unaligned.
        let raw = unsafe { _mm_loadl_epi64(bytes.as_ptr().cast::<__m128i>()) };
        let lo = _mm_and_si128(raw, low);
        let hi = _mm_and_si128(_mm_srli_epi16::<4>(raw), low);
        let z = _mm512_cvtepu8_epi32(_mm_unpacklo_epi8(lo, hi));
        let keep = _mm512_cmplt_epi32_mask(z, bound);
        let packed = _mm512_maskz_compress_epi32(keep, _mm512_permutexvar_epi32(z, table));
        let dst = &mut kept[n..n + 16];
        // SAFETY: `dst` is 64 writable bytes; the store is unaligned.
        unsafe { _mm512_storeu_si512(dst.as_mut_ptr().cast(), packed) };
        n += keep.count_ones() as usize;
    }
    let take = n.min(N - filled);
    a[filled..filled + take].copy_from_slice(&kept[..take]);
    filled + take
}

#[cfg(test)]
mod tests {
    use super::super::poly::{inv_ntt_portable, ntt_portable, rej_eta_portable, rej_ntt_portable};
    use super::*;

    /// The rejection kernels equal their portable twin — the count and every coefficient up
    /// to it, and nothing before `filled` touched — on random blocks, all-rejected and
    /// all-kept ones, from several starting counts, on every path the CPU has.
    #[test]
    fn rej_ntt_kernels_match_their_twin() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut blocks: Vec<Words> = vec![[u64::MAX; 21], [0; 21]];
        for _ in 0..200 {
            blocks.push(core::array::from_fn(|_| {
                let mut w = [0u8; 8];
                for b in &mut w {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    // Top bytes near 0x7F make rejections common.
                    *b = (seed >> 56) as u8 | if seed & 3 == 0 { 0x7F } else { 0 };
                }
                u64::from_le_bytes(w)
            }));
        }
        for isa in Isa::supported() {
            for block in &blocks {
                for filled in [0, 1, 100, 184, 185, 200, 230, 250, 255, 256] {
                    let (mut x, mut y) = ([7i32; N], [7i32; N]);
                    let got = rej_ntt(&mut x, filled, block, isa)
                        .unwrap_or_else(|| rej_ntt_portable(&mut x, filled, block));
                    let want = rej_ntt_portable(&mut y, filled, block);
                    // The coefficients up to the count; past it, the kernel may leave
                    // candidates it did not keep.
                    assert_eq!((got, &x[..got]), (want, &y[..want]), "{isa}, from {filled}");
                    assert_eq!(x[..filled], [7; N][..filled], "{isa}, from {filled}");
                }
            }
        }
    }

    /// The RejBoundedPoly kernel equals its portable twin, for η = 2 and 4, on random blocks,
    /// blocks of rejected half-bytes only and of kept ones only, from several starting counts,
    /// on every path the CPU has.
    #[test]
    fn rej_eta_kernel_matches_its_twin() {
        let mut seed = 0x1405_7b7e_f767_814fu64;
        let mut blocks = vec![[0xFFu8; 136], [0u8; 136], [0x99u8; 136], [0x88u8; 136]];
        for _ in 0..100 {
            blocks.push(core::array::from_fn(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                (seed >> 56) as u8
            }));
        }
        for isa in Isa::supported() {
            for eta in [2, 4] {
                for block in &blocks {
                    for filled in [0, 1, 100, 200, 255, 256] {
                        let (mut x, mut y) = ([7i32; N], [7i32; N]);
                        let got = rej_eta(&mut x, filled, block, eta, isa)
                            .unwrap_or_else(|| rej_eta_portable(&mut x, filled, block, eta));
                        let want = rej_eta_portable(&mut y, filled, block, eta);
                        assert_eq!((got, x), (want, y), "{isa}, η = {eta}, from {filled}");
                    }
                }
            }
        }
    }

    /// The AVX2 NTT and inverse NTT equal their portable twins — the same integers — on every
    /// path the CPU has, for inputs at the bounds the callers keep (|a_i| < q forward, the
    /// reduced range inverse) and random ones.
    #[test]
    fn ntt_kernels_match_their_twins() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |bound: i32| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % (2 * bound as u64 - 1)) as i32 - (bound - 1)
        };
        let mut inputs = vec![[Q - 1; N], [-(Q - 1); N], [6_283_008; N], [-6_283_009; N]];
        for _ in 0..50 {
            inputs.push(core::array::from_fn(|_| next(Q)));
        }
        for isa in Isa::supported() {
            for a in &inputs {
                let (mut x, mut y) = (*a, *a);
                let ran = ntt(&mut x, isa).is_some();
                assert_eq!(ran, avx2(isa), "{isa}");
                if !ran {
                    ntt_portable(&mut x);
                }
                ntt_portable(&mut y);
                assert_eq!(x, y, "NTT on {isa}");
                let (mut x, mut y) = (*a, *a);
                if inv_ntt(&mut x, isa).is_none() {
                    inv_ntt_portable(&mut x);
                }
                inv_ntt_portable(&mut y);
                assert_eq!(x, y, "inverse NTT on {isa}");
            }
        }
    }
}
