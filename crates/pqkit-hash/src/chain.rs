//! Winternitz chains, many at a time: each step of each chain is one fixed-length hash whose
//! message the caller forms from the chain and the step (FIPS 205 Algorithm 5, RFC 8554
//! Algorithm 1, RFC 8391 Algorithm 2), and the engine hashes every chain's step together.

use zeroize::Zeroize;

use crate::Wiped;

use crate::{ManyHash, Path};

/// One chain: its running value, the step it is at, and the step it stops before. Its value
/// may be secret: keep chains in a [`crate::Wiped`] (or `Zeroizing`) vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Zeroize)]
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
    path: Path,
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
        hash.hash_many_on(path, msg_len, msgs, n, out);
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

/// The general [`fixed_chains`]: each step's message copied from `messages` with j and the
/// value written in, hashed with [`ManyHash::hash_many_on`].
pub(crate) fn fixed_chains_general<H: ManyHash + ?Sized>(
    hash: &H,
    path: Path,
    layout: &Layout,
    chains: &mut [Chain],
    message: Message<'_>,
) {
    let (msg_len, n, value_at) = (layout.msg_len, layout.n, layout.value_at);
    chains_on(hash, path, msg_len, n, chains, |k, c, m| {
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
    let (mut longest, mut alike) = (0, true);
    for c in chains {
        let l = len(c);
        alike &= l == first;
        longest = longest.max(l);
    }
    if alike {
        // All alike (key generation, tree leaves): no sort.
        return if first == 0 {
            Vec::new()
        } else {
            (0..chains.len()).collect()
        };
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
        for (count, max) in [(133, 4), (200, 70), (50, 300), (40, 1)] {
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
