//! Keccak-f\[1600\] (FIPS 202) over many states: the lane kernels, their dispatch, and
//! [`Shake`].

/// The 25 lanes B\[x, y\] of ρ and π (FIPS 202 §3.2.2–3.2.3) in index order `x + 5y`, each
/// `$lane!($a, x, y)`: a kernel's rotation of π's source lane of (x, y) by its ρ offset.
#[cfg(target_arch = "x86_64")]
macro_rules! rho_pi_lanes {
    ($lane:ident, $a:ident) => {
        [
            $lane!($a, 0, 0),
            $lane!($a, 1, 0),
            $lane!($a, 2, 0),
            $lane!($a, 3, 0),
            $lane!($a, 4, 0),
            $lane!($a, 0, 1),
            $lane!($a, 1, 1),
            $lane!($a, 2, 1),
            $lane!($a, 3, 1),
            $lane!($a, 4, 1),
            $lane!($a, 0, 2),
            $lane!($a, 1, 2),
            $lane!($a, 2, 2),
            $lane!($a, 3, 2),
            $lane!($a, 4, 2),
            $lane!($a, 0, 3),
            $lane!($a, 1, 3),
            $lane!($a, 2, 3),
            $lane!($a, 3, 3),
            $lane!($a, 4, 3),
            $lane!($a, 0, 4),
            $lane!($a, 1, 4),
            $lane!($a, 2, 4),
            $lane!($a, 3, 4),
            $lane!($a, 4, 4),
        ]
    };
}

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
#[cfg(target_arch = "x86_64")]
mod scalar;
#[cfg(test)]
mod tests;
mod xof;

pub use xof::{Absorber, Sponge, XofLanes};

use crate::chain::Message;
use crate::{Chain, Isa, Layout, ManyHash, Prelude, count};

/// The portable permutation (the `keccak` crate): the twin the SIMD kernels are tested
/// against.
pub(crate) fn permute_portable(state: &mut [u64; 25]) {
    keccak::f1600(state);
}

/// Applies Keccak-f\[1600\] to every state, as many at a time as `isa` allows.
pub(crate) fn permute_lanes(isa: Isa, states: &mut [[u64; 25]]) {
    crate::stats::keccak(states.len());
    lanes(isa, states);
}

/// Applies Keccak-f\[1600\] to the states `picked` (indices in increasing order) of
/// `states`, as many at a time as `isa` allows: on the AVX-512 path where they are, without
/// gathering them, grouped as [`lanes`] groups them.
pub(crate) fn permute_picked(isa: Isa, states: &mut [[u64; 25]], picked: &[usize]) {
    debug_assert!(picked.windows(2).all(|w| w[0] < w[1]));
    #[cfg(target_arch = "x86_64")]
    if isa == Isa::Avx512 {
        crate::stats::keccak(picked.len());
        let mut rest = &mut states[..];
        let mut offset = 0;
        // Each picked state, split off the front of what is left.
        let each = picked.iter().map(|&i| {
            let (_, tail) = core::mem::take(&mut rest).split_at_mut(i - offset);
            let (first, tail) = tail.split_first_mut().expect("an index in range");
            rest = tail;
            offset = i + 1;
            first
        });
        avx512_groups(picked.len(), each);
        return;
    }
    let mut gathered: Vec<[u64; 25]> = picked.iter().map(|&i| states[i]).collect();
    permute_lanes(isa, &mut gathered);
    for (g, &i) in gathered.iter().zip(picked) {
        states[i] = *g;
    }
    crate::wipe(&mut gathered);
}

