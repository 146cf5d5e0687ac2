//! Timing one operation: each call timed on its own with the TSC (via `quanta`) or the
//! monotonic clock; mean, median, ops/s and TSC cycles per operation.

use std::sync::OnceLock;
use std::time::Duration;

use serde::Serialize;

/// How long and how often to repeat an operation.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Keep timing until this much time has been spent (after one warm-up call).
    pub min_time: Duration,
    /// …and at least this many timed calls.
    pub min_iterations: usize,
}

impl Default for Budget {
    fn default() -> Self {
        Self {
            min_time: Duration::from_secs(1),
            min_iterations: 3,
        }
    }
}

/// The timing of one operation.
#[derive(Clone, Debug, Serialize)]
pub struct Timing {
    /// Timed calls.
    pub iterations: usize,
    /// Their total time, in ns.
    pub total_ns: u64,
    /// Mean time per call, in ns.
    pub mean_ns: f64,
    /// Median time per call, in ns.
    pub median_ns: f64,
    /// Calls per second (1e9 / mean).
    pub ops_per_sec: f64,
    /// Mean TSC cycles per call (reference cycles at the TSC's constant rate, not core cycles
    /// under turbo); `None` when the timer is not the TSC.
    pub tsc_cycles_per_op: Option<f64>,
    /// Mean hashing work per call through pqkit's engine (`pqkit-hash`); `None` when the
    /// operation did none (peers, non-hash-based algorithms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hashes: Option<Hashes>,
    /// The timed calls (ns, sorted) and their TSC ticks, kept so that timings of the same
    /// operation taken in several rounds can be merged ([`Timing::merge`]).
    #[serde(skip)]
    samples: Vec<u64>,
    #[serde(skip)]
    ticks: Option<u64>,
}

/// Mean engine work per call: compressions and permutations (`pqkit_hash::stats`), and the
/// lattice schemes' NTTs (`pqkit_lattice::stats`).
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct Hashes {
    /// SHA-256 compressions.
    pub sha256: f64,
    /// SHA-512 compressions.
    pub sha512: f64,
    /// Keccak-f\[1600\] permutations.
    pub keccak: f64,
    /// Of `keccak`, those that ran alone (a single sponge, or on the AVX2 path a stream left
    /// over beside full lanes).
    #[serde(skip_serializing_if = "is_zero")]
    pub keccak_alone: f64,
    /// ML-KEM NTTs and inverse NTTs.
    #[serde(skip_serializing_if = "is_zero")]
    pub ntt_ml_kem: f64,
    /// ML-DSA NTTs and inverse NTTs.
    #[serde(skip_serializing_if = "is_zero")]
    pub ntt_ml_dsa: f64,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

impl Timing {
    /// The timing of both sets of calls, as if they had been one: `other`'s samples, ticks and
    /// hashing work added to this one's (rounds of the same operation, interleaved in time
    /// with its peers' rounds).
    pub fn merge(&mut self, other: &Timing) {
        let calls = |t: &Timing| t.iterations as f64;
        let work = |t: &Timing| t.hashes.map(|h| (h, calls(t)));
        let hashes = match (work(self), work(other)) {
            (Some((a, n)), Some((b, m))) => {
                let mean = |x: f64, y: f64| (x * n + y * m) / (n + m);
                Some(Hashes {
                    sha256: mean(a.sha256, b.sha256),
                    sha512: mean(a.sha512, b.sha512),
                    keccak: mean(a.keccak, b.keccak),
                    keccak_alone: mean(a.keccak_alone, b.keccak_alone),
                    ntt_ml_kem: mean(a.ntt_ml_kem, b.ntt_ml_kem),
                    ntt_ml_dsa: mean(a.ntt_ml_dsa, b.ntt_ml_dsa),
                })
            }
            (a, b) => a.or(b).map(|(h, _)| h),
        };
        let mut samples = std::mem::take(&mut self.samples);
        samples.extend_from_slice(&other.samples);
        let ticks = self
            .ticks
            .zip(other.ticks)
            .map(|(a, b)| a.saturating_add(b));
        *self = summarize(samples, ticks);
        self.hashes = hashes;
    }

    /// Mean time per call in µs.
    pub fn mean_us(&self) -> f64 {
        self.mean_ns / 1e3
    }

    /// Median time per call in µs.
    pub fn median_us(&self) -> f64 {
        self.median_ns / 1e3
    }
}

fn clock() -> &'static quanta::Clock {
    static CLOCK: OnceLock<quanta::Clock> = OnceLock::new();
    CLOCK.get_or_init(quanta::Clock::new)
}

/// The TSC rate in GHz when `quanta` reads the TSC (x86_64 with an invariant TSC); `None` when
/// it falls back to the monotonic clock (its raw value is then nanoseconds).
pub fn tsc_ghz() -> Option<f64> {
    static GHZ: OnceLock<Option<f64>> = OnceLock::new();
    *GHZ.get_or_init(|| {
        let c = clock();
        let start = c.raw();
        std::thread::sleep(Duration::from_millis(20));
        let end = c.raw();
        let ns = c.delta_as_nanos(start, end);
        let ticks = end.wrapping_sub(start);
        (ticks != ns && ns > 0).then(|| ticks as f64 / ns as f64)
    })
}

