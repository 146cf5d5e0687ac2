//! The hashing engine's own speed (`pqkit-hash`), per path: ns and TSC cycles per SHA-256
//! compression and Keccak-f\[1600\] permutation at its best rate — WOTS+ chains of
//! SLH-DSA-SHA2-128f's F (a 38-byte message after a 64-byte prefix, one compression per step)
//! and SLH-DSA-SHAKE-128f's F (a 64-byte message, one permutation per step), 4096 chains of
//! 15 steps — per SHA-512 compression (one-block messages), per permutation that runs alone
//! (a one-block SHAKE256 sponge), and per NTT of pqkit-lattice's two rings, the best of every
//! measurement in the process. The "limit" of an operation is its counted work × these
//! costs: how fast it would run if it were nothing but hashing at the engine's best rate
//! (permutations that ran alone at their own rate) and, for the lattice schemes, its NTTs.

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use pqkit_hash::dispatch::{Isa, with_isa};
use pqkit_hash::{
    Chain, Layout, ManyHash, Sha256Prefix, Sha512Prefix, Shake, Sponge, fixed_chains,
};
use pqkit_lattice::cost::Ring;
use serde::Serialize;

use crate::timing::{Hashes, tsc_ghz};

/// The engine's cost per unit of work on one path, in ns.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Cost {
    /// The path ("avx512", "avx2", "shani", "portable").
    pub path: &'static str,
    /// ns per SHA-256 compression.
    pub sha256_ns: f64,
    /// ns per SHA-512 compression.
    pub sha512_ns: f64,
    /// ns per Keccak-f\[1600\] permutation.
    pub keccak_ns: f64,
    /// ns per Keccak-f\[1600\] permutation run alone (a one-block SHAKE256 sponge).
    pub keccak_alone_ns: f64,
    /// ns per ML-KEM NTT or inverse NTT (pqkit-lattice, this path's build).
    pub ml_kem_ntt_ns: f64,
    /// ns per ML-DSA NTT or inverse NTT.
    pub ml_dsa_ntt_ns: f64,
}

impl Cost {
    /// The limit of `work`: its compressions, permutations (those that ran alone at the
    /// single-permutation cost) and NTTs at this cost, in ns.
    pub fn limit_ns(&self, work: &Hashes) -> f64 {
        work.sha256 * self.sha256_ns
            + work.sha512 * self.sha512_ns
            + (work.keccak - work.keccak_alone) * self.keccak_ns
            + work.keccak_alone * self.keccak_alone_ns
            + work.ntt_ml_kem * self.ml_kem_ntt_ns
            + work.ntt_ml_dsa * self.ml_dsa_ntt_ns
    }
}

/// Messages hashed per call: many more than any kernel's lanes.
const BATCH: usize = 4096;

/// Steps per chain in the chain measurement (SLH-DSA's w − 1).
const STEPS: u32 = 15;

/// The best of seven rounds of at least 15 ms of `f`, in ns per unit of work (`f` does
/// `units` per call).
fn best(units: usize, mut f: impl FnMut()) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..7 {
        let start = Instant::now();
        let mut calls = 0u32;
        while start.elapsed() < Duration::from_millis(15) {
            f();
            calls += 1;
        }
        best = best.min(start.elapsed().as_nanos() as f64 / (f64::from(calls) * units as f64));
    }
    best
}

/// ns per message of `hash` over BATCH messages of `len` bytes (one compression or
/// permutation each).
fn per_message(isa: Isa, hash: &dyn ManyHash, len: usize) -> f64 {
    let msgs: Vec<u8> = (0..BATCH * len)
        .map(|i| (i % 251).to_le_bytes()[0])
        .collect();
    let mut out = vec![0u8; BATCH * 16];
    let ns = best(BATCH, || hash.hash_many_on(isa, len, &msgs, 16, &mut out));
    std::hint::black_box(&out);
    ns
}

/// Forward and inverse NTT pairs per timed round of [`pqkit_lattice::cost::ntt_ns`].
const NTT_PAIRS: usize = 2000;

/// ns per one-block SHAKE256 sponge on the current path: one permutation that runs alone
/// (G, H, J, tr, μ and c̃ of the lattice schemes), with its absorption and squeeze.
fn per_sponge() -> f64 {
    let msg = [7u8; 64];
    let mut out = [0u8; 32];
    let ns = best(1, || Sponge::Shake256.hash(&[&msg], &mut out));
    std::hint::black_box(&out);
    ns
}

/// ns per step of BATCH WOTS chains of STEPS steps (one compression or permutation each) with
/// `layout`: the engine's best rate, message formed once and kept in the kernel's lanes.
fn per_chain_step(hash: &dyn ManyHash, layout: &Layout) -> f64 {
    let messages: Vec<u8> = (0..BATCH * layout.msg_len)
        .map(|i| (i % 251).to_le_bytes()[0])
        .collect();
    let mut chains: Vec<Chain> = (0u32..)
        .take(BATCH)
        .map(|i| Chain::new(i, 0, STEPS, &[7; 32][..layout.n]))
        .collect();
    let ns = best(BATCH * STEPS as usize, || {
        for c in &mut chains {
            c.at = 0;
        }
        fixed_chains(hash, layout, &mut chains, &messages);
    });
    std::hint::black_box(&chains);
    ns
}

