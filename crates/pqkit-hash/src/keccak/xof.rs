//! Many SHAKE streams squeezed together: the extendable-output functions of the lattice
//! schemes (FIPS 203's XOF and PRF), whose independent streams — one per matrix entry or
//! secret polynomial — are permuted on the path's Keccak lanes at once, with any long message
//! hashed beside them (J, tr, c̃); and [`Sponge`], one stream of any length (FIPS 203's G and
//! H), counted like the lanes.

use super::{Shake, absorb, absorb_at, permute_lanes, permute_picked, xor_byte};
use crate::{Isa, Wiped};

/// One Keccak sponge (FIPS 202 §4) over an input of any length, with at most one rate of
/// output: SHA3-256 and SHA3-512 (FIPS 202 §6.1) or SHAKE128 and SHAKE256 (§6.2). Its
/// permutations run one at a time, on the current path's single-state permutation, and are
/// counted in [`crate::stats`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sponge {
    /// SHA3-256: rate 136 bytes, 32-byte digest.
    Sha3_256,
    /// SHA3-512: rate 72 bytes, 64-byte digest.
    Sha3_512,
    /// SHAKE128: rate 168 bytes.
    Shake128,
    /// SHAKE256: rate 136 bytes.
    Shake256,
}

impl Sponge {
    /// The rate in bytes.
    pub fn rate(self) -> usize {
        match self {
            Self::Sha3_256 | Self::Shake256 => 136,
            Self::Sha3_512 => 72,
            Self::Shake128 => 168,
        }
    }

    /// The domain-separation bits and the first padding bit (FIPS 202 §6.1, §6.2; B.2).
    fn domain(self) -> u8 {
        match self {
            Self::Sha3_256 | Self::Sha3_512 => 0x06,
            Self::Shake128 | Self::Shake256 => 0x1F,
        }
    }

    /// Hashes the concatenation of `parts` into `out` (the first `out.len()` bytes of the
    /// output; for SHA3, the digest's length).
    ///
    /// # Panics
    /// When `out` is longer than the rate (a caller bug).
    pub fn hash(self, parts: &[&[u8]], out: &mut [u8]) {
        let mut a = self.absorber();
        for part in parts {
            a.update(part);
        }
        a.finalize(out);
    }

    /// An empty sponge that absorbs its input a piece at a time ([`Absorber`]).
    pub fn absorber(self) -> Absorber {
        Absorber {
            sponge: self,
            isa: crate::dispatch::current(),
            state: [0u64; 25],
            at: 0,
        }
    }
}

/// A [`Sponge`] absorbing a message fed in pieces of any lengths (FIPS 202 Algorithm 8):
/// each piece XORed into the state where it lies (no block buffer), a permutation after each
/// full rate; the same output as [`Sponge::hash`] of the pieces joined. Its permutations run on
/// the path current when it was created. The state (which may hold a secret) is wiped when the
/// absorber is finalized or dropped; `Debug` prints the sponge and position only.
pub struct Absorber {
    sponge: Sponge,
    isa: Isa,
    state: [u64; 25],
    /// Bytes of the current rate block absorbed.
    at: usize,
}

impl core::fmt::Debug for Absorber {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Absorber")
            .field("sponge", &self.sponge)
            .field("at", &self.at)
            .finish_non_exhaustive()
    }
}

impl Absorber {
    /// Absorbs the next piece of the message.
    pub fn update(&mut self, mut piece: &[u8]) {
        let rate = self.sponge.rate();
        while !piece.is_empty() {
            let take = piece.len().min(rate - self.at);
            absorb_at(&mut self.state, self.at, &piece[..take]);
            self.at += take;
            piece = &piece[take..];
            if self.at == rate {
                permute_lanes(self.isa, core::slice::from_mut(&mut self.state));
                self.at = 0;
            }
        }
    }

    /// Pads, permutes and writes the first `out.len()` bytes of the output.
    ///
    /// # Panics
    /// When `out` is longer than the rate (a caller bug).
    pub fn finalize(mut self, out: &mut [u8]) {
        let rate = self.sponge.rate();
        assert!(out.len() <= rate, "Sponge: more than one rate of output");
        xor_byte(&mut self.state, self.at, self.sponge.domain());
        xor_byte(&mut self.state, rate - 1, 0x80);
        permute_lanes(self.isa, core::slice::from_mut(&mut self.state));
        super::squeeze(&self.state, out);
    }
}

