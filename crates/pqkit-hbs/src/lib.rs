//! pqkit-hbs: stateful hash-based signatures.
//!
//! - [`params`]: the LMS and LM-OTS parameter sets of RFC 8554 and SP 800-208.
//! - [`lms`]: LM-OTS, LMS and HSS encoding, signing primitives and verification.
//! - [`tree`]: one LMS tree's signing side, multithreaded key generation, cached nodes.
//! - [`hss`]: an HSS signing key of 1–8 levels, derived from one top (I, SEED).
//! - [`preset`]: the manual's named shapes ("L2_H10_W4").
//! - [`xmss`]: XMSS and XMSS^MT (RFC 8391, SP 800-208): sets, signing, verification.
//! - [`public`]: any scheme's public key, and its SubjectPublicKeyInfo (RFC 9802).
//! - [`signer`]: an in-memory signer of any scheme.
//! - [`ledger`]: the reservation ledger (SQLite, etcd) that a state file cannot roll back.
//! - [`state`]: the key on disk: reserve before signing, fsync + rename, one signer at a time.
//! - [`hazmat`]: signing with a one-time key the caller names (tests, benchmarks).

pub mod hazmat;
pub mod hss;
pub mod ledger;
pub mod lms;
pub mod params;
pub mod preset;
pub mod public;
pub mod signer;
pub mod state;
pub mod tree;
pub mod xmss;

/// Errors of parsing, verifying and signing.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum Error {
    /// A type code no parameter set has.
    #[error("unknown {0} type code {1}")]
    UnknownType(&'static str, u32),
    /// An LMS set and an LM-OTS set that may not be combined.
    #[error("{0} cannot be combined with {1} (hash or size differ)")]
    Mismatch(&'static str, &'static str),
    /// Bytes that do not decode.
    #[error("malformed input: {0}")]
    Malformed(&'static str),
    /// A signature that does not verify.
    #[error("invalid signature")]
    Invalid,
    /// Every one-time key has been used.
    #[error("the key is exhausted: every one-time key has been used")]
    Exhausted,
}
