//! Keccak-f\[1600\] on 8 states at once with AVX-512F: [`permute8_each`]; and on 9, the ninth on
//! the general-purpose registers in the same round loop: [`permute8_plus_one`].
//!
//! The 24 rounds of FIPS 202 §3.3 (θ, ρ, π, χ, ι of §3.2) applied to eight independent states,
//! one state per 64-bit lane of a zmm register: 25 zmm values hold the 8 states transposed
//! (value `x + 5y` holds lane A\[x, y\] of every state). Per round: θ's column parities are two
//! 3-input XORs each (`vpternlogq` 0x96), its rotation `vprolq`, and D\[x\] is folded into the
//! lanes with one more 3-input XOR (A ⊕ C\[x − 1\] ⊕ rot(C\[x + 1\], 1)); ρ is `vprolq`, π a
//! renaming, χ one `vpternlogq` 0xD2 (a ⊕ (¬b ∧ c)) per lane, ι a `vpxorq` with the broadcast
//! round constant — 90 vector instructions per round. The states go in and out by 8×8
//! transposes of 64-bit lanes built from 128-bit loads (`vbroadcasti32x4` under a mask) and
//! stores (`vextracti32x4` to memory) and `vpunpck{l,h}qdq`.
//!
//! The round constants and rotation offsets are those of FIPS 202 §3.2.5 and §3.2.2 (shared
//! with the AVX2 kernel: [`super::avx2::RC`], [`super::avx2::RHO`]).
//!
//! The rounds are unrolled 4 per loop iteration, with no spills, and bound by the two 512-bit
//! ports: 24 × 90 instructions / 2 per cycle = 1 080 core cycles per call; the transposes in
//! and out are a small part of a call. Gathers and scatters (`vpgatherqq`/`vpscatterqq`) for
//! the transposes measured slower. The path's cost per permutation on the machine at hand: the
//! engine table of `pqkit bench crypto --hash-path all`.
#![allow(unsafe_code)]

use core::arch::x86_64::{
    __m128i, __m512i, _mm_loadu_si128, _mm_storeu_si128, _mm512_castsi512_si128,
    _mm512_cmplt_epu64_mask, _mm512_extracti32x4_epi32, _mm512_loadu_si512, _mm512_mask_add_epi64,
    _mm512_mask_broadcast_i32x4, _mm512_mask_mov_epi64, _mm512_or_si512, _mm512_rol_epi64,
    _mm512_set1_epi64, _mm512_set4_epi64, _mm512_shuffle_epi8, _mm512_storeu_si512,
    _mm512_ternarylogic_epi64, _mm512_unpackhi_epi64, _mm512_unpacklo_epi64, _mm512_xor_si512,
    _mm512_zextsi128_si512,
};

use super::ChainGroup;
use super::avx2::{RC, RHO, pi_source};

/// Whether CPUID leaf 0 names a Zen-family vendor ("AuthenticAMD", "HygonGenuine"): the CPUs
/// whose AVX-512 path takes one Keccak state in the 4-lane kernel (`Small` in the parent
/// module). Zen 5's full-width 512-bit units are not told apart from Zen 4's.
pub(super) fn zen_core() -> bool {
    // SAFETY: CPUID leaf 0 exists on every x86_64 CPU and only reads registers. (`__cpuid` is
    // a safe function in newer Rust; the block keeps the crate's minimum version building.)
    #[allow(unused_unsafe)]
    let id = unsafe { core::arch::x86_64::__cpuid(0) };
    let vendor = (id.ebx, id.edx, id.ecx);
    // "Auth" "enti" "cAMD" and "Hygo" "nGen" "uine", little-endian words.
    vendor == (0x6874_7541, 0x6974_6E65, 0x444D_4163)
        || vendor == (0x6F67_7948, 0x6E65_476E, 0x656E_6975)
}

/// Applies Keccak-f\[1600\] to each of the 8 states, wherever they are (a run of a slice, or
/// the streams a caller picked out of a larger set, permuted without gathering them first).
///
/// # Panics
/// When the CPU lacks AVX-512F (the dispatch only calls this on a CPU that has it).
pub(super) fn permute8_each(states: &mut [&mut [u64; 25]; 8]) {
    assert!(
        std::arch::is_x86_feature_detected!("avx512f"),
        "permute8 needs AVX-512F"
    );
    // SAFETY: `permute8_avx512` only requires the AVX-512F target feature, which the CPU was
    // just checked to have.
    unsafe { permute8_avx512(states) }
}