impl Drop for Absorber {
    fn drop(&mut self) {
        crate::wipe(&mut self.state);
    }
}

/// Independent SHAKE128/SHAKE256 streams (FIPS 202 §6.2; a long message's may be SHA3's,
/// §6.1), squeezed one rate block at a time;
/// the streams asked for are permuted together, 8 (AVX-512) or 4 (AVX2) at once. A stream's
/// message is one padded block ([`XofLanes::push`]), or longer ([`XofLanes::push_long`]):
/// absorbed a block per permutation of the stream, beside the others' squeezing, and ready to
/// squeeze ([`XofLanes::ready`]) once the last block is absorbed and permuted.
///
/// States and messages hold secrets (seeds of secret vectors) and are wiped on drop.
pub struct XofLanes {
    isa: Isa,
    states: Wiped<[u64; 25]>,
    rates: Vec<usize>,
    /// Each stream's padded message blocks still to absorb: a range of `pending` (empty for
    /// [`XofLanes::push`]'s streams and once absorbed).
    rest: Vec<core::ops::Range<usize>>,
    /// Whether each stream has been permuted since its last block was absorbed.
    ready: Vec<bool>,
    pending: Wiped<u8>,
    /// [`XofLanes::squeeze_with`]'s lists (kept for their room).
    lists: [Vec<usize>; 3],
}

impl XofLanes {
    /// No streams yet, on `isa` (usually [`crate::dispatch::current`]), with room for
    /// `capacity` of them.
    pub fn new(isa: Isa, capacity: usize) -> Self {
        Self {
            isa,
            states: Wiped::with_capacity(capacity),
            rates: Vec::with_capacity(capacity),
            rest: Vec::with_capacity(capacity),
            ready: Vec::with_capacity(capacity),
            pending: Wiped::with_capacity(0),
            lists: core::array::from_fn(|_| Vec::with_capacity(capacity)),
        }
    }

    /// Adds a stream of `shake` over the concatenation of `parts`, returning its index. Its
    /// first block is ready after the next [`XofLanes::permute_all`] (or a
    /// [`XofLanes::permute`] naming it).
    ///
    /// # Panics
    /// When the message is not shorter than the rate (168 or 136 bytes) — a caller bug.
    pub fn push(&mut self, shake: Shake, parts: &[&[u8]]) -> usize {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        assert!(
            len < shake.rate,
            "XofLanes: a message of {len} bytes ≥ the rate"
        );
        // The padded block absorbed into a zero state is the block itself: written where the
        // new state lies (the message, SHAKE's domain bits 1111 with pad10*1's first bit after
        // it, the pad's last bit at the end of the rate: FIPS 202 §6.2, §5.1), with no copy
        // of the message or state to wipe.
        self.states.push([0u64; 25]);
        let state = self.states.last_mut().expect("a state was just pushed");
        let mut at = 0;
        for p in parts {
            absorb_at(state, at, p);
            at += p.len();
        }
        xor_byte(state, len, 0x1F);
        xor_byte(state, shake.rate - 1, 0x80);
        self.rates.push(shake.rate);
        self.rest.push(0..0);
        self.ready.push(false);
        self.states.len() - 1
    }

