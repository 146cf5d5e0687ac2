//! Eight independent SHA-256 compressions at once with AVX2 (FIPS 180-4 §6.2.2): lane `i` of
//! every 256-bit vector is message `i`, so `states[i] = compress(states[i], blocks[i])`.
//!
//! Instructions: rotations as `vpsrld`/`vpslld` pairs joined by `vpor`, Ch as
//! `((f ⊕ g) ∧ e) ⊕ g`, Maj as `((a ⊕ b) ∧ (b ⊕ c)) ⊕ b` with `b ⊕ c` carried from the previous
//! round, `vpshufb` for the big-endian byte swap. Blocks and states are transposed by loading
//! 128-bit quarters into the two halves of a vector (`vinserti128`) and a 4 × 4 in-lane
//! transpose (`vpunpck{l,h}{dq,qdq}`). The message schedule is a ring of 16 vectors; rounds
//! 16..64 are one 16-round body run three times.
//!
//! The path's cost per compression on the machine at hand: the engine table of
//! `pqkit bench crypto --hash-path all`.
#![allow(unsafe_code)]

use core::arch::x86_64::*;

use super::{ChainGroup, K};

/// `states[i] = compress(states[i], blocks[i])` for the 8 lanes.
///
/// # Panics
/// When the CPU lacks AVX2 (the dispatch never calls it then).
pub(super) fn compress8(states: &mut [[u32; 8]; 8], blocks: &[&[u8; 64]; 8]) {
    assert!(
        std::arch::is_x86_feature_detected!("avx2"),
        "the AVX2 SHA-256 kernel needs AVX2"
    );
    // SAFETY: the CPU supports AVX2 (asserted just above), the only target feature `kernel`
    // enables.
    unsafe { kernel(states, blocks) }
}

/// The working variables a..h (as a ring rotated one place per round) and `b ⊕ c`.
struct Vars {
    s: [__m256i; 8],
    bc: __m256i,
}

#[target_feature(enable = "avx2")]
fn kernel(states: &mut [[u32; 8]; 8], blocks: &[&[u8; 64]; 8]) {
    let mut w = load_blocks(blocks);
    let init = load_states(states);
    let mut v = Vars {
        s: init,
        bc: _mm256_xor_si256(init[1], init[2]),
    };
    rounds16::<false>(&mut v, &mut w, 0);
    // A loop, not unrolled: the 16-round body is reused for rounds 16..64.
    for base in [16, 32, 48] {
        rounds16::<true>(&mut v, &mut w, base);
    }
    let mut s = v.s;
    for (x, y) in s.iter_mut().zip(init) {
        *x = _mm256_add_epi32(*x, y);
    }
    store_states(states, s);
}

/// Eight one-block hash chains at once, the state kept in the vector registers from step to
/// step: [`super::avx512::chains16`] with 256-bit vectors (see [`ChainGroup`]; FIPS 180-4
/// §6.2.2 for each compression; the chains of FIPS 205 Algorithm 5 and RFC 8554 Algorithm 1).
/// Lane `l` is chain `l`: its 64-byte template, the first `g.n` bytes of its 32-byte value
/// `values[l]` (updated in place), steps `g.at[l]..g.end[l]`. Finished lanes keep their values
/// by a `vpblendvb`.
///
/// Keeping the state in registers measured faster per compression than running the steps
/// through [`compress8`] on SLH-DSA-SHA2-128f's F chains through [`crate::fixed_chains`]
/// (`pqkit bench crypto --hash-path all`).
///
/// # Panics
/// When the CPU lacks AVX2, or the layout does not fit ([`ChainGroup::check`]).
pub(super) fn chains8(g: &ChainGroup<'_, 8>, values: &mut [[u8; 32]; 8]) {
    g.check();
    assert!(
        std::arch::is_x86_feature_detected!("avx2"),
        "the AVX2 SHA-256 chain kernel needs AVX2"
    );
    // SAFETY: the CPU supports AVX2 (asserted just above), the only target feature
    // `chain_kernel` enables.
    unsafe { chain_kernel(g, values) }
}

