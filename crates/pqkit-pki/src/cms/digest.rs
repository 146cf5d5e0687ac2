//! The digest algorithms of CMS signers (RFC 5652 §5.3 `digestAlgorithm`): SHA-256, SHA-384
//! and SHA-512 (RFC 5754), SHAKE128 and SHAKE256 with 32- and 64-byte outputs (RFC 8702 §3),
//! SHA3-256/384/512 (FIPS 202; OpenSSL 3.5 writes them for SLH-DSA-SHAKE signers), and which
//! one each signature algorithm takes ([`default_for`], [`allowed`]).

use aws_lc_rs::digest;
use const_oid::ObjectIdentifier;
use der::asn1::Null;
use pqkit_core::composite::PreHash as CompositePreHash;
use sha3::digest::{ExtendableOutput, FixedOutput, Update, XofReader};
use spki::AlgorithmIdentifierOwned;

/// A digest algorithm of a CMS signer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DigestAlgorithm {
    /// SHA-256, 32 bytes (FIPS 180-4).
    Sha256,
    /// SHA-384, 48 bytes.
    Sha384,
    /// SHA-512, 64 bytes.
    Sha512,
    /// SHAKE128 with a 32-byte output (FIPS 202; RFC 8702 `id-shake128`).
    Shake128,
    /// SHAKE256 with a 64-byte output (RFC 8702 `id-shake256`).
    Shake256,
    /// SHA3-256, 32 bytes (FIPS 202).
    Sha3_256,
    /// SHA3-384, 48 bytes.
    Sha3_384,
    /// SHA3-512, 64 bytes.
    Sha3_512,
}

const SHA256: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.1");
const SHA384: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.2");
const SHA512: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.3");
const SHAKE128: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.11");
const SHAKE256: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.12");
const SHA3_256: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.8");
const SHA3_384: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.9");
const SHA3_512: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.10");

impl DigestAlgorithm {
    /// Every digest algorithm.
    pub const ALL: [Self; 8] = [
        Self::Sha256,
        Self::Sha384,
        Self::Sha512,
        Self::Shake128,
        Self::Shake256,
        Self::Sha3_256,
        Self::Sha3_384,
        Self::Sha3_512,
    ];

