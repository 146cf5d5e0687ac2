//! Sixteen independent SHA-256 compressions at once with AVX-512 (FIPS 180-4 §6.2.2): lane `i`
//! of every 512-bit vector is message `i`, so `states[i] = compress(states[i], blocks[i])`.
//!
//! Instructions: `vprord` (`_mm512_ror_epi32`) for the rotations, `vpternlogd` for Ch, Maj and
//! the three-way XORs of Σ0, Σ1, σ0 and σ1, `vpshufb` for the big-endian byte swap, a 16 × 16
//! 32-bit transpose of the blocks (`vpunpck{l,h}{dq,qdq}` then two `vshufi32x4` stages), and a
//! 16 × 8 transpose of the states in and out (three `vpermt2d` stages each way). The message
//! schedule lives in a ring of 16 vectors; rounds 16..64 are one 16-round body run three
//! times, so the kernel fits the µop cache.
//!
//! Per 16 rounds with the schedule: 160 `vprord`, 32 `vpsrld`, 96 `vpternlogd`, 160 `vpaddd`,
//! no spills: about two 512-bit µops per cycle, the limit of ports 0 and 5.
//!
//! Through `Sha256Prefix::hash_many_on` (e.g. SLH-DSA-SHA2-128f's F: 38-byte messages after a
//! 64-byte prefix) a message costs markedly more than the kernel's compression alone: the rest
//! is the caller's gathering of blocks. The path's cost per compression on the machine at hand:
//! the engine table of `pqkit bench crypto --hash-path all`.
#![allow(unsafe_code)]

use core::arch::x86_64::*;
use core::marker::PhantomData;

use super::{ChainGroup, IdGroups, K};
use crate::Chain;

/// `states[i] = compress(states[i], blocks[i])` for the 16 lanes.
///
/// # Panics
/// When the CPU lacks AVX-512F or AVX-512BW (the dispatch never calls it then).
pub(super) fn compress16(states: &mut [[u32; 8]; 16], blocks: &[&[u8; 64]; 16]) {
    assert!(
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw"),
        "the AVX-512 SHA-256 kernel needs AVX-512F and AVX-512BW"
    );
    // SAFETY: the CPU supports AVX-512F and AVX-512BW (asserted just above), the only target
    // features `kernel` enables.
    unsafe { kernel(states, blocks) }
}

#[target_feature(enable = "avx512f,avx512bw")]
fn kernel(states: &mut [[u32; 8]; 16], blocks: &[&[u8; 64]; 16]) {
    let mut w = load_blocks(blocks);
    let init = load_states(states);
    let mut s = init;
    let (k0, k) = K.as_chunks::<16>().0.split_first().expect("64 constants");
    rounds16::<false>(&mut s, &mut w, k0);
    // A loop, not unrolled: the 16-round body is reused for rounds 16..64.
    for k in k {
        rounds16::<true>(&mut s, &mut w, k);
    }
    for (x, y) in s.iter_mut().zip(init) {
        *x = _mm512_add_epi32(*x, y);
    }
    store_states(states, s);
}

/// Sixteen one-block hash chains at once, the state kept in the vector registers from step to
/// step (see [`ChainGroup`]; FIPS 180-4 §6.2.2 for each compression; the chains of FIPS 205
/// Algorithm 5 and RFC 8554 Algorithm 1). Lane `l` is chain `l`: its 64-byte template, the
/// first `g.n` bytes of its 32-byte value `values[l]` (updated in place), steps
/// `g.at[l]..g.end[l]`.
///
/// The templates are transposed once into 16 vectors of big-endian words and the values into
/// n/4 vectors; each step forms the message words in registers (template word, value words
/// funnel-shifted into place, the step counter shifted into place), runs the rounds from the
/// state after the rounds that precede the first changing word (the same at every step, so
/// computed once), adds the midstate and keeps words 0..n/4 as the new values in the lanes
/// still stepping (a masked add). The loop runs as many steps as the longest chain; the values
/// are transposed back once.
///
/// For SLH-DSA-SHA2's F layouts, the parts of the schedule that are the same at every step
/// (W + K of the fixed words, and per W[16..32] the sum of its fixed terms: all of W17,
/// σ0(W[10..16]) and their neighbours) are computed once per group too.
///
/// Per step: about 1 500 512-bit µops for 16 lanes for SLH-DSA-SHA2-128f's F (the rounds
/// before the first changing word and ~80 schedule µops skipped; ~20 to form the message; one
/// masked add per value word), against 1 616 for a plain compression. Through
/// [`crate::fixed_chains`] on SLH-DSA-SHA2-128f's F, the fixed schedule parts measured a small
/// gain and the kernel as a whole a large one over steps through [`compress16`]; on LMS's
/// 1–4-step chains (133 chains per call, n = 32) the per-group setup shows, which
/// [`chains16_ids`] pays once (`pqkit bench crypto --hash-path all`).
///
/// # Panics
/// When the CPU lacks AVX-512F or AVX-512BW, or the layout does not fit
/// ([`ChainGroup::check`]).
pub(super) fn chains16(g: &ChainGroup<'_, 16>, values: &mut [[u8; 32]; 16]) {
    g.check();
    assert!(
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw"),
        "the AVX-512 SHA-256 chain kernel needs AVX-512F and AVX-512BW"
    );
    // SAFETY: the CPU supports AVX-512F and AVX-512BW (asserted just above), the only target
    // features `chain_kernel` enables.
    unsafe { chain_kernel(g, values) }
}

