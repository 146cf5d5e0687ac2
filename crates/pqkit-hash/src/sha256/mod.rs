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

use crate::chain::Message;
use crate::{Chain, IdField, Isa, Layout, ManyHash, Prelude, count};

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
/// at a time as `isa` allows.
///
/// # Panics
/// When the slices differ in length (a caller bug).
pub(crate) fn compress_lanes(isa: Isa, states: &mut [[u32; 8]], blocks: &[&[u8; 64]]) {
    assert_eq!(states.len(), blocks.len(), "one block per state");
    crate::stats::sha256(states.len());
    lanes(isa, states, blocks);
}

fn lanes(isa: Isa, states: &mut [[u32; 8]], blocks: &[&[u8; 64]]) {
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => {
            let (mut states, mut blocks) = (states, blocks);
            // A padded 16-lane call costs about as much as four single SHA-NI compressions.
            while states.len() > 4 {
                let take = states.len().min(16);
                let (s, rest) = states.split_at_mut(take);
                in_chunk::<16>(s, &blocks[..take], avx512::compress16);
                (states, blocks) = (rest, &blocks[take..]);
            }
            few(isa, states, blocks);
        }
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => {
            let (mut states, mut blocks) = (states, blocks);
            // Below 5 lanes, one compression at a time is cheaper than a padded 8-lane call.
            while states.len() > 4 {
                let take = states.len().min(8);
                let (s, rest) = states.split_at_mut(take);
                in_chunk::<8>(s, &blocks[..take], avx2::compress8);
                (states, blocks) = (rest, &blocks[take..]);
            }
            few(isa, states, blocks);
        }
        _ => few(isa, states, blocks),
    }
}

/// Lanes one or a few at a time: with SHA-NI four interleaved ([`shani::compress_n`]; on CPUs
/// where `sha256rnds2`'s latency is the limit, as on the AMD EPYC measured, that is most of
/// the gain), else the portable compression.
fn few(isa: Isa, states: &mut [[u32; 8]], blocks: &[&[u8; 64]]) {
    #[cfg(target_arch = "x86_64")]
    if isa.sequential_shani() {
        fn group<const N: usize>(s: &mut [[u32; 8]], b: &[&[u8; 64]]) {
            let s: &mut [[u32; 8]; N] = s.try_into().expect("N states");
            shani::compress_n(s, b.try_into().expect("N blocks"));
        }
        for (s, b) in states.chunks_mut(4).zip(blocks.chunks(4)) {
            match s.len() {
                4 => group::<4>(s, b),
                3 => group::<3>(s, b),
                2 => group::<2>(s, b),
                _ => group::<1>(s, b),
            }
        }
        return;
    }
    for (s, b) in states.iter_mut().zip(blocks) {
        sequential(isa, s, core::slice::from_ref(*b));
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

/// Compresses the blocks of one message in order into `state` (SHA-NI where `isa` allows).
pub(crate) fn compress_sequential(isa: Isa, state: &mut [u32; 8], blocks: &[[u8; 64]]) {
    crate::stats::sha256(blocks.len());
    sequential(isa, state, blocks);
}

fn sequential(isa: Isa, state: &mut [u32; 8], blocks: &[[u8; 64]]) {
    #[cfg(target_arch = "x86_64")]
    if isa.sequential_shani() {
        shani::compress(state, blocks);
        return;
    }
    let _ = isa;
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

    /// The midstate after prefix ‖ `more`, whose length must be a multiple of 64 bytes: a
    /// long message hashed a piece at a time (LM-OTS's K over the chain ends, RFC 8554
    /// Algorithm 1) without gathering it whole.
    ///
    /// # Panics
    /// When `more.len()` is not a multiple of 64 (a caller bug).
    #[must_use]
    pub fn then(&self, more: &[u8]) -> Self {
        let (blocks, rest) = more.as_chunks::<64>();
        assert!(rest.is_empty(), "a SHA-256 prefix is whole 64-byte blocks");
        let mut state = self.state;
        compress_sequential(crate::dispatch::current(), &mut state, blocks);
        Self {
            state,
            len: self.len + more.len() as u64,
        }
    }

    /// SHA-256(prefix ‖ msg), 32 bytes. On SHA-NI a message of at most 119 bytes (one or two
    /// padded blocks: LMS nodes, Q, C) takes the short path, padded on the stack and its digest
    /// stored from registers.
    pub fn hash(&self, msg: &[u8]) -> [u8; 32] {
        #[cfg(target_arch = "x86_64")]
        if msg.len() <= shani::SHORT && crate::dispatch::current().sequential_shani() {
            let (out, blocks) = shani::hash_short(&self.state, self.len, msg);
            crate::stats::sha256(blocks);
            return out;
        }
        self.hash_parts([msg])
    }

    /// SHA-256(prefix ‖ parts\[0\] ‖ parts\[1\] ‖ …), 32 bytes, in one pass: whole blocks are
    /// compressed where they lie, and only the bytes of a block that spans parts (and the
    /// padding) are gathered, in one 64-byte buffer that is wiped after (the parts may be
    /// secret). On SHA-NI the state stays in registers from the first block to the last, one
    /// call per message: for a one-block message (an LMS leaf, the randomizer C) that measured
    /// faster than the many-message path, and no slower for a two-block one.
    pub fn hash_parts<'a>(&self, parts: impl IntoIterator<Item = &'a [u8]>) -> [u8; 32] {
        let mut state = self.state;
        let blocks = gathered(crate::dispatch::current(), &mut state, self.len, parts);
        crate::stats::sha256(blocks);
        let mut out = [0u8; 32];
        write_digest(&state, &mut out);
        // The digest may be secret (an HSS child's SEED).
        crate::wipe(&mut state);
        out
    }
}

/// Bytes of a node's head in [`sha256_path_root`]: what precedes the children in each node's
/// message (LMS's I ‖ u32str(r) ‖ u16str(D), RFC 8554 §5.3).
pub const PATH_HEAD: usize = 22;

/// Which hash of an authentication path a head is asked for in [`sha256_path_root`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathNode {
    /// The leaf: SHA-256(head ‖ value).
    Leaf,
    /// A node above it: SHA-256(head ‖ left ‖ right).
    Interior,
}

