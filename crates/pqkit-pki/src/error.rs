//! The one error type of pqkit-pki.

/// Errors returned by pqkit-pki.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An algorithm operation failed (bad key, unsupported operation, RNG).
    #[error(transparent)]
    Crypto(#[from] pqkit_core::Error),
    /// DER or PEM could not be encoded or decoded.
    #[error("malformed {what}: {detail}")]
    Malformed {
        /// What was being decoded ("PKCS#8 private key", …).
        what: &'static str,
        /// The decoder's message.
        detail: String,
    },
    /// The key or certificate uses an algorithm pqkit does not know.
    #[error("unsupported algorithm in {0}")]
    UnknownAlgorithm(&'static str),
    /// A PKCS#8 "both" key whose seed and expanded halves disagree (RFC 9881 §6).
    #[error("PKCS#8 key: seed and expanded key disagree")]
    InconsistentKey,
    /// A PEM file held no block with the expected label.
    #[error("{path}: no PEM block labelled {label}")]
    NoPem {
        /// The file.
        path: String,
        /// The label looked for ("CERTIFICATE", "PRIVATE KEY").
        label: &'static str,
    },
    /// An input pqkit will not read: not a regular file, or longer than the bound for its kind.
    #[error("{path}: {reason}")]
    Input {
        /// The file.
        path: String,
        /// Why, in words.
        reason: String,
    },
    /// An output file exists and may not be replaced (the CLI's `--force` replaces it).
    #[error("{0}: exists; refusing to overwrite it (--force replaces it)")]
    Exists(String),
    /// One command names the same output file twice.
    #[error("{0}: named as two outputs of one command")]
    DuplicateOutput(String),
    /// An output names one of the command's input files.
    #[error("{output}: is the input {input}; refusing to overwrite an input")]
    SameFile {
        /// The output path.
        output: String,
        /// The input it is.
        input: String,
    },
    /// A certificate path broke a rule of RFC 5280 §6 (names the certificate and the rule).
    #[error(transparent)]
    Path(#[from] crate::rule::PathError),
    /// A stateful key's state file refused to sign (exhausted, a copy, locked, a failed
    /// write): nothing was signed.
    #[error(transparent)]
    State(#[from] pqkit_hbs::state::StateError),
    /// An error in the contents of a file.
    #[error("{path}: {source}")]
    InFile {
        /// The file.
        path: String,
        /// What is wrong with it.
        source: Box<Error>,
    },
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
}

impl Error {
    pub(crate) fn malformed(what: &'static str, e: impl core::fmt::Display) -> Self {
        Self::Malformed {
            what,
            detail: e.to_string(),
        }
    }

    /// This error, naming the file it came from (I/O errors and missing blocks name it
    /// already).
    pub fn in_file(self, path: &std::path::Path) -> Self {
        match self {
            e @ (Self::Io { .. } | Self::NoPem { .. } | Self::InFile { .. }) => e,
            e => Self::InFile {
                path: path.display().to_string(),
                source: Box::new(e),
            },
        }
    }

    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        Self::Io {
            path: path.display().to_string(),
            source,
        }
    }
}