#[target_feature(enable = "avx512f,avx512bw")]
fn chain_kernel(g: &ChainGroup<'_, 16>, values: &mut [[u8; 32]; 16]) {
    let steps = g.steps();
    if steps == 0 && g.prelude.is_none() {
        return;
    }
    let plan = Plan::of(&g.layout());
    // The template words, with the bytes under the step counter and the value cleared.
    let blocks: [&[u8; 64]; 16] = core::array::from_fn(|l| &g.templates[l]);
    let mut tmpl = load_blocks(&blocks);
    for (t, m) in tmpl.iter_mut().zip(g.template_masks()) {
        *t = _mm512_and_si512(*t, _mm512_set1_epi32(m as i32));
    }
    let mut mid = [_mm512_setzero_si512(); 8];
    for (v, m) in mid.iter_mut().zip(g.midstate) {
        *v = _mm512_set1_epi32(m as i32);
    }
    // vals[1 + i] = value word i of every lane; vals[0] and the rest stay zero (the funnel
    // shifts at the value's two ends read them).
    let x = load_values(core::array::from_fn(|l| &values[l]));
    let mut vals = [_mm512_setzero_si512(); 10];
    vals[1..=plan.nw].copy_from_slice(&x[..plan.nw]);
    // SAFETY: AVX-512F is enabled on this function; each unaligned load reads exactly the 64
    // bytes of a `[u32; 16]`.
    let (j, end) = unsafe {
        (
            _mm512_loadu_si512(g.at.as_ptr().cast()),
            _mm512_loadu_si512(g.end.as_ptr().cast()),
        )
    };
    // The changing words, as a constant: SLH-DSA-SHA2's F exactly (n = 16, 24, 32: the step
    // counter in words 4..=5, the value from word 5), with the schedule's fixed parts; every
    // word from the first changing one for the rest (LMS among them: the rounds before word 5
    // skipped; its few fixed schedule terms did not pay for their setup on 1–4 steps).
    let prelude = g.prelude;
    macro_rules! run {
        ($var:expr, $second:literal) => {
            steps_from::<{ $var }, $second>(&plan, &tmpl, &mid, &mut vals, j, end, steps, prelude)
        };
    }
    match plan.var {
        0x03f0 => run!(0x03f0, true),
        0x0ff0 => run!(0x0ff0, true),
        0x3ff0 => run!(0x3ff0, true),
        v => match v.trailing_zeros() {
            0..4 => run!(0xffff, false),
            4 => run!(0xfff0, false),
            5..8 => run!(0xffe0, false),
            _ => run!(0xff00, false),
        },
    }
    // Words from n on go back as they came.
    let mut x = x;
    x[..plan.nw].copy_from_slice(&vals[1..=plan.nw]);
    store_values(values, x);
}

/// The `steps` steps of [`chain_kernel`] for the changing block words `VAR` (bit i: word i;
/// a superset of the words under the step counter and the value). What does not change from
/// step to step is computed once: the rounds before the first changing word, W[t] + K[t] for
/// the fixed words t < 32, and with `SECOND` for each of W[16..32] the sum of its fixed terms.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
#[allow(clippy::too_many_arguments)] // the kernel's registers, passed by reference
fn steps_from<const VAR: u32, const SECOND: bool>(
    plan: &Plan,
    tmpl: &[__m512i; 16],
    mid: &[__m512i; 8],
    vals: &mut [__m512i; 10],
    mut j: __m512i,
    end: __m512i,
    steps: u32,
    prelude: Option<(usize, u32)>,
) {
    if let Some((word, mask)) = prelude {
        // One more step in every lane, its template word changed, j left as it is: the fixed
        // parts and the leading rounds of that template computed for it.
        let mut t = *tmpl;
        t[word] = _mm512_xor_si512(t[word], _mm512_set1_epi32(mask as i32));
        let mut fixed = Fixed::new();
        fixed.fill::<VAR, SECOND>(&t);
        let mut pre = *mid;
        rounds_first::<VAR, false>(&mut pre, &t, &fixed);
        let mut jp = j;
        let all = _mm512_add_epi32(j, _mm512_set1_epi32(1));
        chain_step::<VAR, SECOND>(plan, &t, &pre, mid, &fixed, vals, &mut jp, all);
    }
    let mut fixed = Fixed::new();
    fixed.fill::<VAR, SECOND>(tmpl);
    let mut pre = *mid;
    rounds_first::<VAR, false>(&mut pre, tmpl, &fixed);
    for _ in 0..steps {
        chain_step::<VAR, SECOND>(plan, tmpl, &pre, mid, &fixed, vals, &mut j, end);
    }
}

/// One step of every lane whose counter `j` is below its `end` (see [`chain_kernel`]): the
/// message words, the rounds from the state `pre` after the fixed leading words, the midstate
/// added into the stepping lanes' values, their `j` counted up.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
#[allow(clippy::too_many_arguments)] // the kernel's registers, passed by reference
fn chain_step<const VAR: u32, const SECOND: bool>(
    plan: &Plan,
    tmpl: &[__m512i; 16],
    pre: &[__m512i; 8],
    mid: &[__m512i; 8],
    fixed: &Fixed,
    vals: &mut [__m512i; 10],
    j: &mut __m512i,
    end: __m512i,
) {
    let active = _mm512_cmplt_epu32_mask(*j, end);
    let mut w = [_mm512_setzero_si512(); 16];
    plan.message(tmpl, vals, *j, &mut w);
    let mut s = *pre;
    rounds_first::<VAR, true>(&mut s, &w, fixed);
    let from = if SECOND {
        rounds_second::<VAR>(&mut s, &mut w, fixed);
        2
    } else {
        1
    };
    // A loop, not unrolled: the 16-round body is reused for the rest.
    for k in &K.as_chunks::<16>().0[from..] {
        rounds16::<true>(&mut s, &mut w, k);
    }
    macro_rules! update {
        ($($i:literal)*) => { $(
            if $i < plan.nw {
                vals[$i + 1] = _mm512_mask_add_epi32(vals[$i + 1], active, s[$i], mid[$i]);
            }
        )* };
    }
    update!(0 1 2 3 4 5 6 7);
    *j = _mm512_mask_add_epi32(*j, active, *j, _mm512_set1_epi32(1));
}

/// Where the lanes of [`chains16_ids`] read and write their values: row r's value is the
/// first n bytes at `src + r·stride`, and its result goes to `dst + r·stride` (the same place
/// for chains updated in place).
pub(super) struct Rows<'a> {
    src: *const u8,
    dst: *mut u8,
    stride: usize,
    n: usize,
    rows: usize,
    _borrow: PhantomData<&'a mut [u8]>,
}

impl<'a> Rows<'a> {
    /// The chains' own values, updated in place: row r is `chains[r].value`.
    pub(super) fn chains(chains: &'a mut [Chain], n: usize) -> Self {
        let base = chains.as_mut_ptr().cast::<u8>();
        let value = base.wrapping_add(core::mem::offset_of!(Chain, value));
        Self {
            src: value,
            dst: value,
            stride: size_of::<Chain>(),
            n: n.min(32),
            rows: chains.len(),
            _borrow: PhantomData,
        }
    }

    /// Values read from `values` and written to `out`: row r is bytes r·n..(r + 1)·n of each.
    ///
    /// # Panics
    /// When the two differ in length or n is not 1–32 (caller bugs).
    pub(super) fn apart(values: &'a [u8], out: &'a mut [u8], n: usize) -> Self {
        assert!(
            values.len() == out.len() && (1..=32).contains(&n),
            "n-byte values in and out"
        );
        Self {
            src: values.as_ptr(),
            dst: out.as_mut_ptr(),
            stride: n,
            n,
            rows: values.len() / n,
            _borrow: PhantomData,
        }
    }
}

