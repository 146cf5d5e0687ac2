//! Keccak-f\[1600\] on 4 states at once with AVX2: [`permute4`].
//!
//! The 24 rounds of FIPS 202 §3.3 (θ, ρ, π, χ, ι of §3.2) applied to four independent states,
//! one state per 64-bit lane of a ymm register: 25 ymm values hold the 4 states transposed
//! (value `x + 5y` holds lane A\[x, y\] of every state). AVX2 has no 64-bit rotation, so ρ and
//! θ's rotation are `vpsllq | vpsrlq` (the rotations by 8 and 56 are one `vpshufb`), χ is
//! `vpandn` + `vpxor`, ι a `vpxor` with the broadcast round constant. The states go in and out
//! by 4×4 transposes of 64-bit lanes built from 128-bit loads and stores (`vinserti128` /
//! `vextracti128` with memory operands, `vpunpck{l,h}qdq`).
//!
//! The round constants [`RC`] and rotation offsets [`RHO`] are those of FIPS 202 §3.2.5
//! (ι: RC\[i\] from the LFSR rc(t)) and §3.2.2 (ρ, Table 2), shared with the AVX-512 kernel.
//!
//! The rounds are unrolled 2 per loop iteration; a permutation measured well below the portable
//! permutation's cost (`pqkit bench crypto --hash-path all`). With 16 ymm registers for 25 lanes
//! the state partly lives on the stack (memory operands).
//!
//! The same code compiled for AVX-512F/VL ([`vl`], through `four_lanes!`) has 32 ymm
//! registers: the lanes and θ's column parities stay in registers. The AVX-512 path runs its
//! calls of 2 to 4 states there rather than a padded call of the 8-lane kernel, and on AMD
//! (Zen 4) one state too (`Small` in the parent module: a fixed choice per CPU family).
#![allow(unsafe_code)]

use core::arch::x86_64::{
    __m128i, __m256i, _mm_loadu_si128, _mm_storeu_si128, _mm256_andnot_si256, _mm256_blendv_epi8,
    _mm256_castsi128_si256, _mm256_castsi256_si128, _mm256_cmpgt_epi64, _mm256_extracti128_si256,
    _mm256_inserti128_si256, _mm256_loadu_si256, _mm256_or_si256, _mm256_set1_epi64x,
    _mm256_setr_epi8, _mm256_shuffle_epi8, _mm256_slli_epi64, _mm256_srli_epi64,
    _mm256_storeu_si256, _mm256_sub_epi64, _mm256_unpackhi_epi64, _mm256_unpacklo_epi64,
    _mm256_xor_si256,
};

use super::ChainGroup;

/// The ι round constants RC\[i\] for rounds i = 0‥23 (FIPS 202 §3.2.5).
pub(super) const RC: [u64; 24] = [
    0x0000_0000_0000_0001,
    0x0000_0000_0000_8082,
    0x8000_0000_0000_808A,
    0x8000_0000_8000_8000,
    0x0000_0000_0000_808B,
    0x0000_0000_8000_0001,
    0x8000_0000_8000_8081,
    0x8000_0000_0000_8009,
    0x0000_0000_0000_008A,
    0x0000_0000_0000_0088,
    0x0000_0000_8000_8009,
    0x0000_0000_8000_000A,
    0x0000_0000_8000_808B,
    0x8000_0000_0000_008B,
    0x8000_0000_0000_8089,
    0x8000_0000_0000_8003,
    0x8000_0000_0000_8002,
    0x8000_0000_0000_0080,
    0x0000_0000_0000_800A,
    0x8000_0000_8000_000A,
    0x8000_0000_8000_8081,
    0x8000_0000_0000_8080,
    0x0000_0000_8000_0001,
    0x8000_0000_8000_8008,
];