#[target_feature(enable = "avx2")]
fn chain_kernel(g: &ChainGroup<'_, 8>, values: &mut [[u8; 32]; 8]) {
    let steps = g.steps();
    if steps == 0 {
        return;
    }
    let nw = g.n / 4;
    let (q, first, p) = (g.value_at / 4, g.first_word(), g.step_at / 4);
    let r = [0, 8, 16, 24][g.value_at % 4];
    let (value_right, value_left) = (_mm256_set1_epi32(r), _mm256_set1_epi32(32 - r));
    let sb = [0, 8, 16, 24][g.step_at % 4];
    let one_byte = g.step_bytes == 1;
    let step_spills = !one_byte && sb != 0;
    let step_shift = _mm256_set1_epi32(if one_byte { 24 - sb } else { sb });
    let step_spill_shift = _mm256_set1_epi32(32 - sb);
    // The template words, with the bytes under the step counter and the value cleared.
    assert!(g.prelude.is_none(), "the AVX2 chain kernel runs no prelude");
    let blocks: [&[u8; 64]; 8] = core::array::from_fn(|l| &g.templates[l]);
    let mut tmpl = load_blocks(&blocks);
    for (t, m) in tmpl.iter_mut().zip(g.template_masks()) {
        *t = _mm256_and_si256(*t, _mm256_set1_epi32(m as i32));
    }
    let mut mid = [_mm256_setzero_si256(); 8];
    for (v, m) in mid.iter_mut().zip(g.midstate) {
        *v = _mm256_set1_epi32(m as i32);
    }
    // The rounds before the first changing word: the same at every step.
    let mut pre = Vars {
        s: mid,
        bc: _mm256_xor_si256(mid[1], mid[2]),
    };
    rounds_split::<false>(&mut pre, &tmpl, first);
    // vals[1 + i] = value word i of every lane; vals[0] and the rest stay zero.
    let mut words = [[0u32; 8]; 8];
    for (w, v) in words.iter_mut().zip(values.iter()) {
        for (x, b) in w.iter_mut().zip(v.as_chunks::<4>().0) {
            *x = u32::from_be_bytes(*b);
        }
    }
    let x = load_states(&words);
    let mut vals = [_mm256_setzero_si256(); 10];
    vals[1..=nw].copy_from_slice(&x[..nw]);
    // SAFETY: AVX2 is enabled on this function; each unaligned load reads exactly the 32
    // bytes of a `[u32; 8]`.
    let (mut j, end) = unsafe {
        (
            _mm256_loadu_si256(g.at.as_ptr().cast()),
            _mm256_loadu_si256(g.end.as_ptr().cast()),
        )
    };
    let one = _mm256_set1_epi32(1);
    for _ in 0..steps {
        // Done where j ≥ end (unsigned), i.e. min(j, end) = end.
        let done = _mm256_cmpeq_epi32(_mm256_min_epu32(j, end), end);
        let (jp, jp1) = if one_byte {
            let low = _mm256_and_si256(j, _mm256_set1_epi32(0xff));
            (_mm256_sllv_epi32(low, step_shift), _mm256_setzero_si256())
        } else {
            (
                _mm256_srlv_epi32(j, step_shift),
                _mm256_sllv_epi32(j, step_spill_shift),
            )
        };
        let mut w = [_mm256_setzero_si256(); 16];
        macro_rules! words {
            ($($i:literal)*) => { $(
                let mut x = tmpl[$i];
                if $i == p {
                    x = _mm256_or_si256(x, jp);
                } else if $i == p + 1 && step_spills {
                    x = _mm256_or_si256(x, jp1);
                }
                if let Some(k) = ($i as usize).checked_sub(q)
                    && k <= nw
                {
                    x = _mm256_or_si256(
                        x,
                        _mm256_or_si256(
                            _mm256_srlv_epi32(vals[k + 1], value_right),
                            _mm256_sllv_epi32(vals[k], value_left),
                        ),
                    );
                }
                w[$i] = x;
            )* };
        }
        words!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15);
        let mut v = Vars {
            s: pre.s,
            bc: pre.bc,
        };
        rounds_split::<true>(&mut v, &w, first);
        for base in [16, 32, 48] {
            rounds16::<true>(&mut v, &mut w, base);
        }
        macro_rules! update {
            ($($i:literal)*) => { $(
                if $i < nw {
                    let new = _mm256_add_epi32(v.s[$i], mid[$i]);
                    vals[$i + 1] = _mm256_blendv_epi8(new, vals[$i + 1], done);
                }
            )* };
        }
        update!(0 1 2 3 4 5 6 7);
        j = _mm256_add_epi32(j, _mm256_andnot_si256(done, one));
    }
    let mut x = [_mm256_setzero_si256(); 8];
    x[..nw].copy_from_slice(&vals[1..=nw]);
    store_states(&mut words, x);
    for (w, v) in words.iter().zip(values.iter_mut()) {
        for (x, b) in w[..nw].iter().zip(v.as_chunks_mut::<4>().0) {
            *b = x.to_be_bytes();
        }
    }
    crate::wipe(&mut words);
}

