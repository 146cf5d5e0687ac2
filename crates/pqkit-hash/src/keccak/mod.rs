//! Keccak-f\[1600\] (FIPS 202) over many states: the lane kernels, their dispatch, and
//! [`Shake`].

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
#[cfg(test)]
mod tests;

use crate::{Chain, Layout, ManyHash, Path, count};

/// The portable permutation (the `keccak` crate): the twin the SIMD kernels are tested
/// against.
pub(crate) fn permute_portable(state: &mut [u64; 25]) {
    keccak::f1600(state);
}

/// Applies Keccak-f\[1600\] to every state, as many at a time as `path` allows.
pub(crate) fn permute_lanes(path: Path, states: &mut [[u64; 25]]) {
    crate::stats::keccak(states.len());
    lanes(path, states);
}

fn lanes(path: Path, states: &mut [[u64; 25]]) {
    match path {
        #[cfg(target_arch = "x86_64")]
        Path::Avx512 => {
            let mut states = states;
            while states.len() > 4 {
                let take = states.len().min(8);
                let (s, rest) = states.split_at_mut(take);
                in_chunk::<8>(s, avx512::permute8);
                states = rest;
            }
            lanes(Path::Avx2, states);
        }
        #[cfg(target_arch = "x86_64")]
        Path::Avx2 => {
            let mut states = states;
            while states.len() > 1 {
                let take = states.len().min(4);
                let (s, rest) = states.split_at_mut(take);
                in_chunk::<4>(s, avx2::permute4);
                states = rest;
            }
            states.iter_mut().for_each(permute_portable);
        }
        _ => states.iter_mut().for_each(permute_portable),
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

    fn fixed_chains_on(&self, path: Path, layout: &Layout, chains: &mut [Chain], messages: &[u8]) {
        if layout.msg_len < self.rate {
            self.one_block_chains(path, layout, chains, messages);
        } else {
            crate::chain::fixed_chains_general(self, path, layout, chains, messages);
        }
    }

    fn hash_many_on(
        &self,
        path: Path,
        msg_len: usize,
        msgs: &[u8],
        out_len: usize,
        out: &mut [u8],
    ) {
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
            permute_lanes(path, core::slice::from_mut(&mut state));
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
                permute_lanes(path, states);
            }
            for (s, o) in states.iter().zip(out.chunks_exact_mut(out_len)) {
                squeeze(s, o);
            }
        }
    }
}

impl Shake {
    /// One-block chains: each chain's padded message is kept as a block; each step writes j,
    /// absorbs the block into a zero state, permutes and writes the first n bytes back.
    fn one_block_chains(&self, path: Path, layout: &Layout, chains: &mut [Chain], messages: &[u8]) {
        let (msg_len, n, at) = (layout.msg_len, layout.n, layout.value_at);
        let words = msg_len.div_ceil(8);
        let mut blocks = crate::Wiped::filled(0u8, chains.len() * 8 * words);
        for ((b, m), c) in blocks
            .chunks_exact_mut(8 * words)
            .zip(messages.chunks_exact(msg_len))
            .zip(&*chains)
        {
            b[..msg_len].copy_from_slice(m);
            b[at..at + n].copy_from_slice(&c.value[..n]);
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
            permute_lanes(path, states);
            for (&i, s) in active.iter().zip(states.iter()) {
                squeeze(s, &mut blocks[i * 8 * words + at..i * 8 * words + at + n]);
                chains[i].at += 1;
            }
            active.retain(|&i| chains[i].at < chains[i].end);
        }
        for (i, c) in chains.iter_mut().enumerate() {
            c.value[..n].copy_from_slice(&blocks[i * 8 * words + at..i * 8 * words + at + n]);
        }
    }
}

/// The first `out.len()` (≤ rate) bytes of the state, little-endian lanes (FIPS 202 §3.1.2).
fn squeeze(state: &[u64; 25], out: &mut [u8]) {
    let (words, rest) = out.as_chunks_mut::<8>();
    for (w, lane) in words.iter_mut().zip(state) {
        *w = lane.to_le_bytes();
    }
    let n = rest.len();
    rest.copy_from_slice(&state[words.len()].to_le_bytes()[..n]);
}

/// XORs `block` (at most one rate) into the state from byte 0.
fn absorb(state: &mut [u64; 25], block: &[u8]) {
    let (words, rest) = block.as_chunks::<8>();
    for (s, w) in state.iter_mut().zip(words) {
        *s ^= u64::from_le_bytes(*w);
    }
    for (i, &byte) in rest.iter().enumerate() {
        xor_byte(state, 8 * words.len() + i, byte);
    }
}

fn xor_byte(state: &mut [u64; 25], at: usize, byte: u8) {
    state[at / 8] ^= u64::from(byte) << (8 * (at % 8));
}
