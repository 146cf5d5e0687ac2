//! pqkit's signature keys behind the RustCrypto `signature` traits (version 3), so that code
//! written for "any signer" — a function generic over [`signature::Signer`] — signs with a pqkit
//! key: one in memory, or one held in a PKCS#11 token (`pqkit_pkcs11`'s `TokenKey::
//! into_signing_key` gives a [`SigningKey`] too).
//!
//! | trait | on | what it does |
//! |---|---|---|
//! | [`Signer<Signature>`] | [`SigningKey`], [`ContextSigner`] | pure signing (FIPS 204 Algorithm 2 ML-DSA.Sign, FIPS 205 Algorithm 22 slh_sign, …), hedged, with the empty context string or the one of [`SigningKey::with_context`] |
//! | [`RandomizedSigner<Signature>`] | the same | the same, the per-signature randomness drawn from the caller's generator where a poor or repeating generator costs no more than the standard's deterministic variant (FIPS 204 §3.4, FIPS 205 §9.2): ML-DSA `rnd` (32 bytes, FIPS 204 Algorithm 2 line 3; for composite ML-DSA, its ML-DSA half) and SLH-DSA `addrnd` (n bytes, FIPS 205 Algorithm 22 line 2). Where a repeat would leak the key — Falcon's sampler, ECDSA's nonce — and for RSA, Ed25519 and keys in a token (randomness made inside the boundary), the key's own randomness, the generator unused |
//! | [`MultipartSigner<Signature>`], [`RandomizedMultipartSigner<Signature>`] | the same | the parts in order, signed as one message |
//! | [`Keypair`] | [`SigningKey`] | its [`VerifyingKey`] |
//! | [`Verifier<Signature>`], [`MultipartVerifier<Signature>`] | [`VerifyingKey`], [`ContextVerifier`] | verification (FIPS 204 Algorithm 3, FIPS 205 Algorithm 24, …) |
//!
//! So a poor or fixed generator costs the randomized form no more than the deterministic
//! variants (the randomness only hedges against side channels and faults), and the trait stays
//! beside the everyday API; fixed randomness for known-answer tests keeps to
//! [`SigningRandomness::Fixed`].
//!
//! [`Signature`] is the encoded signature of any algorithm in the catalogue, its bytes as the
//! standard defines them (3 309 bytes for ML-DSA-65, 17 088 for SLH-DSA-SHA2-128f, …). Errors
//! are opaque [`signature::Error`]s whose source is the pqkit [`Error`] (for verification,
//! [`Error::BadSignature`] whatever the reason).
//!
//! ```
//! use pqkit_core::rustcrypto::Signature;
//! use signature::{Signer, Verifier};
//!
//! /// Third-party code: signs with any signer.
//! fn sign_release<S: Signer<Signature>>(signer: &S, release: &[u8]) -> Signature {
//!     signer.sign(release)
//! }
//!
//! let key = pqkit_core::catalogue::signature("ML-DSA-65")?.generate()?;
//! let signature = sign_release(&key, b"v1.2.3");
//! assert_eq!(signature.as_bytes().len(), 3309);
//! // The trait's verify (the key's own takes a context string too).
//! Verifier::verify(&key.verifying_key(), b"v1.2.3", &signature)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod kem;

use core::fmt;
use std::sync::OnceLock;

use signature::rand_core::TryCryptoRng;
use signature::{
    Keypair, MultipartSigner, MultipartVerifier, RandomizedMultipartSigner, RandomizedSigner,
    SignatureEncoding, Signer, Verifier,
};

use crate::error::Error;
use crate::sig::{Family, SigningKey, SigningRandomness, VerifyingKey, check_context};

/// An encoded signature of any algorithm in the catalogue (1 to [`max_signature_size`]
/// bytes; its algorithm is its key's).
#[derive(Clone, PartialEq, Eq)]
pub struct Signature(Box<[u8]>);

impl Signature {
    /// The encoded signature.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

/// The largest signature of any algorithm in the catalogue, in bytes (the bound
/// [`Signature`]'s `TryFrom<&[u8]>` checks).
pub fn max_signature_size() -> usize {
    static MAX: OnceLock<usize> = OnceLock::new();
    *MAX.get_or_init(|| {
        crate::catalogue::signatures()
            .iter()
            .map(|a| a.signature_size)
            .max()
            .unwrap_or(0)
    })
}

impl TryFrom<&[u8]> for Signature {
    type Error = signature::Error;

