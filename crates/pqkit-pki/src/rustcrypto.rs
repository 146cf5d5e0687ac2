//! pqkit's keys behind RustCrypto's `pkcs8` 0.11 and `spki` 0.8 encoding traits (the versions
//! RustCrypto's `ml-dsa` 0.1, `rsa` 0.10 and `ecdsa` 0.17 implement), so that code generic over
//! [`DecodePrivateKey`] / [`EncodePublicKey`] reads and writes pqkit keys of every catalogue
//! algorithm, in the forms [`crate::key`] reads and writes:
//!
//! | type | traits | encoding |
//! |---|---|---|
//! | [`PrivateKey`] | [`DecodePrivateKey`], [`EncodePrivateKey`] | PKCS#8 (RFC 5958): a signing or decapsulation key; ML-DSA (RFC 9881 §6) and ML-KEM (RFC 9935 §6) read in any of the seed, expanded and both forms and written in the seed form — or the expanded form for a key read without its seed; SLH-DSA (RFC 9909), Falcon, composite ML-DSA and classical keys in their one form |
//! | [`PublicKey`] | [`DecodePublicKey`], [`EncodePublicKey`] | SubjectPublicKeyInfo (RFC 5280 §4.1.2.7): a verifying or encapsulation key |
//!
//! An RSA key reads back as RSA-PSS whatever it was made for: rsaEncryption (RFC 8017 A.1)
//! does not say which padding (pqkit's key files are read the same way). A key held in a
//! token has no PKCS#8 form: encoding one fails ([`pkcs8::Error::KeyMalformed`]).
//! Errors are the traits' kinds: DER that is no PrivateKeyInfo / SubjectPublicKeyInfo is
//! `Asn1`, an algorithm outside the catalogue `OidUnknown` (as RustCrypto's own key types
//! answer), any other refusal `KeyMalformed`. Decoding is strict RFC 7468 PEM (pqkit's own
//! reader, [`crate::pem`], is more lenient). The SecretDocument the encoder returns zeroizes
//! on drop.
//!
//! ```
//! use pqkit_pki::key::PublicKey;
//! use pqkit_pki::rustcrypto::pkcs8::{self, DecodePrivateKey, EncodePrivateKey, LineEnding};
//! use pqkit_pki::rustcrypto::PrivateKey;
//! use pqkit_pki::rustcrypto::spki::EncodePublicKey;
//!
//! /// Third-party code: any key type with PKCS#8.
//! fn round_trip<K: DecodePrivateKey + EncodePrivateKey>(
//!     pem: &str,
//! ) -> pkcs8::Result<zeroize::Zeroizing<String>> {
//!     K::from_pkcs8_pem(pem)?.to_pkcs8_pem(LineEnding::LF)
//! }
//!
//! let key = pqkit_core::catalogue::signature("ML-DSA-65")?.generate()?;
//! let pem = PrivateKey::Signing(key).to_pkcs8_pem(LineEnding::LF)?;
//! assert_eq!(round_trip::<PrivateKey>(&pem)?, pem);
//! let signing = PrivateKey::from_pkcs8_pem(&pem)?.into_signing_key().expect("a signing key");
//! let spki = PublicKey::Verifying(signing.verifying_key()).to_public_key_der()?;
//! assert_eq!(spki.as_bytes().len(), 1974);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub use {pkcs8_011 as pkcs8, spki_08 as spki};

use pkcs8_011::{DecodePrivateKey, EncodePrivateKey, KeyError, SecretDocument};
use pqkit_core::kem::DecapsulationKey;
use pqkit_core::sig::SigningKey;
use spki_08::{DecodePublicKey, Document, EncodePublicKey};

use crate::error::Error;
use crate::key::{self, KeyFormat, PublicKey};

/// A private key of either kind, as PKCS#8 holds it.
#[derive(Debug)]
pub enum PrivateKey {
    /// A signature signing key.
    Signing(SigningKey),
    /// A KEM decapsulation key.
    Decapsulation(DecapsulationKey),
}

impl PrivateKey {
    /// The signing key, if this is one.
    pub fn into_signing_key(self) -> Option<SigningKey> {
        match self {
            Self::Signing(k) => Some(k),
            Self::Decapsulation(_) => None,
        }
    }

    /// The decapsulation key, if this is one.
    pub fn into_decapsulation_key(self) -> Option<DecapsulationKey> {
        match self {
            Self::Decapsulation(k) => Some(k),
            Self::Signing(_) => None,
        }
    }
}

impl From<SigningKey> for PrivateKey {
    fn from(k: SigningKey) -> Self {
        Self::Signing(k)
    }
}

