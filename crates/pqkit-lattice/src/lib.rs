//! pqkit's own lattice schemes: ML-KEM (FIPS 203) and ML-DSA (FIPS 204), built around the
//! work they really do.
//!
//! Most of an ML-KEM or ML-DSA operation is Keccak: k² (ML-KEM) or k·ℓ (ML-DSA) SHAKE128
//! streams expand the matrix Â, and independent SHAKE256 streams the secret, error and mask
//! vectors. Here they are squeezed together on pqkit-hash's Keccak lanes (8 permutations at
//! once on AVX-512, 4 on AVX2), and the NTT arithmetic is compiled for the same instruction
//! set, chosen at run time with the hash path ([`pqkit_hash::dispatch`]).
//!
//! pqkit-core's `KemAlgorithm` and `SignatureAlgorithm` are the everyday API; [`ml_kem`] and
//! [`ml_dsa`] are the engines under them.

pub mod cost;
pub mod ml_dsa;
pub mod ml_kem;
mod simd;

/// A SHAKE128 block (168 bytes) as the sponge state's first 21 words
/// ([`pqkit_hash::XofLanes::block_words`]): byte i is byte i mod 8, little-endian, of word
/// ⌊i / 8⌋. The rejection samplers read it in place.
pub(crate) type Words = [u64; 21];

/// The 168 bytes of a [`Words`] block (for the portable twins and tests).
pub(crate) fn words_to_bytes(block: &Words) -> [u8; 168] {
    let mut bytes = [0u8; 168];
    for (b, w) in bytes.chunks_exact_mut(8).zip(block) {
        b.copy_from_slice(&w.to_le_bytes());
    }
    bytes
}
pub mod stats;
#[doc(hidden)]
pub mod valgrind;
