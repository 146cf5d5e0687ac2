//! The one error type of pqkit-core.

/// Errors returned by pqkit-core.
///
/// Three kinds are kept apart: the input's fault ([`Error::InvalidLength`], [`Error::InvalidKey`],
/// [`Error::InvalidCiphertext`], [`Error::BadSignature`]), the caller's misuse
/// ([`Error::Unsupported`], [`Error::ContextTooLong`], [`Error::UnknownAlgorithm`]) and the
/// environment ([`Error::Rng`], [`Error::Backend`]).
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A byte string had the wrong length for the algorithm.
    #[error("{what}: expected {expected} bytes, got {got}")]
    InvalidLength {
        /// What was being decoded ("ML-KEM-768 encapsulation key", …).
        what: &'static str,
        /// The length the algorithm requires, in bytes.
        expected: usize,
        /// The length that was given, in bytes.
        got: usize,
    },
    /// A key failed its validity check (e.g. the FIPS 203 §7.2 modulus check).
    #[error("invalid {0}")]
    InvalidKey(&'static str),
    /// A ciphertext or key share was malformed.
    #[error("invalid {0}")]
    InvalidCiphertext(&'static str),
    /// A signature did not verify. Deliberately carries no detail.
    #[error("signature verification failed")]
    BadSignature,
    /// A context string was longer than 255 bytes (FIPS 204 §5.2, FIPS 205 §10.2).
    #[error("context string is {0} bytes; at most 255 are allowed")]
    ContextTooLong(usize),
    /// The algorithm or backend does not offer the requested operation.
    #[error("{0}")]
    Unsupported(&'static str),
    /// A name matched no algorithm in the catalogue.
    #[error("unknown algorithm {0:?}")]
    UnknownAlgorithm(String),
    /// An OID or a code point that several algorithms share (RSA's, for every key size).
    #[error("{name:?} names several algorithms ({candidates}); give one of these names")]
    AmbiguousName {
        /// What was given.
        name: String,
        /// The algorithms it names, comma-separated.
        candidates: String,
    },
    /// The operating system's random number generator failed.
    #[error("random number generator failed")]
    Rng,
    /// A backend reported an internal failure.
    #[error("{0} backend failed")]
    Backend(&'static str),
}

/// Checks that `bytes` is exactly `expected` bytes long.
///
/// # Errors
/// [`Error::InvalidLength`] naming `what` when the length differs.
pub(crate) fn check_len(what: &'static str, bytes: &[u8], expected: usize) -> Result<(), Error> {
    if bytes.len() == expected {
        Ok(())
    } else {
        Err(Error::InvalidLength {
            what,
            expected,
            got: bytes.len(),
        })
    }
}
