//! HSS (RFC 8554 §6) signing over [`LmsTree`]s: L levels, each a full LMS key; the keys
//! below the top are derived from their parent's SEED and one-time key index, so a whole HSS
//! key is regenerated from the top (I, SEED) and one 64-bit counter.
//!
//! Child derivation (pqkit's choice; RFC 8554 leaves it to the implementation):
//! I' = H(I ‖ u32str(q) ‖ u16str(0xFFFE) ‖ u8str(0xff) ‖ SEED)[..16],
//! SEED' = H(I ‖ u32str(q) ‖ u16str(0xFFFF) ‖ u8str(0xff) ‖ SEED), with q the parent's leaf.
//! A child's public key is always signed with the same leaf and the deterministic randomizer,
//! so re-signing it after a restart makes the same signature: no one-time key signs two
//! different messages.

use zeroize::Zeroizing;

use crate::Error;
use crate::lms::{HssPublicKey, Identifier, hash};
use crate::params::{LmsParams, OtsParams, check_pair};
use crate::tree::{
    LmsLeaves, LmsTree, SUBTREE_HEIGHT, TreeCache, Upcoming, kept_bytes, next_start, saved,
};

/// One level's parameter pair.
pub type Level = (&'static LmsParams, &'static OtsParams);

/// An HSS signing key in memory: the trees of the current path, the signatures linking them,
/// and each lower level's next tree, built a few leaves per signature. Which counter values
/// are still unused is [`crate::state`]'s business.
pub struct HssSigner {
    levels: Vec<Level>,
    id: Identifier,
    seed: Zeroizing<Vec<u8>>,
    trees: Vec<LmsTree>,
    /// The leaf index at each level above the bottom that the trees below were derived along.
    path: Vec<u32>,
    /// links\[i\]: the level-i signature of level i+1's public key.
    links: Vec<Vec<u8>>,
    /// upcoming[i − 1]: level i's next tree.
    upcoming: Vec<Option<Upcoming<LmsLeaves>>>,
    /// Saved trees and builders not taken yet (until the first signature).
    cache: TreeCache,
    threads: usize,
}

fn derive(level: &Level, id: &Identifier, seed: &[u8], q: u32) -> (Identifier, Zeroizing<Vec<u8>>) {
    let (lms, _) = level;
    let qb = q.to_be_bytes();
    let i = hash(lms.hash, lms.m, &[id, &qb, &[0xff, 0xfe], &[0xff], seed]);
    let s = hash(lms.hash, lms.m, &[id, &qb, &[0xff, 0xff], &[0xff], seed]);
    let mut child_id = [0u8; 16];
    child_id.copy_from_slice(&i[..16]);
    (child_id, Zeroizing::new(s[..lms.m].to_vec()))
}

impl HssSigner {
    /// Bytes of each signature (RFC 8554 §6.4).
    pub fn signature_len(&self) -> usize {
        hss_signature_len(&self.levels)
    }

    /// Generates the key from the top level's I and SEED (m bytes), computing every level's
    /// first tree on `threads` threads.
    ///
    /// # Errors
    /// [`Error::Malformed`] for no or more than 8 levels or a SEED of the wrong length;
    /// [`Error::Mismatch`] for a level whose LMS and LM-OTS sets differ in hash or size.
    pub fn generate(
        levels: &[Level],
        id: Identifier,
        seed: &[u8],
        threads: usize,
    ) -> Result<Self, Error> {
        Self::open(levels, id, seed, 0, threads, TreeCache::default())
    }

