//! The SHA-256 compression (FIPS 180-4 §6.2.2) with the x86 SHA extensions: the blocks of one
//! message in order ([`compress`]), or two independent messages interleaved ([`compress2`]).
//!
//! Instructions: `sha256rnds2` (two rounds), `sha256msg1`/`sha256msg2` with `palignr` for the
//! message schedule, `pshufb` for the big-endian byte swap; the state is kept in the ABEF/CDGH
//! register layout the instructions use (as in Intel's and Linux's `sha256_ni` code).
//!
//! Measured on a 2-core Xeon VM (family 6 model 207, TSC 2.3 GHz), best of several runs:
//! ~80–90 TSC cycles (~35–39 ns) per compression, the same for one long chained message and
//! for independent one-block messages; [`compress2`] ~77 TSC cycles (~33.5 ns). On this core
//! `sha256rnds2`'s throughput, not its latency, is the limit, so interleaving gains little.
#![allow(unsafe_code)]

use core::arch::x86_64::*;

use super::K;

/// Compresses `blocks` in order into `state`.
///
/// # Panics
/// When the CPU lacks the SHA extensions or SSE4.1 (the dispatch never calls it then).
pub(super) fn compress(state: &mut [u32; 8], blocks: &[[u8; 64]]) {
    assert!(
        std::arch::is_x86_feature_detected!("sha") && std::arch::is_x86_feature_detected!("sse4.1"),
        "the SHA-NI SHA-256 kernel needs the SHA extensions and SSE4.1"
    );
    // SAFETY: the CPU supports SHA and SSE4.1 (asserted just above), the only target features
    // `sequential` enables.
    unsafe { sequential(state, blocks) }
}

/// Two independent compressions, interleaved to hide the latency of `sha256rnds2`:
/// `states[i] = compress(states[i], blocks[i])`.
///
/// # Panics
/// When the CPU lacks the SHA extensions or SSE4.1.
#[allow(dead_code)] // measured, not yet dispatched
pub(super) fn compress2(states: &mut [[u32; 8]; 2], blocks: [&[u8; 64]; 2]) {
    assert!(
        std::arch::is_x86_feature_detected!("sha") && std::arch::is_x86_feature_detected!("sse4.1"),
        "the SHA-NI SHA-256 kernel needs the SHA extensions and SSE4.1"
    );
    // SAFETY: the CPU supports SHA and SSE4.1 (asserted just above), the only target features
    // `interleaved` enables.
    unsafe { interleaved(states, blocks) }
}

/// Compresses the padded message `parts` (after `prefix_len` bytes already in `state`) into
/// `state`, the state kept in registers throughout; returns the blocks compressed.
///
/// # Panics
/// When the CPU lacks the SHA extensions or SSE4.1 (the dispatch never calls it then).
pub(super) fn hash_parts<'a>(
    state: &mut [u32; 8],
    prefix_len: u64,
    parts: impl IntoIterator<Item = &'a [u8]>,
) -> usize {
    assert!(
        std::arch::is_x86_feature_detected!("sha") && std::arch::is_x86_feature_detected!("sse4.1"),
        "the SHA-NI SHA-256 kernel needs the SHA extensions and SSE4.1"
    );
    // SAFETY: the CPU supports SHA and SSE4.1 (asserted just above), the only target features
    // `sequential_parts` enables.
    unsafe { sequential_parts(state, prefix_len, parts) }
}

/// [`hash_parts`]: the padded blocks in order, the state in registers between them.
#[target_feature(enable = "sha,sse4.1")]
fn sequential_parts<'a>(
    state: &mut [u32; 8],
    prefix_len: u64,
    parts: impl IntoIterator<Item = &'a [u8]>,
) -> usize {
    let (mut abef, mut cdgh) = load_state(state);
    let blocks = super::padded_blocks(prefix_len, parts, |block| {
        let (a, c) = blocks_n([abef], [cdgh], [block]);
        [abef, cdgh] = [a[0], c[0]];
    });
    store_state(state, abef, cdgh);
    blocks
}

#[target_feature(enable = "sha,sse4.1")]
fn sequential(state: &mut [u32; 8], blocks: &[[u8; 64]]) {
    let (mut abef, mut cdgh) = load_state(state);
    for block in blocks {
        let (a, c) = blocks_n([abef], [cdgh], [block]);
        [abef, cdgh] = [a[0], c[0]];
    }
    store_state(state, abef, cdgh);
}

#[target_feature(enable = "sha,sse4.1")]
fn interleaved(states: &mut [[u32; 8]; 2], blocks: [&[u8; 64]; 2]) {
    let (abef0, cdgh0) = load_state(&states[0]);
    let (abef1, cdgh1) = load_state(&states[1]);
    let (abef, cdgh) = blocks_n([abef0, abef1], [cdgh0, cdgh1], blocks);
    store_state(&mut states[0], abef[0], cdgh[0]);
    store_state(&mut states[1], abef[1], cdgh[1]);
}