/// The AVX-512 path's grouping of the `n` states `each` yields, where they are: 8 at a time;
/// 1 to 4 in one call of the 4-lane kernel compiled for AVX-512VL ([`avx2::vl::permute`])
/// when [`Small`] chooses it for this CPU, else one alone in scalar code ([`permute_one`])
/// and 2 to 4 with 5 to 7 in one call of 8, states of no stream filling the lanes; a ninth
/// left over beside 8 on the integer units ([`avx512::permute8_plus_one`]). One state alone
/// is counted as alone (the caller counts them all).
#[cfg(target_arch = "x86_64")]
fn avx512_groups<'a>(mut n: usize, mut each: impl Iterator<Item = &'a mut [u64; 25]>) {
    let mut next = || each.next().expect("as many states as counted");
    let small = Small::for_this_cpu();
    // States of no stream, for a call of 8 with fewer (what they hold is never read); zeroed
    // only when such a call comes.
    let mut pads = None;
    loop {
        if n == 1 {
            crate::stats::keccak_alone(1);
        }
        let four_lanes = if n == 1 { small.one } else { small.few };
        match n {
            0 => return,
            1..=4 if four_lanes => {
                match n {
                    1 => avx2::vl::permute(&mut [next()]),
                    2 => avx2::vl::permute(&mut [next(), next()]),
                    3 => avx2::vl::permute(&mut [next(), next(), next()]),
                    _ => avx2::vl::permute(&mut [next(), next(), next(), next()]),
                }
                return;
            }
            1 => {
                permute_one(next());
                return;
            }
            _ => {}
        }
        let eight = n.min(8);
        let mut pad = match eight {
            8 => core::slice::IterMut::default(),
            _ => pads.get_or_insert([[0u64; 25]; 6]).iter_mut(),
        };
        let mut group: [&mut [u64; 25]; 8] = core::array::from_fn(|k| {
            if k < eight {
                next()
            } else {
                pad.next().expect("at most 6 pads")
            }
        });
        if n == 9 {
            avx512::permute8_plus_one(&mut group, next());
            return;
        }
        avx512::permute8_each(&mut group);
        n -= eight;
    }
}

/// Which kernel the AVX-512 path gives calls of 1 to 4 states: the 4-lane kernel compiled for
/// AVX-512VL ([`avx2::vl::permute`]) or, for one state, the scalar permutation
/// ([`permute_one`]) and, for 2 to 4, a padded call of the 8-lane kernel. A fixed choice per CPU
/// family, not a measurement (a process measuring itself at its first hash would run at a speed
/// that varies from run to run):
///
/// | CPU | 1 state | 2 to 4 states |
/// |---|---|---|
/// | AMD or Hygon (Zen 4: 512-bit instructions in two 256-bit passes) | 4-lane kernel | 4-lane kernel |
/// | others (Intel: full-width 512-bit units) | scalar | 4-lane kernel |
/// | without AVX-512VL | scalar | 8-lane kernel |
///
/// Every choice gives the same states.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
struct Small {
    /// One state in the 4-lane kernel rather than [`permute_one`].
    one: bool,
    /// 2 to 4 states in the 4-lane kernel rather than a call of 8.
    few: bool,
}

#[cfg(target_arch = "x86_64")]
impl Small {
    /// The choice of the table above for this CPU (its CPUID vendor string and features,
    /// read once).
    fn for_this_cpu() -> Self {
        static CHOICE: std::sync::OnceLock<Small> = std::sync::OnceLock::new();
        *CHOICE.get_or_init(|| {
            let vl = avx2::vl::available();
            Self {
                one: vl && avx512::zen_core(),
                few: vl,
            }
        })
    }
}

fn lanes(isa: Isa, states: &mut [[u64; 25]]) {
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => avx512_groups(states.len(), states.iter_mut()),
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => {
            let mut states = states;
            while states.len() > 1 {
                let take = states.len().min(4);
                let (s, rest) = states.split_at_mut(take);
                in_chunk::<4>(s, avx2::permute4);
                states = rest;
            }
            crate::stats::keccak_alone(states.len());
            states.iter_mut().for_each(permute_one);
        }
        _ => {
            crate::stats::keccak_alone(states.len());
            states.iter_mut().for_each(permute_portable)
        }
    }
}

/// One permutation on the AVX2 path, and on the AVX-512 path of a CPU without AVX-512VL — a
/// state that does not fill a kernel's lanes, or a single stream ([`Sponge`]):
/// [`scalar::permute`], plane by plane, compiled with BMI1/BMI2 (`andn`, `rorx`) when the CPU
/// has them; else the portable code.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
fn permute_one(state: &mut [u64; 25]) {
    #[target_feature(enable = "bmi1,bmi2")]
    fn bmi(state: &mut [u64; 25]) {
        scalar::permute(state);
    }
    if std::arch::is_x86_feature_detected!("bmi1") && std::arch::is_x86_feature_detected!("bmi2") {
        // SAFETY: the CPU has BMI1 and BMI2 (checked just above).
        unsafe { bmi(state) };
    } else {
        permute_portable(state);
    }
}

