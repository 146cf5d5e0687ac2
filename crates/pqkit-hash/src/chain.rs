//! Winternitz chains, many at a time: each step of each chain is one fixed-length hash whose
//! message the caller forms from the chain and the step (FIPS 205 Algorithm 5, RFC 8554
//! Algorithm 1, RFC 8391 Algorithm 2), and the engine hashes every chain's step together.

use zeroize::Zeroize;

use crate::Wiped;

use crate::{Isa, ManyHash};

/// One chain: its running value, the step it is at, and the step it stops before. Its value
/// may be secret: keep chains in a [`crate::Wiped`] (or `Zeroizing`) vector.
#[derive(Clone, Copy, PartialEq, Eq, Zeroize)]
pub struct Chain {
    /// The caller's label (which key pair, which chain): read by the message function.
    pub id: u32,
    /// The next step j (the hash address of the next hash).
    pub at: u32,
    /// The chain stops when `at` reaches `end`.
    pub end: u32,
    /// The running value; the first n bytes are meaningful (n ≤ 32).
    pub value: [u8; 32],
}

/// The label and steps; not the value, which may be secret.
impl core::fmt::Debug for Chain {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Chain")
            .field("id", &self.id)
            .field("at", &self.at)
            .field("end", &self.end)
            .finish_non_exhaustive()
    }
}

impl crate::Zero for Chain {
    const ZERO: Self = Chain {
        id: 0,
        at: 0,
        end: 0,
        value: [0; 32],
    };
}

impl Chain {
    /// A chain labelled `id` from `value` (n ≤ 32 bytes) at step `start` to `end`.
    ///
    /// # Panics
    /// When `value` is longer than 32 bytes (a caller bug).
    pub fn new(id: u32, start: u32, end: u32, value: &[u8]) -> Self {
        let mut v = [0u8; 32];
        crate::copy(&mut v[..value.len()], value);
        Self {
            id,
            at: start,
            end,
            value: v,
        }
    }
}

/// Appends the first `n` bytes of each chain's value to `out`, in order (a public key's chain
/// ends, a signature's chain values): `chains.len() × n` bytes.
pub fn append_values(chains: &[Chain], n: usize, out: &mut Vec<u8>) {
    if n == 0 {
        return;
    }
    let at = out.len();
    out.resize(at + chains.len() * n, 0);
    for (o, c) in out[at..].chunks_exact_mut(n).zip(chains) {
        crate::copy(o, &c.value[..n]);
    }
}

/// Runs every chain from its `at` to its `end`: at each step, `message(k, chain, buf)` writes
/// the `msg_len`-byte message hashed at step `chain.at` of chain `k` (`chains[k]`, its value
/// `chain.value[..n]`), and the first `n` bytes of the hash become the new value. Chains of any
/// lengths are hashed together, as many at a time as the path allows (the path is
/// [`crate::dispatch::current`]).
///
/// # Panics
/// When `n` exceeds the hash's output or 32 bytes (a caller bug).
pub fn chains<H: ManyHash + ?Sized>(
    hash: &H,
    msg_len: usize,
    n: usize,
    chains: &mut [Chain],
    message: impl FnMut(usize, &Chain, &mut [u8]),
) {
    assert!(
        n <= 32 && n <= hash.max_output(),
        "chain values are at most 32 bytes"
    );
    chains_on(
        hash,
        crate::dispatch::current(),
        msg_len,
        n,
        chains,
        message,
    );
}

