//! Why a command failed, in words, and the exit status that says which kind of failure it was.
//!
//! | status | meaning |
//! |---|---|
//! | 0 | success |
//! | 1 | verification failed: a signature, a certificate chain, a handshake's peer |
//! | 2 | usage: an unknown option, algorithm or name, options that do not go together |
//! | 3 | anything else: a file that cannot be read or written, a malformed input, the network |
//!
//! Every message names what it is about (the file, the host:port, the certificate) and says
//! what went wrong in words; no `Debug` dump of a library's error reaches the user.

use std::error::Error;
use std::fmt;
use std::process::ExitCode;

/// Every subcommand's result: one error line and an exit status, printed by `main`.
pub(crate) type Result<T> = std::result::Result<T, Failure>;

/// The kinds of failure, each with its exit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Exit status 1.
    Verification,
    /// Exit status 2.
    Usage,
    /// Exit status 3.
    Other,
}

/// A failed command: its kind and a one-line message.
#[derive(Debug)]
pub(crate) struct Failure {
    kind: Kind,
    message: String,
}

impl Failure {
    /// A usage error (exit status 2).
    pub(crate) fn usage(message: impl Into<String>) -> Self {
        Self {
            kind: Kind::Usage,
            message: message.into(),
        }
    }

    /// A failed verification (exit status 1).
    pub(crate) fn verification(message: impl Into<String>) -> Self {
        Self {
            kind: Kind::Verification,
            message: message.into(),
        }
    }

    /// Any other failure (exit status 3).
    pub(crate) fn other(message: impl Into<String>) -> Self {
        Self {
            kind: Kind::Other,
            message: message.into(),
        }
    }

    /// The same failure, its message prefixed by what it is about (a file, a host:port).
    pub(crate) fn about(self, what: impl fmt::Display) -> Self {
        Self {
            kind: self.kind,
            message: format!("{what}: {}", self.message),
        }
    }

    /// The exit status of this failure.
    pub(crate) fn exit_code(&self) -> ExitCode {
        ExitCode::from(match self.kind {
            Kind::Verification => 1,
            Kind::Usage => 2,
            Kind::Other => 3,
        })
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&plain(&self.message))
    }
}

/// The phrases a message may carry from a library error wrapped in another's text, in words:
/// an errno suffix dropped, a socket deadline said as one, rustls's `Debug`-named reasons
/// spelled out.
pub(crate) fn plain(text: &str) -> String {
    let mut out = text
        .replace(
            "Resource temporarily unavailable (os error 11)",
            "no answer before the deadline",
        )
        .replace(
            "keys may not be consistent: KeyMismatch",
            "the private key does not match the certificate's public key",
        );
    if let Some(i) = out.find("received corrupt message of type ") {
        out.truncate(i);
        out.push_str("the peer sent a malformed TLS message (decode_error)");
    }
    while let Some(i) = out.find(" (os error ") {
        let Some(end) = out[i..].find(')') else { break };
        out.replace_range(i..i + end + 1, "");
    }
    out
}

/// Any library error: its message, and its kind from what it is (a signature that did not
/// verify, a certificate path that broke a rule, an unknown algorithm name).
impl<E: Error + 'static> From<E> for Failure {
    fn from(e: E) -> Self {
        Self {
            kind: kind_of(&e),
            message: words(&e),
        }
    }
}

/// A library error in words ([`plain`] then drops any errno left in the text). Most libraries'
/// `Display` is a sentence; these are not: an I/O error ends in its errno ("Resource temporarily unavailable (os error 11)" is a socket
/// deadline), and rustls names some variants by their `Debug` form ("InconsistentKeys
/// (KeyMismatch)", "MissingData(\"NamedGroup\")").
fn words(e: &(dyn Error + 'static)) -> String {
    if let Some(io) = e.downcast_ref::<std::io::Error>() {
        use std::io::ErrorKind as K;
        return match io.kind() {
            K::WouldBlock | K::TimedOut => "no answer before the deadline".to_owned(),
            K::ConnectionRefused => "connection refused: nothing listens there".to_owned(),
            K::ConnectionReset => "the peer reset the connection".to_owned(),
            K::UnexpectedEof => "the input or connection ended early".to_owned(),
            _ => io.to_string(),
        };
    }
    if let Some(tls) = e.downcast_ref::<rustls::Error>() {
        return match tls {
            rustls::Error::InconsistentKeys(_) => {
                "the private key does not match the certificate's public key".to_owned()
            }
            rustls::Error::InvalidMessage(_) => {
                "the peer sent a malformed TLS message (decode_error)".to_owned()
            }
            rustls::Error::InappropriateMessage { .. }
            | rustls::Error::InappropriateHandshakeMessage { .. } => {
                "the peer sent a TLS message out of order (unexpected_message)".to_owned()
            }
            other => other.to_string(),
        };
    }
    e.to_string()
}

/// Extension for `Result`s: name the file or peer an error is about.
pub(crate) trait Context<T> {
    /// Prefixes the error's message with `what` (unless it names it already).
    fn about(self, what: impl fmt::Display) -> Result<T>;
}

impl<T, E: Into<Failure>> Context<T> for std::result::Result<T, E> {
    fn about(self, what: impl fmt::Display) -> Result<T> {
        self.map_err(|e| {
            let f: Failure = e.into();
            let what = what.to_string();
            if f.message.starts_with(&what) {
                f
            } else {
                f.about(what)
            }
        })
    }
}

fn kind_of(e: &(dyn Error + 'static)) -> Kind {
    let mut cur: Option<&(dyn Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(core) = err.downcast_ref::<pqkit_core::Error>() {
            match core {
                pqkit_core::Error::BadSignature => return Kind::Verification,
                pqkit_core::Error::UnknownAlgorithm(_)
                | pqkit_core::Error::AmbiguousName { .. } => return Kind::Usage,
                _ => {}
            }
        }
        if let Some(pki) = err.downcast_ref::<pqkit_pki::Error>() {
            match pki {
                pqkit_pki::Error::Path(_) => return Kind::Verification,
                pqkit_pki::Error::SameFile { .. }
                | pqkit_pki::Error::DuplicateOutput(_)
                | pqkit_pki::Error::Input { .. } => {
                    return Kind::Usage;
                }
                pqkit_pki::Error::Crypto(pqkit_core::Error::BadSignature) => {
                    return Kind::Verification;
                }
                _ => {}
            }
        }
        if let Some(cms) = err.downcast_ref::<pqkit_pki::cms::CmsError>() {
            use pqkit_pki::cms::CmsError;
            return match cms {
                CmsError::NoContent | CmsError::ContentTwice | CmsError::TooLarge => Kind::Usage,
                CmsError::Pki(inner) => kind_of(inner),
                // Malformed input, as for any file (the table above).
                CmsError::Malformed(_) => Kind::Other,
                _ => Kind::Verification,
            };
        }
        if let Some(hbs) = err.downcast_ref::<pqkit_hbs::Error>()
            && matches!(hbs, pqkit_hbs::Error::Invalid)
        {
            return Kind::Verification;
        }
        cur = err.source();
    }
    Kind::Other
}
