//! One signer type for every stateful scheme: HSS, XMSS, XMSS^MT.

use crate::Error;
use crate::hss::HssSigner;
use crate::public::PublicKey;
use crate::tree::TreeCache;
use crate::xmss::XmssSigner;

/// An in-memory signer of any scheme here. It signs only through
/// [`crate::hazmat::SignAt`], whose caller picks each counter value and must never pick one
/// twice; [`crate::state::StatefulKey`] does that on disk.
pub enum Signer {
    /// HSS.
    Hss(HssSigner),
    /// XMSS or XMSS^MT.
    Xmss(XmssSigner),
}

impl Signer {
    /// Number of signatures.
    pub fn capacity(&self) -> u64 {
        match self {
            Self::Hss(s) => s.capacity(),
            Self::Xmss(s) => s.capacity(),
        }
    }

    /// Bytes of each signature.
    pub fn signature_len(&self) -> usize {
        match self {
            Self::Hss(s) => s.signature_len(),
            Self::Xmss(s) => s.signature_len(),
        }
    }

    /// Signs with one-time key `counter`.
    ///
    /// # Errors
    /// [`Error::Exhausted`] past the capacity.
    pub(crate) fn sign_index(&mut self, counter: u64, message: &[u8]) -> Result<Vec<u8>, Error> {
        match self {
            Self::Hss(s) => s.sign_index(counter, message),
            Self::Xmss(s) => s.sign_index(counter, message),
        }
    }

    /// The public key.
    pub fn public_key(&self) -> PublicKey {
        match self {
            Self::Hss(s) => PublicKey::Hss(s.public_key()),
            Self::Xmss(s) => PublicKey::Xmss(s.public_key()),
        }
    }

    /// Bytes of tree nodes kept in memory.
    pub fn cache_bytes(&self) -> usize {
        match self {
            Self::Hss(s) => s.cache_bytes(),
            Self::Xmss(s) => s.cache_bytes(),
        }
    }

    /// The trees in memory, to save for the next process ([`crate::state`]).
    pub fn save_cache(&self) -> TreeCache {
        match self {
            Self::Hss(s) => s.save_cache(),
            Self::Xmss(s) => s.save_cache(),
        }
    }
}