/// Times `op` within `budget`: one untimed warm-up call, then timed calls until both the
/// minimum time and the minimum count are reached.
///
/// # Errors
/// The first error `op` returns.
pub fn measure<E>(budget: Budget, mut op: impl FnMut() -> Result<(), E>) -> Result<Timing, E> {
    measure_with(budget, || Ok(()), |()| op())
}

/// As [`measure`], with an untimed `setup` before each call whose output the call consumes.
///
/// # Errors
/// The first error `setup` or `op` returns.
pub fn measure_with<T, E>(
    budget: Budget,
    mut setup: impl FnMut() -> Result<T, E>,
    mut op: impl FnMut(T) -> Result<(), E>,
) -> Result<Timing, E> {
    let c = clock();
    op(setup()?)?;
    let mut samples: Vec<u64> = Vec::new();
    let mut ticks_total = 0u64;
    let min_ns = u64::try_from(budget.min_time.as_nanos()).unwrap_or(u64::MAX);
    let mut spent_ns = 0u64;
    let mut work = pqkit_hash::stats::Counts::default();
    let mut ntts = pqkit_lattice::stats::Ntts::default();
    while samples.len() < budget.min_iterations.max(1) || spent_ns < min_ns {
        let input = setup()?;
        let before = pqkit_hash::stats::counts();
        let ntts_before = pqkit_lattice::stats::thread_counts();
        let start = c.raw();
        op(input)?;
        let end = c.raw();
        let done = pqkit_hash::stats::counts().since(before);
        let ntts_done = pqkit_lattice::stats::thread_counts().since(ntts_before);
        work.sha256 += done.sha256;
        work.sha512 += done.sha512;
        work.keccak += done.keccak;
        work.keccak_alone += done.keccak_alone;
        ntts.ml_kem += ntts_done.ml_kem;
        ntts.ml_dsa += ntts_done.ml_dsa;
        let ns = c.delta_as_nanos(start, end);
        ticks_total = ticks_total.saturating_add(end.wrapping_sub(start));
        spent_ns = spent_ns.saturating_add(ns);
        samples.push(ns);
    }
    let mut timing = summarize(samples, tsc_ghz().map(|_| ticks_total));
    let calls = timing.iterations as f64;
    let any = work != pqkit_hash::stats::Counts::default()
        || ntts != pqkit_lattice::stats::Ntts::default();
    timing.hashes = any.then(|| Hashes {
        sha256: work.sha256 as f64 / calls,
        sha512: work.sha512 as f64 / calls,
        keccak: work.keccak as f64 / calls,
        keccak_alone: work.keccak_alone as f64 / calls,
        ntt_ml_kem: ntts.ml_kem as f64 / calls,
        ntt_ml_dsa: ntts.ml_dsa as f64 / calls,
    });
    Ok(timing)
}

fn summarize(mut samples: Vec<u64>, tsc_ticks: Option<u64>) -> Timing {
    samples.sort_unstable();
    let n = samples.len();
    let total_ns: u64 = samples.iter().sum();
    let mean_ns = total_ns as f64 / n as f64;
    Timing {
        iterations: n,
        total_ns,
        mean_ns,
        median_ns: median(&samples),
        ops_per_sec: if mean_ns > 0.0 { 1e9 / mean_ns } else { 0.0 },
        tsc_cycles_per_op: tsc_ticks.map(|t| t as f64 / n as f64),
        hashes: None,
        samples,
        ticks: tsc_ticks,
    }
}

/// Median of sorted samples (mean of the middle two for an even count); 0 for none.
pub fn median(sorted: &[u64]) -> f64 {
    median_of(sorted.iter().map(|&v| v as f64).collect())
}

/// Median of any samples (sorted here).
pub fn median_of(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_counts() {
        assert_eq!(median(&[1, 2, 3]), 2.0);
        assert_eq!(median(&[1, 2, 3, 10]), 2.5);
        let mut calls = 0;
        let budget = Budget {
            min_time: Duration::ZERO,
            min_iterations: 5,
        };
        let t = measure::<()>(budget, || {
            calls += 1;
            Ok(())
        })
        .expect("measure");
        // One warm-up call, then the timed ones.
        assert_eq!((t.iterations, calls), (5, 6));
        assert!(t.median_ns <= t.total_ns as f64);
    }

    /// Two rounds merged are their calls together: counts, totals, the median over both.
    #[test]
    fn merged_rounds_are_one_timing() {
        let mut a = summarize(vec![10, 30, 20], Some(300));
        a.hashes = Some(Hashes {
            sha256: 4.0,
            ..Hashes::default()
        });
        let mut b = summarize(vec![100], Some(400));
        b.hashes = Some(Hashes {
            sha256: 8.0,
            ..Hashes::default()
        });
        a.merge(&b);
        assert_eq!((a.iterations, a.total_ns), (4, 160));
        assert_eq!((a.mean_ns, a.median_ns), (40.0, 25.0));
        assert_eq!(a.tsc_cycles_per_op, Some(175.0));
        assert_eq!(a.hashes.map(|h| h.sha256), Some(5.0));
    }
}
