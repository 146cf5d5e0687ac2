//! SHA-256 (FIPS 180-4) over many messages: the lane kernels, their dispatch, and
//! [`Sha256Prefix`].

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
mod portable;
#[cfg(target_arch = "x86_64")]
mod shani;
#[cfg(test)]
mod tests;

use crate::{Chain, Layout, ManyHash, Path, count};

/// The initial hash value H(0) (FIPS 180-4 §5.3.3).
pub(crate) const IV: [u32; 8] = [
    0x6a09_e667,
    0xbb67_ae85,
    0x3c6e_f372,
    0xa54f_f53a,
    0x510e_527f,
    0x9b05_688c,
    0x1f83_d9ab,
    0x5be0_cd19,
];

/// The round constants K (FIPS 180-4 §4.2.2).
pub(crate) const K: [u32; 64] = [
    0x428a_2f98,
    0x7137_4491,
    0xb5c0_fbcf,
    0xe9b5_dba5,
    0x3956_c25b,
    0x59f1_11f1,
    0x923f_82a4,
    0xab1c_5ed5,
    0xd807_aa98,
    0x1283_5b01,
    0x2431_85be,
    0x550c_7dc3,
    0x72be_5d74,
    0x80de_b1fe,
    0x9bdc_06a7,
    0xc19b_f174,
    0xe49b_69c1,
    0xefbe_4786,
    0x0fc1_9dc6,
    0x240c_a1cc,
    0x2de9_2c6f,
    0x4a74_84aa,
    0x5cb0_a9dc,
    0x76f9_88da,
    0x983e_5152,
    0xa831_c66d,
    0xb003_27c8,
    0xbf59_7fc7,
    0xc6e0_0bf3,
    0xd5a7_9147,
    0x06ca_6351,
    0x1429_2967,
    0x27b7_0a85,
    0x2e1b_2138,
    0x4d2c_6dfc,
    0x5338_0d13,
    0x650a_7354,
    0x766a_0abb,
    0x81c2_c92e,
    0x9272_2c85,
    0xa2bf_e8a1,
    0xa81a_664b,
    0xc24b_8b70,
    0xc76c_51a3,
    0xd192_e819,
    0xd699_0624,
    0xf40e_3585,
    0x106a_a070,
    0x19a4_c116,
    0x1e37_6c08,
    0x2748_774c,
    0x34b0_bcb5,
    0x391c_0cb3,
    0x4ed8_aa4a,
    0x5b9c_ca4f,
    0x682e_6ff3,
    0x748f_82ee,
    0x78a5_636f,
    0x84c8_7814,
    0x8cc7_0208,
    0x90be_fffa,
    0xa450_6ceb,
    0xbef9_a3f7,
    0xc671_78f2,
];

/// Compresses each block into its state: `states[i] = compress(states[i], blocks[i])`, as many
/// at a time as `path` allows.
///
/// # Panics
/// When the slices differ in length (a caller bug).
pub(crate) fn compress_lanes(path: Path, states: &mut [[u32; 8]], blocks: &[&[u8; 64]]) {
    assert_eq!(states.len(), blocks.len(), "one block per state");
    crate::stats::sha256(states.len());
    lanes(path, states, blocks);
}

fn lanes(path: Path, states: &mut [[u32; 8]], blocks: &[&[u8; 64]]) {
    match path {
        #[cfg(target_arch = "x86_64")]
        Path::Avx512 => {
            let (mut states, mut blocks) = (states, blocks);
            // A padded 16-lane call costs about as much as four single SHA-NI compressions.
            while states.len() > 4 {
                let take = states.len().min(16);
                let (s, rest) = states.split_at_mut(take);
                in_chunk::<16>(s, &blocks[..take], avx512::compress16);
                (states, blocks) = (rest, &blocks[take..]);
            }
            for (s, b) in states.iter_mut().zip(blocks) {
                sequential(path, s, core::slice::from_ref(*b));
            }
        }
        #[cfg(target_arch = "x86_64")]
        Path::Avx2 => {
            let (mut states, mut blocks) = (states, blocks);
            // Below 5 lanes, one compression at a time is cheaper than a padded 8-lane call.
            while states.len() > 4 {
                let take = states.len().min(8);
                let (s, rest) = states.split_at_mut(take);
                in_chunk::<8>(s, &blocks[..take], avx2::compress8);
                (states, blocks) = (rest, &blocks[take..]);
            }
            for (s, b) in states.iter_mut().zip(blocks) {
                sequential(path, s, core::slice::from_ref(*b));
            }
        }
        _ => {
            for (s, b) in states.iter_mut().zip(blocks) {
                sequential(path, s, core::slice::from_ref(*b));
            }
        }
    }
}