/// Runs a W-lane kernel on up to W states, padding the rest with zero states.
#[cfg(target_arch = "x86_64")]
fn in_chunk<const W: usize>(states: &mut [[u64; 25]], kernel: impl FnOnce(&mut [[u64; 25]; W])) {
    if let Ok(full) = <&mut [[u64; 25]; W]>::try_from(&mut *states) {
        kernel(full);
        return;
    }
    let mut s = [[0u64; 25]; W];
    s[..states.len()].copy_from_slice(states);
    kernel(&mut s);
    states.copy_from_slice(&s[..states.len()]);
    // The states may be secret (SHAKE256 streams of a seed).
    crate::wipe(&mut s);
}

/// A group of W one-block SHAKE hash chains computed together (the pipelined chain kernels
/// [`avx512::chains8`], [`avx2::chains4`] and their twin `chains_portable`).
///
/// Lane l's step j (from `at[l]` to `end[l] − 1`) permutes (Keccak-f\[1600\], FIPS 202 §3.3)
/// the state `templates[l]` with j written as 4 big-endian bytes at byte `step_at` and the
/// running value (n bytes) at byte `value_at`; the first n bytes of the result are the next
/// value. A template is the lane's message absorbed into the zero state as one padded rate
/// block (message, 0x1F, zeros, 0x80 at byte rate − 1) with zeros where j and the value go —
/// SLH-DSA-SHAKE's F = SHAKE256(PK.seed ‖ ADRS ‖ M, 8n) (FIPS 205 §11.1, chained by
/// Algorithm 5): j is the ADRS hash address, the value M.
#[cfg(any(test, target_arch = "x86_64"))]
pub(crate) struct ChainGroup<'a, const W: usize> {
    /// Each lane's padded message block as a state, zero at the step bytes (the value lanes
    /// are replaced).
    pub(crate) templates: &'a [[u64; 25]; W],
    /// Byte offset of j (4 bytes, big-endian): the upper half of a lane (`step_at % 8 == 4`).
    pub(crate) step_at: usize,
    /// Byte offset of the value: a lane boundary.
    pub(crate) value_at: usize,
    /// Bytes of the value: 8, 16, 24 or 32.
    pub(crate) n: usize,
    /// Each lane's first step.
    pub(crate) at: [u32; W],
    /// Each lane's end (`at ≤ end`; equal: no step).
    pub(crate) end: [u32; W],
    /// A [`crate::Prelude`] every lane takes before its steps (those without steps too), as
    /// (state lane, XOR mask): the template with the mask XORed into that lane, j = `at` and
    /// the value permuted once; the first n bytes become the value.
    pub(crate) prelude: Option<(usize, u64)>,
}

#[cfg(any(test, target_arch = "x86_64"))]
impl<const W: usize> ChainGroup<'_, W> {
    /// Whether a layout has the shape the chain kernels take: a 4-byte step counter in the
    /// upper half of a lane, whole value lanes (n ∈ {8, 16, 24, 32}), both within the first
    /// 168 bytes (the largest rate) and apart.
    pub(crate) fn fits(step_at: usize, step_bytes: usize, value_at: usize, n: usize) -> bool {
        step_bytes == 4
            && step_at % 8 == 4
            && value_at.is_multiple_of(8)
            && n.is_multiple_of(8)
            && (8..=32).contains(&n)
            && step_at + 4 <= 168
            && value_at + n <= 168
            && (step_at + 4 <= value_at || value_at + n <= step_at)
    }

    /// The largest number of steps of a lane: the steps the group takes.
    pub(crate) fn steps(&self) -> u32 {
        self.at
            .iter()
            .zip(&self.end)
            .map(|(a, e)| e - a)
            .max()
            .unwrap_or(0)
    }

    /// Asserts the group's shape (see [`ChainGroup::fits`]) and `at ≤ end` in every lane.
    ///
    /// # Panics
    /// When it does not hold (a caller bug).
    pub(crate) fn check(&self) {
        assert!(
            Self::fits(self.step_at, 4, self.value_at, self.n),
            "chain kernels: step counter in the upper half of a lane, value in whole lanes"
        );
        assert!(
            self.at.iter().zip(&self.end).all(|(a, e)| a <= e),
            "chain kernels: at ≤ end"
        );
    }
}

/// A prelude as the chain kernels take it: (state lane, XOR mask).
#[cfg(any(test, target_arch = "x86_64"))]
fn prelude_lane(p: Prelude) -> (usize, u64) {
    (p.at / 8, u64::from(p.xor) << (8 * (p.at % 8)))
}