/// The root of a binary SHA-256 hash tree from one leaf and its authentication path, nodes
/// numbered in heap order (the root is 1, node r's children are 2r and 2r + 1, so the leaves
/// of a tree of height h are 2^h … 2^(h+1) − 1): the leaf `leaf` is SHA-256(head(leaf,
/// Leaf) ‖ `value`), and each node r above it SHA-256(head(r, Interior) ‖ left ‖ right), its
/// children being the node below and the next sibling of `auth` (h siblings of 32 bytes,
/// bottom up; the one below is the right child when its number is odd). 32 bytes; 2h + 1
/// compressions, in sequence. Heads are [`PATH_HEAD`] bytes and public. LMS verification is
/// such a climb (RFC 8554 Algorithm 6a, step 4, m = 32).
///
/// On SHA-NI each node's message is formed in registers from the last node's digest (no node
/// goes through memory), which measured clearly faster than hashing node by node through
/// [`Sha256Prefix::hash`] (LMS verification: `pqkit bench crypto`).
///
/// # Panics
/// When `auth` is not h × 32 bytes for an h ≤ 25 with 2^h ≤ `leaf` < 2^(h+1) (a caller bug:
/// the caller has checked the signature's length and index against its key).
pub fn sha256_path_root(
    leaf: u32,
    value: &[u8; 32],
    auth: &[u8],
    head: impl Fn(u32, PathNode) -> [u8; PATH_HEAD],
) -> [u8; 32] {
    path_root_on(crate::dispatch::current(), leaf, value, auth, head)
}

