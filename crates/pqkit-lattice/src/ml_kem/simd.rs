//! Everything in pqkit-lattice that needs `unsafe`: the choice of the instruction set the
//! ML-KEM algorithms are compiled for ([`key_gen_on`], [`encaps_on`], [`decaps_on`]), and the
//! kernels the compiler does not find by itself — the 16 × 16 transposition of a polynomial's
//! rows (AVX2), and SampleNTT's rejection sampling, 16 candidates at a time (AVX2) or 32
//! (AVX-512 with VBMI2's `vpcompressw`). Their
//! portable twins are [`super::poly`]'s `transpose_portable` and `rej_uniform_portable`;
//! tests prove each pair identical. An [`Isa`] is a plain value, so each entry point checks
//! the CPU itself before it runs a kernel.
#![allow(unsafe_code)]

use pqkit_hash::Isa;
use zeroize::Zeroizing;

use crate::simd::{avx2_kernel, on_path};

use super::Params;
use super::consts::REJ_BUF;
#[cfg(target_arch = "x86_64")]
use super::consts::{N, Q};

avx2_kernel!(
    /// Transposes the 16 × 16 rows in place with the AVX2 kernel (the contract of
    /// `poly::transpose_portable`).
    fn transpose(rows: &mut [[i16; 16]; 16]) -> () = transpose_avx2
);
/// SampleNTT's rejection over one block (the contract of `poly::rej_uniform`) with the
/// widest kernel `isa` and the CPU allow — AVX-512 with VBMI and VBMI2 (32 candidates at a
/// time) or AVX2 (16) — checked here, not trusted; `None`, nothing done, when neither may run.
#[inline(always)]
pub(crate) fn rej_uniform(
    buf: &mut [i16; REJ_BUF],
    filled: usize,
    block: &crate::Words,
    isa: Isa,
) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        if crate::simd::avx512(isa)
            && std::arch::is_x86_feature_detected!("avx512vbmi")
            && std::arch::is_x86_feature_detected!("avx512vbmi2")
        {
            // SAFETY: the CPU has AVX-512F/BW, AVX2 (checked by `avx512`), VBMI and VBMI2.
            return Some(unsafe { rej_uniform_avx512(buf, filled, block) });
        }
        if crate::simd::avx2(isa) {
            // SAFETY: the CPU has AVX2 (checked by `avx2`).
            return Some(unsafe { rej_uniform_avx2(buf, filled, block) });
        }
    }
    let _ = (buf, filled, block, isa);
    None
}

on_path!(
    /// ML-KEM.KeyGen_internal (`super::key_gen_any`) compiled for `isa`.
    fn key_gen_on(
        p: &Params,
        d: &[u8; 32],
        z: &[u8; 32],
        ek: &mut [u8],
        dk: &mut [u8]
    ) -> () = super::key_gen_any
);
on_path!(
    /// ML-KEM.Encaps_internal (`super::encaps_any`) compiled for `isa`.
    fn encaps_on(p: &Params, ek: &[u8], m: &[u8; 32], c: &mut [u8]) -> Zeroizing<[u8; 32]>
        = super::encaps_any
);
on_path!(
    /// ML-KEM.Decaps_internal (`super::decaps_any`) compiled for `isa`.
    fn decaps_on(p: &Params, dk: &[u8], c: &[u8]) -> Zeroizing<[u8; 32]> = super::decaps_any
);
on_path!(
    /// `super::ntt_pairs_any` compiled for `isa`.
    fn ntt_pairs_on(pairs: usize) -> () = super::ntt_pairs_any
);
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::{
    __m128i, __m256i, _mm_loadu_si128, _mm_shuffle_epi8, _mm_storeu_si128, _mm256_and_si256,
    _mm256_blend_epi16, _mm256_castsi256_si128, _mm256_cmpgt_epi16, _mm256_extracti128_si256,
    _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_packs_epi16, _mm256_permute2x128_si256,
    _mm256_permute4x64_epi64, _mm256_set1_epi16, _mm256_setr_epi8, _mm256_setzero_si256,
    _mm256_shuffle_epi8, _mm256_srli_epi16, _mm256_storeu_si256, _mm256_unpackhi_epi16,
    _mm256_unpackhi_epi32, _mm256_unpackhi_epi64, _mm256_unpacklo_epi16, _mm256_unpacklo_epi32,
    _mm256_unpacklo_epi64, _mm512_and_si512, _mm512_cmplt_epu16_mask, _mm512_loadu_si512,
    _mm512_mask_blend_epi16, _mm512_maskz_compress_epi16, _mm512_maskz_loadu_epi8,
    _mm512_permutexvar_epi8, _mm512_set1_epi16, _mm512_srli_epi16, _mm512_storeu_si512,
};

