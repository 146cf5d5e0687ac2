//! pqkit's hashing engine for hash-based signatures.
//!
//! A hash-based signature is hundreds of thousands of hashes of short, independent inputs
//! (SLH-DSA-SHA2-128f signing: about 107 000 SHA-256 compressions). This crate computes them
//! many at a time:
//!
//! | primitive | AVX-512 | AVX2 | SHA-NI | portable |
//! |---|---|---|---|---|
//! | SHA-256 compression | 16 lanes | 8 lanes | 1 (sequential blocks) | 1 |
//! | Keccak-f\[1600\] | 8 lanes | 4 lanes | — | 1 |
//!
//! The CPU is checked once ([`dispatch`]); a program may choose a narrower path for the
//! process (`dispatch::set_process`; the `pqkit` command maps `PQKIT_HASH` onto it). Every
//! SIMD kernel has a portable twin, and the tests prove them byte-identical on every length
//! the callers use.
//!
//! The API speaks in the terms of the signature schemes, not lanes:
//! [`ManyHash::hash_many`] hashes N messages of one length (SHA-256 after a shared prefix,
//! [`Sha256Prefix`]; SHA-512, [`Sha512Prefix`]; SHAKE, [`Shake`]), and [`chains`] runs N
//! Winternitz chains from their start to their end, whatever their lengths.
//!
//! `unsafe` appears only in the SIMD modules (`sha256::{avx2, avx512, shani}`,
//! `keccak::{avx2, avx512}`), each block with a `// SAFETY:` comment.

mod bytes;
mod chain;
pub mod dispatch;
mod keccak;
mod sha256;
mod sha512;
pub mod stats;
mod wipe;

pub use bytes::copy;
pub use chain::{
    Chain, ChainEnds, IdField, Layout, Message, Prelude, append_values, chains, fixed_chains,
    fixed_chains_with, fixed_chains_with_prelude, shared_chains, shared_chains_to_end,
};
pub use dispatch::Isa;
pub use keccak::{Absorber, Shake, Sponge, XofLanes};
pub use sha256::{PATH_HEAD, PathNode, Sha256Prefix, sha256_path_root};
pub use sha512::Sha512Prefix;
pub use wipe::{Cleared, Wiped, Zero, wipe};

/// A hash of many messages of the same length at once: the engine's unit of work.
pub trait ManyHash: Sync {
    /// The largest output in bytes (32 for SHA-256, 64 for SHA-512, the rate for SHAKE).
    fn max_output(&self) -> usize;

    /// Hashes the `msgs.len() / msg_len` messages laid end to end in `msgs` and writes the
    /// first `out_len` bytes of each digest end to end into `out`, on the given path.
    ///
    /// # Panics
    /// When `msgs.len()` is not a multiple of `msg_len`, `out.len()` is not
    /// `out_len × msgs.len() / msg_len`, or `out_len > self.max_output()` — caller bugs.
    fn hash_many_on(&self, isa: Isa, msg_len: usize, msgs: &[u8], out_len: usize, out: &mut [u8]);

    /// [`ManyHash::hash_many_on`] on the current path ([`dispatch::current`]).
    fn hash_many(&self, msg_len: usize, msgs: &[u8], out_len: usize, out: &mut [u8]) {
        self.hash_many_on(dispatch::current(), msg_len, msgs, out_len, out);
    }

    /// [`fixed_chains`] on a given path (the layout already checked).
    fn fixed_chains_on(
        &self,
        isa: Isa,
        layout: &Layout,
        chains: &mut [Chain],
        message: Message<'_>,
    ) {
        chain::fixed_chains_general(self, isa, layout, chains, message);
    }

    /// [`fixed_chains_with_prelude`] on a given path (the layout and the prelude already
    /// checked).
    fn prelude_chains_on(
        &self,
        isa: Isa,
        layout: &Layout,
        prelude: Prelude,
        chains: &mut [Chain],
        message: Message<'_>,
    ) {
        chain::prelude_chains_general(self, isa, layout, prelude, chains, message);
    }

    /// [`shared_chains`] on a given path (the layout and the id field already checked).
    fn shared_chains_on(
        &self,
        isa: Isa,
        layout: &Layout,
        id: IdField,
        shared: &[u8],
        chains: &mut [Chain],
    ) {
        chain::shared_chains_general(self, isa, layout, id, shared, chains);
    }

    /// [`shared_chains_to_end`] on a given path (the shapes already checked).
    fn shared_chains_to_end_on(
        &self,
        isa: Isa,
        layout: &Layout,
        id: IdField,
        shared: &[u8],
        ends: ChainEnds<'_>,
        out: &mut [u8],
    ) {
        chain::shared_chains_to_end_general(self, isa, layout, id, shared, ends, out);
    }
}

/// Checks the shapes of a [`ManyHash::hash_many_on`] call; returns the number of messages.
fn count(msg_len: usize, msgs: &[u8], out_len: usize, out: &[u8], max: usize) -> usize {
    // Empty messages: their count is the output's.
    let count = match msg_len {
        0 => out.len().checked_div(out_len).unwrap_or(0),
        _ => msgs.len() / msg_len,
    };
    assert_eq!(
        count * msg_len,
        msgs.len(),
        "messages are not all {msg_len} bytes"
    );
    assert_eq!(
        out.len(),
        count * out_len,
        "output is not {count} × {out_len} bytes"
    );
    assert!(out_len <= max, "output of {out_len} bytes > {max}");
    count
}