/// The engine's cost on `isa`: the best of every [`measure`] in this process, measuring now
/// if there was none.
///
/// # Panics
/// When the CPU does not support `isa` (callers pass supported paths).
pub fn cost(isa: Isa) -> Cost {
    let known = costs().lock().map(|c| c.get(&isa).copied()).ok().flatten();
    known.unwrap_or_else(|| measure(isa))
}

/// The costs kept per path.
fn costs() -> &'static Mutex<BTreeMap<Isa, Cost>> {
    static COSTS: OnceLock<Mutex<BTreeMap<Isa, Cost>>> = OnceLock::new();
    COSTS.get_or_init(Default::default)
}

/// Measures the engine's cost on `isa` (≈ 0.3 s) and keeps, per unit, the best of this and
/// every earlier measurement in the process: `bench crypto` measures after each block of rows
/// it runs on a path (per algorithm and round; twice for a stateful scheme with the peers'
/// one-tree rows), so that a busy stretch of a shared machine during one measurement does not
/// set the limit column of the whole run. Returns the kept cost.
///
/// # Panics
/// When the CPU does not support `isa` (callers pass supported paths).
pub fn measure(isa: Isa) -> Cost {
    let now = with_isa(isa, || Cost {
        path: isa.name(),
        // SLH-DSA-SHA2-128 F chains: ADRSc (22; hash address at 18) ‖ M (16) after
        // PK.seed ‖ toByte(0, 48).
        sha256_ns: per_chain_step(
            &Sha256Prefix::new(&[7; 64]),
            &Layout {
                msg_len: 38,
                step_at: 18,
                step_bytes: 4,
                value_at: 22,
                n: 16,
            },
        ),
        // SLH-DSA-SHA2-192/256 H: ADRSc (22) ‖ 2n (64) after a 128-byte prefix.
        sha512_ns: per_message(isa, &Sha512Prefix::new(&[7; 128]), 86),
        // SLH-DSA-SHAKE-128 F chains: PK.seed (16) ‖ ADRS (32; hash address at 44) ‖ M (16).
        keccak_ns: per_chain_step(
            &Shake::SHAKE256,
            &Layout {
                msg_len: 64,
                step_at: 44,
                step_bytes: 4,
                value_at: 48,
                n: 16,
            },
        ),
        keccak_alone_ns: per_sponge(),
        ml_kem_ntt_ns: pqkit_lattice::cost::ntt_ns(Ring::MlKem, isa, NTT_PAIRS),
        ml_dsa_ntt_ns: pqkit_lattice::cost::ntt_ns(Ring::MlDsa, isa, NTT_PAIRS),
    })
    .expect("a supported path");
    let Ok(mut costs) = costs().lock() else {
        return now;
    };
    let kept = costs.entry(isa).or_insert(now);
    kept.sha256_ns = kept.sha256_ns.min(now.sha256_ns);
    kept.sha512_ns = kept.sha512_ns.min(now.sha512_ns);
    kept.keccak_ns = kept.keccak_ns.min(now.keccak_ns);
    kept.keccak_alone_ns = kept.keccak_alone_ns.min(now.keccak_alone_ns);
    kept.ml_kem_ntt_ns = kept.ml_kem_ntt_ns.min(now.ml_kem_ntt_ns);
    kept.ml_dsa_ntt_ns = kept.ml_dsa_ntt_ns.min(now.ml_dsa_ntt_ns);
    *kept
}

/// The engine table: per path, ns and TSC cycles per compression / permutation.
pub fn table(paths: &[Isa]) -> crate::render::Table {
    let ghz = tsc_ghz();
    let cycles = |ns: f64| ghz.map_or_else(|| "-".to_owned(), |g| format!("{:.0}", ns * g));
    let mut t = crate::render::Table::new(
        "pqkit-hash engine (single thread; ns and TSC cycles per compression or permutation, \
         the best of the run's measurements (one per algorithm, path and round): SHA-256 and \
         Keccak in 4096 SLH-DSA F chains of 15 steps, SHA-512 one-block messages; Keccak \
         alone: a one-block SHAKE256 sponge; and pqkit-lattice's NTT or inverse NTT, with \
         its reduction)",
        &[
            "path",
            "SHA-256 ns",
            "SHA-256 cycles",
            "SHA-512 ns",
            "SHA-512 cycles",
            "Keccak-f[1600] ns",
            "Keccak-f[1600] cycles",
            "Keccak alone ns",
            "ML-KEM NTT ns",
            "ML-DSA NTT ns",
        ],
    );
    for &p in paths {
        let c = cost(p);
        t.rows.push(vec![
            c.path.to_owned(),
            format!("{:.1}", c.sha256_ns),
            cycles(c.sha256_ns),
            format!("{:.1}", c.sha512_ns),
            cycles(c.sha512_ns),
            format!("{:.1}", c.keccak_ns),
            cycles(c.keccak_ns),
            format!("{:.1}", c.keccak_alone_ns),
            format!("{:.1}", c.ml_kem_ntt_ns),
            format!("{:.1}", c.ml_dsa_ntt_ns),
        ]);
    }
    t
}