    /// "SHA-256", "SHAKE256", ….
    pub fn name(self) -> &'static str {
        match self {
            Self::Sha256 => "SHA-256",
            Self::Sha384 => "SHA-384",
            Self::Sha512 => "SHA-512",
            Self::Shake128 => "SHAKE128",
            Self::Shake256 => "SHAKE256",
            Self::Sha3_256 => "SHA3-256",
            Self::Sha3_384 => "SHA3-384",
            Self::Sha3_512 => "SHA3-512",
        }
    }

    /// From a name as [`Self::name`] gives it (case and `-` ignored).
    pub fn from_name(name: &str) -> Option<Self> {
        let n: String = name
            .chars()
            .filter(|c| *c != '-' && *c != '_')
            .flat_map(char::to_lowercase)
            .collect();
        Self::ALL
            .into_iter()
            .find(|d| d.name().replace('-', "").eq_ignore_ascii_case(&n))
    }

    /// The OID (NIST's hash algorithm arc, 2.16.840.1.101.3.4.2).
    pub fn oid(self) -> ObjectIdentifier {
        match self {
            Self::Sha256 => SHA256,
            Self::Sha384 => SHA384,
            Self::Sha512 => SHA512,
            Self::Shake128 => SHAKE128,
            Self::Shake256 => SHAKE256,
            Self::Sha3_256 => SHA3_256,
            Self::Sha3_384 => SHA3_384,
            Self::Sha3_512 => SHA3_512,
        }
    }

    /// The AlgorithmIdentifier pqkit writes: parameters absent (RFC 5754 §2, RFC 8702 §3).
    pub fn identifier(self) -> AlgorithmIdentifierOwned {
        AlgorithmIdentifierOwned {
            oid: self.oid(),
            parameters: None,
        }
    }

    /// From an AlgorithmIdentifier: parameters absent, or NULL for SHA-2 and SHA-3 (RFC 5754
    /// §2: "MUST accept" both); `None` for anything else.
    pub fn from_identifier(id: &AlgorithmIdentifierOwned) -> Option<Self> {
        let d = Self::ALL.into_iter().find(|d| d.oid() == id.oid)?;
        let null = id
            .parameters
            .as_ref()
            .is_some_and(|p| p.decode_as::<Null>().is_ok());
        match (&id.parameters, d) {
            (None, _) => Some(d),
            (Some(_), Self::Shake128 | Self::Shake256) => None,
            (Some(_), _) if null => Some(d),
            _ => None,
        }
    }

    /// Security strength in bits against collisions (SP 800-57 Part 1 Table 3; RFC 8702 §3 for
    /// the SHAKEs at these output lengths).
    pub fn strength(self) -> u16 {
        match self {
            Self::Sha256 | Self::Shake128 | Self::Sha3_256 => 128,
            Self::Sha384 | Self::Sha3_384 => 192,
            Self::Sha512 | Self::Shake256 | Self::Sha3_512 => 256,
        }
    }

    /// Output bytes: 32, 48 or 64.
    pub fn output_len(self) -> usize {
        match self {
            Self::Sha256 | Self::Shake128 | Self::Sha3_256 => 32,
            Self::Sha384 | Self::Sha3_384 => 48,
            Self::Sha512 | Self::Shake256 | Self::Sha3_512 => 64,
        }
    }

    /// A running hash.
    pub fn hasher(self) -> Hasher {
        Hasher(match self {
            Self::Sha256 => State::Sha2(digest::Context::new(&digest::SHA256)),
            Self::Sha384 => State::Sha2(digest::Context::new(&digest::SHA384)),
            Self::Sha512 => State::Sha2(digest::Context::new(&digest::SHA512)),
            Self::Shake128 => State::Shake128(sha3::Shake128::default()),
            Self::Shake256 => State::Shake256(sha3::Shake256::default()),
            Self::Sha3_256 => State::Sha3_256(sha3::Sha3_256::default()),
            Self::Sha3_384 => State::Sha3_384(sha3::Sha3_384::default()),
            Self::Sha3_512 => State::Sha3_512(sha3::Sha3_512::default()),
        })
    }

    /// The digest of `bytes`.
    pub fn digest(self, bytes: &[u8]) -> Vec<u8> {
        let mut h = self.hasher();
        h.update(bytes);
        h.finish()
    }
}

impl core::fmt::Display for DigestAlgorithm {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// A running [`DigestAlgorithm`] hash.
pub struct Hasher(State);

enum State {
    Sha2(digest::Context),
    Shake128(sha3::Shake128),
    Shake256(sha3::Shake256),
    Sha3_256(sha3::Sha3_256),
    Sha3_384(sha3::Sha3_384),
    Sha3_512(sha3::Sha3_512),
}

impl Hasher {
    /// Absorbs more of the message.
    pub fn update(&mut self, bytes: &[u8]) {
        match &mut self.0 {
            State::Sha2(c) => c.update(bytes),
            State::Shake128(s) => s.update(bytes),
            State::Shake256(s) => s.update(bytes),
            State::Sha3_256(s) => s.update(bytes),
            State::Sha3_384(s) => s.update(bytes),
            State::Sha3_512(s) => s.update(bytes),
        }
    }

    /// The digest ([`DigestAlgorithm::output_len`] bytes).
    pub fn finish(self) -> Vec<u8> {
        match self.0 {
            State::Sha2(c) => c.finish().as_ref().to_vec(),
            State::Shake128(s) => {
                let mut out = vec![0u8; 32];
                s.finalize_xof().read(&mut out);
                out
            }
            State::Shake256(s) => {
                let mut out = vec![0u8; 64];
                s.finalize_xof().read(&mut out);
                out
            }
            State::Sha3_256(s) => s.finalize_fixed().to_vec(),
            State::Sha3_384(s) => s.finalize_fixed().to_vec(),
            State::Sha3_512(s) => s.finalize_fixed().to_vec(),
        }
    }
}

/// What a signer's digest algorithm must be, beside the one pqkit signs with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rule {
    /// Any digest of at least this collision strength in bits (the parameter set's security
    /// strength: a signature over signed attributes is no stronger than their digest).
    AtLeast(u16),
    /// The profile's digest and no other: the signature's own hash (ECDSA, EdDSA, RSA) or
    /// composite ML-DSA's pre-hash.
    Exactly,
}