/// The step each lane of [`IdLanes`] stops before.
#[derive(Clone, Copy)]
pub(super) enum Ends<'a> {
    /// One for every lane (a verification's chains, to 2^w − 1).
    All(u32),
    /// Per lane.
    Each(&'a [u32]),
}

/// The lanes of [`chains16_ids`]' groups: lane l of group k is entry 16k + l of each array
/// (whole groups: the arrays may be longer than `count`), each group's lanes longest first
/// (its lane 0 takes the most steps).
pub(super) struct IdLanes<'a> {
    /// The row of [`Rows`] each lane reads and writes.
    pub(super) rows: &'a [u32],
    /// The id written into the lane's messages.
    pub(super) ids: &'a [u32],
    /// The lane's first step.
    pub(super) at: &'a [u32],
    pub(super) end: Ends<'a>,
    /// The lanes in use: the last group's others take no step, and no row is read or written
    /// for them.
    pub(super) count: usize,
    /// Rows whose chains take no step: their values are copied from `src` to `dst` as they
    /// are (for [`Rows`] apart).
    pub(super) unchanged: &'a [u32],
}

/// Groups of 16 chains whose messages are one template but for the chain's id (LM-OTS's:
/// I ‖ u32str(q) ‖ u16str(i) ‖ u8str(j) ‖ tmp, RFC 8554 Algorithm 1), all in one call: what
/// [`chains16`] does per group, with the setup done once for all the groups — the template
/// broadcast (no transpose), the rounds before the first changing word and the fixed schedule
/// words. Per group, only the ids (shifted into their template word), the counters and the
/// values go in, and the values come out.
///
/// LMS_SHA256_M32_H10/W2 (133 chains of 0–3 steps in 8–9 groups): the setup [`chains16`]
/// pays per group, a large share of a one-step group's time, is paid once.
///
/// The lanes' ids, counters and ends are loaded a group at a time from `lanes`' arrays (the
/// caller lays them out once for all the groups), and each lane's value is one masked n-byte
/// load from its row into the transpose and one masked store back: no copies of the chains
/// into lane buffers.
///
/// # Panics
/// When the CPU lacks AVX-512F or AVX-512BW, the layout or the id field does not fit, the lane
/// arrays do not cover whole groups, or a lane's row is not in `rows`.
pub(super) fn chains16_ids(g: &IdGroups<'_>, lanes: &IdLanes<'_>, rows: &mut Rows<'_>) {
    assert!(
        ChainGroup::<16>::fits(&g.layout) && g.id.fits(&g.layout) && rows.n == g.layout.n,
        "a one-block chain layout with the id in one word"
    );
    let whole = lanes.count.next_multiple_of(16);
    let each = match lanes.end {
        Ends::All(_) => whole,
        Ends::Each(e) => e.len(),
    };
    assert!(
        lanes
            .rows
            .len()
            .min(lanes.ids.len())
            .min(lanes.at.len())
            .min(each)
            >= whole,
        "lane arrays of whole groups"
    );
    assert!(
        lanes.rows[..lanes.count]
            .iter()
            .chain(lanes.unchanged)
            .all(|&r| (r as usize) < rows.rows),
        "every lane's row among the rows"
    );
    assert!(
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw"),
        "the AVX-512 SHA-256 chain kernel needs AVX-512F and AVX-512BW"
    );
    // SAFETY: the CPU supports AVX-512F and AVX-512BW (asserted just above), the only target
    // features `ids_kernel` enables; the lane arrays cover whole groups and every row in use
    // is one of `rows`' (asserted above), which is all `ids_kernel`'s loads and stores rely on.
    unsafe { ids_kernel(g, lanes, rows) }
}

/// Copies the `unchanged` rows' values from `src` to `dst`: one masked n-byte load and store
/// each.
///
/// # Safety
/// The CPU supports AVX-512BW; every row in `unchanged` is below `rows.rows`.
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn copy_rows(rows: &mut Rows<'_>, unchanged: &[u32]) {
    let bytes: u64 = (1u64 << rows.n) - 1;
    for &r in unchanged {
        let at = r as usize * rows.stride;
        // SAFETY: AVX-512BW is enabled on this function; row r < rows.rows (this function's
        // contract), so its n bytes at `at` lie in the borrowed values and in the mutably
        // borrowed output, and the masks keep the load and the store to those n bytes.
        unsafe {
            let v = _mm512_maskz_loadu_epi8(bytes, rows.src.wrapping_add(at).cast());
            _mm512_mask_storeu_epi8(rows.dst.wrapping_add(at).cast(), bytes, v);
        }
    }
}

/// # Safety
/// The CPU supports AVX-512F and AVX-512BW; `lanes`' arrays cover whole groups of its
/// `count` lanes, and the rows of those lanes are below `rows.rows`.
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn ids_kernel(g: &IdGroups<'_>, lanes: &IdLanes<'_>, rows: &mut Rows<'_>) {
    let plan = Plan::of(&g.layout);
    let tmpl: [__m512i; 16] = core::array::from_fn(|i| {
        let w = u32::from_be_bytes(g.template[4 * i..4 * i + 4].try_into().expect("4 bytes"));
        _mm512_set1_epi32(w as i32)
    });
    let mid: [__m512i; 8] = core::array::from_fn(|i| _mm512_set1_epi32(g.midstate[i] as i32));
    // Every word from the first changing one (the id's among them) changes: the setup reads
    // only the words before it, the same in every lane of every group.
    macro_rules! run {
        ($var:expr, $second:literal) => {
            // SAFETY: as this function's own contract.
            unsafe { id_groups::<{ $var }, $second>(&plan, g, tmpl, &mid, lanes, rows) }
        };
    }
    match plan.var | 1 << (g.id.at / 4) {
        0x3fe0 => run!(0x3fe0, true),
        0x0fe0 => run!(0x0fe0, true),
        v => match v.trailing_zeros() {
            0..4 => run!(0xffff, false),
            4 => run!(0xfff0, false),
            5..8 => run!(0xffe0, false),
            _ => run!(0xff00, false),
        },
    }
}