/// [`chains`] on a given path.
fn chains_on<H: ManyHash + ?Sized>(
    hash: &H,
    isa: Isa,
    msg_len: usize,
    n: usize,
    chains: &mut [Chain],
    mut message: impl FnMut(usize, &Chain, &mut [u8]),
) {
    let mut active: Vec<usize> = (0..chains.len())
        .filter(|&i| chains[i].at < chains[i].end)
        .collect();
    let mut msgs = Wiped::filled(0u8, active.len() * msg_len);
    let mut out = Wiped::filled(0u8, active.len() * n);
    while !active.is_empty() {
        let msgs = &mut msgs[..active.len() * msg_len];
        let out = &mut out[..active.len() * n];
        for (&i, m) in active.iter().zip(msgs.chunks_exact_mut(msg_len)) {
            message(i, &chains[i], m);
        }
        hash.hash_many_on(isa, msg_len, msgs, n, out);
        for (&i, o) in active.iter().zip(out.chunks_exact(n)) {
            let c = &mut chains[i];
            crate::copy(&mut c.value[..n], o);
            c.at += 1;
        }
        active.retain(|&i| chains[i].at < chains[i].end);
    }
}

/// Where a chain step's message changes: every step of a chain hashes the same `msg_len`-byte
/// message except for the step counter j (`step_bytes` = 1 or 4 bytes, big-endian, at
/// `step_at`) and the running value (n bytes at `value_at`) — SLH-DSA's F (ADRS hash address
/// and M), LMS's chain step (u8str(j) and tmp).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Message bytes.
    pub msg_len: usize,
    /// Offset of the step counter.
    pub step_at: usize,
    /// Bytes of the step counter: 1 or 4.
    pub step_bytes: usize,
    /// Offset of the value.
    pub value_at: usize,
    /// Bytes of the value (n ≤ 32).
    pub n: usize,
}

impl Layout {
    /// Writes step `j` into a message.
    pub(crate) fn put_step(&self, msg: &mut [u8], j: u32) {
        let be = j.to_be_bytes();
        msg[self.step_at..self.step_at + self.step_bytes]
            .copy_from_slice(&be[4 - self.step_bytes..]);
    }

    fn check(&self, max: usize) {
        assert!(
            self.n <= 32 && self.n <= max,
            "chain values are at most 32 bytes"
        );
        assert!(
            self.step_bytes == 1 || self.step_bytes == 4,
            "1- or 4-byte step counters"
        );
        assert!(
            self.step_at + self.step_bytes <= self.msg_len
                && self.value_at + self.n <= self.msg_len
        );
    }
}

/// Runs every chain from its `at` to its `end` where step j of a chain hashes its message in
/// `messages` (`layout.msg_len` bytes each, one per chain, in order) with j and the running
/// value written in (see [`Layout`]); the first n bytes of each hash become the value. On the
/// current path; one-block SHA-256 and one-block SHAKE messages take the engine's fast path
/// (the message is formed once, then only j and the value change in place).
///
/// # Panics
/// When the layout does not fit the messages (a caller bug).
pub fn fixed_chains<H: ManyHash + ?Sized>(
    hash: &H,
    layout: &Layout,
    chains: &mut [Chain],
    messages: &[u8],
) {
    assert_eq!(
        messages.len(),
        chains.len() * layout.msg_len,
        "one message per chain"
    );
    let len = layout.msg_len;
    fixed_chains_with(hash, layout, chains, &|k, _, m| {
        crate::copy(m, &messages[k * len..(k + 1) * len]);
    });
}

/// Writes chain k's message (`layout.msg_len` bytes; what is under the step counter and the
/// value does not matter) into the buffer: how [`fixed_chains_with`] gets each chain's message
/// without a copy of them all.
pub type Message<'a> = &'a dyn Fn(usize, &Chain, &mut [u8]);

/// [`fixed_chains`] with each chain's message written by `message` straight into the engine's
/// blocks (once per chain, not per step).
///
/// # Panics
/// When the layout does not fit the hash (a caller bug).
pub fn fixed_chains_with<H: ManyHash + ?Sized>(
    hash: &H,
    layout: &Layout,
    chains: &mut [Chain],
    message: Message<'_>,
) {
    layout.check(hash.max_output());
    hash.fixed_chains_on(crate::dispatch::current(), layout, chains, message);
}