    /// The key ready to sign counter value `counter`: the trees of its path taken from
    /// `cache` where it holds them and computed on `threads` threads where not.
    ///
    /// # Errors
    /// As [`HssSigner::generate`].
    pub fn open(
        levels: &[Level],
        id: Identifier,
        seed: &[u8],
        counter: u64,
        threads: usize,
        cache: TreeCache,
    ) -> Result<Self, Error> {
        if levels.is_empty() || levels.len() > 8 {
            return Err(Error::Malformed("HSS needs 1–8 levels"));
        }
        for (lms, ots) in levels {
            check_pair(lms, ots)?;
        }
        if seed.len() != levels[0].0.m {
            return Err(Error::Malformed("SEED length differs from m"));
        }
        let mut me = Self {
            levels: levels.to_vec(),
            id,
            seed: Zeroizing::new(seed.to_vec()),
            trees: Vec::new(),
            path: Vec::new(),
            links: Vec::new(),
            upcoming: (1..levels.len()).map(|_| None).collect(),
            cache,
            threads,
        };
        let qs = me.split(counter.min(me.capacity() - 1));
        let top = me.leaves_at(&qs, 0);
        me.trees
            .push(LmsTree(me.cache.take_tree(top, threads, SUBTREE_HEIGHT)));
        me.rebuild_from(1, &qs);
        Ok(me)
    }

    /// Total number of signatures: 2^(h_0 + … + h_{L−1}).
    pub fn capacity(&self) -> u64 {
        let bits: u32 = self.levels.iter().map(|(l, _)| u32::from(l.h)).sum();
        1u64.checked_shl(bits).unwrap_or(u64::MAX)
    }

    /// Height of the top tree, h_0: each of its one-time keys covers capacity / 2^h_0
    /// signatures.
    pub fn top_height(&self) -> u8 {
        self.levels[0].0.h
    }

    /// The public key.
    pub fn public_key(&self) -> HssPublicKey {
        HssPublicKey {
            levels: u32::try_from(self.levels.len()).unwrap_or(8),
            top: self.trees[0].public_key(),
        }
    }

    /// Bytes of tree nodes kept in memory across all levels, next trees included.
    pub fn cache_bytes(&self) -> usize {
        kept_bytes(self.trees.iter().map(|t| &t.0), &self.upcoming)
    }

    /// The trees and next trees, to save; with the saved entries not taken yet.
    pub fn save_cache(&self) -> TreeCache {
        saved(&self.cache, self.trees.iter().map(|t| &t.0), &self.upcoming)
    }

    /// The per-level leaf indices of counter value `counter`, top first.
    fn split(&self, counter: u64) -> Vec<u32> {
        let mut out = vec![0u32; self.levels.len()];
        let mut rest = counter;
        for (i, (lms, _)) in self.levels.iter().enumerate().rev() {
            out[i] = u32::try_from(rest & (lms.leaves() - 1)).unwrap_or(0);
            rest >>= lms.h;
        }
        out
    }

    /// The leaves of the level-`level` tree on the path of leaf indices `qs`: (I, SEED)
    /// derived down from the top.
    fn leaves_at(&self, qs: &[u32], level: usize) -> LmsLeaves {
        let (mut id, mut seed) = (self.id, self.seed.clone());
        for (l, q) in self.levels.iter().zip(qs).take(level) {
            (id, seed) = derive(l, &id, &seed, *q);
        }
        let (lms, ots) = self.levels[level];
        LmsLeaves::new(lms, ots, id, &seed)
    }

    /// Makes levels `from..` the trees of the leaf indices `qs` (the paced next trees, or
    /// saved or computed ones after a jump) and signs their links.
    fn rebuild_from(&mut self, from: usize, qs: &[u32]) {
        self.trees.truncate(from);
        self.links.truncate(from.saturating_sub(1));
        for i in from..self.levels.len() {
            let leaves = self.leaves_at(qs, i);
            let child = LmsTree(self.cache.next_tree(
                &mut self.upcoming[i - 1],
                leaves,
                self.threads,
            ));
            let link = self.trees[i - 1].sign_index(qs[i - 1], &child.public_key().to_bytes());
            self.trees.push(child);
            self.links.push(link);
        }
        self.path = qs[..self.levels.len() - 1].to_vec();
    }

    /// Advances every lower level's next tree at counter value `counter`.
    fn pace(&mut self, counter: u64) {
        let capacity = self.capacity();
        // Saved builders are taken here at the first signature; the rest is stale.
        let mut cache = std::mem::take(&mut self.cache);
        for i in 1..self.levels.len() {
            let bits: u32 = self.levels[i..].iter().map(|(l, _)| u32::from(l.h)).sum();
            let mut slot = self.upcoming[i - 1].take();
            Upcoming::keep(
                &mut slot,
                next_start(counter, bits, capacity),
                counter,
                |start| {
                    let leaves = self.leaves_at(&self.split(start), i);
                    cache.take_builder(leaves, SUBTREE_HEIGHT)
                },
            );
            self.upcoming[i - 1] = slot;
        }
    }