/// The W chains of a [`ChainGroup`], one lane after another with the portable permutation:
/// the twin the pipelined kernels are tested against. `values[l][..n]` is lane l's value in
/// and out.
#[cfg(test)]
pub(crate) fn chains_portable<const W: usize>(g: &ChainGroup<'_, W>, values: &mut [[u8; 32]; W]) {
    g.check();
    for (l, value) in values.iter_mut().enumerate() {
        let pre = g.prelude.map(|(lane, mask)| {
            let mut t = g.templates[l];
            t[lane] ^= mask;
            (t, g.at[l])
        });
        let steps = (g.at[l]..g.end[l]).map(|j| (g.templates[l], j));
        for (template, j) in pre.into_iter().chain(steps) {
            let mut bytes = [0u8; 200];
            for (b, lane) in bytes.chunks_exact_mut(8).zip(&template) {
                b.copy_from_slice(&lane.to_le_bytes());
            }
            bytes[g.step_at..g.step_at + 4].copy_from_slice(&j.to_be_bytes());
            bytes[g.value_at..g.value_at + g.n].copy_from_slice(&value[..g.n]);
            let mut state = [0u64; 25];
            absorb(&mut state, &bytes);
            permute_portable(&mut state);
            squeeze(&state, &mut value[..g.n]);
        }
    }
}

/// SHAKE128 or SHAKE256 (FIPS 202 §6.2) of many messages, each output at most one rate
/// (168 or 136 bytes) long — every output an SLH-DSA or XMSS tweakable hash needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shake {
    /// The rate in bytes.
    rate: usize,
}

impl Shake {
    /// SHAKE128: rate 168 bytes.
    pub const SHAKE128: Self = Self { rate: 168 };
    /// SHAKE256: rate 136 bytes.
    pub const SHAKE256: Self = Self { rate: 136 };
}

/// States permuted together in one pass over the blocks.
const BATCH: usize = 32;

impl ManyHash for Shake {
    fn max_output(&self) -> usize {
        self.rate
    }

    fn fixed_chains_on(
        &self,
        isa: Isa,
        layout: &Layout,
        chains: &mut [Chain],
        message: Message<'_>,
    ) {
        if layout.msg_len < self.rate {
            self.one_block_chains(isa, layout, chains, message);
        } else {
            crate::chain::fixed_chains_general(self, isa, layout, chains, message);
        }
    }

    fn prelude_chains_on(
        &self,
        isa: Isa,
        layout: &Layout,
        prelude: Prelude,
        chains: &mut [Chain],
        message: Message<'_>,
    ) {
        #[cfg(target_arch = "x86_64")]
        if self.in_kernels(isa, layout, chains, message, Some(prelude)) {
            return;
        }
        crate::chain::prelude_chains_general(self, isa, layout, prelude, chains, message);
    }

    fn hash_many_on(&self, isa: Isa, msg_len: usize, msgs: &[u8], out_len: usize, out: &mut [u8]) {
        let count = count(msg_len, msgs, out_len, out, self.rate);
        if count == 0 {
            return;
        }
        if msg_len == 0 {
            // Every message is the empty string: hash it once, copy it.
            let mut one = vec![0u8; out_len];
            let mut state = [0u64; 25];
            xor_byte(&mut state, 0, 0x1F);
            xor_byte(&mut state, self.rate - 1, 0x80);
            permute_lanes(isa, core::slice::from_mut(&mut state));
            squeeze(&state, &mut one);
            out.chunks_exact_mut(out_len)
                .for_each(|o| o.copy_from_slice(&one));
            return;
        }
        let rate = self.rate;
        // Blocks absorbed: the message and its padding (0x1F … 0x80), at least one byte of it.
        let blocks = msg_len / rate + 1;
        let mut states = crate::Wiped::filled([0u64; 25], BATCH);
        for (msgs, out) in msgs
            .chunks(BATCH * msg_len)
            .zip(out.chunks_mut(BATCH * out_len))
        {
            let lanes = msgs.len() / msg_len;
            let states = &mut states[..lanes];
            states.fill([0; 25]);
            for b in 0..blocks {
                for (s, m) in states.iter_mut().zip(msgs.chunks_exact(msg_len)) {
                    let block = &m[(b * rate).min(msg_len)..((b + 1) * rate).min(msg_len)];
                    absorb(s, block);
                    if b + 1 == blocks {
                        xor_byte(s, block.len(), 0x1F);
                        xor_byte(s, rate - 1, 0x80);
                    }
                }
                permute_lanes(isa, states);
            }
            for (s, o) in states.iter().zip(out.chunks_exact_mut(out_len)) {
                squeeze(s, o);
            }
        }
    }
}