/// By signature algorithm OID: the digest algorithm pqkit signs with, the rule for a signer's
/// digest, and the source. Composite ML-DSA's rows come from the catalogue ([`profile`]).
const PROFILES: &[(&str, DigestAlgorithm, Rule, &str)] = &[
    // ML-DSA-44/65/87: SHA-512 by default; any digest of the set's strength (RFC 9882 §3.3,
    // its table of suitable digests: SHA-256 and up for ML-DSA-44, SHA-384 and up for -65).
    (
        "2.16.840.1.101.3.4.3.17",
        DigestAlgorithm::Sha512,
        Rule::AtLeast(128),
        "RFC 9882 §3.3",
    ),
    (
        "2.16.840.1.101.3.4.3.18",
        DigestAlgorithm::Sha512,
        Rule::AtLeast(192),
        "RFC 9882 §3.3",
    ),
    (
        "2.16.840.1.101.3.4.3.19",
        DigestAlgorithm::Sha512,
        Rule::AtLeast(256),
        "RFC 9882 §3.3",
    ),
    // SLH-DSA: SHA-256 for SHA2-128s/f, SHA-512 for SHA2-192/256, SHAKE128 for SHAKE-128s/f,
    // SHAKE256 for SHAKE-192/256 (RFC 9814 §4); the set's category decides the strength.
    (
        "2.16.840.1.101.3.4.3.20",
        DigestAlgorithm::Sha256,
        Rule::AtLeast(128),
        "RFC 9814 §4",
    ),
    (
        "2.16.840.1.101.3.4.3.21",
        DigestAlgorithm::Sha256,
        Rule::AtLeast(128),
        "RFC 9814 §4",
    ),
    (
        "2.16.840.1.101.3.4.3.22",
        DigestAlgorithm::Sha512,
        Rule::AtLeast(192),
        "RFC 9814 §4",
    ),
    (
        "2.16.840.1.101.3.4.3.23",
        DigestAlgorithm::Sha512,
        Rule::AtLeast(192),
        "RFC 9814 §4",
    ),
    (
        "2.16.840.1.101.3.4.3.24",
        DigestAlgorithm::Sha512,
        Rule::AtLeast(256),
        "RFC 9814 §4",
    ),
    (
        "2.16.840.1.101.3.4.3.25",
        DigestAlgorithm::Sha512,
        Rule::AtLeast(256),
        "RFC 9814 §4",
    ),
    (
        "2.16.840.1.101.3.4.3.26",
        DigestAlgorithm::Shake128,
        Rule::AtLeast(128),
        "RFC 9814 §4",
    ),
    (
        "2.16.840.1.101.3.4.3.27",
        DigestAlgorithm::Shake128,
        Rule::AtLeast(128),
        "RFC 9814 §4",
    ),
    (
        "2.16.840.1.101.3.4.3.28",
        DigestAlgorithm::Shake256,
        Rule::AtLeast(192),
        "RFC 9814 §4",
    ),
    (
        "2.16.840.1.101.3.4.3.29",
        DigestAlgorithm::Shake256,
        Rule::AtLeast(192),
        "RFC 9814 §4",
    ),
    (
        "2.16.840.1.101.3.4.3.30",
        DigestAlgorithm::Shake256,
        Rule::AtLeast(256),
        "RFC 9814 §4",
    ),
    (
        "2.16.840.1.101.3.4.3.31",
        DigestAlgorithm::Shake256,
        Rule::AtLeast(256),
        "RFC 9814 §4",
    ),
    // HSS/LMS with SHA-256 (RFC 9708 §4), XMSS and XMSS^MT SHA2_*_256 (RFC 9802 identifiers).
    (
        "1.2.840.113549.1.9.16.3.17",
        DigestAlgorithm::Sha256,
        Rule::AtLeast(128),
        "RFC 9708 §4",
    ),
    (
        "1.3.6.1.5.5.7.6.34",
        DigestAlgorithm::Sha256,
        Rule::AtLeast(128),
        "RFC 9802 §3",
    ),
    (
        "1.3.6.1.5.5.7.6.35",
        DigestAlgorithm::Sha256,
        Rule::AtLeast(128),
        "RFC 9802 §3",
    ),
    // ECDSA: the signature's own hash (RFC 5753 §2.1.1).
    (
        "1.2.840.10045.4.3.2",
        DigestAlgorithm::Sha256,
        Rule::Exactly,
        "RFC 5753 §2.1.1",
    ),
    (
        "1.2.840.10045.4.3.3",
        DigestAlgorithm::Sha384,
        Rule::Exactly,
        "RFC 5753 §2.1.1",
    ),
    (
        "1.2.840.10045.4.3.4",
        DigestAlgorithm::Sha512,
        Rule::Exactly,
        "RFC 5753 §2.1.1",
    ),
    // Ed25519: SHA-512, exactly (RFC 8419 §3.1, see `allowed`); Ed448: SHAKE256.
    (
        "1.3.101.112",
        DigestAlgorithm::Sha512,
        Rule::Exactly,
        "RFC 8419 §3.1",
    ),
    (
        "1.3.101.113",
        DigestAlgorithm::Shake256,
        Rule::Exactly,
        "RFC 8419 §3.1",
    ),
    // RSA PKCS#1 v1.5 and RSASSA-PSS with SHA-256 (RFC 5754 §3.2, RFC 4056 §3).
    (
        "1.2.840.113549.1.1.11",
        DigestAlgorithm::Sha256,
        Rule::Exactly,
        "RFC 5754 §3.2",
    ),
    (
        "1.2.840.113549.1.1.1",
        DigestAlgorithm::Sha256,
        Rule::Exactly,
        "RFC 5754 §3.2",
    ),
    (
        "1.2.840.113549.1.1.10",
        DigestAlgorithm::Sha256,
        Rule::Exactly,
        "RFC 4056 §3",
    ),
];