/// The ρ rotation offsets of lane A\[x, y\] at index `x + 5y` (FIPS 202 §3.2.2, Table 2).
pub(super) const RHO: [u32; 25] = [
    0, 1, 62, 28, 27, //
    36, 44, 6, 55, 20, //
    3, 10, 43, 25, 39, //
    41, 45, 15, 21, 8, //
    18, 2, 61, 56, 14,
];

/// The index of the lane that π moves to B\[x, y\] (index `x + 5y`): A\[(x + 3y) mod 5, x\]
/// (FIPS 202 §3.2.3: A′\[x, y\] = A\[(x + 3y) mod 5, x\]).
pub(super) const fn pi_source(x: usize, y: usize) -> usize {
    (x + 3 * y) % 5 + 5 * x
}

/// Applies Keccak-f\[1600\] to each of the 4 states.
///
/// # Panics
/// When the CPU lacks AVX2 (the dispatch only calls this on a CPU that has it).
pub(super) fn permute4(states: &mut [[u64; 25]; 4]) {
    assert!(
        std::arch::is_x86_feature_detected!("avx2"),
        "permute4 needs AVX2"
    );
    // SAFETY: `permute4_on` only requires the AVX2 target feature, which the CPU was just
    // checked to have.
    unsafe { permute4_on(states) }
}

/// Rounds per iteration of the round loop.
const UNROLL: usize = 2;

#[target_feature(enable = "avx2")]
fn permute4_on(states: &mut [[u64; 25]; 4]) {
    let mut a = load(states.each_ref());
    rounds(&mut a);
    store(&mut states.each_mut(), &a);
}

/// Runs the 4 one-block SHAKE chains of `g` (lane l from step `g.at[l]` to `g.end[l]`; its
/// value, `g.n` = 8‥32 bytes, is `values[l][..g.n]` in and out): every step permutes the
/// template with j (4 bytes big-endian) and the value in place and keeps the first n bytes
/// (FIPS 202 §3.3; SLH-DSA-SHAKE's F chained by FIPS 205 Algorithm 5, §11.1). With
/// `g.prelude`, every lane first permutes its template with the prelude's mask, j = `at` and
/// its value (SLH-DSA-SHAKE's PRF for the WOTS+ and FORS secret values, §11.1).
///
/// The states stay transposed in ymm values across the steps: the templates are transposed
/// in once, the values once in and once out; a step only ORs the byte-swapped j into the
/// step lane (`vpshufb`) and blends the first n/8 lanes of the permuted states into the
/// value lanes under the mask of the lanes still running (finished lanes keep their value
/// and j). On the SLH-DSA-SHAKE-128f chains (through `fixed_chains`) a step measured at the
/// bare [`permute4`] cost per permutation, below the per-step absorb and squeeze path
/// (`pqkit bench crypto --hash-path all`).
///
/// # Panics
/// When the CPU lacks AVX2 (the dispatch only calls this on a CPU that has it), or the
/// group's shape is not one [`super::ChainGroup::check`] accepts.
pub(super) fn chains4(g: &ChainGroup<'_, 4>, values: &mut [[u8; 32]; 4]) {
    g.check();
    assert!(
        std::arch::is_x86_feature_detected!("avx2"),
        "chains4 needs AVX2"
    );
    // SAFETY: `chains4_avx2` only requires the AVX2 target feature, which the CPU was just
    // checked to have.
    unsafe { chains4_avx2(g, values) }
}

#[target_feature(enable = "avx2")]
fn load256(p: &[u64; 4]) -> __m256i {
    // SAFETY: `p` is 32 readable bytes; `loadu` has no alignment requirement.
    unsafe { _mm256_loadu_si256(p.as_ptr().cast()) }
}

#[target_feature(enable = "avx2")]
fn store256(p: &mut [u64; 4], v: __m256i) {
    // SAFETY: `p` is 32 writable bytes; `storeu` has no alignment requirement.
    unsafe { _mm256_storeu_si256(p.as_mut_ptr().cast(), v) }
}

