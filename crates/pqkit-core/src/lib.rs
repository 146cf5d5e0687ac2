//! pqkit-core: the algorithm catalogue and its operations.
//!
//! Every algorithm is one static descriptor — name, aliases, NIST category, sizes in bytes,
//! OIDs, TLS code point and backend:
//!
//! - KEMs ([`kem::KemAlgorithm`]): ML-KEM-512/768/1024 (FIPS 203) on pqkit-lattice; with the
//!   `liboqs` feature (default), BIKE, eFrodoKEM and Classic McEliece on liboqs ([`oqs_kem`]);
//!   HQC-1/3/5 on RustCrypto `hqc-kem` ([`hqc`]).
//! - Signatures ([`sig::SignatureAlgorithm`]): ML-DSA-44/65/87 (FIPS 204) on pqkit-lattice
//!   (aws-lc-rs and fips204 run beside it as independent implementations in the vector
//!   tests only); ECDSA P-256 on aws-lc-rs.
//! - TLS key-exchange groups ([`hybrid::KeyExchangeGroup`]): MLKEM512/768/1024 and the
//!   ECDHE+ML-KEM hybrids of RFC 10024.
//!
//! ```
//! use pqkit_core::{catalogue, hybrid};
//! let group = catalogue::group("x25519mlkem768")?;
//! let client = group.start()?;
//! let (server_share, server_secret) = group.encapsulate(client.share())?;
//! assert_eq!(client.complete(&server_share)?, server_secret);
//! # Ok::<(), pqkit_core::Error>(())
//! ```

pub mod catalogue;
pub mod classical;
mod code_point;
pub mod composite;
mod error;
pub mod falcon;
pub mod hqc;
pub mod hybrid;
pub mod kem;
pub mod ml_dsa;
pub mod ml_kem;
#[cfg(feature = "liboqs")]
pub mod oqs_kem;
pub mod prehash;
pub mod rustcrypto;
pub mod sig;
pub mod slh_dsa;

pub use error::Error;

use zeroize::Zeroizing;

/// `N` bytes from the OS random number generator (through AWS-LC).
///
/// # Errors
/// [`Error::Rng`] when the generator fails.
pub(crate) fn random_array<const N: usize>() -> Result<Zeroizing<[u8; N]>, Error> {
    let mut out = Zeroizing::new([0u8; N]);
    aws_lc_rs::rand::fill(&mut out[..]).map_err(|_| Error::Rng)?;
    Ok(out)
}

/// `len` bytes from the OS random number generator (through AWS-LC).
///
/// # Errors
/// [`Error::Rng`] when the generator fails.
pub(crate) fn random_vec(len: usize) -> Result<Zeroizing<Vec<u8>>, Error> {
    let mut out = Zeroizing::new(vec![0u8; len]);
    aws_lc_rs::rand::fill(&mut out[..]).map_err(|_| Error::Rng)?;
    Ok(out)
}

/// A deterministic byte source for backends that draw their randomness through `rand_core`:
/// it yields the given bytes first (a seed, an ML-DSA `rnd`), then a SHAKE256 stream of them, so
/// a backend that reads more than expected still gets unpredictable-to-others, repeatable bytes.
pub(crate) struct FixedRng {
    given: Zeroizing<Vec<u8>>,
    pos: usize,
    rest: Option<sha3::Shake256Reader>,
}

impl FixedRng {
    pub(crate) fn new(given: &[u8]) -> Self {
        Self {
            given: Zeroizing::new(given.to_vec()),
            pos: 0,
            rest: None,
        }
    }
}

impl rand_core::RngCore for FixedRng {
    fn next_u32(&mut self) -> u32 {
        rand_core::impls::next_u32_via_fill(self)
    }

    fn next_u64(&mut self) -> u64 {
        rand_core::impls::next_u64_via_fill(self)
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        use sha3::digest::{ExtendableOutput, Update, XofReader};
        let take = dest.len().min(self.given.len() - self.pos);
        dest[..take].copy_from_slice(&self.given[self.pos..self.pos + take]);
        self.pos += take;
        if take < dest.len() {
            let given = &self.given;
            self.rest
                .get_or_insert_with(|| {
                    let mut h = sha3::Shake256::default();
                    h.update(b"pqkit FixedRng");
                    h.update(given);
                    h.finalize_xof()
                })
                .read(&mut dest[take..]);
        }
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand_core::Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}

impl rand_core::CryptoRng for FixedRng {}
