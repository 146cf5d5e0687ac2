//! Counts of the work the engine did in this process: SHA-256 and SHA-512 compressions and
//! Keccak-f\[1600\] permutations — what an operation needs, whatever the path and however many
//! threads it uses (padding lanes a kernel computes to fill its width are not counted).
//! `pqkit bench` multiplies them by the engine's measured cost per compression for its "limit"
//! column.
//!
//! Only with the `counters` feature (pqkit-bench enables it; the crate's own tests count too):
//! without it this module is empty and the engine's counting compiles to nothing, so a program
//! that hashes without measuring carries no shared counters.

#[cfg(any(test, feature = "counters"))]
use std::cell::Cell;
#[cfg(any(test, feature = "counters"))]
use std::sync::atomic::{AtomicU64, Ordering};

#[cfg(any(test, feature = "counters"))]
/// Work done since the process started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// SHA-256 compressions (64-byte blocks).
    pub sha256: u64,
    /// SHA-512 compressions (128-byte blocks).
    pub sha512: u64,
    /// Keccak-f\[1600\] permutations.
    pub keccak: u64,
    /// Of `keccak`, those that ran alone — a single sponge (FIPS 203's G, H and J, FIPS 204's
    /// tr, μ and c̃), a stream left over beside full lanes on the AVX2 path (on the AVX-512
    /// path a ninth rides the 8-lane call), or any on the portable and SHA-NI paths, which
    /// permute one state at a time.
    pub keccak_alone: u64,
}

#[cfg(any(test, feature = "counters"))]
impl Counts {
    /// The work done between `earlier` and `self`.
    pub fn since(self, earlier: Counts) -> Counts {
        Counts {
            sha256: self.sha256 - earlier.sha256,
            sha512: self.sha512 - earlier.sha512,
            keccak: self.keccak - earlier.keccak,
            keccak_alone: self.keccak_alone - earlier.keccak_alone,
        }
    }
}

#[cfg(any(test, feature = "counters"))]
static SHA256: AtomicU64 = AtomicU64::new(0);
#[cfg(any(test, feature = "counters"))]
static SHA512: AtomicU64 = AtomicU64::new(0);
#[cfg(any(test, feature = "counters"))]
static KECCAK: AtomicU64 = AtomicU64::new(0);
#[cfg(any(test, feature = "counters"))]
static KECCAK_ALONE: AtomicU64 = AtomicU64::new(0);

#[cfg(any(test, feature = "counters"))]
/// The work done in this process so far, on every thread (one relaxed atomic add per batch of
/// lanes).
pub fn counts() -> Counts {
    Counts {
        sha256: SHA256.load(Ordering::Relaxed),
        sha512: SHA512.load(Ordering::Relaxed),
        keccak: KECCAK.load(Ordering::Relaxed),
        keccak_alone: KECCAK_ALONE.load(Ordering::Relaxed),
    }
}

#[cfg(any(test, feature = "counters"))]
thread_local! {
    static THREAD: Cell<Counts> = const {
        Cell::new(Counts { sha256: 0, sha512: 0, keccak: 0, keccak_alone: 0 })
    };
}

#[cfg(any(test, feature = "counters"))]
/// The work done on this thread so far (what tests count: other threads do not disturb it).
pub fn thread_counts() -> Counts {
    THREAD.with(Cell::get)
}

#[cfg(any(test, feature = "counters"))]
fn add(global: &AtomicU64, n: usize, f: impl FnOnce(&mut Counts, u64)) {
    let n = n as u64;
    global.fetch_add(n, Ordering::Relaxed);
    THREAD.with(|c| {
        let mut v = c.get();
        f(&mut v, n);
        c.set(v);
    });
}

#[inline(always)]
pub(crate) fn sha256(n: usize) {
    #[cfg(any(test, feature = "counters"))]
    add(&SHA256, n, |c, n| c.sha256 += n);
    #[cfg(not(any(test, feature = "counters")))]
    let _ = n;
}

#[inline(always)]
pub(crate) fn sha512(n: usize) {
    #[cfg(any(test, feature = "counters"))]
    add(&SHA512, n, |c, n| c.sha512 += n);
    #[cfg(not(any(test, feature = "counters")))]
    let _ = n;
}

#[inline(always)]
pub(crate) fn keccak(n: usize) {
    #[cfg(any(test, feature = "counters"))]
    add(&KECCAK, n, |c, n| c.keccak += n);
    #[cfg(not(any(test, feature = "counters")))]
    let _ = n;
}

#[inline(always)]
pub(crate) fn keccak_alone(n: usize) {
    #[cfg(any(test, feature = "counters"))]
    add(&KECCAK_ALONE, n, |c, n| c.keccak_alone += n);
    #[cfg(not(any(test, feature = "counters")))]
    let _ = n;
}