#[target_feature(enable = "avx2")]
fn chains4_avx2(g: &ChainGroup<'_, 4>, values: &mut [[u8; 32]; 4]) {
    let (vl, sl, words) = (g.value_at / 8, g.step_at / 8, g.n / 8);
    // The next step's states: the templates with the values in their lanes (j added per step).
    let mut next = load(g.templates.each_ref());
    for k in 0..words {
        let lanes = values.map(|v| u64::from_le_bytes(v[8 * k..8 * k + 8].try_into().expect("8")));
        next[vl + k] = load256(&lanes);
    }
    let step_lane = next[sl];
    let mut j = load256(&g.at.map(u64::from));
    let end = load256(&g.end.map(u64::from));
    // j's low 4 bytes to the high 4 bytes of its lane, reversed (big-endian in a
    // little-endian lane): bytes 3, 2, 1, 0 of the lane to bytes 4‥7, bytes 0‥3 zero.
    let swap = _mm256_setr_epi8(
        -128, -128, -128, -128, 3, 2, 1, 0, -128, -128, -128, -128, 11, 10, 9, 8, //
        -128, -128, -128, -128, 3, 2, 1, 0, -128, -128, -128, -128, 11, 10, 9, 8,
    );
    if let Some((lane, mask)) = g.prelude {
        // Every lane's prelude: the template with the mask in `lane`, j = at, the value.
        let mut a = next;
        a[sl] = _mm256_or_si256(step_lane, _mm256_shuffle_epi8(j, swap));
        a[lane] = _mm256_xor_si256(a[lane], _mm256_set1_epi64x(mask.cast_signed()));
        rounds(&mut a);
        next[vl..vl + words].copy_from_slice(&a[..words]);
    }
    for _ in 0..g.steps() {
        // All ones in the lanes still running (j < end; both below 2^32, so signed is fine).
        let running = _mm256_cmpgt_epi64(end, j);
        next[sl] = _mm256_or_si256(step_lane, _mm256_shuffle_epi8(j, swap));
        let mut a = next;
        rounds(&mut a);
        for (k, a) in a.iter().enumerate().take(4) {
            if k < words {
                next[vl + k] = _mm256_blendv_epi8(next[vl + k], *a, running);
            }
        }
        // j − (−1) = j + 1 in the running lanes.
        j = _mm256_sub_epi64(j, running);
    }
    for k in 0..words {
        let mut lanes = [0u64; 4];
        store256(&mut lanes, next[vl + k]);
        for (v, lane) in values.iter_mut().zip(lanes) {
            v[8 * k..8 * k + 8].copy_from_slice(&lane.to_le_bytes());
        }
    }
}

/// Lanes `j` and `j + 1` of one state, for the 128-bit loads and stores of the transposes.
fn pair(state: &[u64; 25], j: usize) -> &[u64; 2] {
    let (_, rest) = state.split_at(j);
    rest.first_chunk().expect("j ≤ 23")
}

/// Mutable [`pair`].
fn pair_mut(state: &mut [u64; 25], j: usize) -> &mut [u64; 2] {
    let (_, rest) = state.split_at_mut(j);
    rest.first_chunk_mut().expect("j ≤ 23")
}

/// Rotates each 64-bit lane left by the constant `$n` (0 < `$n` < 64).
macro_rules! rol {
    ($v:expr, $n:expr) => {{
        let v = $v;
        const N: u32 = $n;
        if N == 8 {
            _mm256_shuffle_epi8(
                v,
                _mm256_setr_epi8(
                    7, 0, 1, 2, 3, 4, 5, 6, 15, 8, 9, 10, 11, 12, 13, 14, //
                    7, 0, 1, 2, 3, 4, 5, 6, 15, 8, 9, 10, 11, 12, 13, 14,
                ),
            )
        } else if N == 56 {
            _mm256_shuffle_epi8(
                v,
                _mm256_setr_epi8(
                    1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11, 12, 13, 14, 15, 8, //
                    1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11, 12, 13, 14, 15, 8,
                ),
            )
        } else {
            _mm256_or_si256(
                _mm256_slli_epi64::<{ N as i32 }>(v),
                _mm256_srli_epi64::<{ 64 - N as i32 }>(v),
            )
        }
    }};
}