/// The groups of [`chains16_ids`] for the changing words `VAR` (every word from the first).
///
/// # Safety
/// As [`ids_kernel`].
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn id_groups<const VAR: u32, const SECOND: bool>(
    plan: &Plan,
    g: &IdGroups<'_>,
    mut tmpl: [__m512i; 16],
    mid: &[__m512i; 8],
    lanes: &IdLanes<'_>,
    rows: &mut Rows<'_>,
) {
    let mut fixed = Fixed::new();
    fixed.fill::<VAR, SECOND>(&tmpl);
    let mut pre = *mid;
    rounds_first::<VAR, false>(&mut pre, &tmpl, &fixed);
    // SAFETY: as this function's contract: every unchanged row is one of `rows`'.
    unsafe { copy_rows(rows, lanes.unchanged) };
    let (at, bytes) = (g.id.at, g.id.bytes);
    let word = at / 4;
    let base = tmpl[word];
    let mask = _mm512_set1_epi32((u32::MAX >> (32 - 8 * bytes)) as i32);
    let shift = i32::try_from(8 * (4 - at % 4 - bytes)).expect("a shift within a word");
    let shift = _mm512_set1_epi32(shift);
    for first in (0..lanes.count).step_by(16) {
        let used = (lanes.count - first).min(16);
        // SAFETY: AVX-512F is enabled on this function; the arrays cover whole groups (this
        // function's contract), so each unaligned load reads 16 of their entries.
        let (ids, j, end) = unsafe {
            (
                _mm512_loadu_si512(lanes.ids[first..].as_ptr().cast()),
                _mm512_loadu_si512(lanes.at[first..].as_ptr().cast()),
                match lanes.end {
                    Ends::All(e) => _mm512_set1_epi32(e as i32),
                    Ends::Each(e) => _mm512_loadu_si512(e[first..].as_ptr().cast()),
                },
            )
        };
        // Lanes past the last chain take no step.
        let mut j = _mm512_mask_mov_epi32(end, u16::MAX >> (16 - used), j);
        let steps = match lanes.end {
            Ends::All(e) => e,
            Ends::Each(e) => e[first],
        }
        .saturating_sub(lanes.at[first]);
        if steps == 0 {
            continue;
        }
        let placed = _mm512_sllv_epi32(_mm512_and_si512(ids, mask), shift);
        tmpl[word] = _mm512_or_si512(base, placed);
        let group = &lanes.rows[first..first + used];
        // SAFETY: as this function's contract: every row in use is one of `rows`'.
        let x = unsafe { load_rows(rows, group) };
        let mut vals = [_mm512_setzero_si512(); 10];
        vals[1..=plan.nw].copy_from_slice(&x[..plan.nw]);
        for _ in 0..steps {
            chain_step::<VAR, SECOND>(plan, &tmpl, &pre, mid, &fixed, &mut vals, &mut j, end);
        }
        let mut x = x;
        x[..plan.nw].copy_from_slice(&vals[1..=plan.nw]);
        // SAFETY: as for `load_rows`.
        unsafe { store_rows(rows, group, x) };
    }
}

/// The values of `group`'s rows (at most 16; the other lanes zero), transposed as in
/// [`load_values`]: each one masked load of its n bytes.
///
/// # Safety
/// Every row in `group` is below `rows.rows`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn load_rows(rows: &Rows<'_>, group: &[u32]) -> [__m512i; 8] {
    let bytes: u64 = (1u64 << rows.n) - 1;
    let v: [__m256i; 16] = core::array::from_fn(|l| match group.get(l) {
        Some(&r) => {
            let p = rows.src.wrapping_add(r as usize * rows.stride);
            // SAFETY: AVX-512BW is enabled on this function; row r < rows.rows (this
            // function's contract), so its n bytes at `p` lie in the borrowed values, and the
            // mask keeps the load to those n bytes.
            _mm512_castsi512_si256(unsafe { _mm512_maskz_loadu_epi8(bytes, p.cast()) })
        }
        None => _mm256_setzero_si256(),
    });
    values_in(v)
}

/// The inverse of [`load_rows`]: each lane's n bytes stored to its row.
///
/// # Safety
/// As [`load_rows`].
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn store_rows(rows: &mut Rows<'_>, group: &[u32], x: [__m512i; 8]) {
    let bytes: u64 = (1u64 << rows.n) - 1;
    for (&r, v) in group.iter().zip(values_out(x)) {
        let p = rows.dst.wrapping_add(r as usize * rows.stride);
        // SAFETY: AVX-512BW is enabled on this function; row r < rows.rows (this function's
        // contract), so its n bytes at `p` lie in the mutably borrowed output, and the mask
        // keeps the store to those n bytes.
        unsafe { _mm512_mask_storeu_epi8(p.cast(), bytes, _mm512_castsi256_si512(v)) };
    }
}

/// A verification's chains ordered for [`chains16_ids`]: the indices i of the chains that take
/// steps (`starts[i] < end`) by start, smallest (longest chain) first, into `ids`, with their
/// starts into `at`; then those that take none. Returns how many take steps. A counting sort
/// with AVX-512 compresses: per start below `end`, a byte compare per 64 chains and a compress
/// per 16 of them with a match puts their indices in place (LM-OTS W2's 133 chains: 4 × 3
/// compares and about 36 compresses).
///
/// # Panics
/// When `ids` or `at` is shorter than `starts` + 16, or there are 2^31 or more chains (caller
/// bugs), or the CPU lacks AVX-512F or AVX-512BW.
pub(super) fn by_start(starts: &[u8], end: u32, ids: &mut [u32], at: &mut [u32]) -> usize {
    let count = starts.len();
    assert!(
        ids.len().min(at.len()) >= count + 16 && i32::try_from(count).is_ok(),
        "room for every chain and a vector more"
    );
    assert!(
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw"),
        "the AVX-512 sort needs AVX-512F and AVX-512BW"
    );
    // SAFETY: the CPU supports AVX-512F and AVX-512BW (asserted just above), the only target
    // features `by_start_kernel` enables; `ids` and `at` have room for every chain and 16
    // more (asserted above).
    unsafe { by_start_kernel(starts, end, ids, at) }
}