fn profile(signature: &ObjectIdentifier) -> Option<(DigestAlgorithm, Rule)> {
    if let Some(found) = PROFILES
        .iter()
        .find(|(oid, ..)| ObjectIdentifier::new(oid).is_ok_and(|o| o == *signature))
    {
        return Some((found.1, found.2));
    }
    // Composite ML-DSA: the digest is the composite's pre-hash PH, exactly
    // (draft-ietf-lamps-cms-composite-sigs §3).
    let dotted = signature.to_string();
    let alg = pqkit_core::composite::algorithms().find(|a| a.oid == dotted)?;
    let digest = match pqkit_core::composite::parameters(alg)?.prehash {
        CompositePreHash::Sha256 => DigestAlgorithm::Sha256,
        CompositePreHash::Sha512 => DigestAlgorithm::Sha512,
        CompositePreHash::Shake256 => DigestAlgorithm::Shake256,
    };
    Some((digest, Rule::Exactly))
}

/// The digest algorithm pqkit signs with for a signature algorithm (its OID): the profiles of
/// RFC 9882, RFC 9814, RFC 9708, RFC 5753, RFC 8419, RFC 5754 and the composite ML-DSA CMS
/// draft above; SHA-512 for one no RFC profiles in CMS (Falcon).
pub fn default_for(signature: &ObjectIdentifier) -> DigestAlgorithm {
    profile(signature).map_or(DigestAlgorithm::Sha512, |(d, _)| d)
}

/// Whether a signer may use `digest` with this signature algorithm: ECDSA, EdDSA and RSA only
/// with their own hash (RFC 5753 §2.1.1, RFC 8419 §3.1, RFC 5754 §3), composite ML-DSA only
/// with its pre-hash (draft-ietf-lamps-cms-composite-sigs §3); every other one with a digest
/// of at least the parameter set's strength (RFC 9882 §3.3's table for ML-DSA: SHA-256 with
/// ML-DSA-44, not with ML-DSA-87; SHA-2 on SHAKE SLH-DSA keys, as OpenSSL 3.x writes, and SHA3
/// as OpenSSL 3.5 writes), 128 bits for one without a profile.
pub fn allowed(signature: &ObjectIdentifier, digest: DigestAlgorithm) -> bool {
    match profile(signature) {
        Some((own, Rule::Exactly)) => digest == own,
        Some((_, Rule::AtLeast(strength))) => digest.strength() >= strength,
        // A classical signature without a profile here (sha1WithRSA, ecdsa-with-SHA224, …):
        // its own hash is not one pqkit accepts.
        None if is_classical(signature) => false,
        None => digest.strength() >= 128,
    }
}