/// B\[x, y\] = ρ(A)\[(x + 3y) mod 5, x\]: π's source lane of B\[x, y\], rotated by its ρ offset.
macro_rules! rho_pi {
    ($a:ident, $x:literal, $y:literal) => {{
        const I: usize = pi_source($x, $y);
        if RHO[I] == 0 {
            $a[I]
        } else {
            rol!($a[I], RHO[I])
        }
    }};
}

/// The 4-lane kernel — [`load`], [`rounds`] (with each [`round`]) and [`store`] — compiled
/// for the target features given: AVX2 here, and AVX2 with AVX-512F/VL in [`vl`], where the
/// same code has 32 ymm registers for its 25 lanes and temporaries instead of 16, and so no
/// stack operands.
macro_rules! four_lanes {
    ($(#[$feature:meta])*) => {
        /// The 24 rounds of Keccak-f\[1600\] on 4 transposed states.
        $(#[$feature])*
        #[inline]
        fn rounds(a: &mut [__m256i; 25]) {
            for k in 0..24 / UNROLL {
                for i in 0..UNROLL {
                    round(a, RC[k * UNROLL + i]);
                }
            }
        }

        $(#[$feature])*
        fn load128(p: &[u64; 2]) -> __m128i {
            // SAFETY: `p` is 16 readable bytes; `loadu` has no alignment requirement.
            unsafe { _mm_loadu_si128(p.as_ptr().cast()) }
        }

        $(#[$feature])*
        fn store128(p: &mut [u64; 2], v: __m128i) {
            // SAFETY: `p` is 16 writable bytes; `storeu` has no alignment requirement.
            unsafe { _mm_storeu_si128(p.as_mut_ptr().cast(), v) }
        }

        /// Lanes `j, j + 1` of states `s` and `s + 2`: `[s[j], s[j+1], (s+2)[j], (s+2)[j+1]]`.
        $(#[$feature])*
        fn load_rows(states: [&[u64; 25]; 4], s: usize, j: usize) -> __m256i {
            let lo = _mm256_castsi128_si256(load128(pair(states[s], j)));
            _mm256_inserti128_si256::<1>(lo, load128(pair(states[s + 2], j)))
        }

        /// Transposes the states in: value `i` holds lane `i` of states 0, 1, 2, 3.
        $(#[$feature])*
        fn load(states: [&[u64; 25]; 4]) -> [__m256i; 25] {
            let mut a = [_mm256_set1_epi64x(0); 25];
            for j in (0..24).step_by(2) {
                let (even, odd) = (load_rows(states, 0, j), load_rows(states, 1, j));
                a[j] = _mm256_unpacklo_epi64(even, odd);
                a[j + 1] = _mm256_unpackhi_epi64(even, odd);
            }
            // Lane 24: the high half of the pair (23, 24).
            a[24] = _mm256_unpackhi_epi64(load_rows(states, 0, 23), load_rows(states, 1, 23));
            a
        }

        /// Transposes the states out (the inverse of [`load`]): lanes 0 to `states.len() − 1`
        /// (at most 4), the rest dropped.
        $(#[$feature])*
        fn store(states: &mut [&mut [u64; 25]], a: &[__m256i; 25]) {
            // The last pair (23, 24) rewrites lane 23 with the value the pair (22, 23) wrote.
            for j in (0..24).step_by(2).chain([23]) {
                let even = _mm256_unpacklo_epi64(a[j], a[j + 1]);
                let odd = _mm256_unpackhi_epi64(a[j], a[j + 1]);
                let halves = [
                    _mm256_castsi256_si128(even),
                    _mm256_castsi256_si128(odd),
                    _mm256_extracti128_si256::<1>(even),
                    _mm256_extracti128_si256::<1>(odd),
                ];
                for (state, half) in states.iter_mut().zip(halves) {
                    store128(pair_mut(state, j), half);
                }
            }
        }

        /// One round R = ι ∘ χ ∘ π ∘ ρ ∘ θ (FIPS 202 §3.3) with round constant `rc`.
        $(#[$feature])*
        #[inline]
        fn round(a: &mut [__m256i; 25], rc: u64) {
            // θ: C[x] = ⊕_y A[x, y]; D[x] = C[x − 1] ⊕ rot(C[x + 1], 1); A[x, y] ⊕= D[x].
            let mut c = [_mm256_set1_epi64x(0); 5];
            for (x, c) in c.iter_mut().enumerate() {
                let c01 = _mm256_xor_si256(a[x], a[x + 5]);
                let c23 = _mm256_xor_si256(a[x + 10], a[x + 15]);
                *c = _mm256_xor_si256(_mm256_xor_si256(c01, c23), a[x + 20]);
            }
            for x in 0..5 {
                let d = _mm256_xor_si256(c[(x + 4) % 5], rol!(c[(x + 1) % 5], 1));
                for y in 0..5 {
                    a[x + 5 * y] = _mm256_xor_si256(a[x + 5 * y], d);
                }
            }
            // ρ and π.
            let b = rho_pi_lanes!(rho_pi, a);
            // χ: A[x, y] = B[x, y] ⊕ (¬B[x + 1, y] ∧ B[x + 2, y]).
            for y in 0..5 {
                for x in 0..5 {
                    let (b1, b2) = (b[(x + 1) % 5 + 5 * y], b[(x + 2) % 5 + 5 * y]);
                    a[x + 5 * y] = _mm256_xor_si256(b[x + 5 * y], _mm256_andnot_si256(b1, b2));
                }
            }
            // ι.
            a[0] = _mm256_xor_si256(a[0], _mm256_set1_epi64x(rc.cast_signed()));
        }
    };
}

four_lanes!(#[target_feature(enable = "avx2")]);

/// The 4-lane kernel compiled for AVX-512F/VL: the AVX-512 path's calls of 1 to 4 states.
pub(super) mod vl {
    use super::*;

    four_lanes!(#[target_feature(enable = "avx2,avx512f,avx512vl")]);

    /// Applies Keccak-f\[1600\] to each of the 1 to 4 states, in one call of the 4-lane
    /// kernel: lanes past the last state repeat it (read, never written back), so no state
    /// of no stream is needed.
    ///
    /// # Panics
    /// When the CPU lacks AVX2, AVX-512F or AVX-512VL (the dispatch checks [`available`]),
    /// or without 1 to 4 states.
    pub(in crate::keccak) fn permute(states: &mut [&mut [u64; 25]]) {
        assert!(
            available(),
            "vl::permute needs AVX2, AVX-512F and AVX-512VL"
        );
        assert!(
            (1..=4).contains(&states.len()),
            "vl::permute takes 1 to 4 states"
        );
        // SAFETY: `permute_on` requires AVX2, AVX-512F and AVX-512VL, which the CPU was
        // just checked to have.
        unsafe { permute_on(states) }
    }

    #[target_feature(enable = "avx2,avx512f,avx512vl")]
    fn permute_on(states: &mut [&mut [u64; 25]]) {
        let last = states.len() - 1;
        let mut a = load(core::array::from_fn(|k| &*states[k.min(last)]));
        rounds(&mut a);
        store(states, &a);
    }

    /// Whether the CPU has what [`permute4`] needs.
    pub(in crate::keccak) fn available() -> bool {
        std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512vl")
    }
}