/// # Safety
/// The CPU supports AVX-512F and AVX-512BW; `ids` and `at` hold at least `starts.len()` + 16
/// entries.
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn by_start_kernel(starts: &[u8], end: u32, ids: &mut [u32], at: &mut [u32]) -> usize {
    // The starts below `end`, ascending, then `end` itself for the chains without steps
    // (those starting at or past it; none when it is past every byte). A start no chain has
    // costs a compare per 64 chains.
    let stepping = 0..end.min(0x100);
    let mut placed = 0usize;
    let mut with_steps = None;
    for b in stepping.map(Some).chain([None]) {
        if b.is_none() {
            with_steps = Some(placed);
            if end > 0xff {
                break;
            }
        }
        let want = u8::try_from(b.unwrap_or(end)).expect("a start byte, or an end below 0x100");
        let want = _mm512_set1_epi8(want as i8);
        for first in (0..starts.len()).step_by(64) {
            let valid = u64::MAX >> (64 - (starts.len() - first).min(64));
            // SAFETY: AVX-512BW is enabled on this function; the mask keeps the load to the
            // starts from `first` on.
            let v = unsafe { _mm512_maskz_loadu_epi8(valid, starts[first..].as_ptr().cast()) };
            let matches = valid
                & match b {
                    Some(_) => _mm512_cmpeq_epi8_mask(v, want),
                    None => _mm512_cmpge_epu8_mask(v, want),
                };
            // SAFETY: as this function's contract.
            unsafe { place(ids, at, &mut placed, first, matches, b) };
        }
    }
    with_steps.expect("the last pass marks the chains with steps")
}

/// Appends the chains that `matches` selects among the 64 from `first` on to `ids` at
/// `placed`, and their start `b` (when given) to `at`: a compress per 16 chains.
///
/// # Safety
/// AVX-512F is enabled; fewer than `ids.len()` − 16 and `at.len()` − 16 chains are placed in
/// all (so each 16-entry store at `placed` stays in them).
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn place(
    ids: &mut [u32],
    at: &mut [u32],
    placed: &mut usize,
    first: usize,
    matches: u64,
    b: Option<u32>,
) {
    let iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    let bytes = matches.to_le_bytes();
    for (q, m) in bytes.as_chunks::<2>().0.iter().enumerate() {
        let m = u16::from_le_bytes(*m);
        if m == 0 {
            continue;
        }
        let first = i32::try_from(first + 16 * q).expect("fewer than 2^31 chains");
        let index = _mm512_add_epi32(iota, _mm512_set1_epi32(first));
        // SAFETY: AVX-512F is enabled on this function; `placed` + 16 is within `ids` and
        // `at` (this function's contract): each unaligned store writes 16 of their entries.
        unsafe {
            _mm512_storeu_si512(
                ids.as_mut_ptr().add(*placed).cast(),
                _mm512_maskz_compress_epi32(m, index),
            );
            if let Some(b) = b {
                _mm512_storeu_si512(
                    at.as_mut_ptr().add(*placed).cast(),
                    _mm512_set1_epi32(b as i32),
                );
            }
        }
        *placed += m.count_ones() as usize;
    }
}

/// The schedule words t < 32 that are the same at every step when the block words `var`
/// change (bit t: W[t]); W[t] for t ≥ 16 depends on W[t − 2], W[t − 7], W[t − 15], W[t − 16].
const fn fixed_words(var: u32) -> u32 {
    let mut c = !var & 0xffff;
    let mut t = 16;
    while t < 32 {
        let deps = 1 << (t - 2) | 1 << (t - 7) | 1 << (t - 15) | 1 << (t - 16);
        if c & deps == deps {
            c |= 1 << t;
        }
        t += 1;
    }
    c
}

/// Whether the term `d` rounds back of W[t] is fixed, for `c` = [`fixed_words`].
const fn term_fixed(c: u32, t: usize, d: usize) -> bool {
    c >> (t - d) & 1 == 1
}

/// A chain group's schedule parts that do not change from step to step (see [`steps_from`]).
struct Fixed {
    /// W[t] + K[t] for the fixed words t (the others unused).
    kw: [__m512i; 32],
    /// For W[16 + i]: its value when fixed, else the sum of its fixed terms (zero when none;
    /// all zero without `SECOND`).
    part: [__m512i; 16],
}

impl Fixed {
    /// Zeros, for [`Fixed::fill`].
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn new() -> Self {
        Self {
            kw: [_mm512_setzero_si512(); 32],
            part: [_mm512_setzero_si512(); 16],
        }
    }

    /// Fills in the fixed parts of the template `tmpl`, in place (built in a local and
    /// returned, the 3 KiB went through `memcpy` calls on every kernel call). Expects a
    /// fresh [`Fixed::new`]: the entries it does not write (the changing words' `kw`, and
    /// `part` without `SECOND`) stay zero.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn fill<const VAR: u32, const SECOND: bool>(&mut self, tmpl: &[__m512i; 16]) {
        let c = const { fixed_words(VAR) };
        // W[t]: the template's words below 16 (its fixed words are the block's; the changing
        // ones are never read), then `part`.
        let part = &mut self.part;
        let w = |part: &[__m512i; 16], t: usize| if t < 16 { tmpl[t] } else { part[t - 16] };
        for t in 16..if SECOND { 32 } else { 16 } {
            let mut x = None;
            if term_fixed(c, t, 16) {
                x = plus(x, w(part, t - 16));
            }
            if term_fixed(c, t, 7) {
                x = plus(x, w(part, t - 7));
            }
            if term_fixed(c, t, 15) {
                x = plus(x, small_sigma0(w(part, t - 15)));
            }
            if term_fixed(c, t, 2) {
                x = plus(x, small_sigma1(w(part, t - 2)));
            }
            part[t - 16] = x.unwrap_or(_mm512_setzero_si512());
        }
        for (t, (kw, k)) in self.kw.iter_mut().zip(K).enumerate() {
            if c >> t & 1 == 1 && (t < 16 || SECOND) {
                *kw = _mm512_add_epi32(w(&self.part, t), _mm512_set1_epi32(k as i32));
            }
        }
    }
}

/// `x + v`, `v` when there is no `x` yet.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn plus(x: Option<__m512i>, v: __m512i) -> Option<__m512i> {
    Some(match x {
        Some(x) => _mm512_add_epi32(x, v),
        None => v,
    })
}

/// Rounds 0..16 from the first changing word of `VAR` on (`LATE`) or before it, W[t] + K[t]
/// of the fixed words from `fixed`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn rounds_first<const VAR: u32, const LATE: bool>(
    s: &mut [__m512i; 8],
    w: &[__m512i; 16],
    fixed: &Fixed,
) {
    let first = const { VAR.trailing_zeros() as usize };
    let c = const { fixed_words(VAR) };
    macro_rules! steps {
        ($($i:literal)*) => { $(
            if ($i >= first) == LATE {
                let kw = if c >> $i & 1 == 1 {
                    fixed.kw[$i]
                } else {
                    _mm512_add_epi32(w[$i], _mm512_set1_epi32(K[$i] as i32))
                };
                round::<$i>(s, kw);
            }
        )* };
    }
    steps!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15);
}

