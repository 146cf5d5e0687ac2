//! Counts of the NTTs this thread ran — forward and inverse, of ML-KEM's ring (FIPS 203
//! Algorithms 9, 10) and of ML-DSA's (FIPS 204 Algorithms 41, 42) — whose cost per call on a
//! path ([`crate::cost::ntt_ns`]) is what `pqkit bench` adds to the Keccak work in its "limit" column
//! for the lattice rows. A thread-local increment per transform (no atomic: the operations
//! are single-threaded), only with the `counters` feature (pqkit-bench enables it): without
//! it the counting compiles to nothing. [`ntt_pairs!`] (what the cost model times) is always
//! here.

#[cfg(feature = "counters")]
use std::cell::Cell;

#[cfg(feature = "counters")]
/// NTTs (forward and inverse) run on this thread so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ntts {
    /// Of R_q, q = 3329 (ML-KEM), 16-bit coefficients.
    pub ml_kem: u64,
    /// Of R_q, q = 8380417 (ML-DSA), 32-bit coefficients.
    pub ml_dsa: u64,
}

#[cfg(feature = "counters")]
impl Ntts {
    /// The transforms run between `earlier` and `self`.
    pub fn since(self, earlier: Ntts) -> Ntts {
        Ntts {
            ml_kem: self.ml_kem - earlier.ml_kem,
            ml_dsa: self.ml_dsa - earlier.ml_dsa,
        }
    }
}

#[cfg(feature = "counters")]
thread_local! {
    static THREAD: Cell<Ntts> = const { Cell::new(Ntts { ml_kem: 0, ml_dsa: 0 }) };
}

#[cfg(feature = "counters")]
/// The NTTs run on this thread so far.
pub fn thread_counts() -> Ntts {
    THREAD.with(Cell::get)
}

#[inline(always)]
pub(crate) fn ml_kem_ntt() {
    #[cfg(feature = "counters")]
    THREAD.with(|c| {
        let mut v = c.get();
        v.ml_kem += 1;
        c.set(v);
    });
}

#[inline(always)]
pub(crate) fn ml_dsa_ntt() {
    #[cfg(feature = "counters")]
    THREAD.with(|c| {
        let mut v = c.get();
        v.ml_dsa += 1;
        c.set(v);
    });
}

/// Defines, in a scheme's module, `ntt_pairs(path, pairs)`: `pairs` forward and inverse NTTs of
/// one polynomial in turn, with the reduction after each that the algorithms do, compiled for
/// `isa` (through the module's `simd::ntt_pairs_on`; what [`ntt_ns`] times), and its generic
/// body `ntt_pairs_any`. The module's `Poly` and `poly` functions are the ring's.
macro_rules! ntt_pairs {
    () => {
        /// `pairs` forward and inverse NTTs of one polynomial in turn, with the reduction after
        /// each that the algorithms do, compiled for `isa` (what `cost::ntt_ns` times).
        pub(crate) fn ntt_pairs(isa: pqkit_hash::Isa, pairs: usize) {
            simd::ntt_pairs_on(isa, pairs);
        }

        /// [`ntt_pairs`] on a path.
        #[inline(always)]
        fn ntt_pairs_any(isa: pqkit_hash::Isa, pairs: usize) {
            let mut f = Poly::ZERO;
            for _ in 0..pairs {
                poly::ntt(&mut f, isa);
                poly::reduce(&mut f);
                poly::inv_ntt_to_mont(&mut f, isa);
                poly::reduce(&mut f);
                core::hint::black_box(&mut f);
            }
        }
    };
}
pub(crate) use ntt_pairs;
