//! Private keys as PKCS#8 (RFC 5958) and public keys as SPKI (RFC 5280 §4.1.2.7).
//!
//! - ML-DSA (RFC 9881 §6) and ML-KEM (RFC 9935 §6): the `privateKey` OCTET STRING holds a
//!   CHOICE — `seed [0] IMPLICIT OCTET STRING` (32 / 64 bytes, written by default),
//!   `expandedKey OCTET STRING`, or `both SEQUENCE { seed, expandedKey }`. "both" keys whose
//!   halves disagree are refused.
//! - SLH-DSA (RFC 9909 §6): the `privateKey` OCTET STRING is SK.seed ‖ SK.prf ‖ PK.seed ‖
//!   PK.root (4n bytes). Falcon (OQS): the round-3 private key encoding. Both are also read when
//!   wrapped in one more OCTET STRING, as some encoders write them.
//! - Composite ML-DSA (draft-ietf-lamps-pq-composite-sigs-19 §5.3): the `privateKey` OCTET
//!   STRING is the raw composite private key, ML-DSA seed (32 bytes) ‖ traditional key
//!   (RFC 5915 ECPrivateKey, PKCS#1 RSAPrivateKey, or the raw Ed25519/Ed448 secret).
//! - Classical keys: aws-lc-rs's PKCS#8.

use const_oid::ObjectIdentifier;
use der::asn1::{AnyRef, BitString, ContextSpecific, OctetStringRef};
use der::{Decode, Encode, Tag, TagMode, TagNumber, Tagged};
use pkcs8::PrivateKeyInfo;
use pqkit_core::catalogue;
use pqkit_core::kem::{DecapsulationKey, EncapsulationKey, KemAlgorithm};
use pqkit_core::sig::{Family, SignatureAlgorithm, SigningKey, VerifyingKey};
use spki::{AlgorithmIdentifierOwned, SubjectPublicKeyInfoOwned, SubjectPublicKeyInfoRef};
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use crate::error::Error;

/// Which private-key form to write for ML-DSA (RFC 9881 §6) and ML-KEM (RFC 9935 §6). SLH-DSA,
/// Falcon and classical keys have a single form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyFormat {
    /// The seed only (default; ML-DSA ξ 32 bytes, ML-KEM d‖z 64 bytes).
    Seed,
    /// The expanded key only (FIPS 204 `sk` / FIPS 203 `dk`).
    Expanded,
    /// Seed and expanded key together.
    Both,
}

/// What a PKCS#8 file or SPKI is for.
#[derive(Clone, Copy, Debug)]
pub enum Algorithm {
    /// A signature algorithm.
    Signature(&'static SignatureAlgorithm),
    /// A KEM.
    Kem(&'static KemAlgorithm),
}

impl Algorithm {
    /// The canonical name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Signature(a) => a.name,
            Self::Kem(k) => k.name,
        }
    }
}

/// A public key of either kind, from an SPKI.
#[derive(Clone, Debug)]
pub enum PublicKey {
    /// A signature verifying key.
    Verifying(VerifyingKey),
    /// A KEM encapsulation key (for ML-KEM, FIPS 203 §7.2 checked).
    Encapsulation(EncapsulationKey),
}

/// Encodes a signing key as PKCS#8 DER (see the module docs for each family's form).
///
/// # Errors
/// [`Error::Crypto`] if the key lacks the requested form (e.g. `Seed` for a key loaded from its
/// expanded form); [`Error::Malformed`] if encoding fails.
pub fn signing_key_to_pkcs8(
    key: &SigningKey,
    format: KeyFormat,
) -> Result<Zeroizing<Vec<u8>>, Error> {
    if let Some(der) = key.classical_pkcs8() {
        return Ok(der);
    }
    let alg = key.algorithm();
    let oid = oid_of(alg.oid)?;
    match alg.family {
        Family::MlDsa => {
            let expanded = key.expanded();
            let inner = encode_choice(key.seed(), expanded.as_deref().map(|e| &e[..]), format)?;
            encode_pkcs8(oid, &inner, None)
        }
        _ => {
            let expanded = key.expanded().ok_or(pqkit_core::Error::Unsupported(
                "key cannot export its private key",
            ))?;
            encode_pkcs8(oid, &expanded, None)
        }
    }
}

