//! The results of verifying a SignedData: the policy over signers, each signer's verdict,
//! and why a signed object as a whole is refused.

use std::time::SystemTime;

use super::refusal::Refusal;
use crate::error::Error;
use crate::path::VerifiedPath;

/// How many of several signers must verify.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Require {
    /// Every signer considered (default): e.g. a post-quantum and a classical signer together.
    #[default]
    All,
    /// At least one.
    Any,
}

impl Require {
    /// From `all` or `any`.
    ///
    /// # Errors
    /// The accepted names, for another.
    pub fn from_name(name: &str) -> Result<Self, String> {
        match name.to_ascii_lowercase().as_str() {
            "all" => Ok(Self::All),
            "any" => Ok(Self::Any),
            _ => Err(format!("{name:?}: expected all or any")),
        }
    }
}

/// One signer's result.
#[derive(Clone, Debug)]
pub struct SignerVerdict {
    /// Its place among the SignerInfos (0-based).
    pub index: usize,
    /// Its certificate's subject (RFC 4514), or the signer identifier when none was found.
    pub signer: String,
    /// The signature algorithm's name (or OID).
    pub signature_algorithm: String,
    /// The digest algorithm's name (or OID).
    pub digest: String,
    /// The signingTime attribute, when signed.
    pub signing_time: Option<SystemTime>,
    /// Whether it had signed attributes.
    pub signed_attributes: bool,
    /// The time its RFC 3161 time-stamp token proves (its certificate was validated then), or
    /// `None` without a token.
    pub timestamp: Option<SystemTime>,
    /// The validated path (leaf first), or why the signer is refused.
    pub result: Result<VerifiedPath, Refusal>,
}

/// Why a signed object as a whole is refused.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum CmsError {
    /// Not a ContentInfo holding a SignedData, or it does not decode.
    #[error("not a CMS SignedData: {0}")]
    Malformed(String),
    /// Detached: the content must be given.
    #[error("the SignedData is detached: give the signed content")]
    NoContent,
    /// Attached, and content was given too.
    #[error("the SignedData holds its content; do not give it separately")]
    ContentTwice,
    /// The content is longer than what may be held in memory here.
    #[error("content over {} MiB cannot be held to verify a signer without signed attributes", super::content::MAX_HELD_CONTENT >> 20)]
    TooLarge,
    /// No SignerInfo, or none whose certificate is one asked for.
    #[error("no signer to verify{0}")]
    NoSigner(&'static str),
    /// `Require::All` with signers asked for by certificate: one of them has no SignerInfo.
    #[error("no signature by {0}, a signer required")]
    MissingSigner(String),
    /// Reading the content, or another error of pqkit-pki.
    #[error(transparent)]
    Pki(#[from] Error),
    /// The policy over signers failed; each verdict says why.
    #[error("{}", rejected(.require, .verdicts))]
    Rejected {
        /// The policy.
        require: Require,
        /// Every signer's verdict.
        verdicts: Vec<SignerVerdict>,
    },
}

fn rejected(require: &Require, verdicts: &[SignerVerdict]) -> String {
    let ok = verdicts.iter().filter(|v| v.result.is_ok()).count();
    let mut s = format!(
        "{ok} of {} signers verify (required: {})",
        verdicts.len(),
        match require {
            Require::All => "all",
            Require::Any => "any",
        }
    );
    for v in verdicts {
        if let Err(r) = &v.result {
            s.push_str(&format!("\n  signer {} ({}): {r}", v.index, v.signer));
        }
    }
    s
}