fn path_root_on(
    isa: Isa,
    leaf: u32,
    value: &[u8; 32],
    auth: &[u8],
    head: impl Fn(u32, PathNode) -> [u8; PATH_HEAD],
) -> [u8; 32] {
    let (siblings, rest) = auth.as_chunks::<32>();
    let h = siblings.len();
    assert!(
        rest.is_empty() && h <= 25 && u64::from(leaf) >> h == 1,
        "a path of h ≤ 25 nodes of 32 bytes from a leaf 2^h ≤ r < 2^(h+1)"
    );
    crate::stats::sha256(2 * h + 1);
    #[cfg(target_arch = "x86_64")]
    if isa.sequential_shani() {
        return shani::path_root(leaf, value, siblings, head);
    }
    // The portable twin: each node's message gathered and hashed on `isa`.
    let node = |r: u32, kind: PathNode, parts: [&[u8; 32]; 2]| {
        let mut msg = [0u8; PATH_HEAD + 64];
        msg[..PATH_HEAD].copy_from_slice(&head(r, kind));
        msg[PATH_HEAD..PATH_HEAD + 32].copy_from_slice(parts[0]);
        msg[PATH_HEAD + 32..].copy_from_slice(parts[1]);
        let len = match kind {
            PathNode::Leaf => PATH_HEAD + 32,
            PathNode::Interior => PATH_HEAD + 64,
        };
        let mut state = IV;
        gathered(isa, &mut state, 0, [&msg[..len]]);
        let mut out = [0u8; 32];
        write_digest(&state, &mut out);
        out
    };
    let (mut r, mut t) = (leaf, node(leaf, PathNode::Leaf, [value, value]));
    for s in siblings {
        let parts = if r & 1 == 1 { [s, &t] } else { [&t, s] };
        t = node(r / 2, PathNode::Interior, parts);
        r /= 2;
    }
    t
}

/// Compresses the padded message `parts` (after `prefix_len` bytes already in `state`) into
/// `state`, on SHA-NI where `isa` allows; returns the blocks compressed.
fn gathered<'a>(
    isa: Isa,
    state: &mut [u32; 8],
    prefix_len: u64,
    parts: impl IntoIterator<Item = &'a [u8]>,
) -> usize {
    #[cfg(target_arch = "x86_64")]
    if isa.sequential_shani() {
        return shani::hash_parts(state, prefix_len, parts);
    }
    let _ = isa;
    padded_blocks(prefix_len, parts, |b| portable::compress(state, b))
}

/// Hands the message `parts`, padded (FIPS 180-4 §5.1.1) after `prefix_len` bytes already
/// compressed, to `compress` a 64-byte block at a time: whole blocks where they lie in a part,
/// a block that spans parts (and the padding) gathered in one buffer, wiped after. Returns the
/// number of blocks.
#[inline(always)]
pub(crate) fn padded_blocks<'a>(
    prefix_len: u64,
    parts: impl IntoIterator<Item = &'a [u8]>,
    mut compress: impl FnMut(&[u8; 64]),
) -> usize {
    let mut block = [0u8; 64];
    let (mut at, mut len, mut blocks) = (0usize, 0u64, 0usize);
    for part in parts {
        let mut p = part;
        len += p.len() as u64;
        if at > 0 {
            let take = p.len().min(64 - at);
            crate::copy(&mut block[at..at + take], &p[..take]);
            (at, p) = (at + take, &p[take..]);
            if at < 64 {
                continue;
            }
            compress(&block);
            blocks += 1;
        }
        let (whole, rest) = p.as_chunks::<64>();
        whole.iter().for_each(&mut compress);
        crate::copy(&mut block[..rest.len()], rest);
        (at, blocks) = (rest.len(), blocks + whole.len());
    }
    block[at] = 0x80;
    block[at + 1..].fill(0);
    if at >= 56 {
        compress(&block);
        block.fill(0);
        blocks += 1;
    }
    block[56..].copy_from_slice(&((prefix_len + len) * 8).to_be_bytes());
    compress(&block);
    crate::wipe(&mut block);
    blocks + 1
}

/// Whether chains of `layout` run in the AVX-512 group kernels with a prelude or an id field
/// (one-block messages whose layout fits [`ChainGroup`]).
#[cfg(target_arch = "x86_64")]
fn one_call_avx512(isa: Isa, layout: &Layout) -> bool {
    isa == Isa::Avx512 && layout.msg_len < 56 && ChainGroup::<16>::fits(layout)
}

/// Of `count` chains longest first, how many run in the AVX-512 groups: all but a last group
/// of at most 4, which SHA-NI takes a compression at a time when the CPU has it (one SHA-NI
/// compression each beats a mostly empty vector).
#[cfg(target_arch = "x86_64")]
fn vector_lanes(isa: Isa, count: usize) -> usize {
    if count % 16 <= 4 && isa.sequential_shani() {
        count - count % 16
    } else {
        count
    }
}

