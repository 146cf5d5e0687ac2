//! pqkit's own lattice schemes: ML-KEM (FIPS 203), built around the work it really does.
//!
//! Most of an ML-KEM operation is Keccak: k² SHAKE128 streams expand the matrix Â and 2k or
//! 2k + 1 SHAKE256 streams the secret and error vectors. Here they are squeezed together on
//! pqkit-hash's Keccak lanes (8 permutations at once on AVX-512, 4 on AVX2), and the NTT
//! arithmetic is compiled for the same instruction set, chosen at run time with the hash path
//! ([`pqkit_hash::dispatch`]; `PQKIT_HASH` forces one).
//!
//! pqkit-core's `KemAlgorithm` is the everyday API; [`ml_kem`] is the engine under it.

pub mod ml_kem;
