//! A Merkle tree's signing side, for LMS and XMSS alike: its leaves computed on every thread
//! asked for, the top of the tree kept, and the bottom subtree of the current leaf kept, so
//! that an authentication path costs, amortised, one leaf — not the 2^h leaves of a
//! recomputed tree.
//!
//! The tree of height h is cut at height k = min(h, [`SUBTREE_HEIGHT`]): every node at height
//! ≥ k is computed at key generation and kept ([`MerkleTree::top_bytes`]: (2^(h−k+1) − 1)·n
//! bytes), and the 2^(k+1) − 1 nodes of the subtree holding the current leaf are computed when
//! signing enters it (2^k leaves once every 2^k signatures). [`LmsTree`] is the LMS tree on it.

use zeroize::Zeroizing;

use crate::lms::{self, Identifier, LmsPublicKey, Node};
use crate::params::{LmsParams, OtsParams};

/// Height of the bottom subtrees, k (at most h).
pub const SUBTREE_HEIGHT: u8 = 10;

/// Leaves computed by this process so far, across every tree and thread: what a progress bar
/// for key generation reads ([`leaves_computed`]).
static LEAVES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Leaves (one-time public keys) computed by this process so far.
pub fn leaves_computed() -> u64 {
    LEAVES.load(std::sync::atomic::Ordering::Relaxed)
}

/// What a Merkle tree is made of: its leaves and how two children make a parent.
pub trait TreeHasher: Sync {
    /// Tree height h.
    fn height(&self) -> u8;
    /// Node length, in bytes.
    fn node_len(&self) -> usize;
    /// Leaf `index` (a one-time key's compressed public key).
    fn leaf(&self, index: u32) -> Node;
    /// The node at `height` (≥ 1) and position `index` in its level, from its children.
    fn parent(&self, height: u8, index: u32, left: &Node, right: &Node) -> Node;
}