/// Encodes a decapsulation key as PKCS#8 DER: ML-KEM in the RFC 9935 §6 form `format` names;
/// a KEM without a seed form (BIKE, FrodoKEM, Classic McEliece) as its expanded key in an
/// OCTET STRING whatever `format` says, with the encapsulation key as the RFC 5958 v2
/// `publicKey` when the decapsulation key does not contain it (Classic McEliece).
///
/// # Errors
/// As [`signing_key_to_pkcs8`].
pub fn decapsulation_key_to_pkcs8(
    key: &DecapsulationKey,
    format: KeyFormat,
) -> Result<Zeroizing<Vec<u8>>, Error> {
    let alg = key.algorithm();
    let oid = oid_of(alg.oid)?;
    if alg.seed_size == 0 {
        let inner = encode_choice(None, Some(key.expanded()), KeyFormat::Expanded)?;
        let public = alg
            .encapsulation_key_offset
            .is_none()
            .then(|| key.encapsulation_key().as_bytes());
        return encode_pkcs8(oid, &inner, public);
    }
    let inner = encode_choice(key.seed(), Some(key.expanded()), format)?;
    encode_pkcs8(oid, &inner, None)
}

/// The RFC 9881 / RFC 9935 private-key CHOICE.
fn encode_choice(
    seed: Option<&[u8]>,
    expanded: Option<&[u8]>,
    format: KeyFormat,
) -> Result<Zeroizing<Vec<u8>>, Error> {
    let enc = |e| Error::malformed("PKCS#8 private key", e);
    let missing = |what| Error::Crypto(pqkit_core::Error::Unsupported(what));
    let seed =
        || seed.ok_or_else(|| missing("key has no seed (it was loaded from its expanded form)"));
    let expanded = || expanded.ok_or_else(|| missing("key cannot export its expanded form"));
    Ok(Zeroizing::new(match format {
        KeyFormat::Seed => ContextSpecific {
            tag_number: TagNumber::N0,
            tag_mode: TagMode::Implicit,
            value: OctetStringRef::new(seed()?).map_err(enc)?,
        }
        .to_der()
        .map_err(enc)?,
        KeyFormat::Expanded => OctetStringRef::new(expanded()?)
            .map_err(enc)?
            .to_der()
            .map_err(enc)?,
        KeyFormat::Both => Both {
            seed: OctetStringRef::new(seed()?).map_err(enc)?,
            expanded: OctetStringRef::new(expanded()?).map_err(enc)?,
        }
        .to_der()
        .map_err(enc)?,
    }))
}

/// Wraps an encoded private key in PKCS#8 (`public_key` makes it a RFC 5958 v2 key).
fn encode_pkcs8(
    oid: ObjectIdentifier,
    private_key: &[u8],
    public_key: Option<&[u8]>,
) -> Result<Zeroizing<Vec<u8>>, Error> {
    let info = PrivateKeyInfo {
        algorithm: spki::AlgorithmIdentifierRef {
            oid,
            parameters: None,
        },
        private_key,
        public_key,
    };
    let der = info
        .to_der()
        .map_err(|e| Error::malformed("PKCS#8 private key", e))?;
    Ok(Zeroizing::new(der))
}

/// Decodes a PKCS#8 private key of any catalogue signature algorithm.
///
/// # Errors
/// [`Error::Malformed`], [`Error::UnknownAlgorithm`] (including a KEM key),
/// [`Error::InconsistentKey`] (disagreeing "both" halves, a v2 public key that does not match)
/// or [`Error::Crypto`]. Never panics on any input.
pub fn signing_key_from_pkcs8(der: &[u8]) -> Result<SigningKey, Error> {
    let info = parse_pkcs8(der)?;
    let candidates = signature_candidates(&info)?;
    let mut last = Error::UnknownAlgorithm("PKCS#8 private key");
    for alg in candidates {
        let key = match alg.family {
            Family::Ecdsa | Family::Ed25519 | Family::Rsa => alg.signing_key_from_pkcs8(der),
            Family::MlDsa => match ml_choice(info.private_key)? {
                Choice::Seed(seed) => alg.signing_key_from_seed(seed),
                Choice::Expanded(sk) => alg.signing_key_from_expanded(sk),
                Choice::Both(seed, sk) => {
                    let key = alg.signing_key_from_seed(seed)?;
                    let derived = key.expanded().ok_or(Error::InconsistentKey)?;
                    check_same(&derived, sk)?;
                    Ok(key)
                }
            },
            Family::SlhDsa | Family::Falcon => {
                alg.signing_key_from_expanded(unwrap_octets(info.private_key, alg.signing_key_size))
            }
            // draft-ietf-lamps-pq-composite-sigs-19 §4.2, §5.3: the raw seed ‖ traditional key.
            Family::CompositeMlDsa => alg.signing_key_from_expanded(info.private_key),
        };
        match key {
            Ok(key) => {
                check_v2_public_key(&info, key.verifying_key().as_bytes())?;
                return Ok(key);
            }
            Err(e) => last = e.into(),
        }
    }
    Err(last)
}