    /// Adds a stream of `sponge` (SHAKE, or SHA3 for its digest) over the concatenation of
    /// `parts`, of any length, returning its index: the message padded (FIPS 202 §5.1,
    /// pad10*1 after the function's domain bits, §6.1–6.2) to whole rate blocks, the first
    /// absorbed here and each next one after a permutation of the stream (FIPS 202 Algorithm
    /// 8, steps 5–6, spread over the permutations it shares with the other streams). Ready to
    /// squeeze after as many permutations as blocks; a SHA3 digest is the first bytes of the
    /// first block.
    pub fn push_long(&mut self, sponge: Sponge, parts: &[&[u8]]) -> usize {
        let rate = sponge.rate();
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let padded = (len / rate + 1) * rate;
        let start = self.pending.len();
        // `Wiped` wipes only its current buffer, so the buffer never grows in place (a
        // reallocation would leave an unwiped copy): a new one when it is too small (the old
        // one wiped as it is dropped).
        if self.pending.capacity() < start + padded {
            let mut buffer = Wiped::with_capacity(start + padded);
            buffer.extend_from_slice(&self.pending);
            self.pending = buffer;
        }
        for p in parts {
            self.pending.extend_from_slice(p);
        }
        self.pending.resize(start + padded, 0);
        self.pending[start + len] ^= sponge.domain();
        self.pending[start + padded - 1] ^= 0x80;
        let mut state = [0u64; 25];
        absorb(&mut state, &self.pending[start..start + rate]);
        self.states.push(state);
        self.rates.push(rate);
        self.rest.push(start + rate..start + padded);
        self.ready.push(false);
        crate::wipe(&mut state);
        self.states.len() - 1
    }

    /// How many streams one permutation call of this path's widest kernel takes: 8
    /// (AVX-512), 4 (AVX2) or 1.
    pub fn width(&self) -> usize {
        match self.isa {
            Isa::Avx512 if cfg!(target_arch = "x86_64") => 8,
            Isa::Avx2 if cfg!(target_arch = "x86_64") => 4,
            _ => 1,
        }
    }

    /// Squeezes every stream until `take(self, lane)` has returned true (the stream's consumer
    /// has all it needs) for each: `take` gets each ready stream's block once per permutation
    /// of the stream, from the first ([`XofLanes::permute_all`], here). Each round permutes
    /// the streams that need another block, together — but while a stream still absorbs a
    /// long message ([`XofLanes::push_long`]), only as many others beside it as fill the lanes
    /// of its kernel calls ([`XofLanes::width`]), those waiting longest first: its blocks set
    /// the number of rounds anyway, and the others spread over them instead of leaving it to
    /// run alone. And when the streams number one more than a multiple of the width, the last
    /// (if its message is one block) waits for the second round, where the calls usually have
    /// room for it (ML-KEM-512 encapsulation: 4 + 5 streams, then 4 + 2), rather than ride the
    /// first as a ninth state beside 8 (on AVX-512 the fused kernel, which measured dearer than
    /// waiting) or run alone on AVX2.
    pub fn squeeze_with(&mut self, mut take: impl FnMut(&Self, usize) -> bool) {
        let width = self.width();
        let [mut fresh, mut waiting, mut batch] = core::mem::take(&mut self.lists);
        let n = self.states.len();
        let mut held =
            (n > width && n % width == 1 && self.rest[n - 1].is_empty()).then_some(n - 1);
        fresh.clear();
        fresh.extend(0..n - usize::from(held.is_some()));
        waiting.clear();
        // The first round: every stream but a held one, permuted where they lie.
        self.permute(&fresh);
        loop {
            batch.clear();
            for &l in &fresh {
                if !self.ready[l] {
                    batch.push(l);
                } else if !take(self, l) {
                    waiting.push(l);
                }
            }
            if batch.is_empty() && waiting.is_empty() && held.is_none() {
                break;
            }
            let others = if batch.is_empty() {
                waiting.len()
            } else {
                (batch.len().div_ceil(width) * width - batch.len()).min(waiting.len())
            };
            batch.extend(waiting.drain(..others));
            batch.extend(held.take());
            // In order: a run of consecutive streams is permuted where it is.
            batch.sort_unstable();
            self.permute(&batch);
            core::mem::swap(&mut fresh, &mut batch);
        }
        self.lists = [fresh, waiting, batch];
    }

    /// Whether stream `lane`'s current block can be read: its whole message absorbed and
    /// permuted.
    ///
    /// # Panics
    /// When `lane` is out of range (a caller bug).
    pub fn ready(&self, lane: usize) -> bool {
        self.ready[lane]
    }

    /// After stream `lane` was permuted: absorbs its next message block, if any.
    fn permuted(&mut self, lane: usize) {
        let rest = &mut self.rest[lane];
        if rest.start >= rest.end {
            self.ready[lane] = true;
            return;
        }
        let rate = self.rates[lane];
        absorb(
            &mut self.states[lane],
            &self.pending[rest.start..rest.start + rate],
        );
        rest.start += rate;
    }

