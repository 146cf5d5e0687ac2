//! Code and document signing: CMS SignedData (RFC 5652 §5) with every pqkit signature.
//!
//! # What is signed
//! - [`sign`] reads the content once. With signed attributes (the default) each signer signs
//!   the DER of contentType, signingTime, messageDigest and CMSAlgorithmProtection (RFC 5652
//!   §5.4, §11; RFC 6211), so only a digest of the content reaches the key — a `pkcs11:` key
//!   never sees the content, and a detached signature of any length streams in constant
//!   memory. Without them ([`SignOptions::signed_attributes`] off, the Linux kernel module
//!   style) each signature covers the content itself: ML-DSA streams it through μ (FIPS 204
//!   §6.2), every other algorithm holds it (at most [`MAX_HELD_CONTENT`] bytes).
//! - Signature algorithms: ML-DSA (RFC 9882: pure, empty context), SLH-DSA (RFC 9814),
//!   HSS/LMS (RFC 9708) and XMSS/XMSS^MT (RFC 9802 identifiers) from pqkit-hbs state files —
//!   a one-time key is reserved before it signs, and spent only after every other check —
//!   Falcon, ECDSA (RFC 5753), Ed25519 (RFC 8419), RSA PKCS#1 v1.5 and RSASSA-PSS.
//! - Digest algorithms ([`digest`]): each signature algorithm's profile names one
//!   ([`digest::default_for`]); verifiers accept it or any at least as strong, Ed25519 only
//!   SHA-512 ([`digest::allowed`]).
//!
//! # What a verifier checks ([`verify`])
//! For each signer: its certificate (carried or given) by issuer and serial number or
//! subjectKeyIdentifier; a digest algorithm its profile allows; the signature algorithm one
//! the certificate's key makes; contentType present once and equal to the content's type,
//! messageDigest present once and equal to the content's digest, no attribute type twice,
//! CMSAlgorithmProtection (when present) naming the signer's algorithms; the signature; and
//! the certificate's path to a trust anchor under a [`Policy`](crate::path::Policy) (the CLI
//! asks for codeSigning). Then [`Require`]: every signer, or at least one.
//!
//! A signer's RFC 3161 time-stamp token ([`timestamp`]), when it has one, is verified (the
//! TSA's path for timeStamping) and the signer's certificate is then validated at the time it
//! proves.
//!
//! Not yet: composite ML-DSA signers.
//!
//! Input may be BER (Bouncy Castle writes indefinite lengths): it is read as DER after a
//! conversion (the private `ber` module) that copies DER parts unchanged.

pub mod digest;
pub mod oids;

mod attributes;
mod ber;
mod content;
mod decode;
mod error;

mod refusal;
mod show;
mod sign;
pub mod timestamp;
mod verify;

pub use content::{CHUNK, MAX_HELD_CONTENT};
pub use digest::DigestAlgorithm;
pub use error::{CmsError, Require, SignerVerdict};
pub use refusal::Refusal;
pub use show::{Description, SignerDescription, describe};
pub use sign::{SignOptions, Signer, SignerKey, sign};
pub use verify::{Verified, VerifyOptions, verify};

/// The PEM label of a CMS object (RFC 7468 §9).
pub const PEM_LABEL: &str = "CMS";