/// Runs a W-lane kernel on up to W lanes, padding the rest with copies of the first.
#[cfg(target_arch = "x86_64")]
fn in_chunk<const W: usize>(
    states: &mut [[u32; 8]],
    blocks: &[&[u8; 64]],
    kernel: impl FnOnce(&mut [[u32; 8]; W], &[&[u8; 64]; W]),
) {
    if let (Ok(s), Ok(b)) = (
        <&mut [[u32; 8]; W]>::try_from(&mut *states),
        <&[&[u8; 64]; W]>::try_from(blocks),
    ) {
        kernel(s, b);
        return;
    }
    let mut s = [states[0]; W];
    let mut b = [blocks[0]; W];
    s[..states.len()].copy_from_slice(states);
    b[..blocks.len()].copy_from_slice(blocks);
    kernel(&mut s, &b);
    states.copy_from_slice(&s[..states.len()]);
}

/// Compresses the blocks of one message in order into `state` (SHA-NI where `path` allows).
pub(crate) fn compress_sequential(path: Path, state: &mut [u32; 8], blocks: &[[u8; 64]]) {
    crate::stats::sha256(blocks.len());
    sequential(path, state, blocks);
}

fn sequential(path: Path, state: &mut [u32; 8], blocks: &[[u8; 64]]) {
    #[cfg(target_arch = "x86_64")]
    if path.sequential_shani() {
        shani::compress(state, blocks);
        return;
    }
    let _ = path;
    for b in blocks {
        portable::compress(state, b);
    }
}

/// SHA-256 of messages that share a prefix of whole 64-byte blocks, kept as its midstate
/// (SLH-DSA-SHA2: PK.seed ‖ toByte(0, 64 − n), FIPS 205 §11.2; XMSS PRF: toByte(3, 32) ‖ SEED,
/// RFC 8391 §5.1), or no prefix at all ([`Sha256Prefix::NONE`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sha256Prefix {
    state: [u32; 8],
    /// Bytes absorbed: a multiple of 64.
    len: u64,
}

impl Sha256Prefix {
    /// No prefix: plain SHA-256.
    pub const NONE: Self = Self { state: IV, len: 0 };

    /// The midstate after `prefix`, whose length must be a multiple of 64 bytes.
    ///
    /// # Panics
    /// When `prefix.len()` is not a multiple of 64 (a caller bug).
    pub fn new(prefix: &[u8]) -> Self {
        let (blocks, rest) = prefix.as_chunks::<64>();
        assert!(rest.is_empty(), "a SHA-256 prefix is whole 64-byte blocks");
        let mut state = IV;
        compress_sequential(crate::dispatch::current(), &mut state, blocks);
        Self {
            state,
            len: prefix.len() as u64,
        }
    }

    /// SHA-256(prefix ‖ msg), 32 bytes.
    pub fn hash(&self, msg: &[u8]) -> [u8; 32] {
        let mut out = [0u8; 32];
        self.hash_many(msg.len(), msg, 32, &mut out);
        out
    }
}

/// Lanes hashed together in one pass over the blocks (a multiple of every kernel width).
const BATCH: usize = 64;

impl ManyHash for Sha256Prefix {
    fn max_output(&self) -> usize {
        32
    }