impl Shake {
    /// One-block chains. On the AVX-512 and AVX2 paths, when the layout fits the pipelined
    /// kernels ([`ChainGroup::fits`]: SLH-DSA-SHAKE's F), by [`Shake::pipelined`]; else each
    /// chain's padded message is kept as a block, and each step writes j, absorbs the block
    /// into a zero state, permutes and writes the first n bytes back.
    fn one_block_chains(
        &self,
        isa: Isa,
        layout: &Layout,
        chains: &mut [Chain],
        message: Message<'_>,
    ) {
        #[cfg(target_arch = "x86_64")]
        if self.in_kernels(isa, layout, chains, message, None) {
            return;
        }
        let (msg_len, n, at) = (layout.msg_len, layout.n, layout.value_at);
        let words = msg_len.div_ceil(8);
        let mut blocks = crate::Wiped::filled(0u8, chains.len() * 8 * words);
        for (k, (b, c)) in blocks.chunks_exact_mut(8 * words).zip(&*chains).enumerate() {
            message(k, c, &mut b[..msg_len]);
            crate::copy(&mut b[at..at + n], &c.value[..n]);
        }
        let mut active: Vec<usize> = (0..chains.len())
            .filter(|&i| chains[i].at < chains[i].end)
            .collect();
        let mut states = crate::Wiped::filled([0u64; 25], active.len());
        while !active.is_empty() {
            let states = &mut states[..active.len()];
            for (&i, s) in active.iter().zip(states.iter_mut()) {
                let b = &mut blocks[i * 8 * words..(i + 1) * 8 * words];
                layout.put_step(b, chains[i].at);
                *s = [0; 25];
                let (ws, _) = b.as_chunks::<8>();
                for (sw, w) in s.iter_mut().zip(ws) {
                    *sw = u64::from_le_bytes(*w);
                }
                xor_byte(s, msg_len, 0x1F);
                xor_byte(s, self.rate - 1, 0x80);
            }
            permute_lanes(isa, states);
            for (&i, s) in active.iter().zip(states.iter()) {
                squeeze(s, &mut blocks[i * 8 * words + at..i * 8 * words + at + n]);
                chains[i].at += 1;
            }
            active.retain(|&i| chains[i].at < chains[i].end);
        }
        for (i, c) in chains.iter_mut().enumerate() {
            crate::copy(
                &mut c.value[..n],
                &blocks[i * 8 * words + at..i * 8 * words + at + n],
            );
        }
    }
}

impl Shake {
    /// Runs the chains (with `prelude`, if any) in the pipelined kernels when `isa` has them
    /// and the layout fits ([`ChainGroup::fits`], one block); false, untouched, otherwise.
    #[cfg(target_arch = "x86_64")]
    fn in_kernels(
        &self,
        isa: Isa,
        layout: &Layout,
        chains: &mut [Chain],
        message: Message<'_>,
        prelude: Option<Prelude>,
    ) -> bool {
        let (l, p) = (layout, prelude);
        if l.msg_len >= self.rate
            || !ChainGroup::<1>::fits(l.step_at, l.step_bytes, l.value_at, l.n)
        {
            return false;
        }
        match isa {
            Isa::Avx512 => self.pipelined(l, chains, message, p, avx512::chains8),
            Isa::Avx2 => self.pipelined(l, chains, message, p, avx2::chains4),
            _ => return false,
        }
        true
    }

