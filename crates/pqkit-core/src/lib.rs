//! pqkit-core: the algorithm catalogue and its operations.
//!
//! Every algorithm is one static descriptor — name, aliases, NIST category, sizes in bytes,
//! OIDs, TLS code point and backend:
//!
//! - KEMs ([`kem::KemAlgorithm`]): ML-KEM-512/768/1024 (FIPS 203) on libcrux-ml-kem.
//! - Signatures ([`sig::SignatureAlgorithm`]): ML-DSA-44/65/87 (FIPS 204) on aws-lc-rs and
//!   fips204; ECDSA P-256 on aws-lc-rs.
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
mod error;
pub mod hybrid;
pub mod kem;
pub mod ml_dsa;
pub mod ml_kem;
pub mod sig;

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