/// [`permute8_each`] and Keccak-f\[1600\] on a ninth state, `one`, in the same round loop:
/// the ninth in scalar code on the integer ALUs (BMI1 `andn`, BMI2 `rorx`; its 25 lanes and
/// temporaries partly on the stack), which the vector rounds leave idle, so the out-of-order
/// core runs both at once. For 9 streams (8 and one left over) instead of a kernel call and a
/// lone permutation. On a CPU without BMI1/BMI2 (a virtual CPU can hide them), the two one
/// after the other.
///
/// # Panics
/// When the CPU lacks AVX-512F (the dispatch only calls this on a CPU that has it).
pub(super) fn permute8_plus_one(states: &mut [&mut [u64; 25]; 8], one: &mut [u64; 25]) {
    if !(std::arch::is_x86_feature_detected!("bmi1") && std::arch::is_x86_feature_detected!("bmi2"))
    {
        permute8_each(states);
        super::permute_portable(one);
        return;
    }
    assert!(
        std::arch::is_x86_feature_detected!("avx512f"),
        "permute8_plus_one needs AVX-512F"
    );
    // SAFETY: `permute8_plus_one_avx512` only requires the AVX-512F, BMI1 and BMI2 target
    // features, which the CPU was just checked to have.
    unsafe { permute8_plus_one_avx512(states, one) }
}

#[target_feature(enable = "avx512f,bmi1,bmi2")]
fn permute8_plus_one_avx512(states: &mut [&mut [u64; 25]; 8], one: &mut [u64; 25]) {
    let mut a = load(&states.each_ref().map(|s| &**s));
    let mut s = *one;
    for k in 0..24 / UNROLL {
        for i in 0..UNROLL {
            round(&mut a, RC[k * UNROLL + i]);
            scalar_round(&mut s, RC[k * UNROLL + i]);
        }
    }
    store(states, &a);
    *one = s;
    crate::wipe(core::slice::from_mut(&mut s));
}

/// [`round`] on one state in scalar code (inlined into the caller, so compiled with its
/// target features).
#[inline(always)]
fn scalar_round(a: &mut [u64; 25], rc: u64) {
    // θ.
    let c: [u64; 5] = [0, 1, 2, 3, 4].map(|x| a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20]);
    for x in 0..5 {
        let d = c[(x + 4) % 5] ^ c[(x + 1) % 5].rotate_left(1);
        for y in 0..5 {
            a[x + 5 * y] ^= d;
        }
    }
    // ρ and π.
    macro_rules! rho_pi_scalar {
        ($($x:literal, $y:literal);*) => {
            [$({
                const I: usize = pi_source($x, $y);
                a[I].rotate_left(RHO[I])
            }),*]
        };
    }
    let b: [u64; 25] = rho_pi_scalar!(
        0, 0; 1, 0; 2, 0; 3, 0; 4, 0;
        0, 1; 1, 1; 2, 1; 3, 1; 4, 1;
        0, 2; 1, 2; 2, 2; 3, 2; 4, 2;
        0, 3; 1, 3; 2, 3; 3, 3; 4, 3;
        0, 4; 1, 4; 2, 4; 3, 4; 4, 4
    );
    // χ.
    for y in 0..5 {
        for x in 0..5 {
            a[x + 5 * y] = b[x + 5 * y] ^ (!b[(x + 1) % 5 + 5 * y] & b[(x + 2) % 5 + 5 * y]);
        }
    }
    // ι.
    a[0] ^= rc;
    // Each lane through a general-purpose register: without it the compiler vectorizes this
    // code onto the vector units the 8-lane rounds already saturate.
    for v in a.iter_mut() {
        // SAFETY: an empty template that only names the value's register, which it leaves
        // unchanged: it touches no memory, stack or flags, so `pure`, `nomem`, `nostack` and
        // `preserves_flags` hold.
        unsafe {
            core::arch::asm!(
                "/* {0} */",
                inout(reg) * v,
                options(pure, nomem, nostack, preserves_flags)
            )
        };
    }
}

/// Rounds per iteration of the round loop.
const UNROLL: usize = 4;

#[target_feature(enable = "avx512f")]
fn permute8_avx512(states: &mut [&mut [u64; 25]; 8]) {
    let mut a = load(&states.each_ref().map(|s| &**s));
    rounds(&mut a);
    store(states, &a);
}

/// The 24 rounds of Keccak-f\[1600\] on 8 transposed states.
#[target_feature(enable = "avx512f")]
#[inline]
fn rounds(a: &mut [__m512i; 25]) {
    for k in 0..24 / UNROLL {
        for i in 0..UNROLL {
            round(a, RC[k * UNROLL + i]);
        }
    }
}