/// The rounds of the first sixteen whose index is at least `first` (`LATE`) or below it.
#[inline]
#[target_feature(enable = "avx2")]
fn rounds_split<const LATE: bool>(v: &mut Vars, w: &[__m256i; 16], first: usize) {
    let mut w = *w;
    macro_rules! steps {
        ($($i:literal)*) => { $(
            if ($i >= first) == LATE {
                step::<$i, false>(v, &mut w, 0);
            }
        )* };
    }
    steps!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15);
}

#[inline]
#[target_feature(enable = "avx2")]
fn rounds16<const SCHEDULE: bool>(v: &mut Vars, w: &mut [__m256i; 16], base: usize) {
    macro_rules! steps {
        ($($i:literal)*) => { $( step::<$i, SCHEDULE>(v, w, base); )* };
    }
    steps!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15);
}

/// `x` rotated right by `R` (`L` = 32 − `R`).
#[inline]
#[target_feature(enable = "avx2")]
fn ror<const R: i32, const L: i32>(x: __m256i) -> __m256i {
    _mm256_or_si256(_mm256_srli_epi32::<R>(x), _mm256_slli_epi32::<L>(x))
}

#[inline]
#[target_feature(enable = "avx2")]
fn xor3(a: __m256i, b: __m256i, c: __m256i) -> __m256i {
    _mm256_xor_si256(_mm256_xor_si256(a, b), c)
}

/// Round `base + I`.
#[inline]
#[target_feature(enable = "avx2")]
fn step<const I: usize, const SCHEDULE: bool>(v: &mut Vars, w: &mut [__m256i; 16], base: usize) {
    if SCHEDULE {
        // W[t] = σ1(W[t−2]) + W[t−7] + σ0(W[t−15]) + W[t−16]
        let x = w[(I + 1) % 16];
        let y = w[(I + 14) % 16];
        let s0 = _mm256_xor_si256(
            xor3(
                _mm256_srli_epi32::<7>(x),
                _mm256_srli_epi32::<18>(x),
                _mm256_srli_epi32::<3>(x),
            ),
            _mm256_xor_si256(_mm256_slli_epi32::<25>(x), _mm256_slli_epi32::<14>(x)),
        );
        let s1 = _mm256_xor_si256(
            xor3(
                _mm256_srli_epi32::<17>(y),
                _mm256_srli_epi32::<19>(y),
                _mm256_srli_epi32::<10>(y),
            ),
            _mm256_xor_si256(_mm256_slli_epi32::<15>(y), _mm256_slli_epi32::<13>(y)),
        );
        w[I] = _mm256_add_epi32(
            _mm256_add_epi32(w[I], w[(I + 9) % 16]),
            _mm256_add_epi32(s0, s1),
        );
    }
    let r = |role: usize| (role + 8 - I % 8) % 8;
    let s = &mut v.s;
    let (a, b, d, e, f, g, h) = (
        s[r(0)],
        s[r(1)],
        s[r(3)],
        s[r(4)],
        s[r(5)],
        s[r(6)],
        s[r(7)],
    );
    let kw = _mm256_add_epi32(w[I], _mm256_set1_epi32(K[base + I] as i32));
    let sigma1 = xor3(ror::<6, 26>(e), ror::<11, 21>(e), ror::<25, 7>(e));
    let ch = _mm256_xor_si256(_mm256_and_si256(_mm256_xor_si256(f, g), e), g);
    let sigma0 = xor3(ror::<2, 30>(a), ror::<13, 19>(a), ror::<22, 10>(a));
    let ab = _mm256_xor_si256(a, b);
    let maj = _mm256_xor_si256(_mm256_and_si256(ab, v.bc), b);
    v.bc = ab;
    let t1 = _mm256_add_epi32(_mm256_add_epi32(h, kw), _mm256_add_epi32(ch, sigma1));
    s[r(3)] = _mm256_add_epi32(d, t1);
    s[r(7)] = _mm256_add_epi32(t1, _mm256_add_epi32(sigma0, maj));
}

