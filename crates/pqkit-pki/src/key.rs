//! Private keys as PKCS#8 (RFC 5958) and public keys as SPKI (RFC 5280 §4.1.2.7).
//!
//! ML-DSA private keys use the RFC 9881 §6 `ML-DSA-PrivateKey` CHOICE inside the PKCS#8
//! `privateKey` OCTET STRING: `seed [0] IMPLICIT OCTET STRING (32)` (written by default),
//! `expandedKey OCTET STRING`, or `both SEQUENCE { seed, expandedKey }`.

use der::asn1::{AnyRef, BitString, ContextSpecific, OctetStringRef};
use der::{Decode, Encode, Tag, TagMode, TagNumber, Tagged};
use pkcs8::PrivateKeyInfo;
use pqkit_core::catalogue;
use pqkit_core::sig::{SignatureAlgorithm, SigningKey, VerifyingKey};
use spki::{AlgorithmIdentifierOwned, SubjectPublicKeyInfoOwned, SubjectPublicKeyInfoRef};
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use crate::error::Error;

/// Which `ML-DSA-PrivateKey` form to write (RFC 9881 §6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyFormat {
    /// The 32-byte seed ξ only (default; 54 bytes of PKCS#8 for every ML-DSA level).
    Seed,
    /// Seed and expanded key together.
    Both,
}

/// Encodes a signing key as PKCS#8 DER: the seed form for post-quantum keys, the backend's
/// encoding for classical keys.
///
/// # Errors
/// [`Error::Crypto`] if the key has neither a seed nor a classical encoding;
/// [`Error::Malformed`] if encoding fails.
pub fn signing_key_to_pkcs8(
    key: &SigningKey,
    format: KeyFormat,
) -> Result<Zeroizing<Vec<u8>>, Error> {
    if let Some(der) = key.classical_pkcs8() {
        return Ok(der);
    }
    let enc = |e| Error::malformed("PKCS#8 private key", e);
    let seed = key
        .seed()
        .ok_or(pqkit_core::Error::Unsupported("key has no seed to encode"))?;
    let inner = Zeroizing::new(match format {
        KeyFormat::Seed => ContextSpecific {
            tag_number: TagNumber::N0,
            tag_mode: TagMode::Implicit,
            value: OctetStringRef::new(seed).map_err(enc)?,
        }
        .to_der()
        .map_err(enc)?,
        KeyFormat::Both => {
            let expanded = key.expanded().ok_or(pqkit_core::Error::Unsupported(
                "key cannot export its expanded form",
            ))?;
            Both {
                seed: OctetStringRef::new(seed).map_err(enc)?,
                expanded: OctetStringRef::new(&expanded).map_err(enc)?,
            }
            .to_der()
            .map_err(enc)?
        }
    });
    encode_pkcs8(key.algorithm(), &inner, None)
}

/// Wraps an encoded private key in PKCS#8 (`public_key` makes it a RFC 5958 v2 key).
fn encode_pkcs8(
    alg: &SignatureAlgorithm,
    private_key: &[u8],
    public_key: Option<&[u8]>,
) -> Result<Zeroizing<Vec<u8>>, Error> {
    let alg = algorithm_identifier(alg.spki_algorithm_id)?;
    let info = PrivateKeyInfo {
        algorithm: spki::AlgorithmIdentifierRef {
            oid: alg.oid,
            parameters: alg.parameters.as_ref().map(Into::into),
        },
        private_key,
        public_key,
    };
    let der = info
        .to_der()
        .map_err(|e| Error::malformed("PKCS#8 private key", e))?;
    Ok(Zeroizing::new(der))
}

/// Decodes a PKCS#8 private key of any catalogue algorithm.
///
/// ML-DSA keys may be in seed form or "both" form; a "both" key whose expanded half does not
/// match the seed, or a v2 key whose public key does not match, is rejected. Expanded-only
/// ML-DSA keys are not yet accepted.
///
/// # Errors
/// [`Error::Malformed`], [`Error::UnknownAlgorithm`], [`Error::InconsistentKey`] or
/// [`Error::Crypto`]. Never panics on any input.
pub fn signing_key_from_pkcs8(der: &[u8]) -> Result<SigningKey, Error> {
    let (info, alg) = parse_pkcs8(der)?;
    let key = if alg.seed_size == 0 {
        alg.signing_key_from_pkcs8(der)?
    } else {
        post_quantum_key(alg, info.private_key)?
    };
    // A PKCS#8 v2 (RFC 5958) public key, when present, must be this key's.
    if let Some(public) = info.public_key
        && public != key.verifying_key().as_bytes()
    {
        return Err(Error::InconsistentKey);
    }
    Ok(key)
}

