//! SHA-512 (FIPS 180-4) of many messages after a shared prefix: SLH-DSA-SHA2 categories 3
//! and 5 use it for H and T_l (FIPS 205 §11.2.2). One message at a time through the `sha2`
//! crate's compression (no lanes of pqkit's own yet).

use crate::{Isa, ManyHash, count};

/// SHA-512 initial hash value (FIPS 180-4 §5.3.5).
const IV: [u64; 8] = [
    0x6a09_e667_f3bc_c908,
    0xbb67_ae85_84ca_a73b,
    0x3c6e_f372_fe94_f82b,
    0xa54f_f53a_5f1d_36f1,
    0x510e_527f_ade6_82d1,
    0x9b05_688c_2b3e_6c1f,
    0x1f83_d9ab_fb41_bd6b,
    0x5be0_cd19_137e_2179,
];

/// SHA-512 of messages that share a prefix of whole 128-byte blocks
/// (SLH-DSA: PK.seed ‖ toByte(0, 128 − n)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sha512Prefix {
    state: [u64; 8],
    /// Bytes absorbed: a multiple of 128.
    len: u128,
}

impl Sha512Prefix {
    /// No prefix: plain SHA-512.
    pub const NONE: Self = Self { state: IV, len: 0 };

    /// The midstate after `prefix`, whose length must be a multiple of 128 bytes.
    ///
    /// # Panics
    /// When `prefix.len()` is not a multiple of 128 (a caller bug).
    pub fn new(prefix: &[u8]) -> Self {
        let (blocks, rest) = prefix.as_chunks::<128>();
        assert!(rest.is_empty(), "a SHA-512 prefix is whole 128-byte blocks");
        let mut state = IV;
        compress(&mut state, blocks);
        Self {
            state,
            len: prefix.len() as u128,
        }
    }
}

fn compress(state: &mut [u64; 8], blocks: &[[u8; 128]]) {
    crate::stats::sha512(blocks.len());
    let blocks: Vec<_> = blocks
        .iter()
        .map(|b| sha2::digest::generic_array::GenericArray::clone_from_slice(b))
        .collect();
    sha2::compress512(state, &blocks);
}

impl ManyHash for Sha512Prefix {
    fn max_output(&self) -> usize {
        64
    }

    fn hash_many_on(&self, _isa: Isa, msg_len: usize, msgs: &[u8], out_len: usize, out: &mut [u8]) {
        count(msg_len, msgs, out_len, out, 64);
        let full = msg_len / 128;
        let rest = msg_len % 128;
        let tail_blocks = if rest < 112 { 1 } else { 2 };
        let bits = (self.len + msg_len as u128) * 8;
        for (m, o) in msgs
            .chunks_exact(msg_len)
            .zip(out.chunks_exact_mut(out_len))
        {
            let mut state = self.state;
            let (blocks, _) = m[..128 * full].as_chunks::<128>();
            compress(&mut state, blocks);
            let mut tail = [[0u8; 128]; 2];
            tail[0][..rest].copy_from_slice(&m[128 * full..]);
            tail[0][rest] = 0x80;
            tail[tail_blocks - 1][112..].copy_from_slice(&bits.to_be_bytes());
            compress(&mut state, &tail[..tail_blocks]);
            let mut digest = [0u8; 64];
            for (d, w) in digest.chunks_exact_mut(8).zip(state) {
                d.copy_from_slice(&w.to_be_bytes());
            }
            o.copy_from_slice(&digest[..out_len]);
            crate::wipe(&mut tail);
        }
    }
}