/// The 4 × 4 transpose of 32-bit words within each 128-bit half.
#[inline]
#[target_feature(enable = "avx2")]
fn transpose4(a: __m256i, b: __m256i, c: __m256i, d: __m256i) -> [__m256i; 4] {
    let t0 = _mm256_unpacklo_epi32(a, b);
    let t1 = _mm256_unpackhi_epi32(a, b);
    let t2 = _mm256_unpacklo_epi32(c, d);
    let t3 = _mm256_unpackhi_epi32(c, d);
    [
        _mm256_unpacklo_epi64(t0, t2),
        _mm256_unpackhi_epi64(t0, t2),
        _mm256_unpacklo_epi64(t1, t3),
        _mm256_unpackhi_epi64(t1, t3),
    ]
}

/// Two 16-byte pieces (16 bytes or 4 words) as the low and high halves of one vector.
#[inline]
#[target_feature(enable = "avx2")]
fn load2<T: Copy, const N: usize>(lo: &[T; N], hi: &[T; N]) -> __m256i {
    const { assert!(size_of::<[T; N]>() == 16, "16-byte pieces") };
    // SAFETY: AVX2 is enabled on this function; each unaligned load reads exactly the 16
    // bytes of the array it points into (its size is asserted above).
    let (lo, hi) = unsafe {
        (
            _mm_loadu_si128(lo.as_ptr().cast()),
            _mm_loadu_si128(hi.as_ptr().cast()),
        )
    };
    _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(lo), hi)
}

/// Loads the 8 blocks transposed: vector `j` holds word W\[j\] (big-endian) of every lane.
#[inline]
#[target_feature(enable = "avx2")]
fn load_blocks(blocks: &[&[u8; 64]; 8]) -> [__m256i; 16] {
    let bswap = _mm256_setr_epi8(
        3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12, 3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8,
        15, 14, 13, 12,
    );
    let mut w = [_mm256_setzero_si256(); 16];
    for q in 0..4 {
        let mut rows = [_mm256_setzero_si256(); 4];
        for (i, row) in rows.iter_mut().enumerate() {
            let lo = &blocks[i].as_chunks::<16>().0[q];
            let hi = &blocks[i + 4].as_chunks::<16>().0[q];
            *row = _mm256_shuffle_epi8(load2(lo, hi), bswap);
        }
        let t = transpose4(rows[0], rows[1], rows[2], rows[3]);
        w[4 * q..4 * q + 4].copy_from_slice(&t);
    }
    w
}

/// Loads the states transposed: vector `j` holds word `j` of every lane's state.
#[inline]
#[target_feature(enable = "avx2")]
fn load_states(states: &[[u32; 8]; 8]) -> [__m256i; 8] {
    let mut s = [_mm256_setzero_si256(); 8];
    for q in 0..2 {
        let mut rows = [_mm256_setzero_si256(); 4];
        for (i, row) in rows.iter_mut().enumerate() {
            let lo = &states[i].as_chunks::<4>().0[q];
            let hi = &states[i + 4].as_chunks::<4>().0[q];
            *row = load2(lo, hi);
        }
        let t = transpose4(rows[0], rows[1], rows[2], rows[3]);
        s[4 * q..4 * q + 4].copy_from_slice(&t);
    }
    s
}

/// The inverse of [`load_states`].
#[inline]
#[target_feature(enable = "avx2")]
fn store_states(states: &mut [[u32; 8]; 8], s: [__m256i; 8]) {
    for q in 0..2 {
        let t = transpose4(s[4 * q], s[4 * q + 1], s[4 * q + 2], s[4 * q + 3]);
        for (i, x) in t.into_iter().enumerate() {
            let (lo, hi) = (_mm256_castsi256_si128(x), _mm256_extracti128_si256::<1>(x));
            let (first, second) = states.split_at_mut(4);
            let lo_dst = &mut first[i].as_chunks_mut::<4>().0[q];
            let hi_dst = &mut second[i].as_chunks_mut::<4>().0[q];
            // SAFETY: AVX2 is enabled on this function; each unaligned store writes exactly
            // the 16 bytes of the array it borrows mutably.
            unsafe {
                _mm_storeu_si128(lo_dst.as_mut_ptr().cast(), lo);
                _mm_storeu_si128(hi_dst.as_mut_ptr().cast(), hi);
            }
        }
    }
}