/// Runs the 8 one-block SHAKE chains of `g` (lane l from step `g.at[l]` to `g.end[l]`; its
/// value, `g.n` = 8‥32 bytes, is `values[l][..g.n]` in and out): every step permutes the
/// template with j (4 bytes big-endian) and the value in place and keeps the first n bytes
/// (FIPS 202 §3.3; SLH-DSA-SHAKE's F chained by FIPS 205 Algorithm 5, §11.1). With
/// `g.prelude`, every lane first permutes its template with the prelude's mask, j = `at` and
/// its value (SLH-DSA-SHAKE's PRF for the WOTS+ and FORS secret values, §11.1).
///
/// The states stay transposed in zmm registers across the steps: the templates are
/// transposed in once, the values once in and once out; a step only ORs the byte-swapped j
/// into the step lane (`vpshufb`) and moves the first n/8 lanes of the permuted states into
/// the value lanes under the mask of the lanes still running (finished lanes keep their
/// value and j). On the SLH-DSA-SHAKE-128f chains (through `fixed_chains`) a step measured at
/// the bare [`permute8_each`] cost per permutation, well below the per-step absorb, transpose
/// and squeeze path. The last round computes only the n/8 value lanes ([`rounds_for_lanes`]),
/// which measured slightly faster than computing all 25 lanes there
/// (`pqkit bench crypto --hash-path all`).
///
/// # Panics
/// When the CPU lacks AVX-512F/BW (the dispatch only calls this on a CPU that has them), or
/// the group's shape is not one [`super::ChainGroup::check`] accepts.
pub(super) fn chains8(g: &ChainGroup<'_, 8>, values: &mut [[u8; 32]; 8]) {
    g.check();
    assert!(
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw"),
        "chains8 needs AVX-512F and AVX-512BW"
    );
    // SAFETY: `chains8_avx512` only requires the AVX-512F and AVX-512BW target features,
    // which the CPU was just checked to have.
    unsafe { chains8_avx512(g, values) }
}

#[target_feature(enable = "avx512f")]
fn load512(p: &[u64; 8]) -> __m512i {
    // SAFETY: `p` is 64 readable bytes; `loadu` has no alignment requirement.
    unsafe { _mm512_loadu_si512(p.as_ptr().cast()) }
}

#[target_feature(enable = "avx512f")]
fn store512(p: &mut [u64; 8], v: __m512i) {
    // SAFETY: `p` is 64 writable bytes; `storeu` has no alignment requirement.
    unsafe { _mm512_storeu_si512(p.as_mut_ptr().cast(), v) }
}

