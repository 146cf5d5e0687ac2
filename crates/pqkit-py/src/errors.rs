//! pqkit's exception hierarchy (defined in `python/pqkit/_exceptions.py`) and the one map from
//! the libraries' errors to it. Messages are the errors' `Display` text: they name the file,
//! certificate or rule, never a library's `Debug` form.

use std::fmt::Display;

use pyo3::PyErr;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

/// The exceptions of `pqkit`.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Kind {
    /// `pqkit.PqkitError`: the environment (RNG, backend, I/O).
    Pqkit,
    /// `pqkit.InvalidSignature`.
    InvalidSignature,
    /// `pqkit.InvalidKey` (a `ValueError`).
    InvalidKey,
    /// `pqkit.InvalidCiphertext` (a `ValueError`).
    InvalidCiphertext,
    /// `pqkit.UnknownAlgorithm` (a `ValueError`).
    UnknownAlgorithm,
    /// `pqkit.Unsupported`.
    Unsupported,
    /// `pqkit.KeyExhausted`.
    KeyExhausted,
    /// `pqkit.StateError`.
    State,
    /// `pqkit.ValidationError`.
    Validation,
    /// `pqkit.TokenError`.
    Token,
    /// `pqkit.InvalidInput` (a `ValueError`): a bad argument other than a key, ciphertext or
    /// signature (a context over 255 bytes, a digest of the wrong length).
    Input,
}

impl Kind {
    fn class_name(self) -> &'static str {
        match self {
            Self::Pqkit => "PqkitError",
            Self::InvalidSignature => "InvalidSignature",
            Self::InvalidKey => "InvalidKey",
            Self::InvalidCiphertext => "InvalidCiphertext",
            Self::UnknownAlgorithm => "UnknownAlgorithm",
            Self::Unsupported => "Unsupported",
            Self::KeyExhausted => "KeyExhausted",
            Self::State => "StateError",
            Self::Validation => "ValidationError",
            Self::Token => "TokenError",
            Self::Input => "InvalidInput",
        }
    }
}

/// The exception classes, imported once.
static CLASSES: [PyOnceLock<Py<PyType>>; 11] = [const { PyOnceLock::new() }; 11];

/// An exception of `kind` with `message`.
pub(crate) fn raise(kind: Kind, message: impl Display) -> PyErr {
    let message = message.to_string();
    Python::attach(|py| {
        match CLASSES[kind as usize].import(py, "pqkit._exceptions", kind.class_name()) {
            Ok(class) => PyErr::from_type(class.clone(), message),
            Err(e) => e,
        }
    })
}

/// What an operation was reading, deciding which exception a length error is.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Reading {
    /// A key (raw, PKCS#8, SPKI).
    Key,
    /// A ciphertext.
    Ciphertext,
    /// A signature being verified: every failure of the signature itself is
    /// `InvalidSignature`, whatever its length.
    Signature,
    /// Anything else (a message, digest, μ, randomness).
    Other,
}

/// A pqkit-core error as the exception a Python caller expects.
pub(crate) fn core(e: pqkit_core::Error, reading: Reading) -> PyErr {
    use pqkit_core::Error as E;
    let kind = match (&e, reading) {
        (E::ContextTooLong(_), _) => Kind::Input,
        (E::Unsupported(_), _) => Kind::Unsupported,
        (E::UnknownAlgorithm(_) | E::AmbiguousName { .. }, _) => Kind::UnknownAlgorithm,
        (E::BadSignature, _) | (E::InvalidLength { .. }, Reading::Signature) => {
            Kind::InvalidSignature
        }
        (E::InvalidKey(_), _) | (E::InvalidLength { .. }, Reading::Key) => Kind::InvalidKey,
        (E::InvalidCiphertext(_), _) | (E::InvalidLength { .. }, Reading::Ciphertext) => {
            Kind::InvalidCiphertext
        }
        (E::InvalidLength { .. }, Reading::Other) => Kind::Input,
        _ => Kind::Pqkit,
    };
    raise(kind, e)
}

/// A pqkit-pki error.
pub(crate) fn pki(e: pqkit_pki::Error, reading: Reading) -> PyErr {
    use pqkit_pki::Error as E;
    match e {
        E::Crypto(c) => core(c, reading),
        E::UnknownAlgorithm(_) => raise(Kind::UnknownAlgorithm, e),
        E::Malformed { .. } | E::InconsistentKey | E::NoPem { .. } => match reading {
            Reading::Key => raise(Kind::InvalidKey, e),
            Reading::Signature => raise(Kind::InvalidSignature, e),
            _ => raise(Kind::Input, e),
        },
        E::Path(_) => raise(Kind::Validation, e),
        E::State(s) => state(s),
        e => raise(Kind::Pqkit, e),
    }
}

/// A pqkit-hbs state error: exhaustion is `KeyExhausted`, everything else `StateError`.
pub(crate) fn state(e: pqkit_hbs::state::StateError) -> PyErr {
    use pqkit_hbs::state::StateError as S;
    match e {
        S::Hbs(pqkit_hbs::Error::Exhausted) => raise(Kind::KeyExhausted, e),
        e => raise(Kind::State, e),
    }
}