/// Decodes a PKCS#8 decapsulation key: ML-KEM's RFC 9935 §6 seed, expanded or both; the
/// other KEMs' expanded key, with the v2 `publicKey` where the key needs it.
///
/// # Errors
/// As [`signing_key_from_pkcs8`].
pub fn decapsulation_key_from_pkcs8(der: &[u8]) -> Result<DecapsulationKey, Error> {
    let info = parse_pkcs8(der)?;
    let Algorithm::Kem(alg) = algorithm_of_info(&info)? else {
        return Err(Error::UnknownAlgorithm(
            "PKCS#8 private key (not a KEM key)",
        ));
    };
    let key = match ml_choice(info.private_key)? {
        Choice::Seed(seed) => alg.generate_from_seed(seed)?,
        Choice::Expanded(dk) => match info.public_key {
            Some(ek) => alg.decapsulation_key_from_parts(dk, ek)?,
            None => alg.decapsulation_key_from_expanded(dk)?,
        },
        Choice::Both(seed, dk) => {
            let key = alg.generate_from_seed(seed)?;
            check_same(key.expanded(), dk)?;
            key
        }
    };
    check_v2_public_key(&info, key.encapsulation_key().as_bytes())?;
    Ok(key)
}

/// The algorithm a PKCS#8 private key is for, without decoding the key. For RSA (one
/// identifier for every size and padding) the first matching catalogue entry is returned.
///
/// # Errors
/// [`Error::Malformed`] or [`Error::UnknownAlgorithm`].
pub fn pkcs8_algorithm(der: &[u8]) -> Result<Algorithm, Error> {
    algorithm_of_info(&parse_pkcs8(der)?)
}

fn parse_pkcs8(der: &[u8]) -> Result<PrivateKeyInfo<'_>, Error> {
    PrivateKeyInfo::from_der(der).map_err(|e| Error::malformed("PKCS#8 private key", e))
}

fn algorithm_of_info(info: &PrivateKeyInfo<'_>) -> Result<Algorithm, Error> {
    if let Some(kem) = kem_of(info.algorithm.oid) {
        return Ok(Algorithm::Kem(kem));
    }
    Ok(Algorithm::Signature(
        *signature_candidates(info)?
            .first()
            .ok_or(Error::UnknownAlgorithm("PKCS#8 private key"))?,
    ))
}

fn signature_candidates(
    info: &PrivateKeyInfo<'_>,
) -> Result<Vec<&'static SignatureAlgorithm>, Error> {
    let id = info
        .algorithm
        .to_der()
        .map_err(|e| Error::malformed("PKCS#8 private key", e))?;
    let contents = AnyRef::from_der(&id).map_err(|e| Error::malformed("AlgorithmIdentifier", e))?;
    let found: Vec<_> = catalogue::signatures()
        .iter()
        .copied()
        .filter(|a| a.spki_algorithm_id == contents.value())
        .collect();
    if found.is_empty() {
        Err(Error::UnknownAlgorithm("PKCS#8 private key"))
    } else {
        Ok(found)
    }
}

fn kem_of(oid: ObjectIdentifier) -> Option<&'static KemAlgorithm> {
    catalogue::kems()
        .iter()
        .copied()
        .find(|k| ObjectIdentifier::new(k.oid).is_ok_and(|o| o == oid))
}

fn check_v2_public_key(info: &PrivateKeyInfo<'_>, public: &[u8]) -> Result<(), Error> {
    match info.public_key {
        Some(given) if given != public => Err(Error::InconsistentKey),
        _ => Ok(()),
    }
}

fn check_same(derived: &[u8], given: &[u8]) -> Result<(), Error> {
    if derived.len() == given.len() && bool::from(derived.ct_eq(given)) {
        Ok(())
    } else {
        Err(Error::InconsistentKey)
    }
}

/// The private key as given, or the contents of one more OCTET STRING around it.
fn unwrap_octets(private_key: &[u8], size: usize) -> &[u8] {
    if private_key.len() != size
        && let Ok(inner) = OctetStringRef::from_der(private_key)
        && inner.as_bytes().len() == size
    {
        return inner.as_bytes();
    }
    private_key
}