#[target_feature(enable = "avx512f,avx512bw")]
fn chains8_avx512(g: &ChainGroup<'_, 8>, values: &mut [[u8; 32]; 8]) {
    let (vl, sl, words) = (g.value_at / 8, g.step_at / 8, g.n / 8);
    // The next step's states: the templates with the values in their lanes (j added per step).
    let mut next = load(&g.templates.each_ref());
    for k in 0..words {
        let lanes = values.map(|v| u64::from_le_bytes(v[8 * k..8 * k + 8].try_into().expect("8")));
        next[vl + k] = load512(&lanes);
    }
    let step_lane = next[sl];
    let mut j = load512(&g.at.map(u64::from));
    let end = load512(&g.end.map(u64::from));
    // j's low 4 bytes to the high 4 bytes of its lane, reversed (big-endian in a
    // little-endian lane): bytes 3, 2, 1, 0 of the lane to bytes 4‥7, bytes 0‥3 zero.
    let swap = _mm512_set4_epi64(
        0x0809_0A0B_8080_8080,
        0x0001_0203_8080_8080,
        0x0809_0A0B_8080_8080,
        0x0001_0203_8080_8080,
    );
    let one = _mm512_set1_epi64(1);
    // With a prelude, step 0 is every lane's prelude: the template with the mask XORed into
    // its lane, j = at, the value (one loop, so that the rounds are inlined once).
    let prelude = g
        .prelude
        .map(|(lane, mask)| (lane, _mm512_set1_epi64(mask.cast_signed())));
    let steps = g.steps() as usize + usize::from(prelude.is_some());
    for step in 0..steps {
        let before = if step == 0 { prelude } else { None };
        let running = match before {
            Some(_) => 0xFF,
            None => _mm512_cmplt_epu64_mask(j, end),
        };
        next[sl] = _mm512_or_si512(step_lane, _mm512_shuffle_epi8(j, swap));
        // The mask goes into `next` and out again: `a` is indexed by constants only, so that
        // it lives in registers (a runtime index makes it a 1600-byte copy per step).
        if let Some((lane, mask)) = before {
            next[lane] = _mm512_xor_si512(next[lane], mask);
        }
        let mut a = next;
        if let Some((lane, mask)) = before {
            next[lane] = _mm512_xor_si512(next[lane], mask);
        }
        rounds_for_lanes(&mut a, words);
        for (k, a) in a.iter().enumerate().take(4) {
            if k < words {
                next[vl + k] = _mm512_mask_mov_epi64(next[vl + k], running, *a);
            }
        }
        if before.is_none() {
            j = _mm512_mask_add_epi64(j, running, j, one);
        }
    }
    for k in 0..words {
        let mut lanes = [0u64; 8];
        store512(&mut lanes, next[vl + k]);
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

#[target_feature(enable = "avx512f")]
fn load128(p: &[u64; 2]) -> __m128i {
    // SAFETY: `p` is 16 readable bytes; `loadu` has no alignment requirement.
    unsafe { _mm_loadu_si128(p.as_ptr().cast()) }
}

#[target_feature(enable = "avx512f")]
fn store128(p: &mut [u64; 2], v: __m128i) {
    // SAFETY: `p` is 16 writable bytes; `storeu` has no alignment requirement.
    unsafe { _mm_storeu_si128(p.as_mut_ptr().cast(), v) }
}

/// Lanes `j, j + 1` of states `s, s + 2, s + 4, s + 6`, in that order.
#[target_feature(enable = "avx512f")]
#[inline]
fn load_rows(states: &[&[u64; 25]; 8], s: usize, j: usize) -> __m512i {
    let v = _mm512_zextsi128_si512(load128(pair(states[s], j)));
    let v = _mm512_mask_broadcast_i32x4(v, 0x00F0, load128(pair(states[s + 2], j)));
    let v = _mm512_mask_broadcast_i32x4(v, 0x0F00, load128(pair(states[s + 4], j)));
    _mm512_mask_broadcast_i32x4(v, 0xF000, load128(pair(states[s + 6], j)))
}

/// Lanes `j` and `j + 1` of states 0‥7: a 2×8 slice of the 8×8 transpose.
#[target_feature(enable = "avx512f")]
#[inline]
fn load_pair(states: &[&[u64; 25]; 8], j: usize) -> (__m512i, __m512i) {
    let (even, odd) = (load_rows(states, 0, j), load_rows(states, 1, j));
    (
        _mm512_unpacklo_epi64(even, odd),
        _mm512_unpackhi_epi64(even, odd),
    )
}

/// Transposes the states in: value `i` holds lane `i` of states 0‥7.
#[target_feature(enable = "avx512f")]
#[inline]
fn load(states: &[&[u64; 25]; 8]) -> [__m512i; 25] {
    let (a0, a1) = load_pair(states, 0);
    let (a2, a3) = load_pair(states, 2);
    let (a4, a5) = load_pair(states, 4);
    let (a6, a7) = load_pair(states, 6);
    let (a8, a9) = load_pair(states, 8);
    let (a10, a11) = load_pair(states, 10);
    let (a12, a13) = load_pair(states, 12);
    let (a14, a15) = load_pair(states, 14);
    let (a16, a17) = load_pair(states, 16);
    let (a18, a19) = load_pair(states, 18);
    let (a20, a21) = load_pair(states, 20);
    let (a22, a23) = load_pair(states, 22);
    // Lane 24: the high half of the pair (23, 24).
    let (_, a24) = load_pair(states, 23);
    [
        a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19,
        a20, a21, a22, a23, a24,
    ]
}

/// Writes lanes `j` and `j + 1` (values `lo`, `hi`) of states 0‥7: the inverse of
/// [`load_pair`].
#[target_feature(enable = "avx512f")]
#[inline]
fn store_pair(states: &mut [&mut [u64; 25]; 8], j: usize, lo: __m512i, hi: __m512i) {
    let rows = [_mm512_unpacklo_epi64(lo, hi), _mm512_unpackhi_epi64(lo, hi)];
    for (s, rows) in rows.into_iter().enumerate() {
        store128(pair_mut(states[s], j), _mm512_castsi512_si128(rows));
        store128(
            pair_mut(states[s + 2], j),
            _mm512_extracti32x4_epi32::<1>(rows),
        );
        store128(
            pair_mut(states[s + 4], j),
            _mm512_extracti32x4_epi32::<2>(rows),
        );
        store128(
            pair_mut(states[s + 6], j),
            _mm512_extracti32x4_epi32::<3>(rows),
        );
    }
}

/// Transposes the states out (the inverse of [`load`]).
#[target_feature(enable = "avx512f")]
#[inline]
fn store(states: &mut [&mut [u64; 25]; 8], a: &[__m512i; 25]) {
    for k in 0..12 {
        store_pair(states, 2 * k, a[2 * k], a[2 * k + 1]);
    }
    // The pair (23, 24) rewrites lane 23 with the value the pair (22, 23) wrote.
    store_pair(states, 23, a[23], a[24]);
}

/// a ⊕ b ⊕ c.
macro_rules! xor3 {
    ($a:expr, $b:expr, $c:expr) => {
        _mm512_ternarylogic_epi64::<0x96>($a, $b, $c)
    };
}

/// B\[x, y\] = ρ(A)\[(x + 3y) mod 5, x\]: π's source lane of B\[x, y\], rotated by its ρ offset.
macro_rules! rho_pi {
    ($a:ident, $x:literal, $y:literal) => {{
        const I: usize = pi_source($x, $y);
        _mm512_rol_epi64::<{ RHO[I] as i32 }>($a[I])
    }};
}

/// The 24 rounds when only lanes `0..words` (≤ 5, row y = 0) of the result are read: the
/// last round computes just those (θ's five parities, then ρ, π, χ and ι of the `words`
/// lanes: about 30 instructions instead of 90; the other lanes are left stale).
#[target_feature(enable = "avx512f")]
#[inline]
fn rounds_for_lanes(a: &mut [__m512i; 25], words: usize) {
    if words > 5 {
        rounds(a);
        return;
    }
    for k in 0..24 / UNROLL - 1 {
        for i in 0..UNROLL {
            round(a, RC[k * UNROLL + i]);
        }
    }
    for rc in &RC[24 - UNROLL..23] {
        round(a, *rc);
    }
    // Round 23 for row 0: B[x, 0] = ρ(θ(A))[x, x] (π's source of (x, 0) is lane 6x).
    let mut c = [_mm512_set1_epi64(0); 5];
    for (x, c) in c.iter_mut().enumerate() {
        *c = xor3!(xor3!(a[x], a[x + 5], a[x + 10]), a[x + 15], a[x + 20]);
    }
    macro_rules! b {
        ($x:literal) => {{
            const I: usize = pi_source($x, 0);
            let t = xor3!(a[I], c[(I + 4) % 5], _mm512_rol_epi64::<1>(c[(I + 1) % 5]));
            _mm512_rol_epi64::<{ RHO[I] as i32 }>(t)
        }};
    }
    let b = [b!(0), b!(1), b!(2), b!(3), b!(4)];
    for x in 0..words {
        a[x] = _mm512_ternarylogic_epi64::<0xD2>(b[x], b[(x + 1) % 5], b[(x + 2) % 5]);
    }
    a[0] = _mm512_xor_si512(a[0], _mm512_set1_epi64(RC[23].cast_signed()));
}

/// One round R = ι ∘ χ ∘ π ∘ ρ ∘ θ (FIPS 202 §3.3) with round constant `rc`.
#[target_feature(enable = "avx512f")]
#[inline]
fn round(a: &mut [__m512i; 25], rc: u64) {
    // θ: C[x] = ⊕_y A[x, y]; A[x, y] ⊕= C[x − 1] ⊕ rot(C[x + 1], 1).
    let mut c = [_mm512_set1_epi64(0); 5];
    for (x, c) in c.iter_mut().enumerate() {
        *c = xor3!(xor3!(a[x], a[x + 5], a[x + 10]), a[x + 15], a[x + 20]);
    }
    for x in 0..5 {
        let r = _mm512_rol_epi64::<1>(c[(x + 1) % 5]);
        for y in 0..5 {
            a[x + 5 * y] = xor3!(a[x + 5 * y], c[(x + 4) % 5], r);
        }
    }
    // ρ and π.
    let b = rho_pi_lanes!(rho_pi, a);
    // χ: A[x, y] = B[x, y] ⊕ (¬B[x + 1, y] ∧ B[x + 2, y]).
    for y in 0..5 {
        for x in 0..5 {
            let (b0, b1, b2) = (b[x + 5 * y], b[(x + 1) % 5 + 5 * y], b[(x + 2) % 5 + 5 * y]);
            a[x + 5 * y] = _mm512_ternarylogic_epi64::<0xD2>(b0, b1, b2);
        }
    }
    // ι.
    a[0] = _mm512_xor_si512(a[0], _mm512_set1_epi64(rc.cast_signed()));
}