    /// Removes every stream (their states wiped), keeping the room: for a caller that squeezes
    /// new streams each round of a loop.
    pub fn clear(&mut self) {
        crate::wipe(&mut self.states);
        self.states.clear();
        self.rates.clear();
        self.rest.clear();
        self.ready.clear();
        crate::wipe(&mut self.pending);
        self.pending.clear();
    }

    /// The number of streams.
    pub fn len(&self) -> usize {
        self.states.len()
    }

    /// Whether there is no stream.
    pub fn is_empty(&self) -> bool {
        self.states.is_empty()
    }

    /// Permutes every stream: each one's next block is ready, or for a stream still absorbing
    /// a long message its next block absorbed ([`XofLanes::ready`]).
    pub fn permute_all(&mut self) {
        permute_lanes(self.isa, &mut self.states);
        for l in 0..self.states.len() {
            self.permuted(l);
        }
    }

    /// Permutes the streams `lanes` (indices, each at most once) together.
    ///
    /// # Panics
    /// When an index is out of range (a caller bug).
    pub fn permute(&mut self, lanes: &[usize]) {
        // Streams first … first + n − 1, in order (the usual case: every stream still needs
        // bytes, or all but some at the start): permuted where they are, without the copies.
        if let Some(&first) = lanes.first()
            && lanes.iter().enumerate().all(|(i, &l)| l == first + i)
            && first + lanes.len() <= self.states.len()
        {
            permute_lanes(self.isa, &mut self.states[first..first + lanes.len()]);
        } else if lanes.windows(2).all(|w| w[0] < w[1]) {
            permute_picked(self.isa, &mut self.states, lanes);
        } else {
            let mut sorted = lanes.to_vec();
            sorted.sort_unstable();
            permute_picked(self.isa, &mut self.states, &sorted);
        }
        for &l in lanes {
            self.permuted(l);
        }
    }

    /// Writes stream `lane`'s current block (its first `out.len()` bytes, at most the rate)
    /// into `out` (FIPS 202 §3.1.2: lanes little-endian).
    ///
    /// # Panics
    /// When `out` is longer than the rate, `lane` out of range or not [ready](Self::ready)
    /// (caller bugs).
    pub fn block(&self, lane: usize, out: &mut [u8]) {
        assert!(
            out.len() <= self.rates[lane],
            "XofLanes: more than one rate"
        );
        assert!(
            self.ready[lane],
            "XofLanes: a stream read before it is ready"
        );
        super::squeeze(&self.states[lane], out);
    }