#[cfg(target_arch = "x86_64")]
/// Transposes eight rows within each 128-bit half: output row j holds column j of the eight
/// rows in its low half and column j + 8 in its high half.
#[inline]
#[target_feature(enable = "avx2")]
fn transpose8(x: [__m256i; 8]) -> [__m256i; 8] {
    let a = [
        _mm256_unpacklo_epi16(x[0], x[1]),
        _mm256_unpackhi_epi16(x[0], x[1]),
        _mm256_unpacklo_epi16(x[2], x[3]),
        _mm256_unpackhi_epi16(x[2], x[3]),
        _mm256_unpacklo_epi16(x[4], x[5]),
        _mm256_unpackhi_epi16(x[4], x[5]),
        _mm256_unpacklo_epi16(x[6], x[7]),
        _mm256_unpackhi_epi16(x[6], x[7]),
    ];
    let b = [
        _mm256_unpacklo_epi32(a[0], a[2]),
        _mm256_unpackhi_epi32(a[0], a[2]),
        _mm256_unpacklo_epi32(a[1], a[3]),
        _mm256_unpackhi_epi32(a[1], a[3]),
        _mm256_unpacklo_epi32(a[4], a[6]),
        _mm256_unpackhi_epi32(a[4], a[6]),
        _mm256_unpacklo_epi32(a[5], a[7]),
        _mm256_unpackhi_epi32(a[5], a[7]),
    ];
    [
        _mm256_unpacklo_epi64(b[0], b[4]),
        _mm256_unpackhi_epi64(b[0], b[4]),
        _mm256_unpacklo_epi64(b[1], b[5]),
        _mm256_unpackhi_epi64(b[1], b[5]),
        _mm256_unpacklo_epi64(b[2], b[6]),
        _mm256_unpackhi_epi64(b[2], b[6]),
        _mm256_unpacklo_epi64(b[3], b[7]),
        _mm256_unpackhi_epi64(b[3], b[7]),
    ]
}

#[cfg(target_arch = "x86_64")]
/// Transposes the 16 × 16 matrix of 16-bit rows in place (AVX2).
#[inline]
#[target_feature(enable = "avx2")]
fn transpose_avx2(rows: &mut [[i16; 16]; 16]) {
    let mut x = [[_mm256_setzero_si256(); 8]; 2];
    for (h, half) in x.iter_mut().enumerate() {
        for (i, v) in half.iter_mut().enumerate() {
            let row = &rows[8 * h + i];
            // SAFETY: `row` is 32 readable bytes; the load is unaligned.
            *v = unsafe { _mm256_loadu_si256(row.as_ptr().cast::<__m256i>()) };
        }
    }
    let top = transpose8(x[0]);
    let bottom = transpose8(x[1]);
    for j in 0..8 {
        let lo = _mm256_permute2x128_si256::<0x20>(top[j], bottom[j]);
        let hi = _mm256_permute2x128_si256::<0x31>(top[j], bottom[j]);
        // SAFETY: each row is 32 writable bytes; the stores are unaligned.
        unsafe {
            _mm256_storeu_si256(rows[j].as_mut_ptr().cast::<__m256i>(), lo);
            _mm256_storeu_si256(rows[j + 8].as_mut_ptr().cast::<__m256i>(), hi);
        }
    }
}

#[cfg(target_arch = "x86_64")]
/// `COMPACT[m]`: the byte shuffle that moves the 16-bit lanes whose bit is set in `m` to the
/// front, in order (the rest zero).
const COMPACT: [[u8; 16]; 256] = {
    let mut t = [[0x80u8; 16]; 256];
    let mut m = 0;
    while m < 256 {
        let mut out = 0;
        let mut lane = 0;
        while lane < 8 {
            if m & (1 << lane) != 0 {
                t[m][2 * out] = 2 * lane as u8;
                t[m][2 * out + 1] = 2 * lane as u8 + 1;
                out += 1;
            }
            lane += 1;
        }
        m += 1;
    }
    t
};