    /// Signs `message` with counter value `counter` (RFC 8554 Algorithm 7): u32str(L − 1) ‖
    /// (link signature, child public key)… ‖ the bottom tree's signature. The caller
    /// guarantees each counter value is used once. Costs one LM-OTS signature plus, paced,
    /// about one leaf per level; at most one leaf per level when the counter goes up by one.
    ///
    /// # Errors
    /// [`Error::Exhausted`] when `counter` ≥ [`HssSigner::capacity`].
    pub(crate) fn sign_index(&mut self, counter: u64, message: &[u8]) -> Result<Vec<u8>, Error> {
        if counter >= self.capacity() {
            return Err(Error::Exhausted);
        }
        let qs = self.split(counter);
        if let Some(first_stale) = self.path.iter().zip(&qs).position(|(a, b)| a != b) {
            self.rebuild_from(first_stale + 1, &qs);
        }
        let last = self.levels.len() - 1;
        let mut out = u32::try_from(last).unwrap_or(0).to_be_bytes().to_vec();
        for i in 0..last {
            out.extend_from_slice(&self.links[i]);
            out.extend_from_slice(&self.trees[i + 1].public_key().to_bytes());
        }
        out.extend_from_slice(&self.trees[last].sign_index(qs[last], message));
        self.pace(counter);
        Ok(out)
    }
}

impl std::fmt::Debug for HssSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HssSigner")
            .field(
                "levels",
                &self
                    .levels
                    .iter()
                    .map(|(l, o)| (l.name, o.name))
                    .collect::<Vec<_>>(),
            )
            .field("seed", &"<secret>")
            .finish_non_exhaustive()
    }
}

/// HSS signature length for `levels`, in bytes: 4 + Σ LMS signatures + the L − 1 signed LMS
/// public keys (RFC 8554 §6.2).
pub fn hss_signature_len(levels: &[Level]) -> usize {
    let sigs: usize = levels.iter().map(|(l, o)| l.signature_len(o)).sum();
    let pubs: usize = levels.iter().skip(1).map(|(l, _)| l.public_key_len()).sum();
    4 + sigs + pubs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{LMS, OTS};

    #[test]
    fn multithreaded_keygen_gives_the_single_threaded_key() {
        // LMS_SHA256_M24_H10 / LMOTS_SHA256_N24_W4 over two levels.
        let level = (&LMS[6], &OTS[6]);
        let key = |threads| {
            HssSigner::generate(&[level, level], [3u8; 16], &[4u8; 24], threads)
                .expect("key")
                .public_key()
        };
        assert_eq!(key(1), key(2));
        assert_eq!(key(1), key(7));
    }

    #[test]
    fn three_levels_sign_across_every_boundary() {
        // LMS_SHA256_M32_H5 / LMOTS_SHA256_N32_W8 at every level: 2^15 signatures.
        let level = (&LMS[0], &OTS[3]);
        let mut key = HssSigner::generate(&[level; 3], [1u8; 16], &[2u8; 32], 2).expect("key");
        assert_eq!(key.capacity(), 1 << 15);
        let pk = key.public_key();
        let pk = HssPublicKey::from_bytes(&pk.to_bytes()).expect("round trip");
        // Counters crossing bottom and middle tree boundaries, and back.
        for counter in [0u64, 1, 31, 32, 33, 1023, 1024, 5000, 32767, 2] {
            let msg = counter.to_le_bytes();
            let sig = key.sign_index(counter, &msg).expect("sign");
            assert_eq!(pk.verify(&msg, &sig), Ok(()), "counter {counter}");
            assert!(pk.verify(b"other", &sig).is_err());
        }
        assert_eq!(key.sign_index(1 << 15, b"m"), Err(Error::Exhausted));
    }
}
