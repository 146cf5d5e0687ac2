//! One LMS tree's signing side: its leaves computed on every thread asked for, the top of the
//! tree kept, and the bottom subtree of the current leaf kept, so that a signature costs one
//! LM-OTS signature plus, amortised, one leaf — not the 2^h leaves of a recomputed tree.
//!
//! The tree of height h is cut at height k = min(h, [`SUBTREE_HEIGHT`]): every node at height
//! ≥ k is computed at key generation and kept ([`LmsTree::top_bytes`]: (2^(h−k+1) − 1)·m
//! bytes), and the 2^(k+1) − 1 nodes of the subtree holding the current leaf are computed when
//! signing enters it (2^k leaves once every 2^k signatures).

use zeroize::Zeroizing;

use crate::lms::{self, Identifier, LmsPublicKey, Node};
use crate::params::{LmsParams, OtsParams};

/// Height of the bottom subtrees, k (at most h).
pub const SUBTREE_HEIGHT: u8 = 10;

/// Computes leaves `first .. first + count` of the tree on `threads` threads.
fn leaves(
    lms: &LmsParams,
    ots: &OtsParams,
    id: &Identifier,
    seed: &[u8],
    first: u32,
    count: usize,
    threads: usize,
) -> Vec<Node> {
    let mut out = vec![[0u8; 32]; count];
    let per = count.div_ceil(threads.max(1)).max(1);
    std::thread::scope(|s| {
        for (c, chunk) in out.chunks_mut(per).enumerate() {
            s.spawn(move || {
                for (j, node) in chunk.iter_mut().enumerate() {
                    // count ≤ 2^25: the index fits in u32.
                    let q = first + u32::try_from(c * per + j).unwrap_or(u32::MAX);
                    let k = lms::ots_public_key(ots, id, seed, q);
                    *node = lms::leaf(lms, id, q, &k);
                }
            });
        }
    });
    out
}

/// Levels of a subtree whose leaves are `level0`: level t holds its 2^(k−t) nodes; `base_r`
/// is the global node number of its leftmost leaf's level-0 row (2^h + first leaf).
fn build_levels(
    lms: &LmsParams,
    id: &Identifier,
    level0: Vec<Node>,
    base_r: u32,
) -> Vec<Vec<Node>> {
    let mut levels = vec![level0];
    let mut r0 = base_r;
    while levels.last().is_some_and(|l| l.len() > 1) {
        let below = levels.last().map(Vec::as_slice).unwrap_or_default();
        r0 /= 2;
        let up: Vec<Node> = below
            .chunks_exact(2)
            .enumerate()
            .map(|(j, pair)| {
                let r = r0 + u32::try_from(j).unwrap_or(u32::MAX);
                lms::interior(lms, id, r, &pair[0], &pair[1])
            })
            .collect();
        levels.push(up);
    }
    levels
}

/// The signing side of one LMS key pair.
pub struct LmsTree {
    /// LMS parameters.
    pub lms: &'static LmsParams,
    /// LM-OTS parameters.
    pub ots: &'static OtsParams,
    /// I.
    pub id: Identifier,
    seed: Zeroizing<Vec<u8>>,
    k: u8,
    /// Levels k..=h of the whole tree.
    top: Vec<Vec<Node>>,
    /// The subtree in use: its number and levels 0..=k.
    current: Option<(u32, Vec<Vec<Node>>)>,
    threads: usize,
}

impl LmsTree {
    /// Generates the tree of key (I, SEED) on `threads` threads (RFC 8554 Algorithm 5 with
    /// the Appendix A derivation). Costs 2^h LM-OTS public keys.
    pub fn generate(
        lms: &'static LmsParams,
        ots: &'static OtsParams,
        id: Identifier,
        seed: &[u8],
        threads: usize,
    ) -> Self {
        Self::with_subtree_height(lms, ots, id, seed, threads, SUBTREE_HEIGHT)
    }

    /// As [`LmsTree::generate`], cutting the tree at height `k` (at most h) instead of
    /// [`SUBTREE_HEIGHT`]: a smaller k keeps fewer nodes and recomputes smaller subtrees.
    pub fn with_subtree_height(
        lms: &'static LmsParams,
        ots: &'static OtsParams,
        id: Identifier,
        seed: &[u8],
        threads: usize,
        k: u8,
    ) -> Self {
        let k = lms.h.min(k);
        let subtrees = 1u32 << (lms.h - k);
        let mut roots = Vec::with_capacity(subtrees as usize);
        let mut first_levels = None;
        for s in 0..subtrees {
            let levels = Self::subtree_levels(lms, ots, &id, seed, k, s, threads);
            roots.push(levels[usize::from(k)][0]);
            if s == 0 {
                first_levels = Some(levels);
            }
        }
        let top = build_levels(lms, &id, roots, 1u32 << (lms.h - k));
        Self {
            lms,
            ots,
            id,
            seed: Zeroizing::new(seed.to_vec()),
            k,
            top,
            current: first_levels.map(|l| (0, l)),
            threads,
        }
    }