impl From<DecapsulationKey> for PrivateKey {
    fn from(k: DecapsulationKey) -> Self {
        Self::Decapsulation(k)
    }
}

/// A pqkit-pki error as the traits' kinds: an algorithm pqkit does not know is
/// `OidUnknown` (as RustCrypto's own key types answer, so generic code can try another type),
/// anything else a malformed key.
fn private_error(e: &Error, oid: spki_08::ObjectIdentifier) -> pkcs8_011::Error {
    match e {
        Error::UnknownAlgorithm(_) => {
            pkcs8_011::Error::PublicKey(spki_08::Error::OidUnknown { oid })
        }
        _ => pkcs8_011::Error::KeyMalformed(KeyError::Invalid),
    }
}

fn public_error(e: &Error, oid: spki_08::ObjectIdentifier) -> spki_08::Error {
    match e {
        Error::UnknownAlgorithm(_) => spki_08::Error::OidUnknown { oid },
        _ => spki_08::Error::KeyMalformed,
    }
}

/// The form to write: the seed where the key has one (ML-DSA, ML-KEM), else the expanded key
/// (a key read from an expanded-form file, and every algorithm with one form).
fn format(seed: Option<&[u8]>) -> KeyFormat {
    if seed.is_some() {
        KeyFormat::Seed
    } else {
        KeyFormat::Expanded
    }
}

impl DecodePrivateKey for PrivateKey {
    /// # Errors
    /// [`pkcs8_011::Error::Asn1`] for DER that is no PrivateKeyInfo;
    /// [`spki_08::Error::OidUnknown`] (in [`pkcs8_011::Error::PublicKey`]) for an algorithm
    /// outside the catalogue; [`pkcs8_011::Error::KeyMalformed`] for anything else
    /// [`key::signing_key_from_pkcs8`] or [`key::decapsulation_key_from_pkcs8`] refuse.
    fn from_pkcs8_der(bytes: &[u8]) -> pkcs8_011::Result<Self> {
        let oid = pkcs8_011::PrivateKeyInfoRef::try_from(bytes)?.algorithm.oid;
        match key::pkcs8_algorithm(bytes) {
            Ok(key::Algorithm::Signature(_)) => {
                key::signing_key_from_pkcs8(bytes).map(Self::Signing)
            }
            Ok(key::Algorithm::Kem(_)) => {
                key::decapsulation_key_from_pkcs8(bytes).map(Self::Decapsulation)
            }
            Err(e) => Err(e),
        }
        .map_err(|e| private_error(&e, oid))
    }
}

impl EncodePrivateKey for PrivateKey {
    /// The seed form where the key has a seed, else the expanded key (module docs).
    ///
    /// # Errors
    /// [`pkcs8_011::Error::KeyMalformed`] for a key without a PKCS#8 form (in a token).
    fn to_pkcs8_der(&self) -> pkcs8_011::Result<SecretDocument> {
        let der = match self {
            Self::Signing(k) => key::signing_key_to_pkcs8(k, format(k.seed())),
            Self::Decapsulation(k) => key::decapsulation_key_to_pkcs8(k, format(k.seed())),
        }
        .map_err(|_| pkcs8_011::Error::KeyMalformed(KeyError::Invalid))?;
        SecretDocument::try_from(&der[..]).map_err(pkcs8_011::Error::Asn1)
    }
}

impl DecodePublicKey for PublicKey {
    /// # Errors
    /// [`spki_08::Error::Asn1`] for DER that is no SubjectPublicKeyInfo;
    /// [`spki_08::Error::OidUnknown`] for an algorithm outside the catalogue;
    /// [`spki_08::Error::KeyMalformed`] for anything else [`key::public_key_from_spki`]
    /// refuses.
    fn from_public_key_der(bytes: &[u8]) -> spki_08::Result<Self> {
        let oid = spki_08::SubjectPublicKeyInfoRef::try_from(bytes)?
            .algorithm
            .oid;
        key::public_key_from_spki(bytes).map_err(|e| public_error(&e, oid))
    }
}

impl EncodePublicKey for PublicKey {
    /// # Errors
    /// [`spki_08::Error::KeyMalformed`] if encoding fails.
    fn to_public_key_der(&self) -> spki_08::Result<Document> {
        let der = match self {
            Self::Verifying(k) => key::spki_der(k),
            Self::Encapsulation(k) => key::encapsulation_key_spki_der(k),
        }
        .map_err(|_| spki_08::Error::KeyMalformed)?;
        Document::try_from(der).map_err(spki_08::Error::Asn1)
    }
}