/// Lanes hashed together in one pass over the blocks (a multiple of every kernel width).
const BATCH: usize = 64;

impl ManyHash for Sha256Prefix {
    fn max_output(&self) -> usize {
        32
    }

    fn fixed_chains_on(
        &self,
        isa: Isa,
        layout: &Layout,
        chains: &mut [Chain],
        message: Message<'_>,
    ) {
        if layout.msg_len < 56 && layout.n.is_multiple_of(4) {
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
        if one_call_avx512(isa, layout) {
            let p = Some(prelude);
            self.grouped_chains::<16>(isa, layout, chains, message, p, avx512::chains16);
            return;
        }
        crate::chain::prelude_chains_general(self, isa, layout, prelude, chains, message);
    }

    fn shared_chains_on(
        &self,
        isa: Isa,
        layout: &Layout,
        id: IdField,
        shared: &[u8],
        chains: &mut [Chain],
    ) {
        #[cfg(target_arch = "x86_64")]
        if one_call_avx512(isa, layout) {
            self.id_grouped_chains(isa, layout, id, shared, chains);
            return;
        }
        crate::chain::shared_chains_general(self, isa, layout, id, shared, chains);
    }

    fn shared_chains_to_end_on(
        &self,
        isa: Isa,
        layout: &Layout,
        id: IdField,
        shared: &[u8],
        ends: crate::ChainEnds<'_>,
        out: &mut [u8],
    ) {
        #[cfg(target_arch = "x86_64")]
        if one_call_avx512(isa, layout) {
            self.id_grouped_to_end(isa, layout, id, shared, ends, out);
            return;
        }
        crate::chain::shared_chains_to_end_general(self, isa, layout, id, shared, ends, out);
    }

    fn hash_many_on(&self, isa: Isa, msg_len: usize, msgs: &[u8], out_len: usize, out: &mut [u8]) {
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
                compress_sequential(isa, &mut state, blocks);
                crate::copy(&mut tail[..rest], &m[64 * full..]);
                let (blocks, _) = tail[..64 * tail_blocks].as_chunks::<64>();
                compress_sequential(isa, &mut state, blocks);
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
                crate::copy(&mut t[..rest], &m[64 * full..]);
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
                compress_lanes(isa, states, &ptrs);
            }
            for (s, o) in states.iter().zip(out.chunks_exact_mut(out_len)) {
                write_digest(s, o);
            }
        }
        // The tails held the messages' last bytes (secret for PRF calls): `Wiped` clears them.
        crate::wipe(&mut tail);
    }
}

/// One group of W one-block hash chains (FIPS 205 Algorithm 5's F chains, RFC 8554 Algorithm
/// 1's LM-OTS chains) for the pipelined chain kernels: lane `l` runs steps `at[l]..end[l]`;
/// step j writes j (`step_bytes` = 1 or 4 bytes, big-endian) at byte `step_at` of the padded
/// block `templates[l]` and the running value (`n` bytes) at byte `value_at`, compresses the
/// block from `midstate`, and the first n bytes of the big-endian digest become the value.
/// The template's bytes under the step counter and the value are ignored.
pub(crate) struct ChainGroup<'a, const W: usize> {
    /// The state after the shared prefix (FIPS 180-4 §6.2.2's H(i−1) of every step).
    pub(crate) midstate: [u32; 8],
    /// Each lane's padded 64-byte block (FIPS 180-4 §5.1.1), its message bytes ending by 55.
    pub(crate) templates: &'a [[u8; 64]; W],
    /// Byte offset of the step counter.
    pub(crate) step_at: usize,
    /// Bytes of the step counter: 1 (its low byte) or 4.
    pub(crate) step_bytes: usize,
    /// Byte offset of the value (any alignment).
    pub(crate) value_at: usize,
    /// Bytes of the value: a multiple of 4 from 4 to 32.
    pub(crate) n: usize,
    /// Each lane's first step.
    pub(crate) at: [u32; W],
    /// Each lane's end step (no step when `end[l] <= at[l]`).
    pub(crate) end: [u32; W],
    /// A hash every lane takes before its steps (see [`Prelude`]), as the big-endian block
    /// word it changes and the mask XORed into it.
    pub(crate) prelude: Option<(usize, u32)>,
}