    fn subtree_levels(
        lms: &LmsParams,
        ots: &OtsParams,
        id: &Identifier,
        seed: &[u8],
        k: u8,
        s: u32,
        threads: usize,
    ) -> Vec<Vec<Node>> {
        let first = s << k;
        let level0 = leaves(lms, ots, id, seed, first, 1 << k, threads);
        build_levels(lms, id, level0, (1u32 << lms.h) + first)
    }

    /// The public key.
    pub fn public_key(&self) -> LmsPublicKey {
        LmsPublicKey {
            lms: self.lms,
            ots: self.ots,
            id: self.id,
            root: self
                .top
                .last()
                .and_then(|l| l.first())
                .copied()
                .unwrap_or_default(),
        }
    }

    /// I and SEED (secret).
    pub(crate) fn identity(&self) -> (Identifier, &[u8]) {
        (self.id, &self.seed)
    }

    /// Bytes of tree nodes this key keeps: the top levels and one subtree.
    pub fn cache_bytes(&self) -> usize {
        let top: usize = self.top.iter().map(Vec::len).sum();
        let sub: usize = self
            .current
            .as_ref()
            .map_or(0, |(_, l)| l.iter().map(Vec::len).sum());
        (top + sub) * self.lms.m
    }

    /// Bytes of the kept top levels (heights k..=h).
    pub fn top_bytes(&self) -> usize {
        self.top.iter().map(Vec::len).sum::<usize>() * self.lms.m
    }

    /// Signs `message` with one-time key `q` (RFC 8554 Algorithm 3 + §5.4): u32str(q) ‖ LM-OTS
    /// signature ‖ u32str(LMS type) ‖ path. The caller guarantees `q` is used once.
    pub fn sign(&mut self, q: u32, message: &[u8]) -> Vec<u8> {
        let s = q >> self.k;
        if self.current.as_ref().is_none_or(|(cur, _)| *cur != s) {
            let levels = Self::subtree_levels(
                self.lms,
                self.ots,
                &self.id,
                &self.seed,
                self.k,
                s,
                self.threads,
            );
            self.current = Some((s, levels));
        }
        let mut out = Vec::with_capacity(self.lms.signature_len(self.ots));
        out.extend_from_slice(&q.to_be_bytes());
        out.extend_from_slice(&lms::ots_sign(self.ots, &self.id, &self.seed, q, message));
        out.extend_from_slice(&self.lms.code.to_be_bytes());
        let m = self.lms.m;
        let empty = Vec::new();
        let subtree = self.current.as_ref().map_or(&empty, |(_, l)| l);
        for t in 0..self.lms.h {
            let sibling = ((q >> t) ^ 1) as usize;
            let node = if t < self.k {
                subtree[usize::from(t)][sibling - ((s as usize) << (self.k - t))]
            } else {
                self.top[usize::from(t - self.k)][sibling]
            };
            out.extend_from_slice(&node[..m]);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{LMS, OTS};

    #[test]
    fn every_cut_height_signs_the_same_and_verifies() {
        // LMS_SHA256_M24_H10 / LMOTS_SHA256_N24_W8: one tree kept whole (k = 10) and cut at
        // k = 3 (128 subtrees of 8 leaves under a kept top of 7 levels).
        let (lms, ots) = (&LMS[6], &OTS[7]);
        let seed = [7u8; 24];
        let id = [9u8; 16];
        let mut whole = LmsTree::generate(lms, ots, id, &seed, 2);
        let mut cut = LmsTree::with_subtree_height(lms, ots, id, &seed, 1, 3);
        assert_eq!(whole.public_key(), cut.public_key());
        assert!(cut.cache_bytes() < whole.cache_bytes());
        let pk = whole.public_key();
        for q in [0u32, 1, 7, 8, 9, 500, 1022, 1023] {
            let msg = q.to_be_bytes();
            let a = whole.sign(q, &msg);
            assert_eq!(a, cut.sign(q, &msg), "q = {q}");
            assert_eq!(pk.verify(&msg, &a), Ok(()), "q = {q}");
            assert_eq!(a.len(), lms.signature_len(ots));
        }
    }
}
