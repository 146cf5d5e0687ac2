//! Signing with a one-time key the caller names: the raw interface under
//! [`crate::state::StatefulKey`].
//!
//! # Security
//! Every function here signs with the one-time key of the index it is given and trusts the
//! caller never to give the same index twice for one key (RFC 8554 §5.2, RFC 8391 §4.1.9,
//! SP 800-208 §8.1). Two signatures under one LM-OTS or WOTS+ key let anyone who sees both
//! forge signatures; nothing here can notice. Sign through [`crate::state::StatefulKey::sign`],
//! which reserves each index in the state file (and the ledger) before the signature exists.
//! These are for known-answer tests, benchmarks and signers that keep their own state.

use crate::Error;
use crate::hss::HssSigner;
use crate::signer::Signer;
use crate::tree::LmsTree;
use crate::xmss::XmssSigner;

/// Signs with the one-time key of an index the caller chooses (see the module's security note).
pub trait SignAt {
    /// The index type: LMS q (u32), the HSS counter, XMSS idx (u64).
    type Index;
    /// What signing returns: the signature bytes, or a result for signers that can be exhausted.
    type Output;

    /// Signs `message` with one-time key `index`, which must never have signed before.
    fn sign_at(&mut self, index: Self::Index, message: &[u8]) -> Self::Output;
}

impl SignAt for LmsTree {
    type Index = u32;
    type Output = Vec<u8>;

    /// RFC 8554 Algorithm 3 + §5.4: u32str(q) ‖ LM-OTS signature ‖ u32str(LMS type) ‖ path,
    /// `LmsParams::signature_len` bytes. `q` must be below 2^h.
    fn sign_at(&mut self, q: u32, message: &[u8]) -> Vec<u8> {
        LmsTree::sign_index(self, q, message)
    }
}

impl SignAt for HssSigner {
    type Index = u64;
    type Output = Result<Vec<u8>, Error>;

    /// RFC 8554 Algorithm 7 with counter `index`; [`Error::Exhausted`] past
    /// [`HssSigner::capacity`].
    fn sign_at(&mut self, counter: u64, message: &[u8]) -> Result<Vec<u8>, Error> {
        HssSigner::sign_index(self, counter, message)
    }
}

impl SignAt for XmssSigner {
    type Index = u64;
    type Output = Result<Vec<u8>, Error>;

    /// RFC 8391 Algorithms 12 and 16 with idx `index`; [`Error::Exhausted`] when idx ≥ 2^h.
    fn sign_at(&mut self, idx: u64, message: &[u8]) -> Result<Vec<u8>, Error> {
        XmssSigner::sign_index(self, idx, message)
    }
}

impl SignAt for Signer {
    type Index = u64;
    type Output = Result<Vec<u8>, Error>;

    /// The scheme's signature with counter `index`; [`Error::Exhausted`] past
    /// [`Signer::capacity`].
    fn sign_at(&mut self, counter: u64, message: &[u8]) -> Result<Vec<u8>, Error> {
        Signer::sign_index(self, counter, message)
    }
}
