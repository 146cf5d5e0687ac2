//! The SHA-256 compression (FIPS 180-4 §6.2.2) with the x86 SHA extensions: the blocks of one
//! message in order ([`compress`]), or up to four independent messages interleaved
//! ([`compress_n`]).
//!
//! Instructions: `sha256rnds2` (two rounds), `sha256msg1`/`sha256msg2` with `palignr` for the
//! message schedule, `pshufb` for the big-endian byte swap; the state is kept in the ABEF/CDGH
//! register layout the instructions use (as in Intel's and Linux's `sha256_ni` code).
//!
//! Where `sha256rnds2`'s throughput, not its latency, is the limit, one long chained message
//! and independent one-block messages cost about the same per compression and interleaving
//! gains little; where its latency is the limit (as on the AMD EPYC measured), interleaving
//! four messages hides it. `pqkit bench crypto --hash-path all` measures each path (its engine
//! table) on the machine at hand.
#![allow(unsafe_code)]

use core::arch::x86_64::*;

use super::{K, PATH_HEAD, PathNode};

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

/// `N` independent compressions, interleaved to hide the latency of `sha256rnds2`:
/// `states[i] = compress(states[i], blocks[i])`.
///
/// # Panics
/// When the CPU lacks the SHA extensions or SSE4.1.
pub(super) fn compress_n<const N: usize>(states: &mut [[u32; 8]; N], blocks: [&[u8; 64]; N]) {
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

/// The longest message [`hash_short`] takes: two blocks less the padding's 9 bytes.
pub(super) const SHORT: usize = 119;

/// SHA-256 of `msg` (at most [`SHORT`] bytes) after `prefix_len` bytes already in `state`,
/// and the blocks compressed (1 or 2): the message padded (FIPS 180-4 §5.1.1) into a 128-byte
/// buffer on the stack (wiped after), its blocks compressed with the state in registers, and
/// the digest byte-swapped there and stored as two 16-byte halves — so that a caller that
/// hashes the digest next loads it without a store-forwarding stall. An LMS interior node
/// (86 bytes) hashed from the last one measured faster this way than through the general
/// gathering of [`hash_parts`].
///
/// # Panics
/// When `msg` is longer than [`SHORT`] or the CPU lacks the SHA extensions or SSE4.1.
pub(super) fn hash_short(state: &[u32; 8], prefix_len: u64, msg: &[u8]) -> ([u8; 32], usize) {
    assert!(msg.len() <= SHORT, "at most two padded blocks");
    assert!(
        std::arch::is_x86_feature_detected!("sha") && std::arch::is_x86_feature_detected!("sse4.1"),
        "the SHA-NI SHA-256 kernel needs the SHA extensions and SSE4.1"
    );
    // SAFETY: the CPU supports SHA and SSE4.1 (asserted just above), the only target features
    // `short` enables.
    unsafe { short(state, prefix_len, msg) }
}

#[target_feature(enable = "sha,sse4.1")]
fn short(state: &[u32; 8], prefix_len: u64, msg: &[u8]) -> ([u8; 32], usize) {
    let len = msg.len();
    let mut buf = [0u8; 128];
    buf[..len].copy_from_slice(msg);
    buf[len] = 0x80;
    let blocks = if len < 56 { 1 } else { 2 };
    let bits = (prefix_len + len as u64) * 8;
    buf[64 * blocks - 8..64 * blocks].copy_from_slice(&bits.to_be_bytes());
    let (mut abef, mut cdgh) = load_state(state);
    for block in &buf.as_chunks::<64>().0[..blocks] {
        let (a, c) = blocks_n([abef], [cdgh], [block]);
        [abef, cdgh] = [a[0], c[0]];
    }
    // The message may be secret (an HSS child's SEED).
    crate::wipe(&mut buf);
    let out = store_digest(digest(abef, cdgh));
    (out, blocks)
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
fn interleaved<const N: usize>(states: &mut [[u32; 8]; N], blocks: [&[u8; 64]; N]) {
    let loaded = states.each_ref().map(|s| load_state(s));
    let (abef, cdgh) = blocks_n(loaded.map(|l| l.0), loaded.map(|l| l.1), blocks);
    for ((s, a), c) in states.iter_mut().zip(abef).zip(cdgh) {
        store_state(s, a, c);
    }
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
    abef: [__m128i; N],
    cdgh: [__m128i; N],
    blocks: [&[u8; 64]; N],
) -> ([__m128i; N], [__m128i; N]) {
    let w = blocks.map(|block| {
        core::array::from_fn(|i| {
            // SAFETY: SSE2 is enabled on this function; the unaligned load reads exactly the
            // 16 bytes of the block's 16-byte chunk i.
            unsafe { _mm_loadu_si128(block.as_chunks::<16>().0[i].as_ptr().cast()) }
        })
    });
    words_n(abef, cdgh, w)
}

/// [`blocks_n`] of blocks already in registers, 16 bytes a vector in message order.
#[inline]
#[target_feature(enable = "sha,sse4.1")]
fn words_n<const N: usize>(
    mut abef: [__m128i; N],
    mut cdgh: [__m128i; N],
    blocks: [[__m128i; 4]; N],
) -> ([__m128i; N], [__m128i; N]) {
    let bswap = _mm_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
    let mut w = blocks.map(|b| b.map(|v| _mm_shuffle_epi8(v, bswap)));
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

/// The digest of the state (`abef`, `cdgh`): its first and last 16 bytes (a b c d and
/// e f g h, each word big-endian).
#[inline]
#[target_feature(enable = "sha,sse4.1")]
fn digest(abef: __m128i, cdgh: __m128i) -> [__m128i; 2] {
    let feba = _mm_shuffle_epi32::<0x1B>(abef);
    let dchg = _mm_shuffle_epi32::<0xB1>(cdgh);
    let bswap = _mm_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
    [
        _mm_shuffle_epi8(_mm_blend_epi16::<0xF0>(feba, dchg), bswap),
        _mm_shuffle_epi8(_mm_alignr_epi8::<8>(dchg, feba), bswap),
    ]
}

/// Stores a digest's two halves ([`digest`]).
#[inline]
#[target_feature(enable = "sha,sse4.1")]
fn store_digest(halves: [__m128i; 2]) -> [u8; 32] {
    let mut out = [0u8; 32];
    for (o, v) in out.as_chunks_mut::<16>().0.iter_mut().zip(halves) {
        // SAFETY: SSE2 is enabled on this function; the unaligned store writes exactly the
        // 16 bytes of the array it borrows mutably.
        unsafe { _mm_storeu_si128(o.as_mut_ptr().cast(), v) };
    }
    out
}

/// Loads 32 bytes as two halves.
#[inline]
#[target_feature(enable = "sha,sse4.1")]
fn load_node(bytes: &[u8; 32]) -> [__m128i; 2] {
    core::array::from_fn(|k| {
        // SAFETY: SSE2 is enabled on this function; the unaligned load reads exactly the 16
        // bytes of half k.
        unsafe { _mm_loadu_si128(bytes[16 * k..16 * k + 16].as_ptr().cast()) }
    })
}

/// [`super::sha256_path_root`] on SHA-NI: each node's message formed in registers from its
/// head and the last node's digest (byte shifts of the two halves into place behind the
/// 22-byte head), so no node goes through memory.
///
/// # Panics
/// When the CPU lacks the SHA extensions or SSE4.1.
pub(super) fn path_root(
    leaf: u32,
    value: &[u8; 32],
    auth: &[[u8; 32]],
    head: impl Fn(u32, PathNode) -> [u8; PATH_HEAD],
) -> [u8; 32] {
    assert!(
        std::arch::is_x86_feature_detected!("sha") && std::arch::is_x86_feature_detected!("sse4.1"),
        "the SHA-NI SHA-256 kernel needs the SHA extensions and SSE4.1"
    );
    // SAFETY: the CPU supports SHA and SSE4.1 (asserted just above), the only target features
    // `path_root_kernel` enables.
    unsafe { path_root_kernel(leaf, value, auth, head) }
}

#[target_feature(enable = "sha,sse4.1")]
fn path_root_kernel(
    mut r: u32,
    value: &[u8; 32],
    auth: &[[u8; 32]],
    head: impl Fn(u32, PathNode) -> [u8; PATH_HEAD],
) -> [u8; 32] {
    // A node's head as its message's first 16 bytes, and bytes 16..22 followed by the first
    // 10 bytes of the child `x` after them.
    let start = |r: u32, kind: PathNode, x: __m128i| {
        let h = head(r, kind);
        // SAFETY: SSE2 is enabled on this function; the unaligned load reads exactly the first
        // 16 bytes of the 22-byte head.
        let first = unsafe { _mm_loadu_si128(h.as_ptr().cast()) };
        let [
            _,
            _,
            _,
            _,
            _,
            _,
            _,
            _,
            _,
            _,
            _,
            _,
            _,
            _,
            _,
            _,
            a,
            b,
            c,
            d,
            e,
            f,
        ] = h;
        let tail = i64::from_le_bytes([a, b, c, d, e, f, 0, 0]);
        (
            first,
            _mm_or_si128(_mm_cvtsi64_si128(tail), _mm_slli_si128::<6>(x)),
        )
    };
    let (iv_abef, iv_cdgh) = load_state(&super::IV);
    let compress = |blocks: &[[__m128i; 4]]| {
        let (mut abef, mut cdgh) = (iv_abef, iv_cdgh);
        for &b in blocks {
            let (a, c) = words_n([abef], [cdgh], [b]);
            [abef, cdgh] = [a[0], c[0]];
        }
        digest(abef, cdgh)
    };
    // The leaf, H(head ‖ value): 54 bytes, then 0x80 and the length in bits (432) at the
    // block's end.
    let [k0, k1] = load_node(value);
    let leaf_pad = _mm_setr_epi8(-128, 0, 0, 0, 0, 0, 0, 0, 0x01, -80, 0, 0, 0, 0, 0, 0);
    let (h0, h1) = start(r, PathNode::Leaf, k0);
    let mut node = compress(&[[
        h0,
        h1,
        _mm_alignr_epi8::<10>(k1, k0),
        _mm_alignr_epi8::<10>(leaf_pad, k1),
    ]]);
    // Interior nodes, H(head ‖ left ‖ right): 86 bytes, 0x80, and the length in bits (688)
    // at the second block's end.
    let pad = _mm_setr_epi8(-128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    let length = _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, -80);
    for sibling in auth {
        let s = load_node(sibling);
        let ([l0, l1], [r0, r1]) = if r & 1 == 1 { (s, node) } else { (node, s) };
        r /= 2;
        let (h0, h1) = start(r, PathNode::Interior, l0);
        node = compress(&[
            [
                h0,
                h1,
                _mm_alignr_epi8::<10>(l1, l0),
                _mm_alignr_epi8::<10>(r0, l1),
            ],
            [
                _mm_alignr_epi8::<10>(r1, r0),
                _mm_alignr_epi8::<10>(pad, r1),
                _mm_setzero_si128(),
                length,
            ],
        ]);
    }
    store_digest(node)
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