    /// Stream `lane`'s current block as the state's first rate / 8 words (21 for SHAKE128, 17
    /// for SHAKE256): byte i of the block is byte i mod 8, little-endian, of word ⌊i / 8⌋
    /// (FIPS 202 §3.1.2's state-to-string order). For a consumer that reads the block in wide
    /// loads: a copy written a word at a time and read back 32 or 64 bytes at once stalls
    /// store forwarding.
    ///
    /// # Panics
    /// When `lane` is out of range or not [ready](Self::ready) (caller bugs).
    pub fn block_words(&self, lane: usize) -> &[u64] {
        assert!(
            self.ready[lane],
            "XofLanes: a stream read before it is ready"
        );
        &self.states[lane][..self.rates[lane] / 8]
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::oracle;
    use super::*;

    /// Every sponge, every length 0..400 split in three, against the sha3 crate.
    #[test]
    fn sponge_matches_sha3() {
        use sha3::Digest;
        let msg: Vec<u8> = (0..400u32).map(|i| (i * 7 + 3).to_le_bytes()[0]).collect();
        for len in 0..400 {
            let m = &msg[..len];
            let (a, rest) = m.split_at(len / 3);
            let (b, c) = rest.split_at(rest.len() / 2);
            let parts = [a, b, c];
            let mut out = [0u8; 168];
            Sponge::Sha3_256.hash(&parts, &mut out[..32]);
            assert_eq!(out[..32], sha3::Sha3_256::digest(m)[..], "SHA3-256 {len}");
            Sponge::Sha3_512.hash(&parts, &mut out[..64]);
            assert_eq!(out[..64], sha3::Sha3_512::digest(m)[..], "SHA3-512 {len}");
            for (sponge, shake) in [
                (Sponge::Shake128, Shake::SHAKE128),
                (Sponge::Shake256, Shake::SHAKE256),
            ] {
                sponge.hash(&parts, &mut out[..shake.rate]);
                assert_eq!(
                    out[..shake.rate],
                    oracle(shake, m, shake.rate)[..],
                    "{sponge:?} {len}"
                );
            }
        }
    }

    /// Every path, SHAKE128 and SHAKE256 together, against the sha3 crate, with a partial
    /// permutation between full ones.
    #[test]
    fn streams_match_sha3() {
        for isa in Isa::supported() {
            let msgs: Vec<Vec<u8>> = (0..13u8)
                .map(|i| {
                    (0..(i as usize * 11) % 135)
                        .map(|j| j.to_le_bytes()[0] ^ i)
                        .collect()
                })
                .collect();
            let mut x = XofLanes::new(isa, 13);
            for (i, m) in msgs.iter().enumerate() {
                let shake = if i % 3 == 0 {
                    Shake::SHAKE256
                } else {
                    Shake::SHAKE128
                };
                let (a, b) = m.split_at(m.len() / 2);
                assert_eq!(x.push(shake, &[a, b]), i);
            }
            let mut got: Vec<Vec<u8>> = vec![Vec::new(); 13];
            let read = |x: &XofLanes, got: &mut Vec<Vec<u8>>, i: usize| {
                let mut b = vec![0u8; x.rates[i]];
                x.block(i, &mut b);
                got[i].extend_from_slice(&b);
            };
            x.permute_all();
            (0..13).for_each(|i| read(&x, &mut got, i));
            // Scattered streams (gathered and scattered back), a run in the middle and every
            // stream (permuted where they are).
            let odd: Vec<usize> = (0..13).filter(|i| i % 2 == 1).collect();
            let run: Vec<usize> = (3..9).collect();
            let all: Vec<usize> = (0..13).collect();
            for lanes in [&odd, &run, &all, &odd, &run] {
                x.permute(lanes);
                lanes.iter().for_each(|&i| read(&x, &mut got, i));
            }
            for (i, m) in msgs.iter().enumerate() {
                let shake = if i % 3 == 0 {
                    Shake::SHAKE256
                } else {
                    Shake::SHAKE128
                };
                let want = oracle(shake, m, got[i].len());
                assert_eq!(got[i], want, "{isa} stream {i}");
            }
        }
    }

    /// Long messages (`push_long`: 0 to 3 rates and around each rate boundary) beside
    /// one-block streams, on every path, against the sha3 crate: each stream is read from
    /// the first round it is ready, and not before; streams pushed after a `clear` start
    /// afresh.
    #[test]
    fn long_streams_match_sha3() {
        for isa in Isa::supported() {
            for round in 0..2 {
                let mut x = XofLanes::new(isa, 8);
                if round == 1 {
                    x.push_long(Sponge::Shake256, &[&[1u8; 500]]);
                    x.permute_all();
                    x.clear();
                }
                let mut cases: Vec<(Shake, Vec<u8>, bool)> = Vec::new();
                for (i, len) in [
                    0usize, 135, 136, 137, 167, 168, 169, 271, 272, 300, 409, 520,
                ]
                .into_iter()
                .enumerate()
                {
                    let shake = if i % 2 == 0 {
                        Shake::SHAKE256
                    } else {
                        Shake::SHAKE128
                    };
                    let m: Vec<u8> = (0..len).map(|j| (j * 7 + i).to_le_bytes()[0]).collect();
                    cases.push((shake, m, true));
                    cases.push((shake, vec![i.to_le_bytes()[0]; i], false));
                }
                for (shake, m, long) in &cases {
                    let (a, b) = m.split_at(m.len() / 3);
                    if *long {
                        let sponge = if shake.rate == 168 {
                            Sponge::Shake128
                        } else {
                            Sponge::Shake256
                        };
                        x.push_long(sponge, &[a, b]);
                    } else {
                        x.push(*shake, &[a, b]);
                    }
                }
                let mut got: Vec<Vec<u8>> = vec![Vec::new(); cases.len()];
                x.permute_all();
                for t in 0..6 {
                    for (i, g) in got.iter_mut().enumerate() {
                        // Ready after as many permutations (t + 1 so far) as padded blocks.
                        let blocks = cases[i].1.len() / cases[i].0.rate + 1;
                        assert_eq!(x.ready(i), t + 1 >= blocks, "{isa} stream {i}, round {t}");
                        if x.ready(i) {
                            let mut b = vec![0u8; x.rates[i]];
                            x.block(i, &mut b);
                            g.extend_from_slice(&b);
                        }
                    }
                    let all: Vec<usize> = (0..cases.len()).collect();
                    x.permute(&all);
                }
                for (i, (shake, m, _)) in cases.iter().enumerate() {
                    let blocks = m.len() / shake.rate + 1;
                    assert_eq!(got[i].len(), (7 - blocks) * shake.rate, "{isa} stream {i}");
                    assert_eq!(got[i], oracle(*shake, m, got[i].len()), "{isa} stream {i}");
                }
            }
            // SHA3-256 and SHA3-512 digests, squeezed with `squeeze_with` beside a SHAKE128
            // stream, against the sha3 crate.
            use sha3::Digest;
            for len in [0usize, 71, 72, 135, 136, 137, 1184, 1568] {
                let m: Vec<u8> = (0..len).map(|j| (j * 13).to_le_bytes()[0]).collect();
                let mut x = XofLanes::new(isa, 3);
                x.push(Shake::SHAKE128, &[b"beside"]);
                x.push_long(Sponge::Sha3_256, &[&m]);
                x.push_long(Sponge::Sha3_512, &[&m]);
                let (mut d256, mut d512) = ([0u8; 32], [0u8; 64]);
                let mut shake_blocks = 0;
                x.squeeze_with(|x, l| match l {
                    0 => {
                        shake_blocks += 1;
                        shake_blocks == 12
                    }
                    1 => {
                        x.block(l, &mut d256);
                        true
                    }
                    _ => {
                        x.block(l, &mut d512);
                        true
                    }
                });
                assert_eq!(shake_blocks, 12, "{isa}, {len} bytes");
                assert_eq!(
                    d256[..],
                    sha3::Sha3_256::digest(&m)[..],
                    "{isa}, {len} bytes"
                );
                assert_eq!(
                    d512[..],
                    sha3::Sha3_512::digest(&m)[..],
                    "{isa}, {len} bytes"
                );
            }
        }
    }

    /// `squeeze_with` with one stream more than a multiple of the width (the last one held for
    /// the second round), on every path, against the sha3 crate: each stream read until its
    /// consumer has its blocks — the held stream among others that need more rounds, and alone
    /// when every other needs one block.
    #[test]
    fn squeeze_with_holds_the_odd_stream() {
        for isa in Isa::supported() {
            for n in [5usize, 9, 13, 17] {
                for (others, last) in [(1usize, 1usize), (3, 1), (3, 2), (1, 3), (2, 5)] {
                    let cases: Vec<(Shake, Vec<u8>, usize)> = (0..n)
                        .map(|i| {
                            let shake = if i % 2 == 0 {
                                Shake::SHAKE256
                            } else {
                                Shake::SHAKE128
                            };
                            let need = if i + 1 == n { last } else { others };
                            (shake, vec![(i * 3 + n).to_le_bytes()[0]; i % 40], need)
                        })
                        .collect();
                    let mut x = XofLanes::new(isa, n);
                    for (shake, m, _) in &cases {
                        x.push(*shake, &[m]);
                    }
                    let mut got: Vec<Vec<u8>> = vec![Vec::new(); n];
                    x.squeeze_with(|x, l| {
                        let mut b = vec![0u8; x.rates[l]];
                        x.block(l, &mut b);
                        got[l].extend_from_slice(&b);
                        got[l].len() == cases[l].2 * x.rates[l]
                    });
                    for (i, (shake, m, need)) in cases.iter().enumerate() {
                        assert_eq!(
                            got[i],
                            oracle(*shake, m, need * shake.rate),
                            "{isa}, {n} streams, stream {i}"
                        );
                    }
                }
            }
        }
    }
}