/// A [`Prelude`] as the block word it changes and the mask XORed into that word.
fn prelude_word(p: Prelude) -> (usize, u32) {
    (p.at / 4, u32::from(p.xor) << (8 * (3 - p.at % 4)))
}

impl<const W: usize> ChainGroup<'_, W> {
    /// Whether a [`Layout`] fits the kernels: one block, a value of whole words, and a step
    /// counter that does not overlap the value.
    fn fits(layout: &Layout) -> bool {
        let (s, v) = (layout.step_at, layout.value_at);
        layout.n > 0
            && layout.n <= 32
            && layout.n.is_multiple_of(4)
            && (layout.step_bytes == 1 || layout.step_bytes == 4)
            && s + layout.step_bytes <= 55
            && v + layout.n <= 55
            && (s + layout.step_bytes <= v || v + layout.n <= s)
    }

    /// Asserts what the kernels rely on (see [`ChainGroup::fits`]).
    ///
    /// # Panics
    /// When the layout does not fit (a caller bug).
    pub(crate) fn check(&self) {
        assert!(
            Self::fits(&self.layout()),
            "a one-block chain layout: 4..=32-byte value and 1- or 4-byte step, disjoint, \
             within the first 55 bytes"
        );
    }

    /// Where the step counter and the value are, as a [`Layout`] of a one-block message.
    pub(crate) fn layout(&self) -> Layout {
        Layout {
            msg_len: 55,
            step_at: self.step_at,
            step_bytes: self.step_bytes,
            value_at: self.value_at,
            n: self.n,
        }
    }

    /// The steps of the longest chain of the group.
    pub(crate) fn steps(&self) -> u32 {
        longest(&self.at, &self.end)
    }

    /// The first block word that changes from step to step: the rounds before it are the same
    /// for every step of a lane.
    pub(crate) fn first_word(&self) -> usize {
        self.step_at.min(self.value_at) / 4
    }

    /// Per big-endian block word, the bits that come from the template (zero under the step
    /// counter and the value).
    pub(crate) fn template_masks(&self) -> [u32; 16] {
        let mut bytes = [0xffu8; 64];
        bytes[self.step_at..self.step_at + self.step_bytes].fill(0);
        bytes[self.value_at..self.value_at + self.n].fill(0);
        core::array::from_fn(|i| {
            u32::from_be_bytes(bytes[4 * i..4 * i + 4].try_into().expect("4 bytes"))
        })
    }
}

/// [`crate::shared_chains`]' groups for [`avx512::chains16_ids`]: the one template and where the
/// id, the step counter and the value go.
pub(crate) struct IdGroups<'a> {
    /// The state after the shared prefix.
    pub(crate) midstate: [u32; 8],
    /// The padded block, zero under the id, the step counter and the value.
    pub(crate) template: &'a [u8; 64],
    pub(crate) layout: Layout,
    pub(crate) id: IdField,
}

/// The most steps any lane takes from `at[l]` to `end[l]`.
pub(crate) fn longest(at: &[u32], end: &[u32]) -> u32 {
    at.iter()
        .zip(end)
        .map(|(a, e)| e.saturating_sub(*a))
        .max()
        .unwrap_or(0)
}

impl Sha256Prefix {
    /// A one-block message's padding after this prefix (FIPS 180-4 §5.1.1): zeros where the
    /// `msg_len` (< 56) message bytes go, 0x80, zeros, the length in bits.
    fn padded_block(&self, msg_len: usize) -> [u8; 64] {
        let mut block = [0u8; 64];
        block[msg_len] = 0x80;
        block[56..].copy_from_slice(&((self.len + msg_len as u64) * 8).to_be_bytes());
        block
    }