/// A hash each chain takes before its steps: its message with one byte changed (`xor`ed
/// with `xor` at `at`), the step counter at the chain's `at` and its value in place; the
/// first n bytes of the digest become the value the steps start from — a secret chain start
/// derived by a PRF of the same shape as the chain's hash. FIPS 205's WOTS+ secret values are
/// such a hash: PRF(PK.seed, SK.seed, skADRS) has the shape of the chain's first F with
/// SK.seed as the value and skADRS's type WOTS_PRF (5) where the F's ADRS has WOTS_HASH (0)
/// (Algorithm 6, lines 1–5; Algorithm 7, lines 9–10; §11.2 for the SHA2 sets); so are the
/// FORS secret values before a leaf's F (FORS_PRF (6) against FORS_TREE (3), Algorithms 14
/// and 15).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prelude {
    /// The message byte that differs from the steps'.
    pub at: usize,
    /// What it is XORed with.
    pub xor: u8,
}

/// [`fixed_chains_with`] where every chain — one without steps too — first replaces its value
/// by its [`Prelude`] hash. On AVX-512 (and for SHAKE on AVX2 too) the prelude runs in the
/// chain kernel as one more step (with its own template word or lane), not as a separate
/// batch of hashes.
///
/// # Panics
/// When the layout does not fit the hash or the prelude's byte is under the step counter or
/// the value (caller bugs).
pub fn fixed_chains_with_prelude<H: ManyHash + ?Sized>(
    hash: &H,
    layout: &Layout,
    prelude: Prelude,
    chains: &mut [Chain],
    message: Message<'_>,
) {
    layout.check(hash.max_output());
    let clear = |at: usize, len: usize| prelude.at < at || at + len <= prelude.at;
    assert!(
        prelude.at < layout.msg_len
            && clear(layout.step_at, layout.step_bytes)
            && clear(layout.value_at, layout.n),
        "the prelude's byte is in the message, clear of the step counter and the value"
    );
    hash.prelude_chains_on(crate::dispatch::current(), layout, prelude, chains, message);
}

/// The general [`fixed_chains_with_prelude`]: the preludes hashed together with
/// [`ManyHash::hash_many_on`], then the steps with [`ManyHash::fixed_chains_on`].
pub(crate) fn prelude_chains_general<H: ManyHash + ?Sized>(
    hash: &H,
    isa: Isa,
    layout: &Layout,
    prelude: Prelude,
    chains: &mut [Chain],
    message: Message<'_>,
) {
    let (msg_len, n, value_at) = (layout.msg_len, layout.n, layout.value_at);
    // The messages hold the chains' values (secret: SK.seed).
    let mut msgs = Wiped::filled(0u8, chains.len() * msg_len);
    for (k, (c, m)) in chains
        .iter()
        .zip(msgs.chunks_exact_mut(msg_len))
        .enumerate()
    {
        message(k, c, m);
        layout.put_step(m, c.at);
        crate::copy(&mut m[value_at..value_at + n], &c.value[..n]);
        m[prelude.at] ^= prelude.xor;
    }
    let mut out = Wiped::filled(0u8, chains.len() * n);
    hash.hash_many_on(isa, msg_len, &msgs, n, &mut out);
    for (c, o) in chains.iter_mut().zip(out.chunks_exact(n)) {
        crate::copy(&mut c.value[..n], o);
    }
    hash.fixed_chains_on(isa, layout, chains, message);
}

/// Where a chain's id is written in its message: `bytes` (1, 2 or 4) big-endian bytes at
/// `at`, within one 4-byte word of the message (LM-OTS's u16str(i) at byte 20).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdField {
    /// Offset of the id.
    pub at: usize,
    /// Bytes of the id: 1, 2 or 4.
    pub bytes: usize,
}

impl IdField {
    /// Writes `id` (its low `bytes` bytes) into a message.
    pub(crate) fn put(&self, msg: &mut [u8], id: u32) {
        let be = id.to_be_bytes();
        msg[self.at..self.at + self.bytes].copy_from_slice(&be[4 - self.bytes..]);
    }