/// One decoded RFC 9881 / RFC 9935 private-key CHOICE.
enum Choice<'a> {
    Seed(&'a [u8]),
    Expanded(&'a [u8]),
    Both(&'a [u8], &'a [u8]),
}

fn ml_choice(private_key: &[u8]) -> Result<Choice<'_>, Error> {
    let bad = |e| Error::malformed("PKCS#8 private key", e);
    let choice = AnyRef::from_der(private_key).map_err(bad)?;
    match choice.tag() {
        Tag::ContextSpecific {
            constructed: false,
            number: TagNumber::N0,
        } => Ok(Choice::Seed(choice.value())),
        Tag::OctetString => Ok(Choice::Expanded(choice.value())),
        Tag::Sequence => {
            let both: Both<'_> = choice.decode_as().map_err(bad)?;
            Ok(Choice::Both(both.seed.as_bytes(), both.expanded.as_bytes()))
        }
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

/// The DER SPKI of an ML-KEM encapsulation key (RFC 9935 §4: parameters absent).
///
/// # Errors
/// [`Error::Malformed`] if encoding fails.
pub fn encapsulation_key_spki_der(key: &EncapsulationKey) -> Result<Vec<u8>, Error> {
    SubjectPublicKeyInfoOwned {
        algorithm: AlgorithmIdentifierOwned {
            oid: oid_of(key.algorithm().oid)?,
            parameters: None,
        },
        subject_public_key: BitString::from_bytes(key.as_bytes())
            .map_err(|e| Error::malformed("public key", e))?,
    }
    .to_der()
    .map_err(|e| Error::malformed("SPKI", e))
}

/// Decodes an SPKI into a verifying key of a catalogue algorithm.
///
/// # Errors
/// [`Error::Malformed`], [`Error::UnknownAlgorithm`] (including KEM keys) or [`Error::Crypto`]
/// (wrong key length).
pub fn verifying_key_from_spki(der: &[u8]) -> Result<VerifyingKey, Error> {
    match public_key_from_spki(der)? {
        PublicKey::Verifying(k) => Ok(k),
        PublicKey::Encapsulation(_) => Err(Error::UnknownAlgorithm(
            "SPKI (a KEM key, not a signature key)",
        )),
    }
}

/// Decodes an SPKI of a signature or KEM key.
///
/// # Errors
/// [`Error::Malformed`], [`Error::UnknownAlgorithm`] or [`Error::Crypto`] (wrong key length,
/// an encapsulation key failing FIPS 203 §7.2).
pub fn public_key_from_spki(der: &[u8]) -> Result<PublicKey, Error> {
    let bad = |e| Error::malformed("SPKI", e);
    let spki = SubjectPublicKeyInfoRef::from_der(der).map_err(bad)?;
    let bits = spki
        .subject_public_key
        .as_bytes()
        .ok_or(Error::malformed("SPKI", "unused bits"))?;
    if let Some(kem) = kem_of(spki.algorithm.oid) {
        return Ok(PublicKey::Encapsulation(kem.encapsulation_key(bits)?));
    }
    let id = spki.algorithm.to_der().map_err(bad)?;
    let contents = AnyRef::from_der(&id).map_err(|e| Error::malformed("AlgorithmIdentifier", e))?;
    let alg = catalogue::signature_by_spki_algorithm(contents.value(), bits.len())
        .ok_or(Error::UnknownAlgorithm("SPKI"))?;
    Ok(PublicKey::Verifying(alg.verifying_key(bits)?))
}

/// An `AlgorithmIdentifier` from the DER contents the catalogue stores.
pub(crate) fn algorithm_identifier(contents: &[u8]) -> Result<AlgorithmIdentifierOwned, Error> {
    let bad = |e| Error::malformed("AlgorithmIdentifier", e);
    AnyRef::new(Tag::Sequence, contents)
        .map_err(bad)?
        .decode_as()
        .map_err(bad)
}

/// The DER contents of an `AlgorithmIdentifier` (the SEQUENCE without its header), the form
/// the catalogue stores and webpki compares — the inverse of [`algorithm_identifier`].
///
/// # Errors
/// [`Error::Malformed`] if it does not encode.
pub fn algorithm_contents(id: &AlgorithmIdentifierOwned) -> Result<Vec<u8>, Error> {
    let bad = |e| Error::malformed("AlgorithmIdentifier", e);
    let der = id.to_der().map_err(bad)?;
    Ok(AnyRef::from_der(&der).map_err(bad)?.value().to_vec())
}

fn oid_of(dotted: &str) -> Result<ObjectIdentifier, Error> {
    ObjectIdentifier::new(dotted).map_err(|e| Error::malformed("OID", e))
}

/// RFC 9881 / RFC 9935 §6 `both` form.
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
        let oid = oid_of(ML_DSA_65.oid).expect("oid");
        let encode = |public: &[u8]| encode_pkcs8(oid, &inner, Some(public)).expect("der");
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