    /// # Errors
    /// Empty, or longer than [`max_signature_size`].
    fn try_from(bytes: &[u8]) -> Result<Self, Self::Error> {
        if bytes.is_empty() || bytes.len() > max_signature_size() {
            return Err(signature::Error::from_source(Error::InvalidLength {
                what: "signature",
                expected: max_signature_size(),
                got: bytes.len(),
            }));
        }
        Ok(Self(bytes.into()))
    }
}

impl From<Signature> for Box<[u8]> {
    fn from(s: Signature) -> Self {
        s.0
    }
}

impl AsRef<[u8]> for Signature {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl SignatureEncoding for Signature {
    type Repr = Box<[u8]>;
}

impl fmt::Debug for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let head: String = self.0.iter().take(8).map(|b| format!("{b:02x}")).collect();
        write!(f, "Signature({} bytes: {head}…)", self.0.len())
    }
}

impl SigningKey {
    /// This key signing with context string `context` (FIPS 204 §5.2, FIPS 205 §10.2; the
    /// domain separation the RustCrypto traits have no argument for).
    ///
    /// # Errors
    /// [`Error::ContextTooLong`] over 255 bytes; [`Error::Unsupported`] for an algorithm that
    /// takes no context (Falcon, ECDSA, Ed25519, RSA) and a non-empty one.
    pub fn with_context<'a>(&'a self, context: &'a [u8]) -> Result<ContextSigner<'a>, Error> {
        check_context(self.algorithm(), context)?;
        Ok(ContextSigner { key: self, context })
    }
}

impl VerifyingKey {
    /// This key verifying with context string `context` (see [`SigningKey::with_context`]).
    ///
    /// # Errors
    /// As [`SigningKey::with_context`].
    pub fn with_context<'a>(&'a self, context: &'a [u8]) -> Result<ContextVerifier<'a>, Error> {
        check_context(self.algorithm(), context)?;
        Ok(ContextVerifier { key: self, context })
    }
}

/// A [`SigningKey`] with a context string, from [`SigningKey::with_context`].
#[derive(Clone, Copy, Debug)]
pub struct ContextSigner<'a> {
    key: &'a SigningKey,
    context: &'a [u8],
}

/// A [`VerifyingKey`] with a context string, from [`VerifyingKey::with_context`].
#[derive(Clone, Copy, Debug)]
pub struct ContextVerifier<'a> {
    key: &'a VerifyingKey,
    context: &'a [u8],
}

fn opaque(e: Error) -> signature::Error {
    signature::Error::from_source(e)
}

/// Fills its buffer with a caller's randomness.
type Fill<'a> = &'a mut dyn FnMut(&mut [u8]) -> Result<(), Error>;

/// `fill` from a RustCrypto generator.
fn from_rng<R: TryCryptoRng + ?Sized>(rng: &mut R) -> impl FnMut(&mut [u8]) -> Result<(), Error> {
    |buf| rng.try_fill_bytes(buf).map_err(|_| Error::Rng)
}

/// Signs `message` with `key` and `context`, the randomness from `fill` where the module docs
/// say so, else the key's own.
fn sign(
    key: &SigningKey,
    context: &[u8],
    message: &[u8],
    fill: Option<Fill<'_>>,
) -> Result<Signature, signature::Error> {
    let alg = key.algorithm();
    // Only where a repeat costs no more than the standard's deterministic variant: not
    // Falcon's sampler or ECDSA's nonce, whose repeats would leak the key.
    let size = match alg.family {
        _ if !key.takes_randomness() => None,
        Family::MlDsa | Family::CompositeMlDsa => Some(crate::sig::SIGNING_RANDOMNESS_SIZE),
        // n: the verifying key is PK.seed ‖ PK.root, 2n bytes (FIPS 205 §9.1).
        Family::SlhDsa => Some(alg.verifying_key_size / 2),
        _ => None,
    };
    let signed = match (fill, size) {
        (Some(fill), Some(size)) => {
            let mut randomness = zeroize::Zeroizing::new(vec![0u8; size]);
            fill(&mut randomness).map_err(opaque)?;
            key.sign_with(message, context, SigningRandomness::Fixed(&randomness))
        }
        _ => key.sign(message, context),
    };
    signed
        .map(|s| Signature(s.into_boxed_slice()))
        .map_err(opaque)
}