/// Whether an OID is an ECDSA, EdDSA or RSA signature algorithm (RFC 5758, RFC 8410,
/// RFC 8017 arcs).
fn is_classical(signature: &ObjectIdentifier) -> bool {
    let dotted = signature.to_string();
    ["1.2.840.10045.4.", "1.3.101.", "1.2.840.113549.1.1."]
        .iter()
        .any(|arc| dotted.starts_with(arc))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Known answers of the empty message (FIPS 180-4 / FIPS 202 examples), so each state
    /// finishes with its own output length.
    #[test]
    fn empty_message_digests() {
        let hex = |d: DigestAlgorithm| {
            d.digest(b"")
                .iter()
                .take(8)
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        };
        assert_eq!(hex(DigestAlgorithm::Sha256), "e3b0c44298fc1c14");
        assert_eq!(hex(DigestAlgorithm::Sha512), "cf83e1357eefb8bd");
        assert_eq!(hex(DigestAlgorithm::Shake128), "7f9c2ba4e88f827d");
        assert_eq!(hex(DigestAlgorithm::Shake256), "46b9dd2b0ba88d13");
        assert_eq!(hex(DigestAlgorithm::Sha3_256), "a7ffc6f8bf1ed766");
        for d in DigestAlgorithm::ALL {
            assert_eq!(d.digest(b"abc").len(), d.output_len(), "{d}");
            assert_eq!(DigestAlgorithm::from_name(d.name()), Some(d));
            assert_eq!(DigestAlgorithm::from_identifier(&d.identifier()), Some(d));
        }
    }

    #[test]
    fn digest_rules_follow_the_rfcs() {
        let oid = ObjectIdentifier::new_unwrap;
        let ml_dsa_44 = oid("2.16.840.1.101.3.4.3.17");
        assert!(allowed(&ml_dsa_44, DigestAlgorithm::Sha256));
        let ml_dsa_65 = oid("2.16.840.1.101.3.4.3.18");
        assert!(!allowed(&ml_dsa_65, DigestAlgorithm::Sha256));
        assert!(allowed(&ml_dsa_65, DigestAlgorithm::Sha3_384));
        let ml_dsa_87 = oid("2.16.840.1.101.3.4.3.19");
        assert!(allowed(&ml_dsa_87, DigestAlgorithm::Sha512));
        assert!(allowed(&ml_dsa_87, DigestAlgorithm::Shake256));
        assert!(!allowed(&ml_dsa_87, DigestAlgorithm::Sha256));
        let shake_128f = oid("2.16.840.1.101.3.4.3.27");
        assert_eq!(default_for(&shake_128f), DigestAlgorithm::Shake128);
        assert!(allowed(&shake_128f, DigestAlgorithm::Sha256));
        let p384 = oid("1.2.840.10045.4.3.3");
        assert!(allowed(&p384, DigestAlgorithm::Sha384));
        assert!(!allowed(&p384, DigestAlgorithm::Sha512));
        let ed25519 = oid("1.3.101.112");
        assert!(!allowed(&ed25519, DigestAlgorithm::Shake256));
        assert!(allowed(&ed25519, DigestAlgorithm::Sha512));
        // Composite ML-DSA: PH and nothing else, SHAKE256 for the Ed448 set.
        let p256_44 = oid("1.3.6.1.5.5.7.6.40");
        assert_eq!(default_for(&p256_44), DigestAlgorithm::Sha256);
        assert!(!allowed(&p256_44, DigestAlgorithm::Sha512));
        let ed448_87 = oid("1.3.6.1.5.5.7.6.51");
        assert_eq!(default_for(&ed448_87), DigestAlgorithm::Shake256);
        assert!(!allowed(&ed448_87, DigestAlgorithm::Sha512));
        assert!(allowed(&oid("1.3.6.1.5.5.7.6.45"), DigestAlgorithm::Sha512));
        // A classical signature without a profile: no digest.
        assert!(!allowed(
            &oid("1.2.840.113549.1.1.5"),
            DigestAlgorithm::Sha512
        ));
        assert!(!allowed(
            &oid("1.2.840.10045.4.3.1"),
            DigestAlgorithm::Sha256
        ));
    }
}