/// The catalogue algorithm a PKCS#8 private key is for, without decoding the key.
///
/// # Errors
/// [`Error::Malformed`] or [`Error::UnknownAlgorithm`].
pub fn pkcs8_algorithm(der: &[u8]) -> Result<&'static SignatureAlgorithm, Error> {
    Ok(parse_pkcs8(der)?.1)
}

fn parse_pkcs8(der: &[u8]) -> Result<(PrivateKeyInfo<'_>, &'static SignatureAlgorithm), Error> {
    let bad = |e| Error::malformed("PKCS#8 private key", e);
    let info = PrivateKeyInfo::from_der(der).map_err(bad)?;
    let alg = algorithm_of(&info.algorithm.to_der().map_err(bad)?)?;
    Ok((info, alg))
}

/// Decodes the RFC 9881 §6 `ML-DSA-PrivateKey` CHOICE.
fn post_quantum_key(
    alg: &'static SignatureAlgorithm,
    private_key: &[u8],
) -> Result<SigningKey, Error> {
    let bad = |e| Error::malformed("PKCS#8 private key", e);
    let choice = AnyRef::from_der(private_key).map_err(bad)?;
    match choice.tag() {
        Tag::ContextSpecific {
            constructed: false,
            number: TagNumber::N0,
        } => Ok(alg.signing_key_from_seed(choice.value())?),
        Tag::Sequence => {
            let both: Both<'_> = choice.decode_as().map_err(bad)?;
            let key = alg.signing_key_from_seed(both.seed.as_bytes())?;
            let derived = key.expanded().ok_or(Error::InconsistentKey)?;
            let given = both.expanded.as_bytes();
            if derived.len() != given.len() || !bool::from(derived.ct_eq(given)) {
                return Err(Error::InconsistentKey);
            }
            Ok(key)
        }
        Tag::OctetString => Err(pqkit_core::Error::Unsupported(
            "expanded-only ML-DSA private keys are not accepted yet; use the seed form",
        )
        .into()),
        _ => Err(bad(der::Error::from(der::ErrorKind::TagUnexpected {
            expected: None,
            actual: choice.tag(),
        }))),
    }
}

/// The SPKI of a verifying key.
///
/// # Errors
/// [`Error::Malformed`] if encoding fails.
pub fn spki(key: &VerifyingKey) -> Result<SubjectPublicKeyInfoOwned, Error> {
    Ok(SubjectPublicKeyInfoOwned {
        algorithm: algorithm_identifier(key.algorithm().spki_algorithm_id)?,
        subject_public_key: BitString::from_bytes(key.as_bytes())
            .map_err(|e| Error::malformed("public key", e))?,
    })
}

/// The DER SPKI of a verifying key.
///
/// # Errors
/// [`Error::Malformed`] if encoding fails.
pub fn spki_der(key: &VerifyingKey) -> Result<Vec<u8>, Error> {
    spki(key)?.to_der().map_err(|e| Error::malformed("SPKI", e))
}

/// Decodes an SPKI into a verifying key of a catalogue algorithm.
///
/// # Errors
/// [`Error::Malformed`], [`Error::UnknownAlgorithm`] or [`Error::Crypto`] (wrong key length).
pub fn verifying_key_from_spki(der: &[u8]) -> Result<VerifyingKey, Error> {
    let bad = |e| Error::malformed("SPKI", e);
    let spki = SubjectPublicKeyInfoRef::from_der(der).map_err(bad)?;
    let alg = algorithm_of(&spki.algorithm.to_der().map_err(bad)?)?;
    let bits = spki
        .subject_public_key
        .as_bytes()
        .ok_or(Error::malformed("SPKI", "unused bits"))?;
    Ok(alg.verifying_key(bits)?)
}

/// An `AlgorithmIdentifier` from the DER contents the catalogue stores.
pub(crate) fn algorithm_identifier(contents: &[u8]) -> Result<AlgorithmIdentifierOwned, Error> {
    let bad = |e| Error::malformed("AlgorithmIdentifier", e);
    AnyRef::new(Tag::Sequence, contents)
        .map_err(bad)?
        .decode_as()
        .map_err(bad)
}