/// Leaves `first .. first + count` on `threads` threads.
fn leaves<H: TreeHasher>(hasher: &H, first: u32, count: usize, threads: usize) -> Vec<Node> {
    let mut out = vec![[0u8; 32]; count];
    let per = count.div_ceil(threads.max(1)).max(1);
    std::thread::scope(|s| {
        for (c, chunk) in out.chunks_mut(per).enumerate() {
            s.spawn(move || {
                for (j, node) in chunk.iter_mut().enumerate() {
                    // count ≤ 2^25: the offset fits in u32.
                    let q = first + u32::try_from(c * per + j).unwrap_or(u32::MAX);
                    *node = hasher.leaf(q);
                    LEAVES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            });
        }
    });
    out
}

/// The levels above `level0` (whose first node is at height `height`, position `first`) up
/// to a single node: level t holds the nodes at height `height + t`.
fn build_levels<H: TreeHasher>(
    hasher: &H,
    level0: Vec<Node>,
    height: u8,
    first: u32,
) -> Vec<Vec<Node>> {
    let mut levels = vec![level0];
    let (mut height, mut first) = (height, first);
    while levels.last().is_some_and(|l| l.len() > 1) {
        let below = levels.last().map(Vec::as_slice).unwrap_or_default();
        height += 1;
        first /= 2;
        let up: Vec<Node> = below
            .chunks_exact(2)
            .enumerate()
            .map(|(j, pair)| {
                let index = first + u32::try_from(j).unwrap_or(u32::MAX);
                hasher.parent(height, index, &pair[0], &pair[1])
            })
            .collect();
        levels.push(up);
    }
    levels
}

/// A Merkle tree kept as its top levels and the subtree in use.
pub struct MerkleTree<H: TreeHasher> {
    /// The leaves and node function.
    pub hasher: H,
    k: u8,
    /// Levels k..=h of the whole tree.
    top: Vec<Vec<Node>>,
    /// The subtree in use: its number and levels 0..=k.
    current: Option<(u32, Vec<Vec<Node>>)>,
    threads: usize,
}

impl<H: TreeHasher> MerkleTree<H> {
    /// Computes the tree (2^h leaves) on `threads` threads, cut at height `k`.
    pub fn generate(hasher: H, threads: usize, k: u8) -> Self {
        let h = hasher.height();
        let k = h.min(k);
        let mut roots = Vec::with_capacity(1 << (h - k));
        let mut first = None;
        for s in 0..1u32 << (h - k) {
            let levels = Self::subtree(&hasher, k, s, threads);
            roots.push(levels[usize::from(k)][0]);
            if s == 0 {
                first = Some(levels);
            }
        }
        let top = build_levels(&hasher, roots, k, 0);
        Self {
            hasher,
            k,
            top,
            current: first.map(|l| (0, l)),
            threads,
        }
    }

    fn subtree(hasher: &H, k: u8, s: u32, threads: usize) -> Vec<Vec<Node>> {
        let first = s << k;
        build_levels(hasher, leaves(hasher, first, 1 << k, threads), 0, first)
    }

    /// The root.
    pub fn root(&self) -> Node {
        self.top
            .last()
            .and_then(|l| l.first())
            .copied()
            .unwrap_or_default()
    }

    /// The authentication path of leaf `q`: its sibling at each height 0..h, bottom first.
    /// Computes the subtree holding `q` when it is not the one kept.
    pub fn auth_path(&mut self, q: u32) -> Vec<Node> {
        let s = q >> self.k;
        if self.current.as_ref().is_none_or(|(cur, _)| *cur != s) {
            self.current = Some((s, Self::subtree(&self.hasher, self.k, s, self.threads)));
        }
        let empty = Vec::new();
        let subtree = self.current.as_ref().map_or(&empty, |(_, l)| l);
        (0..self.hasher.height())
            .map(|t| {
                let sibling = ((q >> t) ^ 1) as usize;
                if t < self.k {
                    subtree[usize::from(t)][sibling - ((s as usize) << (self.k - t))]
                } else {
                    self.top[usize::from(t - self.k)][sibling]
                }
            })
            .collect()
    }

    /// Bytes of nodes kept: the top levels and one subtree.
    pub fn cache_bytes(&self) -> usize {
        let top: usize = self.top.iter().map(Vec::len).sum();
        let sub: usize = self
            .current
            .as_ref()
            .map_or(0, |(_, l)| l.iter().map(Vec::len).sum());
        (top + sub) * self.hasher.node_len()
    }

    /// Bytes of the kept top levels (heights k..=h).
    pub fn top_bytes(&self) -> usize {
        self.top.iter().map(Vec::len).sum::<usize>() * self.hasher.node_len()
    }
}

/// An LMS key's leaves (RFC 8554 §5.3): leaf q = H(I ‖ u32str(2^h + q) ‖ D_LEAF ‖ K_q).
pub struct LmsLeaves {
    lms: &'static LmsParams,
    ots: &'static OtsParams,
    id: Identifier,
    seed: Zeroizing<Vec<u8>>,
}

impl TreeHasher for LmsLeaves {
    fn height(&self) -> u8 {
        self.lms.h
    }

    fn node_len(&self) -> usize {
        self.lms.m
    }

    fn leaf(&self, q: u32) -> Node {
        let k = lms::ots_public_key(self.ots, &self.id, &self.seed, q);
        lms::leaf(self.lms, &self.id, q, &k)
    }

    fn parent(&self, height: u8, index: u32, left: &Node, right: &Node) -> Node {
        // Node number r = 2^(h − height) + index (RFC 8554 §5.3).
        let r = (1u32 << (self.lms.h - height)) + index;
        lms::interior(self.lms, &self.id, r, left, right)
    }
}

/// The signing side of one LMS key pair.
pub struct LmsTree(MerkleTree<LmsLeaves>);

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
        let leaves = LmsLeaves {
            lms,
            ots,
            id,
            seed: Zeroizing::new(seed.to_vec()),
        };
        Self(MerkleTree::generate(leaves, threads, k))
    }

    /// The public key.
    pub fn public_key(&self) -> LmsPublicKey {
        let l = &self.0.hasher;
        LmsPublicKey {
            lms: l.lms,
            ots: l.ots,
            id: l.id,
            root: self.0.root(),
        }
    }

    /// I and SEED (secret).
    pub(crate) fn identity(&self) -> (Identifier, &[u8]) {
        (self.0.hasher.id, &self.0.hasher.seed)
    }

    /// Bytes of tree nodes this key keeps.
    pub fn cache_bytes(&self) -> usize {
        self.0.cache_bytes()
    }

    /// Bytes of the kept top levels.
    pub fn top_bytes(&self) -> usize {
        self.0.top_bytes()
    }

    /// Signs `message` with one-time key `q` (RFC 8554 Algorithm 3 + §5.4): u32str(q) ‖ LM-OTS
    /// signature ‖ u32str(LMS type) ‖ path. The caller guarantees `q` is used once.
    pub fn sign(&mut self, q: u32, message: &[u8]) -> Vec<u8> {
        let path = self.0.auth_path(q);
        let l = &self.0.hasher;
        let mut out = Vec::with_capacity(l.lms.signature_len(l.ots));
        out.extend_from_slice(&q.to_be_bytes());
        out.extend_from_slice(&lms::ots_sign(l.ots, &l.id, &l.seed, q, message));
        out.extend_from_slice(&l.lms.code.to_be_bytes());
        for node in path {
            out.extend_from_slice(&node[..l.lms.m]);
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
