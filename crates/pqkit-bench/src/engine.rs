//! The hashing engine's own speed (`pqkit-hash`), per path: ns and TSC cycles per SHA-256
//! compression, SHA-512 compression and Keccak-f\[1600\] permutation, measured on the
//! workloads SLH-DSA's F is made of (SLH-DSA-SHA2-128f: a 38-byte message after a 64-byte
//! prefix, one compression; SLH-DSA-SHAKE-128f: a 64-byte message, one permutation). The
//! "limit" of an operation is its counted work × these costs: how fast it would run if it
//! were nothing but hashing at the engine's best rate.

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use pqkit_hash::dispatch::{Path, with_path};
use pqkit_hash::{ManyHash, Sha256Prefix, Sha512Prefix, Shake};
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
}

impl Cost {
    /// The limit of `work`: its compressions and permutations at this cost, in ns.
    pub fn limit_ns(&self, work: &Hashes) -> f64 {
        work.sha256 * self.sha256_ns + work.sha512 * self.sha512_ns + work.keccak * self.keccak_ns
    }
}

/// Messages hashed per call: many more than any kernel's lanes.
const BATCH: usize = 4096;

/// ns per message of `hash` over BATCH messages of `len` bytes (one compression or
/// permutation each), the best of several rounds of at least 20 ms.
fn per_message(path: Path, hash: &dyn ManyHash, len: usize) -> f64 {
    let msgs: Vec<u8> = (0..BATCH * len)
        .map(|i| (i % 251).to_le_bytes()[0])
        .collect();
    let mut out = vec![0u8; BATCH * 16];
    let mut best = f64::MAX;
    for _ in 0..3 {
        let start = Instant::now();
        let mut calls = 0u32;
        while start.elapsed() < Duration::from_millis(20) {
            hash.hash_many_on(path, len, &msgs, 16, &mut out);
            calls += 1;
        }
        best = best.min(start.elapsed().as_nanos() as f64 / (f64::from(calls) * BATCH as f64));
    }
    std::hint::black_box(&out);
    best
}

/// The engine's cost on `path` (measured once per process and path).
///
/// # Panics
/// When the CPU does not support `path` (callers pass supported paths).
pub fn cost(path: Path) -> Cost {
    static COSTS: OnceLock<Mutex<BTreeMap<Path, Cost>>> = OnceLock::new();
    let costs = COSTS.get_or_init(Default::default);
    if let Some(c) = costs.lock().map(|c| c.get(&path).copied()).ok().flatten() {
        return c;
    }
    let c = with_path(path, || Cost {
        path: path.name(),
        // SLH-DSA-SHA2 F: ADRSc (22) ‖ M (16) after PK.seed ‖ toByte(0, 48).
        sha256_ns: per_message(path, &Sha256Prefix::new(&[7; 64]), 38),
        // SLH-DSA-SHA2-192/256 H: ADRSc (22) ‖ 2n (64) after a 128-byte prefix.
        sha512_ns: per_message(path, &Sha512Prefix::new(&[7; 128]), 86),
        // SLH-DSA-SHAKE-128 F: PK.seed (16) ‖ ADRS (32) ‖ M (16).
        keccak_ns: per_message(path, &Shake::SHAKE256, 64),
    })
    .expect("a supported path");
    if let Ok(mut costs) = costs.lock() {
        costs.insert(path, c);
    }
    c
}

/// The engine table: per path, ns and TSC cycles per compression / permutation.
pub fn table(paths: &[Path]) -> crate::render::Table {
    let ghz = tsc_ghz();
    let cycles = |ns: f64| ghz.map_or_else(|| "-".to_owned(), |g| format!("{:.0}", ns * g));
    let mut t = crate::render::Table::new(
        "pqkit-hash engine (single thread; ns and TSC cycles per compression or permutation, \
         SLH-DSA F-shaped inputs, 4096 per call)",
        &[
            "path",
            "SHA-256 ns",
            "SHA-256 cycles",
            "SHA-512 ns",
            "SHA-512 cycles",
            "Keccak-f[1600] ns",
            "Keccak-f[1600] cycles",
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
        ]);
    }
    t
}