    /// Whether the field is inside the message, in one word, and clear of the step counter and
    /// the value of `layout`.
    pub(crate) fn fits(&self, layout: &Layout) -> bool {
        let (a, b) = (self.at, self.at + self.bytes);
        let clear = |at: usize, len: usize| b <= at || at + len <= a;
        matches!(self.bytes, 1 | 2 | 4)
            && b <= layout.msg_len
            && a / 4 == (b - 1) / 4
            && clear(layout.step_at, layout.step_bytes)
            && clear(layout.value_at, layout.n)
    }
}

/// Runs every chain from its `at` to its `end` where all chains hash the same message
/// `shared` (`layout.msg_len` bytes) but for the chain's id (written at `id`), the step
/// counter and the running value (see [`Layout`]): one-time signatures whose chains differ
/// only in their index, as LM-OTS's, whose messages
/// I ‖ u32str(q) ‖ u16str(i) ‖ u8str(j) ‖ tmp differ from chain to chain only in i (RFC 8554
/// Algorithms 1, 3 and 4b). The first n bytes of each hash become the value.
///
/// The same work as [`fixed_chains_with`] with a message function that copies `shared` and
/// writes the id; on AVX-512, one-block SHA-256 chains run in groups of 16 all in one kernel
/// call that broadcasts the one template and shifts the lanes' ids into it, instead of 16
/// templates written and transposed and the setup redone per group (measured faster than
/// [`fixed_chains_with`] on LMS_SHA256_M32_H10/W2's 133 chains; `pqkit bench crypto`).
///
/// # Panics
/// When the layout or the id field does not fit `shared` (a caller bug).
pub fn shared_chains<H: ManyHash + ?Sized>(
    hash: &H,
    layout: &Layout,
    id: IdField,
    shared: &[u8],
    chains: &mut [Chain],
) {
    check_shared(hash.max_output(), layout, id, shared);
    hash.shared_chains_on(crate::dispatch::current(), layout, id, shared, chains);
}

/// The shape checks of [`shared_chains`] and [`shared_chains_to_end`]: the layout fits the hash's
/// output, `shared` is one whole message, and the id field fits beside the counter and value.
fn check_shared(max_output: usize, layout: &Layout, id: IdField, shared: &[u8]) {
    layout.check(max_output);
    assert_eq!(shared.len(), layout.msg_len, "one shared message");
    assert!(
        id.fits(layout),
        "the id field: 1, 2 or 4 bytes in one word, clear of the step counter and the value"
    );
}

/// The general [`shared_chains`]: the chains' messages formed from `shared` for
/// [`ManyHash::fixed_chains_on`].
pub(crate) fn shared_chains_general<H: ManyHash + ?Sized>(
    hash: &H,
    isa: Isa,
    layout: &Layout,
    id: IdField,
    shared: &[u8],
    chains: &mut [Chain],
) {
    hash.fixed_chains_on(isa, layout, chains, &|_, c, m| {
        crate::copy(m, shared);
        id.put(m, c.id);
    });
}

