//! The cost of one NTT of each ring on a `pqkit-hash` path ([`ntt_ns`]), measured when asked:
//! what `pqkit bench` multiplies the counts of [`crate::stats`] by.

use pqkit_hash::Isa;

/// Which ring's transform.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ring {
    /// ML-KEM's (FIPS 203 §4.3).
    MlKem,
    /// ML-DSA's (FIPS 204 §7.5).
    MlDsa,
}

/// The mean cost of one transform of `ring` on `isa`, in ns: `pairs` forward and inverse
/// NTTs in turn, with the coefficient reduction the algorithms do after each, compiled for
/// the path's instruction set (the kernels where the path has them), the best of five rounds.
pub fn ntt_ns(ring: Ring, isa: Isa, pairs: usize) -> f64 {
    let pairs = pairs.max(1);
    let mut best = f64::MAX;
    for _ in 0..5 {
        let start = std::time::Instant::now();
        match ring {
            Ring::MlKem => crate::ml_kem::ntt_pairs(isa, pairs),
            Ring::MlDsa => crate::ml_dsa::ntt_pairs(isa, pairs),
        }
        best = best.min(start.elapsed().as_nanos() as f64 / (2 * pairs) as f64);
    }
    best
}