    /// [`crate::shared_chains`] on AVX-512: the chains longest first in groups of 16, all the
    /// groups in one call of [`avx512::chains16_ids`] that reads and writes their values in
    /// place; a last group of at most 4 chains on SHA-NI, a compression at a time.
    #[cfg(target_arch = "x86_64")]
    fn id_grouped_chains(
        &self,
        isa: Isa,
        layout: &Layout,
        id: IdField,
        shared: &[u8],
        chains: &mut [Chain],
    ) {
        let order = crate::chain::longest_first(chains);
        let vector = vector_lanes(isa, order.len());
        // The lanes' rows, ids, counters and ends, laid out once for all the groups.
        let whole = vector.next_multiple_of(16);
        let mut lanes = vec![0u32; 4 * whole];
        let (rows, rest) = lanes.split_at_mut(whole);
        let (ids, rest) = rest.split_at_mut(whole);
        let (at, end) = rest.split_at_mut(whole);
        for (k, &i) in order[..vector].iter().enumerate() {
            let c = &chains[i];
            let row = u32::try_from(i).expect("fewer than 2^32 chains");
            (rows[k], ids[k], at[k], end[k]) = (row, c.id, c.at, c.end);
        }
        let steps: u32 = order[..vector]
            .iter()
            .map(|&i| chains[i].end - chains[i].at)
            .sum();
        let lanes = avx512::IdLanes {
            rows,
            ids,
            at,
            end: avx512::Ends::Each(end),
            count: vector,
            unchanged: &[],
        };
        let mut rows = avx512::Rows::chains(chains, layout.n);
        let mut template = self.id_groups(layout, id, shared, &lanes, &mut rows, steps);
        for &i in &order[..vector] {
            chains[i].at = chains[i].end;
        }
        for &i in &order[vector..] {
            self.id_chain_shani(isa, layout, id, &template, shared, &mut chains[i]);
        }
        // The template holds the caller's message.
        crate::wipe(&mut template);
    }

    /// [`crate::shared_chains_to_end`] on AVX-512: the chains ordered longest first by
    /// [`avx512::by_start`] into index arrays on the stack (for up to 272 chains), then as
    /// [`Sha256Prefix::id_grouped_chains`], the values read from `ends.values` and written to
    /// `out` where they lie (the chains without steps copied there by the kernel too).
    #[cfg(target_arch = "x86_64")]
    fn id_grouped_to_end(
        &self,
        isa: Isa,
        layout: &Layout,
        id: IdField,
        shared: &[u8],
        ends: crate::ChainEnds<'_>,
        out: &mut [u8],
    ) {
        const STACK: usize = 288;
        let (count, n) = (ends.starts.len(), layout.n);
        let (mut ids_stack, mut at_stack) = ([0u32; STACK], [0u32; STACK]);
        let mut heap = Vec::new();
        let (ids, at) = if count + 16 <= STACK {
            (&mut ids_stack[..], &mut at_stack[..])
        } else {
            heap.resize(2 * (count + 16), 0u32);
            heap.split_at_mut(count + 16)
        };
        let stepping = avx512::by_start(ends.starts, ends.end, ids, at);
        let vector = vector_lanes(isa, stepping);
        let steps: u32 = at[..vector].iter().map(|&a| ends.end - a).sum();
        let lanes = avx512::IdLanes {
            rows: ids,
            ids,
            at,
            end: avx512::Ends::All(ends.end),
            count: vector,
            unchanged: &ids[stepping..count],
        };
        let mut rows = avx512::Rows::apart(ends.values, out, n);
        let mut template = self.id_groups(layout, id, shared, &lanes, &mut rows, steps);
        for (&i, &a) in ids[vector..stepping].iter().zip(&at[vector..stepping]) {
            let r = i as usize * n..(i as usize + 1) * n;
            let mut c = Chain::new(i, a, ends.end, &ends.values[r.clone()]);
            self.id_chain_shani(isa, layout, id, &template, shared, &mut c);
            crate::copy(&mut out[r], &c.value[..n]);
            crate::wipe(core::slice::from_mut(&mut c));
        }
        crate::wipe(&mut template);
    }