/// Rounds 16..32, each first extending the schedule from the changing terms and the sum of
/// the fixed ones.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn rounds_second<const VAR: u32>(s: &mut [__m512i; 8], w: &mut [__m512i; 16], fixed: &Fixed) {
    let c = const { fixed_words(VAR) };
    macro_rules! steps {
        ($($i:literal)*) => { $(
            let t = 16 + $i;
            let kw = if c >> t & 1 == 1 {
                w[$i] = fixed.part[$i];
                fixed.kw[t]
            } else {
                let any_fixed = term_fixed(c, t, 16)
                    || term_fixed(c, t, 7)
                    || term_fixed(c, t, 15)
                    || term_fixed(c, t, 2);
                let mut x = if any_fixed { Some(fixed.part[$i]) } else { None };
                if !term_fixed(c, t, 16) {
                    x = plus(x, w[$i]);
                }
                if !term_fixed(c, t, 7) {
                    x = plus(x, w[($i + 9) % 16]);
                }
                if !term_fixed(c, t, 15) {
                    x = plus(x, small_sigma0(w[($i + 1) % 16]));
                }
                if !term_fixed(c, t, 2) {
                    x = plus(x, small_sigma1(w[($i + 14) % 16]));
                }
                w[$i] = x.expect("a changing word has a changing term");
                _mm512_add_epi32(w[$i], _mm512_set1_epi32(K[t] as i32))
            };
            round::<$i>(s, kw);
        )* };
    }
    steps!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15);
}

/// Where a chain step's message words come from (see [`ChainGroup`]).
struct Plan {
    /// The block words that change from step to step (bit i: word i).
    var: u32,
    /// Value words (n/4) and the word holding the value's first byte.
    nw: usize,
    q: usize,
    /// Per-lane shift counts of the value's funnel shift: right by 8(value_at mod 4), left by
    /// 32 − that (32 shifts to zero: an aligned value).
    value_right: __m512i,
    value_left: __m512i,
    /// The word holding the step counter's first byte; whether it spills into the next word.
    p: usize,
    step_spills: bool,
    one_byte: bool,
    step_shift: __m512i,
    step_spill_shift: __m512i,
}

impl Plan {
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn of(g: &crate::Layout) -> Self {
        let r = [0, 8, 16, 24][g.value_at % 4];
        let sb = [0, 8, 16, 24][g.step_at % 4];
        let one_byte = g.step_bytes == 1;
        let words =
            |at: usize, len: usize| (at / 4..=(at + len - 1) / 4).fold(0, |m, i| m | 1 << i);
        Self {
            var: words(g.step_at, g.step_bytes) | words(g.value_at, g.n),
            nw: g.n / 4,
            q: g.value_at / 4,
            value_right: _mm512_set1_epi32(r),
            value_left: _mm512_set1_epi32(32 - r),
            p: g.step_at / 4,
            step_spills: !one_byte && sb != 0,
            one_byte,
            // One byte: left by 24 − 8(step_at mod 4); four: right by 8(step_at mod 4) and the
            // rest left into the next word.
            step_shift: _mm512_set1_epi32(if one_byte { 24 - sb } else { sb }),
            step_spill_shift: _mm512_set1_epi32(32 - sb),
        }
    }

    /// The 16 message words of the step whose counters are `j`, written into `w` (not
    /// returned: the 1 KiB result went through two `memcpy` calls per step).
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn message(
        &self,
        tmpl: &[__m512i; 16],
        vals: &[__m512i; 10],
        j: __m512i,
        w: &mut [__m512i; 16],
    ) {
        let (jp, jp1) = if self.one_byte {
            let low = _mm512_and_si512(j, _mm512_set1_epi32(0xff));
            (
                _mm512_sllv_epi32(low, self.step_shift),
                _mm512_setzero_si512(),
            )
        } else {
            (
                _mm512_srlv_epi32(j, self.step_shift),
                _mm512_sllv_epi32(j, self.step_spill_shift),
            )
        };
        macro_rules! words {
            ($($i:literal)*) => { $( w[$i] = self.word::<$i>(tmpl, vals, jp, jp1); )* };
        }
        words!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15);
    }

    /// Message word `I`: the template word, the step counter's bytes in it, and the value's
    /// bytes in it (the low bytes of value word k − 1 and the high bytes of value word k, for
    /// k = I − q).
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn word<const I: usize>(
        &self,
        tmpl: &[__m512i; 16],
        vals: &[__m512i; 10],
        jp: __m512i,
        jp1: __m512i,
    ) -> __m512i {
        let mut x = tmpl[I];
        if I == self.p {
            x = _mm512_or_si512(x, jp);
        } else if I == self.p + 1 && self.step_spills {
            x = _mm512_or_si512(x, jp1);
        }
        if I >= self.q && I <= self.q + self.nw {
            let k = I - self.q;
            x = _mm512_ternarylogic_epi32::<0xFE>(
                x,
                _mm512_srlv_epi32(vals[k + 1], self.value_right),
                _mm512_sllv_epi32(vals[k], self.value_left),
            );
        }
        x
    }
}

/// Sixteen rounds with the constants `k`; with `SCHEDULE`, each first extends the message
/// schedule (`w` is the ring W[t mod 16]).
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn rounds16<const SCHEDULE: bool>(s: &mut [__m512i; 8], w: &mut [__m512i; 16], k: &[u32; 16]) {
    macro_rules! steps {
        ($($i:literal)*) => { $( step::<$i, SCHEDULE>(s, w, k); )* };
    }
    steps!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15);
}

/// Round `I` of sixteen with the constants `k`, with `SCHEDULE` first extending the schedule.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn step<const I: usize, const SCHEDULE: bool>(
    s: &mut [__m512i; 8],
    w: &mut [__m512i; 16],
    k: &[u32; 16],
) {
    if SCHEDULE {
        // W[t] = σ1(W[t−2]) + W[t−7] + σ0(W[t−15]) + W[t−16]
        let s0 = small_sigma0(w[(I + 1) % 16]);
        let s1 = small_sigma1(w[(I + 14) % 16]);
        w[I] = _mm512_add_epi32(
            _mm512_add_epi32(w[I], w[(I + 9) % 16]),
            _mm512_add_epi32(s0, s1),
        );
    }
    // `set1` of the constant becomes an embedded-broadcast memory operand of `vpaddd`.
    round::<I>(s, _mm512_add_epi32(w[I], _mm512_set1_epi32(k[I] as i32)));
}