/// The state words a..h as ABEF (a in the top lane) and CDGH.
#[inline]
#[target_feature(enable = "sha,sse4.1")]
fn load_state(state: &[u32; 8]) -> (__m128i, __m128i) {
    let [dcba, hgfe] = state.as_chunks::<4>().0 else {
        unreachable!("8 words are 2 × 4")
    };
    // SAFETY: SSE2 is enabled on this function (implied by SSE4.1); each unaligned load reads
    // exactly the 16 bytes of the array it points into.
    let (dcba, hgfe) = unsafe {
        (
            _mm_loadu_si128(dcba.as_ptr().cast()),
            _mm_loadu_si128(hgfe.as_ptr().cast()),
        )
    };
    let cdab = _mm_shuffle_epi32::<0xB1>(dcba);
    let efgh = _mm_shuffle_epi32::<0x1B>(hgfe);
    let abef = _mm_alignr_epi8::<8>(cdab, efgh);
    let cdgh = _mm_blend_epi16::<0xF0>(efgh, cdab);
    (abef, cdgh)
}

/// The inverse of [`load_state`].
#[inline]
#[target_feature(enable = "sha,sse4.1")]
fn store_state(state: &mut [u32; 8], abef: __m128i, cdgh: __m128i) {
    let feba = _mm_shuffle_epi32::<0x1B>(abef);
    let dchg = _mm_shuffle_epi32::<0xB1>(cdgh);
    let dcba = _mm_blend_epi16::<0xF0>(feba, dchg);
    let hgef = _mm_alignr_epi8::<8>(dchg, feba);
    let [lo, hi] = state.as_chunks_mut::<4>().0 else {
        unreachable!("8 words are 2 × 4")
    };
    // SAFETY: SSE2 is enabled on this function; each unaligned store writes exactly the 16
    // bytes of the array it borrows mutably.
    unsafe {
        _mm_storeu_si128(lo.as_mut_ptr().cast(), dcba);
        _mm_storeu_si128(hi.as_mut_ptr().cast(), hgef);
    }
}

/// One block into each of `N` states, the `N` round sequences interleaved.
#[inline]
#[target_feature(enable = "sha,sse4.1")]
fn blocks_n<const N: usize>(
    mut abef: [__m128i; N],
    mut cdgh: [__m128i; N],
    blocks: [&[u8; 64]; N],
) -> ([__m128i; N], [__m128i; N]) {
    let bswap = _mm_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
    let mut w = [[_mm_setzero_si128(); 4]; N];
    for (w, block) in w.iter_mut().zip(blocks) {
        for (w, bytes) in w.iter_mut().zip(block.as_chunks::<16>().0) {
            // SAFETY: SSE2 is enabled on this function; the unaligned load reads exactly the
            // 16 bytes of the array it points into.
            let v = unsafe { _mm_loadu_si128(bytes.as_ptr().cast()) };
            *w = _mm_shuffle_epi8(v, bswap);
        }
    }
    let (abef0, cdgh0) = (abef, cdgh);
    macro_rules! groups {
        ($($g:literal)*) => { $( group::<$g, N>(&mut abef, &mut cdgh, &mut w); )* };
    }
    groups!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15);
    for n in 0..N {
        abef[n] = _mm_add_epi32(abef[n], abef0[n]);
        cdgh[n] = _mm_add_epi32(cdgh[n], cdgh0[n]);
    }
    (abef, cdgh)
}

/// Rounds 4G..4G+4 of each of the `N` states (extending the schedule first from G = 4 on).
#[inline]
#[target_feature(enable = "sha,sse4.1")]
fn group<const G: usize, const N: usize>(
    abef: &mut [__m128i; N],
    cdgh: &mut [__m128i; N],
    w: &mut [[__m128i; 4]; N],
) {
    let k = _mm_setr_epi32(
        K[4 * G] as i32,
        K[4 * G + 1] as i32,
        K[4 * G + 2] as i32,
        K[4 * G + 3] as i32,
    );
    for n in 0..N {
        let w = &mut w[n];
        if G >= 4 {
            // W[4G..4G+4] from W[4G−16..4G].
            let (w0, w1, w2, w3) = (w[G % 4], w[(G + 1) % 4], w[(G + 2) % 4], w[(G + 3) % 4]);
            let t = _mm_add_epi32(_mm_sha256msg1_epu32(w0, w1), _mm_alignr_epi8::<4>(w3, w2));
            w[G % 4] = _mm_sha256msg2_epu32(t, w3);
        }
        let kw = _mm_add_epi32(w[G % 4], k);
        cdgh[n] = _mm_sha256rnds2_epu32(cdgh[n], abef[n], kw);
        abef[n] = _mm_sha256rnds2_epu32(abef[n], cdgh[n], _mm_shuffle_epi32::<0x0E>(kw));
    }
}