    /// Runs `lanes` ([`avx512::chains16_ids`], `steps` compressions) on the chains' one
    /// template, which it returns for the caller's SHA-NI leftovers (it holds the caller's
    /// message: wipe it).
    #[cfg(target_arch = "x86_64")]
    fn id_groups(
        &self,
        layout: &Layout,
        id: IdField,
        shared: &[u8],
        lanes: &avx512::IdLanes<'_>,
        rows: &mut avx512::Rows<'_>,
        steps: u32,
    ) -> [u8; 64] {
        crate::stats::sha256(steps as usize);
        let template = self.id_template(layout, id, shared);
        let g = IdGroups {
            midstate: self.state,
            template: &template,
            layout: *layout,
            id,
        };
        avx512::chains16_ids(&g, lanes, rows);
        template
    }

    /// The padded block of [`crate::shared_chains`]' chains with `shared` written in and the id,
    /// the step counter and the value cleared (it holds the caller's message: wipe it).
    fn id_template(&self, layout: &Layout, id: IdField, shared: &[u8]) -> [u8; 64] {
        let mut template = self.padded_block(layout.msg_len);
        template[..layout.msg_len].copy_from_slice(shared);
        for b in [
            id.at..id.at + id.bytes,
            layout.step_at..layout.step_at + layout.step_bytes,
            layout.value_at..layout.value_at + layout.n,
        ] {
            template[b].fill(0);
        }
        template
    }

    /// One chain of [`crate::shared_chains`] on SHA-NI, a compression at a time, from `template`
    /// ([`Sha256Prefix::id_template`]).
    fn id_chain_shani(
        &self,
        isa: Isa,
        layout: &Layout,
        id: IdField,
        template: &[u8; 64],
        shared: &[u8],
        c: &mut Chain,
    ) {
        let mut block = *template;
        block[..layout.msg_len].copy_from_slice(shared);
        id.put(&mut block, c.id);
        self.sequential_chain(isa, layout, &mut block, None, c);
        crate::wipe(&mut block);
    }

    /// One-block chains: each chain's message is padded into its own block once; each step
    /// writes j, compresses from the midstate and writes the digest's first n bytes (n a
    /// multiple of 4) back as the next value. On AVX-512 and AVX2, groups of 16 or 8
    /// consecutive chains run in the pipelined chain kernels (the state never leaves the
    /// vector registers between steps).
    fn one_block_chains(
        &self,
        isa: Isa,
        layout: &Layout,
        chains: &mut [Chain],
        message: Message<'_>,
    ) {
        #[cfg(target_arch = "x86_64")]
        match isa {
            Isa::Avx512 if ChainGroup::<16>::fits(layout) => {
                self.grouped_chains::<16>(isa, layout, chains, message, None, avx512::chains16);
                return;
            }
            Isa::Avx2 if ChainGroup::<8>::fits(layout) => {
                self.grouped_chains::<8>(isa, layout, chains, message, None, avx2::chains8);
                return;
            }
            _ => {}
        }
        self.one_block_chains_lanes(isa, layout, chains, message);
    }