    fn fixed_chains_on(&self, path: Path, layout: &Layout, chains: &mut [Chain], messages: &[u8]) {
        if layout.msg_len < 56 && layout.n.is_multiple_of(4) {
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
        let count = count(msg_len, msgs, out_len, out, 32);
        if count == 0 {
            return;
        }
        // The padded tail (FIPS 180-4 §5.1.1): the last partial block, 0x80, zeros, and the
        // length in bits; one or two blocks.
        let full = msg_len / 64;
        let rest = msg_len % 64;
        let tail_blocks = if rest < 56 { 1 } else { 2 };
        let bits = (self.len + msg_len as u64) * 8;
        let mut tail = [0u8; 128];
        tail[rest] = 0x80;
        tail[64 * tail_blocks - 8..64 * tail_blocks].copy_from_slice(&bits.to_be_bytes());
        if count == 1 || msg_len == 0 {
            for (i, o) in out.chunks_exact_mut(out_len).enumerate() {
                let m = &msgs[i * msg_len..(i + 1) * msg_len];
                let mut state = self.state;
                let (blocks, _) = m[..64 * full].as_chunks::<64>();
                compress_sequential(path, &mut state, blocks);
                tail[..rest].copy_from_slice(&m[64 * full..]);
                let (blocks, _) = tail[..64 * tail_blocks].as_chunks::<64>();
                compress_sequential(path, &mut state, blocks);
                write_digest(&state, o);
            }
            crate::wipe(&mut tail);
            return;
        }
        let mut tails = crate::Wiped::filled(tail, count.min(BATCH));
        let mut states = crate::Wiped::filled(self.state, count.min(BATCH));
        for (msgs, out) in msgs
            .chunks(BATCH * msg_len)
            .zip(out.chunks_mut(BATCH * out_len))
        {
            let lanes = msgs.len() / msg_len;
            let states = &mut states[..lanes];
            states.fill(self.state);
            for (t, m) in tails.iter_mut().zip(msgs.chunks_exact(msg_len)) {
                t[..rest].copy_from_slice(&m[64 * full..]);
            }
            let mut ptrs: Vec<&[u8; 64]> = Vec::with_capacity(lanes);
            for b in 0..full + tail_blocks {
                ptrs.clear();
                for (lane, m) in msgs.chunks_exact(msg_len).enumerate() {
                    let block = if b < full {
                        &m[64 * b..64 * b + 64]
                    } else {
                        &tails[lane][64 * (b - full)..64 * (b - full) + 64]
                    };
                    ptrs.push(block.try_into().expect("64 bytes"));
                }
                compress_lanes(path, states, &ptrs);
            }
            for (s, o) in states.iter().zip(out.chunks_exact_mut(out_len)) {
                write_digest(s, o);
            }
        }
        // The tails held the messages' last bytes (secret for PRF calls): `Wiped` clears them.
        crate::wipe(&mut tail);
    }
}

impl Sha256Prefix {
    /// One-block chains: each chain's message is padded into its own block once; each step
    /// writes j, compresses from the midstate and writes the digest's first n bytes (n a
    /// multiple of 4) back as the next value.
    fn one_block_chains(&self, path: Path, layout: &Layout, chains: &mut [Chain], messages: &[u8]) {
        let (msg_len, n, at) = (layout.msg_len, layout.n, layout.value_at);
        let mut template = [0u8; 64];
        template[msg_len] = 0x80;
        template[56..].copy_from_slice(&((self.len + msg_len as u64) * 8).to_be_bytes());
        let mut blocks = crate::Wiped::filled(template, chains.len());
        for ((b, m), c) in blocks
            .iter_mut()
            .zip(messages.chunks_exact(msg_len))
            .zip(&*chains)
        {
            b[..msg_len].copy_from_slice(m);
            b[at..at + n].copy_from_slice(&c.value[..n]);
        }
        let mut active: Vec<usize> = (0..chains.len())
            .filter(|&i| chains[i].at < chains[i].end)
            .collect();
        let mut states = crate::Wiped::filled(self.state, active.len());
        while !active.is_empty() {
            for &i in &active {
                layout.put_step(&mut blocks[i], chains[i].at);
            }
            let states = &mut states[..active.len()];
            states.fill(self.state);
            if active.len() == blocks.len() {
                // Every chain steps: the blocks are the lanes, in order.
                let ptrs: Vec<&[u8; 64]> = blocks.iter().collect();
                compress_lanes(path, states, &ptrs);
            } else {
                let ptrs: Vec<&[u8; 64]> = active.iter().map(|&i| &blocks[i]).collect();
                compress_lanes(path, states, &ptrs);
            }
            for (&i, s) in active.iter().zip(states.iter()) {
                let value = &mut blocks[i][at..at + n];
                for (bytes, w) in value.chunks_exact_mut(4).zip(s) {
                    bytes.copy_from_slice(&w.to_be_bytes());
                }
                chains[i].at += 1;
            }
            if active.iter().any(|&i| chains[i].at == chains[i].end) {
                active.retain(|&i| chains[i].at < chains[i].end);
            }
        }
        for (c, b) in chains.iter_mut().zip(blocks.iter()) {
            c.value[..n].copy_from_slice(&b[at..at + n]);
        }
    }
}

/// The first `out.len()` bytes of the big-endian digest of `state`.
fn write_digest(state: &[u32; 8], out: &mut [u8]) {
    let mut digest = [0u8; 32];
    for (d, w) in digest.chunks_exact_mut(4).zip(state) {
        d.copy_from_slice(&w.to_be_bytes());
    }
    out.copy_from_slice(&digest[..out.len()]);
}