/// Runs chain i, for i = 0 … `starts.len()` − 1, labelled i (written at `id`), from the n-byte
/// value `values[i·n..(i + 1)·n]` at step `starts[i]` to step `end`, and writes its last value
/// to `out[i·n..(i + 1)·n]` (a chain with `starts[i] ≥ end` copies its value): a one-time
/// signature's verification, the signature's values in and the public key's chain ends out
/// (LM-OTS's z\[i\] from y\[i\], RFC 8554 Algorithm 4b, step 3; FIPS 205 Algorithm 8; RFC 8391
/// Algorithm 6). The messages are [`shared_chains`]' (`shared` but for the id, the step counter
/// and the value).
///
/// The same work as [`shared_chains`] on one [`Chain`] per value, without them: on AVX-512 the
/// chains are ordered longest first by a counting sort of `starts` into two index arrays, and
/// each group of 16 reads its values from `values` and writes them to `out` where they lie.
///
/// # Panics
/// When the layout or the id field does not fit `shared`, or `values` and `out` are not
/// `starts.len() × layout.n` bytes (caller bugs).
pub fn shared_chains_to_end<H: ManyHash + ?Sized>(
    hash: &H,
    layout: &Layout,
    id: IdField,
    shared: &[u8],
    ends: ChainEnds<'_>,
    out: &mut [u8],
) {
    check_shared(hash.max_output(), layout, id, shared);
    let n = layout.n;
    assert!(
        ends.values.len() == ends.starts.len() * n && out.len() == ends.values.len(),
        "one n-byte value in and out per chain"
    );
    hash.shared_chains_to_end_on(crate::dispatch::current(), layout, id, shared, ends, out);
}

/// The chains of [`shared_chains_to_end`]: where each starts, its value there, and the step all
/// of them end at.
#[derive(Clone, Copy, Debug)]
pub struct ChainEnds<'a> {
    /// Chain i's first step (a signed digit).
    pub starts: &'a [u8],
    /// The chains' values at their starts, n bytes each, in order (a signature's).
    pub values: &'a [u8],
    /// The step every chain stops before (2^w − 1 for w-bit digits).
    pub end: u32,
}

/// The general [`shared_chains_to_end`]: one [`Chain`] per value for [`ManyHash::shared_chains_on`].
pub(crate) fn shared_chains_to_end_general<H: ManyHash + ?Sized>(
    hash: &H,
    isa: Isa,
    layout: &Layout,
    id: IdField,
    shared: &[u8],
    ends: ChainEnds<'_>,
    out: &mut [u8],
) {
    let n = layout.n;
    let mut chains: Wiped<Chain> = Wiped::from_vec(
        (0u32..)
            .zip(ends.starts)
            .zip(ends.values.chunks_exact(n))
            .map(|((i, &a), v)| Chain::new(i, u32::from(a), ends.end, v))
            .collect(),
    );
    hash.shared_chains_on(isa, layout, id, shared, &mut chains);
    for (o, c) in out.chunks_exact_mut(n).zip(chains.iter()) {
        crate::copy(o, &c.value[..n]);
    }
}

/// The general [`fixed_chains`]: each step's message copied from `messages` with j and the
/// value written in, hashed with [`ManyHash::hash_many_on`].
pub(crate) fn fixed_chains_general<H: ManyHash + ?Sized>(
    hash: &H,
    isa: Isa,
    layout: &Layout,
    chains: &mut [Chain],
    message: Message<'_>,
) {
    let (msg_len, n, value_at) = (layout.msg_len, layout.n, layout.value_at);
    chains_on(hash, isa, msg_len, n, chains, |k, c, m| {
        message(k, c, m);
        layout.put_step(m, c.at);
        crate::copy(&mut m[value_at..value_at + n], &c.value[..n]);
    });
}