/// The catalogue's signature algorithm for a DER-encoded `AlgorithmIdentifier`.
pub(crate) fn algorithm_of(alg_der: &[u8]) -> Result<&'static SignatureAlgorithm, Error> {
    let any = AnyRef::from_der(alg_der).map_err(|e| Error::malformed("AlgorithmIdentifier", e))?;
    catalogue::signature_by_spki_algorithm(any.value())
        .ok_or(Error::UnknownAlgorithm("AlgorithmIdentifier"))
}

/// RFC 9881 §6 `both` form of `ML-DSA-PrivateKey`.
#[derive(der::Sequence)]
struct Both<'a> {
    seed: OctetStringRef<'a>,
    expanded: OctetStringRef<'a>,
}

#[cfg(test)]
mod tests {
    use pqkit_core::ml_dsa::ML_DSA_65;

    use super::*;

    #[test]
    fn seed_form_matches_rfc_9881_layout_and_round_trips() {
        let key = ML_DSA_65.signing_key_from_seed(&[7u8; 32]).expect("key");
        let der = signing_key_to_pkcs8(&key, KeyFormat::Seed).expect("pkcs8");
        // RFC 9881 Appendix C: seed-form PKCS#8 is 54 bytes with the seed at the end.
        assert_eq!(der.len(), 54);
        assert_eq!(&der[der.len() - 34..der.len() - 32], &[0x80, 0x20]);
        let back = signing_key_from_pkcs8(&der).expect("decode");
        assert_eq!(back.verifying_key(), key.verifying_key());
    }

    #[test]
    fn both_form_round_trips_and_rejects_disagreeing_halves() {
        let key = ML_DSA_65.signing_key_from_seed(&[9u8; 32]).expect("key");
        let der = signing_key_to_pkcs8(&key, KeyFormat::Both).expect("pkcs8");
        assert_eq!(
            signing_key_from_pkcs8(&der)
                .expect("decode")
                .verifying_key(),
            key.verifying_key()
        );
        let mut bad = der.to_vec();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        assert!(matches!(
            signing_key_from_pkcs8(&bad),
            Err(Error::InconsistentKey)
        ));
    }

    #[test]
    fn a_v2_public_key_that_does_not_match_is_rejected() {
        let key = ML_DSA_65.signing_key_from_seed(&[4u8; 32]).expect("key");
        let other = ML_DSA_65.signing_key_from_seed(&[5u8; 32]).expect("key");
        // The ML-DSA-PrivateKey inside the seed-form encoding, re-wrapped with a public key.
        let seed_form = signing_key_to_pkcs8(&key, KeyFormat::Seed).expect("pkcs8");
        let inner = PrivateKeyInfo::from_der(&seed_form)
            .expect("info")
            .private_key
            .to_vec();
        let encode = |public: &[u8]| encode_pkcs8(&ML_DSA_65, &inner, Some(public)).expect("der");
        let good = encode(key.verifying_key().as_bytes());
        assert_eq!(
            signing_key_from_pkcs8(&good)
                .expect("matching v2 key")
                .verifying_key(),
            key.verifying_key()
        );
        let bad = encode(other.verifying_key().as_bytes());
        assert!(matches!(
            signing_key_from_pkcs8(&bad),
            Err(Error::InconsistentKey)
        ));
    }

    #[test]
    fn every_truncation_and_extension_is_an_error_not_a_panic() {
        let key = ML_DSA_65.signing_key_from_seed(&[1u8; 32]).expect("key");
        let der = signing_key_to_pkcs8(&key, KeyFormat::Both).expect("pkcs8");
        for n in 0..der.len() {
            assert!(
                signing_key_from_pkcs8(&der[..n]).is_err(),
                "truncated to {n}"
            );
        }
        let mut long = der.to_vec();
        long.push(0);
        assert!(signing_key_from_pkcs8(&long).is_err());
    }

    #[test]
    fn aws_lc_rs_reads_our_seed_form() {
        let key = ML_DSA_65.signing_key_from_seed(&[3u8; 32]).expect("key");
        let der = signing_key_to_pkcs8(&key, KeyFormat::Seed).expect("pkcs8");
        let theirs = aws_lc_rs::signature::PqdsaKeyPair::from_pkcs8(
            &aws_lc_rs::signature::ML_DSA_65_SIGNING,
            &der,
        )
        .expect("aws-lc-rs parses RFC 9881 seed form");
        use aws_lc_rs::signature::KeyPair;
        assert_eq!(theirs.public_key().as_ref(), key.verifying_key().as_bytes());
    }
}