/// The parts of a multipart message as one (the traits' multipart forms).
fn joined(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

fn verify(
    key: &VerifyingKey,
    context: &[u8],
    message: &[u8],
    signature: &Signature,
) -> Result<(), signature::Error> {
    key.verify(message, context, signature.as_bytes())
        .map_err(opaque)
}

impl Signer<Signature> for SigningKey {
    fn try_sign(&self, msg: &[u8]) -> Result<Signature, signature::Error> {
        sign(self, &[], msg, None)
    }
}

impl Signer<Signature> for ContextSigner<'_> {
    fn try_sign(&self, msg: &[u8]) -> Result<Signature, signature::Error> {
        sign(self.key, self.context, msg, None)
    }
}

impl RandomizedSigner<Signature> for SigningKey {
    fn try_sign_with_rng<R: TryCryptoRng + ?Sized>(
        &self,
        rng: &mut R,
        msg: &[u8],
    ) -> Result<Signature, signature::Error> {
        sign(self, &[], msg, Some(&mut from_rng(rng)))
    }
}

impl RandomizedSigner<Signature> for ContextSigner<'_> {
    fn try_sign_with_rng<R: TryCryptoRng + ?Sized>(
        &self,
        rng: &mut R,
        msg: &[u8],
    ) -> Result<Signature, signature::Error> {
        sign(self.key, self.context, msg, Some(&mut from_rng(rng)))
    }
}

impl MultipartSigner<Signature> for SigningKey {
    fn try_multipart_sign(&self, msg: &[&[u8]]) -> Result<Signature, signature::Error> {
        sign(self, &[], &joined(msg), None)
    }
}

impl MultipartSigner<Signature> for ContextSigner<'_> {
    fn try_multipart_sign(&self, msg: &[&[u8]]) -> Result<Signature, signature::Error> {
        sign(self.key, self.context, &joined(msg), None)
    }
}

impl RandomizedMultipartSigner<Signature> for SigningKey {
    fn try_multipart_sign_with_rng<R: TryCryptoRng + ?Sized>(
        &self,
        rng: &mut R,
        msg: &[&[u8]],
    ) -> Result<Signature, signature::Error> {
        sign(self, &[], &joined(msg), Some(&mut from_rng(rng)))
    }
}

impl RandomizedMultipartSigner<Signature> for ContextSigner<'_> {
    fn try_multipart_sign_with_rng<R: TryCryptoRng + ?Sized>(
        &self,
        rng: &mut R,
        msg: &[&[u8]],
    ) -> Result<Signature, signature::Error> {
        sign(
            self.key,
            self.context,
            &joined(msg),
            Some(&mut from_rng(rng)),
        )
    }
}

impl Keypair for SigningKey {
    type VerifyingKey = VerifyingKey;

    fn verifying_key(&self) -> VerifyingKey {
        SigningKey::verifying_key(self)
    }
}

impl Verifier<Signature> for VerifyingKey {
    fn verify(&self, msg: &[u8], signature: &Signature) -> Result<(), signature::Error> {
        verify(self, &[], msg, signature)
    }
}

impl Verifier<Signature> for ContextVerifier<'_> {
    fn verify(&self, msg: &[u8], signature: &Signature) -> Result<(), signature::Error> {
        verify(self.key, self.context, msg, signature)
    }
}

impl MultipartVerifier<Signature> for VerifyingKey {
    fn multipart_verify(
        &self,
        msg: &[&[u8]],
        signature: &Signature,
    ) -> Result<(), signature::Error> {
        verify(self, &[], &joined(msg), signature)
    }
}

impl MultipartVerifier<Signature> for ContextVerifier<'_> {
    fn multipart_verify(
        &self,
        msg: &[&[u8]],
        signature: &Signature,
    ) -> Result<(), signature::Error> {
        verify(self.key, self.context, &joined(msg), signature)
    }
}
