//! One measured operation of `bench crypto` ([`Row`]): the leaf that the crypto suite, its
//! peers, the stateful schemes and the renderers share.

use serde::Serialize;

use crate::timing::Timing;

/// Size of the signed message, in bytes.
pub const MESSAGE_SIZE: usize = 64;

/// One operation of one algorithm in one implementation.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Canonical algorithm name.
    pub algorithm: &'static str,
    /// "signature", "KEM", "group" or "stateful".
    pub kind: &'static str,
    /// "keygen", "sign", "verify", "encapsulate" or "decapsulate".
    pub operation: &'static str,
    /// Who computed it: "pqkit (backend)" or a peer's name.
    pub implementation: String,
    /// For sign: "hedged" or "deterministic".
    pub signing: Option<&'static str>,
    /// The timing.
    #[serde(flatten)]
    pub timing: Timing,
    /// On pqkit's rows of hash-based schemes: the `pqkit-hash` path the operation ran on
    /// ("avx512", "avx2", "shani", "portable").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash_path: Option<&'static str>,
    /// With `hash_path`: the operation's compressions and permutations (`timing.hashes`) ×
    /// the engine's measured cost per unit on that path ([`crate::engine`]), in ns — the
    /// time it would take if it were nothing but hashing at the engine's rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit_ns: Option<f64>,
    /// On pqkit's rows when peers ran: pqkit's mean time / the fastest peer's mean time for
    /// the same operation (below 1: pqkit is faster).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratio_to_fastest_peer: Option<f64>,
}

impl Row {
    /// Whether pqkit (not a peer) measured this row.
    pub fn is_pqkit(&self) -> bool {
        self.implementation.starts_with("pqkit")
    }
}