    /// One-block chains by a pipelined W-lane kernel: the chains with steps to go, longest
    /// first (so a group's lanes finish together), W at a time; a partial last group is
    /// padded with lanes of no step. With a `prelude`, every chain takes it first (those
    /// without steps too, last). The layout fits the kernels ([`ChainGroup::fits`]).
    #[cfg(target_arch = "x86_64")]
    fn pipelined<const W: usize>(
        &self,
        layout: &Layout,
        chains: &mut [Chain],
        message: Message<'_>,
        prelude: Option<Prelude>,
        kernel: impl Fn(&ChainGroup<'_, W>, &mut [[u8; 32]; W]),
    ) {
        let msg_len = layout.msg_len;
        let mut order = crate::chain::longest_first(chains);
        let steps: usize = order
            .iter()
            .map(|&i| (chains[i].end - chains[i].at) as usize)
            .sum();
        if prelude.is_some() {
            order.extend((0..chains.len()).filter(|&i| chains[i].at >= chains[i].end));
            crate::stats::keccak(chains.len());
        }
        crate::stats::keccak(steps);
        // One padded block (0x1F after the message, 0x80 at rate − 1) whose message bytes
        // each chain rewrites: only the lanes the message and its 0x1F reach change from
        // chain to chain; the templates' other lanes are set once.
        let mut block = [0u8; 200];
        block[msg_len] ^= 0x1F;
        block[self.rate - 1] ^= 0x80;
        let words = (msg_len + 1).div_ceil(8);
        let mut templates = [state_lanes(&block); W];
        let mut values = [[0u8; 32]; W];
        for group in order.chunks(W) {
            let (mut at, mut end) = ([0u32; W], [0u32; W]);
            for (l, &i) in group.iter().enumerate() {
                message(i, &chains[i], &mut block[..msg_len]);
                // The kernels OR j in and replace the value lanes.
                block[layout.step_at..layout.step_at + 4].fill(0);
                let (ws, _) = block.as_chunks::<8>();
                for (t, w) in templates[l][..words].iter_mut().zip(ws) {
                    *t = u64::from_le_bytes(*w);
                }
                values[l] = chains[i].value;
                (at[l], end[l]) = (chains[i].at, chains[i].end.max(chains[i].at));
            }
            let g = ChainGroup {
                templates: &templates,
                step_at: layout.step_at,
                value_at: layout.value_at,
                n: layout.n,
                at,
                end,
                prelude: prelude.map(prelude_lane),
            };
            kernel(&g, &mut values);
            for (l, &i) in group.iter().enumerate() {
                crate::copy(&mut chains[i].value[..layout.n], &values[l][..layout.n]);
                chains[i].at = chains[i].at.max(chains[i].end);
            }
        }
        crate::wipe(&mut block);
        crate::wipe(&mut templates);
        crate::wipe(&mut values);
    }
}

/// A 200-byte state's lanes (little-endian, FIPS 202 §3.1.2).
#[cfg(target_arch = "x86_64")]
fn state_lanes(bytes: &[u8; 200]) -> [u64; 25] {
    let (ws, _) = bytes.as_chunks::<8>();
    core::array::from_fn(|i| u64::from_le_bytes(ws[i]))
}

/// The first `out.len()` (≤ rate) bytes of the state, little-endian lanes (FIPS 202 §3.1.2).
fn squeeze(state: &[u64; 25], out: &mut [u8]) {
    let (words, rest) = out.as_chunks_mut::<8>();
    for (w, lane) in words.iter_mut().zip(state) {
        *w = lane.to_le_bytes();
    }
    let n = rest.len();
    crate::copy(rest, &state[words.len()].to_le_bytes()[..n]);
}

/// XORs `block` (at most one rate) into the state from byte 0.
fn absorb(state: &mut [u64; 25], block: &[u8]) {
    absorb_at(state, 0, block);
}

/// XORs `bytes` into the state from byte `at` (at + `bytes.len()` at most one rate): lane by
/// lane where they cover whole lanes (FIPS 202 §3.1.2's little-endian lanes).
fn absorb_at(state: &mut [u64; 25], mut at: usize, bytes: &[u8]) {
    let mut bytes = bytes;
    while !at.is_multiple_of(8)
        && let Some((&byte, rest)) = bytes.split_first()
    {
        xor_byte(state, at, byte);
        (at, bytes) = (at + 1, rest);
    }
    let (words, rest) = bytes.as_chunks::<8>();
    for (s, w) in state[at / 8..].iter_mut().zip(words) {
        *s ^= u64::from_le_bytes(*w);
    }
    at += 8 * words.len();
    for (i, &byte) in rest.iter().enumerate() {
        xor_byte(state, at + i, byte);
    }
}

fn xor_byte(state: &mut [u64; 25], at: usize, byte: u8) {
    state[at / 8] ^= u64::from(byte) << (8 * (at % 8));
}