/// SampleNTT's rejection (FIPS 203 Algorithm 7, lines 4–15) over one block of 168 bytes,
/// 48 bytes (32 candidates) at a time: the twin of `poly::rej_uniform_portable`, with the
/// same contract. Each 16-bit lane takes its two bytes (`vpermb`: bytes 3i, 3i + 1 for
/// candidate 2i, 3i + 1, 3i + 2 for 2i + 1), keeps the low 12 bits (even lanes) or shifts
/// out 4 (odd), is compared with q into a mask, and `vpcompressw` moves the kept lanes to the
/// front (no table). Three groups, then the last 24 bytes (a masked load, 16 candidates).
/// The block is read in place.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512vbmi,avx512vbmi2")]
fn rej_uniform_avx512(buf: &mut [i16; REJ_BUF], mut filled: usize, block: &crate::Words) -> usize {
    if filled >= N {
        return filled;
    }
    let spread: [u8; 64] = core::array::from_fn(|b| {
        let lane = b / 2;
        (3 * (lane / 2) + lane % 2 + b % 2) as u8
    });
    // SAFETY: `spread` is 64 readable bytes; the load is unaligned.
    let spread = unsafe { _mm512_loadu_si512(spread.as_ptr().cast()) };
    let low12 = _mm512_set1_epi16(0x0FFF);
    let q = _mm512_set1_epi16(Q);
    let bytes = block.as_ptr().cast::<u8>();
    for (at, lanes) in [(0, u32::MAX), (48, u32::MAX), (96, u32::MAX), (144, 0xFFFF)] {
        let raw = if at < 144 {
            // SAFETY: bytes at‥at + 64 ≤ 160 of the block are readable; unaligned load.
            unsafe { _mm512_loadu_si512(bytes.add(at).cast()) }
        } else {
            // SAFETY: the mask reads bytes 144‥168 of the block only.
            unsafe { _mm512_maskz_loadu_epi8(0x00FF_FFFF, bytes.add(at).cast()) }
        };
        let v = _mm512_permutexvar_epi8(spread, raw);
        let f = _mm512_mask_blend_epi16(
            0xAAAA_AAAA,
            _mm512_and_si512(v, low12),
            _mm512_srli_epi16::<4>(v),
        );
        let keep = _mm512_cmplt_epu16_mask(f, q) & lanes;
        // A block starts below 256 and each group adds at most 32, so before the last
        // store filled ≤ 255 + 96: the 32 lanes stored fit in REJ_BUF (384).
        debug_assert!(filled + 32 <= REJ_BUF);
        let dst = &mut buf[filled..filled + 32];
        // SAFETY: `dst` is 64 writable bytes; the store is unaligned.
        unsafe {
            _mm512_storeu_si512(
                dst.as_mut_ptr().cast(),
                _mm512_maskz_compress_epi16(keep, f),
            );
        }
        filled += keep.count_ones() as usize;
    }
    filled
}

#[cfg(target_arch = "x86_64")]
/// SampleNTT's rejection (FIPS 203 Algorithm 7, lines 4–15) over one block of 168 bytes,
/// 24 bytes (16 candidates) at a time: the twin of `poly::rej_uniform_portable`, with the same
/// contract. The block is read in place, 32 bytes at a time (the last load starts 8 bytes
/// early, to end at byte 168).
#[inline]
#[target_feature(enable = "avx2")]
fn rej_uniform_avx2(buf: &mut [i16; REJ_BUF], mut filled: usize, block: &crate::Words) -> usize {
    if filled >= N {
        return filled;
    }
    // Candidates 0–7 from bytes 0–11 (low half, after the 64-bit permutation: bytes 0–15),
    // 8–15 from bytes 12–23 (high half: bytes 8–23, so at 4–15).
    let idx = _mm256_setr_epi8(
        0, 1, 1, 2, 3, 4, 4, 5, 6, 7, 7, 8, 9, 10, 10, 11, 4, 5, 5, 6, 7, 8, 8, 9, 10, 11, 11, 12,
        13, 14, 14, 15,
    );
    let low12 = _mm256_set1_epi16(0x0FFF);
    let q = _mm256_set1_epi16(Q);
    let bytes = block.as_ptr().cast::<u8>();
    for at in (0..168).step_by(24) {
        // 64-bit words 0, 1, 1, 2 of the 24 bytes at `at`.
        let v = if at < 144 {
            // SAFETY: bytes at‥at + 32 ≤ 168 of the block are readable; unaligned load.
            let raw = unsafe { _mm256_loadu_si256(bytes.add(at).cast::<__m256i>()) };
            _mm256_permute4x64_epi64::<0b10_01_01_00>(raw)
        } else {
            // SAFETY: bytes 136‥168 of the block are readable; unaligned load.
            let raw = unsafe { _mm256_loadu_si256(bytes.add(136).cast::<__m256i>()) };
            _mm256_permute4x64_epi64::<0b11_10_10_01>(raw)
        };
        let f = _mm256_shuffle_epi8(v, idx);
        // Even lanes: b0 | (b1 & 0x0F) << 8; odd lanes: (b1 >> 4) | b2 << 4.
        let f = _mm256_blend_epi16::<0xAA>(_mm256_and_si256(f, low12), _mm256_srli_epi16::<4>(f));
        let good = _mm256_cmpgt_epi16(q, f);
        let mask = _mm256_movemask_epi8(_mm256_packs_epi16(good, _mm256_setzero_si256())) as u32;
        for (half, m) in [
            (_mm256_castsi256_si128(f), mask & 0xFF),
            (_mm256_extracti128_si256::<1>(f), (mask >> 16) & 0xFF),
        ] {
            // SAFETY: COMPACT rows are 16 bytes.
            let shuffle =
                unsafe { _mm_loadu_si128(COMPACT[m as usize].as_ptr().cast::<__m128i>()) };
            // A block starts below 256 and each half adds at most 8, so before the block's
            // last store filled ≤ 255 + 13 · 8 = 359: the 8 lanes stored fit in REJ_BUF.
            debug_assert!(filled + 8 <= REJ_BUF);
            // SAFETY: filled + 8 ≤ REJ_BUF (above): 16 writable bytes at buf[filled].
            unsafe {
                _mm_storeu_si128(
                    buf.as_mut_ptr().add(filled).cast::<__m128i>(),
                    _mm_shuffle_epi8(half, shuffle),
                );
            }
            filled += m.count_ones() as usize;
        }
    }
    filled
}