/// The chains still to run (`at < end`), longest first, so the lanes of a group finish
/// together (a group runs as many steps as its longest chain): a counting sort by length.
pub(crate) fn longest_first(chains: &[Chain]) -> Vec<usize> {
    let len = |c: &Chain| c.end.saturating_sub(c.at) as usize;
    let first = chains.first().map_or(0, len);
    // With the longest length, the counts of lengths 1–4 as [`short_first`] keeps them
    // (meaningless if a chain is longer, and then unused).
    let (mut longest, mut alike, mut short) = (0, true, 0u64);
    for c in chains {
        let l = len(c);
        alike &= l == first;
        longest = longest.max(l);
        short = short.wrapping_add(short_field(c.end.saturating_sub(c.at)));
    }
    if alike {
        // All alike (key generation, tree leaves): no sort.
        return if first == 0 {
            Vec::new()
        } else {
            (0..chains.len()).collect()
        };
    }
    if longest <= 4 && chains.len() < 1 << 16 {
        return short_first(chains, short);
    }
    // How many chains of each length: two interleaved tallies (so that runs of one length do
    // not wait on one counter in memory), on the stack for the usual short chains.
    let mut stack = [[0usize; 64]; 2];
    let mut heap = Vec::new();
    let counts: &mut [usize] = if longest < 64 {
        for (k, c) in chains.iter().enumerate() {
            stack[k & 1][len(c)] += 1;
        }
        let [even, odd] = &mut stack;
        for (e, o) in even.iter_mut().zip(odd.iter()) {
            *e += o;
        }
        &mut even[..=longest]
    } else {
        heap.resize(longest + 1, 0);
        for c in chains {
            heap[len(c)] += 1;
        }
        &mut heap
    };
    // Start of each length's run, longest first; length 0 is left out.
    let mut at = 0;
    for l in (1..=longest).rev() {
        let count = counts[l];
        counts[l] = at;
        at += count;
    }
    let mut order = vec![0usize; at];
    for (i, c) in chains.iter().enumerate() {
        let l = len(c);
        if l > 0 {
            order[counts[l]] = i;
            counts[l] += 1;
        }
    }
    order
}

/// Chains of length l ≥ 1 count in bits 16(l − 1)..16l of [`short_first`]'s register; length
/// 0 not at all (lengths above 4 wrap around: the caller checks).
fn short_field(l: u32) -> u64 {
    u64::from(l != 0) << (16 * (l.wrapping_sub(1) & 3))
}

/// [`longest_first`] for chains of at most 4 steps left (LM-OTS's W1 and W2 chains, the
/// signer's start included; fewer than 2^16 chains), given their `counts` by length in
/// [`short_field`]s: the running start of each length is a 16-bit field of one register too,
/// so no placement waits on a store to the one before it, as counters in memory do when many
/// chains have one length.
fn short_first(chains: &[Chain], counts: u64) -> Vec<usize> {
    let len = |c: &Chain| c.end.saturating_sub(c.at);
    let shift = |l: u32| 16 * (l - 1);
    let field_of = |x: u64, l: u32| usize::try_from((x >> shift(l)) & 0xffff).expect("16 bits");
    // Start of each length's run, longest first.
    let (mut starts, mut at) = (0u64, 0u64);
    for l in (1..=4).rev() {
        starts |= at << shift(l);
        at += (counts >> shift(l)) & 0xffff;
    }
    let mut order = vec![0usize; field_of(at, 1)];
    for (i, c) in chains.iter().enumerate() {
        let l = len(c);
        if l > 0 {
            order[field_of(starts, l)] = i;
            starts += short_field(l);
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use super::{Chain, longest_first};

    /// Every unfinished chain once, longest first, in index order within a length — for short
    /// lengths (the stack counts), long ones (up to 300 steps), and all alike.
    #[test]
    fn longest_first_orders_by_remaining_steps() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            u32::try_from(x % m).expect("small")
        };
        for (count, max) in [(133, 4), (265, 5), (67, 6), (200, 70), (50, 300), (40, 1)] {
            let chains: Vec<Chain> = (0..count)
                .map(|i| {
                    let at = next(5);
                    Chain::new(i, at, at + next(max), &[0u8; 16])
                })
                .collect();
            let order = longest_first(&chains);
            let left = |i: usize| chains[i].end - chains[i].at;
            let mut expected: Vec<usize> = (0..chains.len()).filter(|&i| left(i) > 0).collect();
            expected.sort_by_key(|&i| std::cmp::Reverse(left(i)));
            if chains.iter().all(|c| c.end - c.at == left(0)) {
                // All alike: index order.
                assert!(order.windows(2).all(|w| w[0] < w[1]));
            }
            assert_eq!(order, expected, "{count} chains of up to {max} steps");
        }
    }
}