/// σ0 of FIPS 180-4 (4.6).
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn small_sigma0(x: __m512i) -> __m512i {
    _mm512_ternarylogic_epi32::<0x96>(
        _mm512_ror_epi32::<7>(x),
        _mm512_ror_epi32::<18>(x),
        _mm512_srli_epi32::<3>(x),
    )
}

/// σ1 of FIPS 180-4 (4.7).
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn small_sigma1(x: __m512i) -> __m512i {
    _mm512_ternarylogic_epi32::<0x96>(
        _mm512_ror_epi32::<17>(x),
        _mm512_ror_epi32::<19>(x),
        _mm512_srli_epi32::<10>(x),
    )
}

/// Round `I` of sixteen given W[t] + K[t] (the state ring rotates by one each round, so no
/// registers move).
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn round<const I: usize>(s: &mut [__m512i; 8], kw: __m512i) {
    let r = |role: usize| (role + 8 - I % 8) % 8;
    let (a, b, c, d, e, f, g, h) = (
        s[r(0)],
        s[r(1)],
        s[r(2)],
        s[r(3)],
        s[r(4)],
        s[r(5)],
        s[r(6)],
        s[r(7)],
    );
    let sigma1 = _mm512_ternarylogic_epi32::<0x96>(
        _mm512_ror_epi32::<6>(e),
        _mm512_ror_epi32::<11>(e),
        _mm512_ror_epi32::<25>(e),
    );
    let ch = _mm512_ternarylogic_epi32::<0xCA>(e, f, g);
    let sigma0 = _mm512_ternarylogic_epi32::<0x96>(
        _mm512_ror_epi32::<2>(a),
        _mm512_ror_epi32::<13>(a),
        _mm512_ror_epi32::<22>(a),
    );
    let maj = _mm512_ternarylogic_epi32::<0xE8>(a, b, c);
    let t1 = _mm512_add_epi32(_mm512_add_epi32(h, kw), _mm512_add_epi32(ch, sigma1));
    s[r(3)] = _mm512_add_epi32(d, t1);
    s[r(7)] = _mm512_add_epi32(t1, _mm512_add_epi32(sigma0, maj));
}

/// Loads the 16 blocks and transposes them: vector `j` holds word W\[j\] (big-endian) of every
/// lane.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn load_blocks(blocks: &[&[u8; 64]; 16]) -> [__m512i; 16] {
    // Within each 128-bit lane, reverse the bytes of every 32-bit word.
    let bswap = _mm512_set4_epi32(0x0c0d_0e0f, 0x0809_0a0b, 0x0405_0607, 0x0001_0203);
    let mut r = [_mm512_setzero_si512(); 16];
    for (r, block) in r.iter_mut().zip(blocks) {
        // SAFETY: AVX-512F is enabled on this function; the unaligned load reads exactly the
        // 64 bytes of `*block`.
        let v = unsafe { _mm512_loadu_si512(block.as_ptr().cast()) };
        *r = _mm512_shuffle_epi8(v, bswap);
    }
    // Stage 1: interleave 32-bit words of lanes 2k, 2k+1.
    let mut t = [_mm512_setzero_si512(); 16];
    for k in 0..8 {
        t[2 * k] = _mm512_unpacklo_epi32(r[2 * k], r[2 * k + 1]);
        t[2 * k + 1] = _mm512_unpackhi_epi32(r[2 * k], r[2 * k + 1]);
    }
    // Stage 2: u[4k+m], 128-bit lane L = word 4L+m of blocks 4k..4k+4.
    let mut u = [_mm512_setzero_si512(); 16];
    for k in 0..4 {
        u[4 * k] = _mm512_unpacklo_epi64(t[4 * k], t[4 * k + 2]);
        u[4 * k + 1] = _mm512_unpackhi_epi64(t[4 * k], t[4 * k + 2]);
        u[4 * k + 2] = _mm512_unpacklo_epi64(t[4 * k + 1], t[4 * k + 3]);
        u[4 * k + 3] = _mm512_unpackhi_epi64(t[4 * k + 1], t[4 * k + 3]);
    }
    // Stages 3 and 4: a 4 × 4 transpose of 128-bit lanes among u[m], u[4+m], u[8+m], u[12+m].
    let mut w = [_mm512_setzero_si512(); 16];
    for m in 0..4 {
        let v0 = _mm512_shuffle_i32x4::<0x44>(u[m], u[4 + m]);
        let v1 = _mm512_shuffle_i32x4::<0xEE>(u[m], u[4 + m]);
        let v2 = _mm512_shuffle_i32x4::<0x44>(u[8 + m], u[12 + m]);
        let v3 = _mm512_shuffle_i32x4::<0xEE>(u[8 + m], u[12 + m]);
        w[m] = _mm512_shuffle_i32x4::<0x88>(v0, v2);
        w[4 + m] = _mm512_shuffle_i32x4::<0xDD>(v0, v2);
        w[8 + m] = _mm512_shuffle_i32x4::<0x88>(v1, v3);
        w[12 + m] = _mm512_shuffle_i32x4::<0xDD>(v1, v3);
    }
    w
}

/// Where each bit of an element's location comes from. Elements are labelled
/// `i | j << 4` (lane `i`, state word `j`); locations are `pos | reg << 4` (position `pos` in
/// vector `reg`). `LAYOUT[b]` is the label bit that location bit `b` holds.
type Layout = [u32; 7];
/// The states as stored: vector k = states 2k, 2k+1.
const L0: Layout = [4, 5, 6, 0, 1, 2, 3];
const L1: Layout = [1, 5, 6, 0, 4, 2, 3];
const L2: Layout = [1, 2, 6, 0, 4, 5, 3];
/// Transposed: vector j = word j of the 16 lanes.
const L3: Layout = [0, 1, 2, 3, 4, 5, 6];

const fn label_at(layout: &Layout, loc: u32) -> u32 {
    let mut label = 0;
    let mut b = 0;
    while b < 7 {
        label |= ((loc >> b) & 1) << layout[b];
        b += 1;
    }
    label
}

const fn loc_of(layout: &Layout, label: u32) -> u32 {
    let mut loc = 0;
    let mut b = 0;
    while b < 7 {
        loc |= ((label >> layout[b]) & 1) << b;
        b += 1;
    }
    loc
}