    /// [`Sha256Prefix::one_block_chains`] in groups of `W` consecutive chains, each group one
    /// call of `kernel` (a partial last group padded with lanes that take no step); with a
    /// `prelude`, every chain takes it first (those without steps too).
    #[cfg(target_arch = "x86_64")]
    fn grouped_chains<const W: usize>(
        &self,
        isa: Isa,
        layout: &Layout,
        chains: &mut [Chain],
        message: Message<'_>,
        prelude: Option<Prelude>,
        kernel: impl Fn(&ChainGroup<'_, W>, &mut [[u8; 32]; W]),
    ) {
        let (msg_len, n) = (layout.msg_len, layout.n);
        let template = self.padded_block(msg_len);
        let mut templates = [template; W];
        let mut values = [[0u8; 32]; W];
        // Longest chains first, so the lanes of a group finish together (a group runs as many
        // steps as its longest chain).
        let mut order = crate::chain::longest_first(chains);
        if prelude.is_some() {
            // The chains without steps take the prelude too: last.
            order.extend((0..chains.len()).filter(|&i| chains[i].at >= chains[i].end));
        }
        for group in order.chunks(W) {
            // A few lanes: one SHA-NI compression each beats a mostly empty vector.
            if group.len() <= W / 4 && isa.sequential_shani() {
                for &i in group {
                    let block = &mut templates[0];
                    message(i, &chains[i], &mut block[..msg_len]);
                    self.sequential_chain(isa, layout, block, prelude, &mut chains[i]);
                }
                continue;
            }
            let group_steps = group
                .iter()
                .map(|&i| chains[i].end.saturating_sub(chains[i].at) as usize);
            let preludes = if prelude.is_some() { group.len() } else { 0 };
            crate::stats::sha256(group_steps.sum::<usize>() + preludes);
            let mut at = [0u32; W];
            let mut end = [0u32; W];
            for (l, &i) in group.iter().enumerate() {
                let c = &chains[i];
                message(i, c, &mut templates[l][..msg_len]);
                values[l] = c.value;
                at[l] = c.at;
                end[l] = c.end;
            }
            for l in group.len()..W {
                (at[l], end[l]) = (0, 0);
            }
            let g = ChainGroup {
                midstate: self.state,
                templates: &templates,
                step_at: layout.step_at,
                step_bytes: layout.step_bytes,
                value_at: layout.value_at,
                n,
                at,
                end,
                prelude: prelude.map(prelude_word),
            };
            kernel(&g, &mut values);
            for (&i, v) in group.iter().zip(&values) {
                let c = &mut chains[i];
                crate::copy(&mut c.value[..n], &v[..n]);
                c.at = c.at.max(c.end);
            }
        }
        // The values are secret; the templates held the callers' messages.
        crate::wipe(&mut values);
        crate::wipe(&mut templates);
    }

    /// One chain, a compression at a time on `isa` (SHA-NI for the few chains left over by
    /// the vector groups), its prelude first if any: `block` holds its padded message (step
    /// and value written here).
    #[cfg(target_arch = "x86_64")]
    fn sequential_chain(
        &self,
        isa: Isa,
        layout: &Layout,
        block: &mut [u8; 64],
        prelude: Option<Prelude>,
        c: &mut Chain,
    ) {
        let (at, n) = (layout.value_at, layout.n);
        crate::copy(&mut block[at..at + n], &c.value[..n]);
        crate::stats::sha256(c.end.saturating_sub(c.at) as usize + usize::from(prelude.is_some()));
        let step = |block: &mut [u8; 64], j: u32| {
            layout.put_step(block, j);
            let mut state = self.state;
            sequential(isa, &mut state, core::slice::from_ref(block));
            for (bytes, w) in block[at..at + n].chunks_exact_mut(4).zip(&state) {
                bytes.copy_from_slice(&w.to_be_bytes());
            }
        };
        if let Some(p) = prelude {
            block[p.at] ^= p.xor;
            step(block, c.at);
            block[p.at] ^= p.xor;
        }
        while c.at < c.end {
            step(block, c.at);
            c.at += 1;
        }
        crate::copy(&mut c.value[..n], &block[at..at + n]);
    }

    /// [`Sha256Prefix::one_block_chains`] with every step's blocks hashed by
    /// [`compress_lanes`].
    fn one_block_chains_lanes(
        &self,
        isa: Isa,
        layout: &Layout,
        chains: &mut [Chain],
        message: Message<'_>,
    ) {
        let (msg_len, n, at) = (layout.msg_len, layout.n, layout.value_at);
        let template = self.padded_block(msg_len);
        let mut blocks = crate::Wiped::filled(template, chains.len());
        for (k, (b, c)) in blocks.iter_mut().zip(&*chains).enumerate() {
            message(k, c, &mut b[..msg_len]);
            crate::copy(&mut b[at..at + n], &c.value[..n]);
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
                compress_lanes(isa, states, &ptrs);
            } else {
                let ptrs: Vec<&[u8; 64]> = active.iter().map(|&i| &blocks[i]).collect();
                compress_lanes(isa, states, &ptrs);
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
            crate::copy(&mut c.value[..n], &b[at..at + n]);
        }
    }
}

/// The first `out.len()` bytes of the big-endian digest of `state`.
fn write_digest(state: &[u32; 8], out: &mut [u8]) {
    let mut digest = [0u8; 32];
    for (d, w) in digest.chunks_exact_mut(4).zip(state) {
        d.copy_from_slice(&w.to_be_bytes());
    }
    crate::copy(out, &digest[..out.len()]);
}
