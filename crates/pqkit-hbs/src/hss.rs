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
use crate::tree::LmsTree;

/// One level's parameter pair.
pub type Level = (&'static LmsParams, &'static OtsParams);

/// An HSS signing key in memory: the trees of the current path and the signatures linking
/// them. Which counter values are still unused is [`crate::state`]'s business.
pub struct HssSigner {
    levels: Vec<Level>,
    trees: Vec<LmsTree>,
    /// For each tree below the top: the parent leaf it was derived from.
    parents: Vec<u32>,
    /// links[i]: the level-i signature of level i+1's public key.
    links: Vec<Vec<u8>>,
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
            trees: Vec::new(),
            parents: Vec::new(),
            links: Vec::new(),
            threads,
        };
        me.trees.push(LmsTree::generate(
            levels[0].0,
            levels[0].1,
            id,
            seed,
            threads,
        ));
        me.rebuild_from(1, &me.split(0));
        Ok(me)
    }

    /// Total number of signatures: 2^(h_0 + … + h_{L−1}).
    pub fn capacity(&self) -> u64 {
        let bits: u32 = self.levels.iter().map(|(l, _)| u32::from(l.h)).sum();
        1u64.checked_shl(bits).unwrap_or(u64::MAX)
    }

    /// The public key.
    pub fn public_key(&self) -> HssPublicKey {
        HssPublicKey {
            levels: u32::try_from(self.levels.len()).unwrap_or(8),
            top: self.trees[0].public_key(),
        }
    }

    /// Bytes of tree nodes kept in memory across all levels.
    pub fn cache_bytes(&self) -> usize {
        self.trees.iter().map(LmsTree::cache_bytes).sum()
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

    /// Regenerates levels `from..` for the leaf indices `qs`, and their link signatures.
    fn rebuild_from(&mut self, from: usize, qs: &[u32]) {
        self.trees.truncate(from);
        self.parents.truncate(from.saturating_sub(1));
        self.links.truncate(from.saturating_sub(1));
        for i in from..self.levels.len() {
            let parent = &self.trees[i - 1];
            let q = qs[i - 1];
            let (pid, pseed) = parent.identity();
            let (id, seed) = derive(&self.levels[i - 1], &pid, pseed, q);
            let child =
                LmsTree::generate(self.levels[i].0, self.levels[i].1, id, &seed, self.threads);
            let link = self.trees[i - 1].sign(q, &child.public_key().to_bytes());
            self.trees.push(child);
            self.parents.push(q);
            self.links.push(link);
        }
    }

    /// Signs `message` with counter value `counter` (RFC 8554 Algorithm 7): u32str(L − 1) ‖
    /// (link signature, child public key)… ‖ the bottom tree's signature. The caller
    /// guarantees each counter value is used once.
    ///
    /// # Errors
    /// [`Error::Exhausted`] when `counter` ≥ [`HssSigner::capacity`].
    pub fn sign(&mut self, counter: u64, message: &[u8]) -> Result<Vec<u8>, Error> {
        if counter >= self.capacity() {
            return Err(Error::Exhausted);
        }
        let qs = self.split(counter);
        if let Some(first_stale) =
            (1..self.levels.len()).find(|&i| self.parents[i - 1] != qs[i - 1])
        {
            self.rebuild_from(first_stale, &qs);
        }
        let last = self.levels.len() - 1;
        let mut out = u32::try_from(last).unwrap_or(0).to_be_bytes().to_vec();
        for i in 0..last {
            out.extend_from_slice(&self.links[i]);
            out.extend_from_slice(&self.trees[i + 1].public_key().to_bytes());
        }
        out.extend_from_slice(&self.trees[last].sign(qs[last], message));
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
            let sig = key.sign(counter, &msg).expect("sign");
            assert_eq!(pk.verify(&msg, &sig), Ok(()), "counter {counter}");
            assert!(pk.verify(b"other", &sig).is_err());
        }
        assert_eq!(key.sign(1 << 15, b"m"), Err(Error::Exhausted));
    }
}