/// The `vpermt2d` indices moving `from` to `to` for the output vectors whose register bit
/// `rb` is `v` (the sources being the pair of vectors that differ only in bit `rb`).
const fn stage_idx(from: &Layout, to: &Layout, rb: u32, v: u32) -> [i32; 16] {
    let mut idx = [0i32; 16];
    let mut pos = 0;
    while pos < 16 {
        let out_loc = pos | (v << rb) << 4;
        let src = loc_of(from, label_at(to, out_loc));
        let (src_reg, src_pos) = (src >> 4, src & 15);
        assert!(
            src_reg & !(1 << rb) == 0,
            "a stage mixes only a pair of vectors"
        );
        idx[pos as usize] = (src_pos | ((src_reg >> rb) & 1) << 4) as i32;
        pos += 1;
    }
    idx
}

/// The stages one way, as (register bit, indices for bit 0, indices for bit 1).
const IN: [(u32, [i32; 16], [i32; 16]); 3] = [
    (0, stage_idx(&L0, &L1, 0, 0), stage_idx(&L0, &L1, 0, 1)),
    (1, stage_idx(&L1, &L2, 1, 0), stage_idx(&L1, &L2, 1, 1)),
    (2, stage_idx(&L2, &L3, 2, 0), stage_idx(&L2, &L3, 2, 1)),
];
const OUT: [(u32, [i32; 16], [i32; 16]); 3] = [
    (2, stage_idx(&L3, &L2, 2, 0), stage_idx(&L3, &L2, 2, 1)),
    (1, stage_idx(&L2, &L1, 1, 0), stage_idx(&L2, &L1, 1, 1)),
    (0, stage_idx(&L1, &L0, 0, 0), stage_idx(&L1, &L0, 0, 1)),
];

#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn vector(a: [i32; 16]) -> __m512i {
    _mm512_setr_epi32(
        a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13],
        a[14], a[15],
    )
}

/// The vector pairs of a stage on register bit 0, 1 or 2.
const PAIRS: [[(usize, usize); 4]; 3] = [
    [(0, 1), (2, 3), (4, 5), (6, 7)],
    [(0, 2), (1, 3), (4, 6), (5, 7)],
    [(0, 4), (1, 5), (2, 6), (3, 7)],
];

/// Applies the three pairwise `vpermt2d` stages of [`OUT`] or [`IN`] (generic so that each
/// has a single caller and is inlined).
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn permute_stages<const OUTWARD: bool>(mut x: [__m512i; 8]) -> [__m512i; 8] {
    let stages = if OUTWARD { OUT } else { IN };
    for (rb, i0, i1) in stages {
        let (i0, i1) = (vector(i0), vector(i1));
        // Vectors p and q (differing in the stage's register bit) become
        // (permutex2var(p, i0, q), permutex2var(p, i1, q)).
        let mut y = x;
        for (p, q) in PAIRS[rb as usize] {
            y[p] = _mm512_permutex2var_epi32(x[p], i0, x[q]);
            y[q] = _mm512_permutex2var_epi32(x[p], i1, x[q]);
        }
        x = y;
    }
    x
}

/// Loads the 16 lanes' 32-byte values transposed as big-endian words: vector `j` holds word
/// `j` of every lane's value. Each value is one 256-bit load wherever it lies (as the caller
/// stored it: no store-forwarding stall), the words byte-swapped in the vectors.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn load_values(values: [&[u8; 32]; 16]) -> [__m512i; 8] {
    values_in(core::array::from_fn(|l| {
        // SAFETY: AVX-512F is enabled on this function; the unaligned load reads exactly the
        // 32 bytes of one value.
        unsafe { _mm256_loadu_si256(values[l].as_ptr().cast()) }
    }))
}

/// The inverse of [`load_values`]: one 256-bit store per value.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn store_values(values: &mut [[u8; 32]; 16], s: [__m512i; 8]) {
    for (value, v) in values.iter_mut().zip(values_out(s)) {
        // SAFETY: AVX-512F is enabled on this function; the unaligned store writes exactly
        // the 32 bytes of one value, which it borrows mutably.
        unsafe { _mm256_storeu_si256(value.as_mut_ptr().cast(), v) };
    }
}

/// 16 lanes' 32-byte values, transposed into big-endian words: vector `j` holds word `j` of
/// every lane.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn values_in(values: [__m256i; 16]) -> [__m512i; 8] {
    let bswap = _mm512_set4_epi32(0x0c0d_0e0f, 0x0809_0a0b, 0x0405_0607, 0x0001_0203);
    let x = core::array::from_fn(|k| {
        let v = _mm512_inserti64x4::<1>(_mm512_castsi256_si512(values[2 * k]), values[2 * k + 1]);
        _mm512_shuffle_epi8(v, bswap)
    });
    permute_stages::<false>(x)
}

/// The inverse of [`values_in`].
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn values_out(s: [__m512i; 8]) -> [__m256i; 16] {
    let bswap = _mm512_set4_epi32(0x0c0d_0e0f, 0x0809_0a0b, 0x0405_0607, 0x0001_0203);
    let x = permute_stages::<true>(s).map(|x| _mm512_shuffle_epi8(x, bswap));
    core::array::from_fn(|l| {
        let v = x[l / 2];
        if l % 2 == 0 {
            _mm512_castsi512_si256(v)
        } else {
            _mm512_extracti64x4_epi64::<1>(v)
        }
    })
}

/// Loads the states transposed: vector `j` holds word `j` of every lane's state.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn load_states(states: &[[u32; 8]; 16]) -> [__m512i; 8] {
    let mut x = [_mm512_setzero_si512(); 8];
    for (x, pair) in x.iter_mut().zip(states.as_chunks::<2>().0) {
        // SAFETY: AVX-512F is enabled on this function; the unaligned load reads exactly the
        // 64 bytes of `*pair` (two states).
        *x = unsafe { _mm512_loadu_si512(pair.as_ptr().cast()) };
    }
    permute_stages::<false>(x)
}

/// The inverse of [`load_states`].
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn store_states(states: &mut [[u32; 8]; 16], s: [__m512i; 8]) {
    let x = permute_stages::<true>(s);
    for (x, pair) in x.into_iter().zip(states.as_chunks_mut::<2>().0) {
        // SAFETY: AVX-512F is enabled on this function; the unaligned store writes exactly the
        // 64 bytes of `*pair` (two states), which it borrows mutably.
        unsafe { _mm512_storeu_si512(pair.as_mut_ptr().cast(), x) };
    }
}
