//! pqkit-slh-dsa: SLH-DSA (FIPS 205), pqkit's own, on the multi-buffer hashing engine
//! (`pqkit-hash`): WOTS+ chains, FORS leaves and Merkle tree levels are hashed many at a time.
//!
//! - [`params`]: the twelve parameter sets (FIPS 205 Table 2) and the sizes derived from them.
//! - `address`, `hash`, `wots`, `tree`, `fors`: ADRS (§4.2), the hash functions of each family
//!   (§11), WOTS+ (§5), XMSS and the hypertree (§6–§7), FORS (§8).
//! - [`hazmat`]: slh_keygen_internal, slh_sign_internal and slh_verify_internal (FIPS 205
//!   Algorithms 18–20) over a caller-formatted M′, with the caller's randomness.
//!
//! The everyday API — keys in the catalogue, pure and HashSLH-DSA signing with a context,
//! M′ formatted per Algorithms 22–25, fresh randomness — is `pqkit_core::slh_dsa`.
//!
//! Why its own crate, beside pqkit-lattice rather than inside pqkit-hbs: it is stateless, so it
//! needs none of pqkit-hbs's state files and ledgers (SQLite, etcd), which the algorithm
//! catalogue must not link; and its WOTS+ and tree addressing (FIPS 205 ADRS, 32 or 22 bytes
//! compressed) differs from XMSS's (RFC 8391) and LMS's, so the schemes share the hashing
//! engine's chain kernels, not code above them.

mod address;
mod fors;
mod hash;
pub mod hazmat;
pub mod params;
mod tree;
mod wots;

use std::sync::atomic::{AtomicUsize, Ordering};

pub use tree::Levels;

static SIGNING_THREADS: AtomicUsize = AtomicUsize::new(1);

/// Sets how many threads each SLH-DSA signature uses (default 1; 0 means 1): with more, the
/// FORS trees and the d hypertree trees are built in parallel and only the d WOTS+ signatures
/// (len chains each) are left for one thread at the end. Signatures are byte-identical
/// whatever the count. Process-wide (`pqkit sign --threads` and `pqkit bench crypto
/// --threads` set it).
pub fn set_signing_threads(threads: usize) {
    SIGNING_THREADS.store(threads.max(1), Ordering::Relaxed);
}

/// The thread count [`set_signing_threads`] set.
pub fn signing_threads() -> usize {
    SIGNING_THREADS.load(Ordering::Relaxed)
}
