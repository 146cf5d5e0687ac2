//! Composite ML-DSA (draft-ietf-lamps-pq-composite-sigs-19): an ML-DSA key and a traditional
//! key (RSA, ECDSA, Ed25519 or Ed448) that sign together, a signature valid only when both
//! halves verify. The 18 combinations of the draft's §6 (OIDs 1.3.6.1.5.5.7.6.37–54) are
//! catalogue entries like any other signature algorithm.
//!
//! Sizes and forms (draft §4, raw concatenations, no ASN.1 around the pair):
//! - verifying key = ML-DSA `pk` (1312 / 1952 / 2592 bytes) ‖ traditional public key: the
//!   uncompressed X9.62 point (65 / 97 / 133 bytes), RSA `RSAPublicKey` DER (PKCS#1; 270 / 398 /
//!   526 bytes with e = 65537, the only exponent pqkit reads), Ed25519 32 or Ed448 57 bytes;
//! - signing key = ML-DSA seed ξ (32 bytes) ‖ traditional private key: RFC 5915
//!   `ECPrivateKey` without its public key, RSA `RSAPrivateKey` DER (PKCS#1, variable), raw
//!   Ed25519 (32) or Ed448 (57) secret;
//! - signature = ML-DSA signature (2420 / 3309 / 4627 bytes) ‖ traditional signature (ECDSA
//!   DER, variable; RSA k bytes; Ed25519 64; Ed448 114).
//!
//! Signing (draft §3.2), with the application context `ctx` (at most 255 bytes):
//! `M' = "CompositeAlgorithmSignatures2025" ‖ Label ‖ len(ctx) ‖ ctx ‖ PH(M)`; the ML-DSA half
//! is ML-DSA.Sign(sk, M', ctx = Label) (pure ML-DSA, FIPS 204 Algorithm 2, the Label as its
//! context string), the traditional half the plain primitive over M' with the component hash of
//! the draft's table (which is not always PH: RSA-3072 hashes with SHA-256 beside ML-DSA-87).
//! Verification (§3.3) checks both halves; either failing is [`Error::BadSignature`].
//!
//! [`SigningRandomness`] reaches the ML-DSA half only: RSA-PSS and NIST-curve ECDSA halves
//! always draw fresh randomness (AWS-LC), brainpool ECDSA is RFC 6979 deterministic, and
//! PKCS#1 v1.5, Ed25519 and Ed448 are deterministic — so a composite signature is repeatable
//! under `Deterministic` only for the last four.

use aws_lc_rs::encoding::{AsBigEndian, AsDer, Pkcs8V1Der};
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::rsa::KeySize;
use aws_lc_rs::signature::{
    self as awssig, EcdsaKeyPair, Ed25519KeyPair, KeyPair, RsaKeyPair, UnparsedPublicKey,
};
use ecdsa::signature::{Signer as _, Verifier as _};
use sec1::der::asn1::ObjectIdentifier;
use sec1::der::{Decode, Encode};
use sha3::digest::{ExtendableOutput, Update};
use zeroize::Zeroizing;

use crate::error::Error;
use crate::ml_dsa::{ML_DSA_44, ML_DSA_65, ML_DSA_87};
use crate::sig::{
    Family, SignatureAlgorithm, SignatureBackend, SigningKey, SigningKeyImpl, SigningRandomness,
};

/// The prefix of every composite message representative M' (draft §2.2, §3.2): the ASCII of
/// "CompositeAlgorithmSignatures2025", 32 bytes.
pub const PREFIX: &[u8; 32] = b"CompositeAlgorithmSignatures2025";

/// Size of the ML-DSA seed that starts every composite signing key, in bytes.
const SEED_SIZE: usize = 32;

/// The pre-hash PH of a composite algorithm (draft §2.1, §6), also the CMS digest algorithm its
/// signers name (draft-ietf-lamps-cms-composite-sigs §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PreHash {
    /// SHA-256, 32 bytes.
    Sha256,
    /// SHA-512, 64 bytes.
    Sha512,
    /// SHAKE256 with a 64-byte output.
    Shake256,
}

impl PreHash {
    /// PH(M).
    pub fn digest(self, message: &[u8]) -> Vec<u8> {
        match self {
            Self::Sha256 => aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, message)
                .as_ref()
                .to_vec(),
            Self::Sha512 => aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA512, message)
                .as_ref()
                .to_vec(),
            Self::Shake256 => {
                let mut h = sha3::Shake256::default();
                h.update(message);
                let mut out = vec![0u8; 64];
                sha3::digest::XofReader::read(&mut h.finalize_xof(), &mut out);
                out
            }
        }
    }
}

/// The traditional half of a composite algorithm, with its component hash (draft §6, Appendix B).
#[derive(Clone, Copy, Debug)]
enum Traditional {
    /// ECDSA on a NIST curve (aws-lc-rs): signing and verification algorithms (the curve's
    /// hash), the curve OID, the scalar size in bytes.
    Ecdsa(
        &'static awssig::EcdsaSigningAlgorithm,
        &'static awssig::EcdsaVerificationAlgorithm,
        &'static str,
        usize,
    ),
    /// ECDSA on brainpoolP256r1 with SHA-256 (RustCrypto bp256).
    BrainpoolP256,
    /// ECDSA on brainpoolP384r1 with SHA-384 (RustCrypto bp384).
    BrainpoolP384,
    /// Ed25519 (RFC 8032, pure), aws-lc-rs.
    Ed25519,
    /// Ed448 (RFC 8032, pure, empty Ed448 context), RustCrypto ed448-goldilocks.
    Ed448,
    /// RSA of a modulus size; PSS (true) or PKCS#1 v1.5; SHA-384 (true, the 4096-bit sets)
    /// or SHA-256 (PSS: MGF1 with the same hash, salt of the hash's size).
    Rsa(KeySize, bool, bool),
}

/// The OIDs of the curves (RFC 5480 §2.1.1.1, RFC 5639 §4.1).
const P256_OID: &str = "1.2.840.10045.3.1.7";
const P384_OID: &str = "1.3.132.0.34";
const P521_OID: &str = "1.3.132.0.35";
const BP256_OID: &str = "1.3.36.3.3.2.8.1.1.7";
const BP384_OID: &str = "1.3.36.3.3.2.8.1.1.11";

const P256: Traditional = Traditional::Ecdsa(
    &awssig::ECDSA_P256_SHA256_ASN1_SIGNING,
    &awssig::ECDSA_P256_SHA256_ASN1,
    P256_OID,
    32,
);
const P384: Traditional = Traditional::Ecdsa(
    &awssig::ECDSA_P384_SHA384_ASN1_SIGNING,
    &awssig::ECDSA_P384_SHA384_ASN1,
    P384_OID,
    48,
);
const P521: Traditional = Traditional::Ecdsa(
    &awssig::ECDSA_P521_SHA512_ASN1_SIGNING,
    &awssig::ECDSA_P521_SHA512_ASN1,
    P521_OID,
    66,
);

impl Traditional {
    /// (largest public key, largest private key, largest signature), bytes.
    const fn sizes(self) -> (usize, usize, usize) {
        match self {
            // ECPrivateKey: SEQUENCE { 1, OCTET STRING scalar, [0] curve OID } (RFC 5915).
            // (the P-256 OID is 10 bytes of DER, P-384's and P-521's 7); ECDSA-Sig-Value of
            // two full-length INTEGERs (with a leading zero except on P-521).
            Self::Ecdsa(.., 32) => (65, 51, 72),
            Self::Ecdsa(.., 48) => (97, 64, 104),
            Self::Ecdsa(..) => (133, 82, 139),
            Self::BrainpoolP256 => (65, 52, 72),
            Self::BrainpoolP384 => (97, 68, 104),
            Self::Ed25519 => (32, 32, 64),
            Self::Ed448 => (57, 57, 114),
            // RSAPublicKey with e = 65537; RSAPrivateKey with e = 65537 and every CRT value of
            // full length (the draft's table of largest sizes).
            Self::Rsa(size, ..) => {
                let k = modulus_bytes(size);
                let private = match k {
                    256 => 1194,
                    384 => 1770,
                    _ => 2351,
                };
                (4 + (4 + k + 1) + 5, private, k)
            }
        }
    }
}

const fn modulus_bytes(size: KeySize) -> usize {
    match size {
        KeySize::Rsa2048 => 256,
        KeySize::Rsa3072 => 384,
        _ => 512,
    }
}

/// One composite combination: its ML-DSA set, traditional half, PH and Label (draft §6).
pub struct Composite {
    ml_dsa: &'static SignatureAlgorithm,
    traditional: Traditional,
    /// PH, the pre-hash of the message (and the CMS digest algorithm).
    pub prehash: PreHash,
    /// The Label, ASCII, no terminator: the ML-DSA context string and part of M'.
    pub label: &'static [u8],
}

impl Composite {
    /// The ML-DSA parameter set of the first half.
    pub fn ml_dsa(&self) -> &'static SignatureAlgorithm {
        self.ml_dsa
    }

    /// M' = Prefix ‖ Label ‖ len(ctx) ‖ ctx ‖ PH(M) (draft §3.2 steps 1–2).
    ///
    /// # Errors
    /// [`Error::ContextTooLong`] over 255 bytes.
    pub fn message_representative(&self, message: &[u8], context: &[u8]) -> Result<Vec<u8>, Error> {
        let len = u8::try_from(context.len()).map_err(|_| Error::ContextTooLong(context.len()))?;
        let ph = self.prehash.digest(message);
        let mut m = Vec::with_capacity(PREFIX.len() + self.label.len() + 1 + context.len() + 64);
        m.extend_from_slice(PREFIX);
        m.extend_from_slice(self.label);
        m.push(len);
        m.extend_from_slice(context);
        m.extend_from_slice(&ph);
        Ok(m)
    }

    /// Whether the traditional half draws fresh randomness for every signature (RSA-PSS's
    /// salt, NIST-curve ECDSA's k on AWS-LC), so that no composite signature is repeatable.
    pub fn traditional_draws_randomness(&self) -> bool {
        matches!(self.traditional, Traditional::Ecdsa(..) | Rsa(_, true, _))
    }

    /// Whether the signature's length varies (an ECDSA half: DER `Ecdsa-Sig-Value`).
    pub fn signature_size_varies(&self) -> bool {
        matches!(
            self.traditional,
            Traditional::Ecdsa(..) | BrainpoolP256 | BrainpoolP384
        )
    }

    fn ml_dsa_pk_len(&self) -> usize {
        self.ml_dsa.verifying_key_size
    }
}

/// The composite parameters of a catalogue entry; `None` for any other algorithm.
pub fn parameters(alg: &SignatureAlgorithm) -> Option<&'static Composite> {
    COMPOSITES
        .iter()
        .find(|(a, _)| core::ptr::eq(*a, alg))
        .map(|(_, c)| *c)
}

/// The 18 composite algorithms in OID order (1.3.6.1.5.5.7.6.37 … 54).
pub fn algorithms() -> impl Iterator<Item = &'static SignatureAlgorithm> {
    COMPOSITES.iter().map(|(a, _)| *a)
}

macro_rules! composite {
    ($static:ident, $params:ident, $name:literal, $oid_last:literal, $ml:ident, $trad:expr,
     $ph:ident, $label:literal, $category:literal, [$($alias:literal),*]) => {
        static $params: Composite = Composite {
            ml_dsa: &$ml,
            traditional: $trad,
            prehash: PreHash::$ph,
            label: $label,
        };
        #[doc = concat!("Composite ", $name, " (draft-ietf-lamps-pq-composite-sigs-19 §6, OID 1.3.6.1.5.5.7.6.", stringify!($oid_last), ").")]
        pub static $static: SignatureAlgorithm = SignatureAlgorithm {
            name: $name,
            aliases: &[concat!("id-", $name), $($alias),*],
            category: $category,
            verifying_key_size: $ml.verifying_key_size + $trad.sizes().0,
            signing_key_size: SEED_SIZE + $trad.sizes().1,
            seed_size: 0,
            signature_size: $ml.signature_size + $trad.sizes().2,
            oid: concat!("1.3.6.1.5.5.7.6.", stringify!($oid_last)),
            spki_algorithm_id: &[0x06, 0x08, 0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x06, $oid_last],
            signature_algorithm_id: &[0x06, 0x08, 0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x06, $oid_last],
            tls_scheme: None,
            standard: "draft-ietf-lamps-pq-composite-sigs-19",
            family: Family::CompositeMlDsa,
            backend: &CompositeBackend(&$params),
        };
    };
}

use Traditional::{BrainpoolP256, BrainpoolP384, Ed448, Ed25519, Rsa};

composite!(
    MLDSA44_RSA2048_PSS_SHA256,
    MLDSA44_RSA2048_PSS_SHA256_PARAMS,
    "MLDSA44-RSA2048-PSS-SHA256",
    37,
    ML_DSA_44,
    Rsa(KeySize::Rsa2048, true, false),
    Sha256,
    b"COMPSIG-MLDSA44-RSA2048-PSS-SHA256",
    2,
    []
);
composite!(
    MLDSA44_RSA2048_PKCS15_SHA256,
    MLDSA44_RSA2048_PKCS15_SHA256_PARAMS,
    "MLDSA44-RSA2048-PKCS15-SHA256",
    38,
    ML_DSA_44,
    Rsa(KeySize::Rsa2048, false, false),
    Sha256,
    b"COMPSIG-MLDSA44-RSA2048-PKCS15-SHA256",
    2,
    []
);
composite!(
    MLDSA44_ED25519_SHA512,
    MLDSA44_ED25519_SHA512_PARAMS,
    "MLDSA44-Ed25519-SHA512",
    39,
    ML_DSA_44,
    Ed25519,
    Sha512,
    b"COMPSIG-MLDSA44-Ed25519-SHA512",
    2,
    []
);
composite!(
    MLDSA44_ECDSA_P256_SHA256,
    MLDSA44_ECDSA_P256_SHA256_PARAMS,
    "MLDSA44-ECDSA-P256-SHA256",
    40,
    ML_DSA_44,
    P256,
    Sha256,
    b"COMPSIG-MLDSA44-ECDSA-P256-SHA256",
    2,
    []
);
composite!(
    MLDSA65_RSA3072_PSS_SHA512,
    MLDSA65_RSA3072_PSS_SHA512_PARAMS,
    "MLDSA65-RSA3072-PSS-SHA512",
    41,
    ML_DSA_65,
    Rsa(KeySize::Rsa3072, true, false),
    Sha512,
    b"COMPSIG-MLDSA65-RSA3072-PSS-SHA512",
    3,
    []
);
composite!(
    MLDSA65_RSA3072_PKCS15_SHA512,
    MLDSA65_RSA3072_PKCS15_SHA512_PARAMS,
    "MLDSA65-RSA3072-PKCS15-SHA512",
    42,
    ML_DSA_65,
    Rsa(KeySize::Rsa3072, false, false),
    Sha512,
    b"COMPSIG-MLDSA65-RSA3072-PKCS15-SHA512",
    3,
    []
);
composite!(
    MLDSA65_RSA4096_PSS_SHA512,
    MLDSA65_RSA4096_PSS_SHA512_PARAMS,
    "MLDSA65-RSA4096-PSS-SHA512",
    43,
    ML_DSA_65,
    Rsa(KeySize::Rsa4096, true, true),
    Sha512,
    b"COMPSIG-MLDSA65-RSA4096-PSS-SHA512",
    3,
    []
);
composite!(
    MLDSA65_RSA4096_PKCS15_SHA512,
    MLDSA65_RSA4096_PKCS15_SHA512_PARAMS,
    "MLDSA65-RSA4096-PKCS15-SHA512",
    44,
    ML_DSA_65,
    Rsa(KeySize::Rsa4096, false, true),
    Sha512,
    b"COMPSIG-MLDSA65-RSA4096-PKCS15-SHA512",
    3,
    []
);
composite!(
    MLDSA65_ECDSA_P256_SHA512,
    MLDSA65_ECDSA_P256_SHA512_PARAMS,
    "MLDSA65-ECDSA-P256-SHA512",
    45,
    ML_DSA_65,
    P256,
    Sha512,
    b"COMPSIG-MLDSA65-ECDSA-P256-SHA512",
    3,
    []
);
composite!(
    MLDSA65_ECDSA_P384_SHA512,
    MLDSA65_ECDSA_P384_SHA512_PARAMS,
    "MLDSA65-ECDSA-P384-SHA512",
    46,
    ML_DSA_65,
    P384,
    Sha512,
    b"COMPSIG-MLDSA65-ECDSA-P384-SHA512",
    3,
    []
);
composite!(
    MLDSA65_ECDSA_BP256_SHA512,
    MLDSA65_ECDSA_BP256_SHA512_PARAMS,
    "MLDSA65-ECDSA-brainpoolP256r1-SHA512",
    47,
    ML_DSA_65,
    BrainpoolP256,
    Sha512,
    b"COMPSIG-MLDSA65-ECDSA-BP256-SHA512",
    3,
    ["MLDSA65-ECDSA-BP256-SHA512"]
);
composite!(
    MLDSA65_ED25519_SHA512,
    MLDSA65_ED25519_SHA512_PARAMS,
    "MLDSA65-Ed25519-SHA512",
    48,
    ML_DSA_65,
    Ed25519,
    Sha512,
    b"COMPSIG-MLDSA65-Ed25519-SHA512",
    3,
    []
);
composite!(
    MLDSA87_ECDSA_P384_SHA512,
    MLDSA87_ECDSA_P384_SHA512_PARAMS,
    "MLDSA87-ECDSA-P384-SHA512",
    49,
    ML_DSA_87,
    P384,
    Sha512,
    b"COMPSIG-MLDSA87-ECDSA-P384-SHA512",
    5,
    []
);
composite!(
    MLDSA87_ECDSA_BP384_SHA512,
    MLDSA87_ECDSA_BP384_SHA512_PARAMS,
    "MLDSA87-ECDSA-brainpoolP384r1-SHA512",
    50,
    ML_DSA_87,
    BrainpoolP384,
    Sha512,
    b"COMPSIG-MLDSA87-ECDSA-BP384-SHA512",
    5,
    ["MLDSA87-ECDSA-BP384-SHA512"]
);
composite!(
    MLDSA87_ED448_SHAKE256,
    MLDSA87_ED448_SHAKE256_PARAMS,
    "MLDSA87-Ed448-SHAKE256",
    51,
    ML_DSA_87,
    Ed448,
    Shake256,
    b"COMPSIG-MLDSA87-Ed448-SHAKE256",
    5,
    []
);
composite!(
    MLDSA87_RSA3072_PSS_SHA512,
    MLDSA87_RSA3072_PSS_SHA512_PARAMS,
    "MLDSA87-RSA3072-PSS-SHA512",
    52,
    ML_DSA_87,
    Rsa(KeySize::Rsa3072, true, false),
    Sha512,
    b"COMPSIG-MLDSA87-RSA3072-PSS-SHA512",
    5,
    []
);
composite!(
    MLDSA87_RSA4096_PSS_SHA512,
    MLDSA87_RSA4096_PSS_SHA512_PARAMS,
    "MLDSA87-RSA4096-PSS-SHA512",
    53,
    ML_DSA_87,
    Rsa(KeySize::Rsa4096, true, true),
    Sha512,
    b"COMPSIG-MLDSA87-RSA4096-PSS-SHA512",
    5,
    []
);
composite!(
    MLDSA87_ECDSA_P521_SHA512,
    MLDSA87_ECDSA_P521_SHA512_PARAMS,
    "MLDSA87-ECDSA-P521-SHA512",
    54,
    ML_DSA_87,
    P521,
    Sha512,
    b"COMPSIG-MLDSA87-ECDSA-P521-SHA512",
    5,
    []
);

/// Every composite algorithm and its parameters, in OID order.
static COMPOSITES: [(&SignatureAlgorithm, &Composite); 18] = [
    (
        &MLDSA44_RSA2048_PSS_SHA256,
        &MLDSA44_RSA2048_PSS_SHA256_PARAMS,
    ),
    (
        &MLDSA44_RSA2048_PKCS15_SHA256,
        &MLDSA44_RSA2048_PKCS15_SHA256_PARAMS,
    ),
    (&MLDSA44_ED25519_SHA512, &MLDSA44_ED25519_SHA512_PARAMS),
    (
        &MLDSA44_ECDSA_P256_SHA256,
        &MLDSA44_ECDSA_P256_SHA256_PARAMS,
    ),
    (
        &MLDSA65_RSA3072_PSS_SHA512,
        &MLDSA65_RSA3072_PSS_SHA512_PARAMS,
    ),
    (
        &MLDSA65_RSA3072_PKCS15_SHA512,
        &MLDSA65_RSA3072_PKCS15_SHA512_PARAMS,
    ),
    (
        &MLDSA65_RSA4096_PSS_SHA512,
        &MLDSA65_RSA4096_PSS_SHA512_PARAMS,
    ),
    (
        &MLDSA65_RSA4096_PKCS15_SHA512,
        &MLDSA65_RSA4096_PKCS15_SHA512_PARAMS,
    ),
    (
        &MLDSA65_ECDSA_P256_SHA512,
        &MLDSA65_ECDSA_P256_SHA512_PARAMS,
    ),
    (
        &MLDSA65_ECDSA_P384_SHA512,
        &MLDSA65_ECDSA_P384_SHA512_PARAMS,
    ),
    (
        &MLDSA65_ECDSA_BP256_SHA512,
        &MLDSA65_ECDSA_BP256_SHA512_PARAMS,
    ),
    (&MLDSA65_ED25519_SHA512, &MLDSA65_ED25519_SHA512_PARAMS),
    (
        &MLDSA87_ECDSA_P384_SHA512,
        &MLDSA87_ECDSA_P384_SHA512_PARAMS,
    ),
    (
        &MLDSA87_ECDSA_BP384_SHA512,
        &MLDSA87_ECDSA_BP384_SHA512_PARAMS,
    ),
    (&MLDSA87_ED448_SHAKE256, &MLDSA87_ED448_SHAKE256_PARAMS),
    (
        &MLDSA87_RSA3072_PSS_SHA512,
        &MLDSA87_RSA3072_PSS_SHA512_PARAMS,
    ),
    (
        &MLDSA87_RSA4096_PSS_SHA512,
        &MLDSA87_RSA4096_PSS_SHA512_PARAMS,
    ),
    (
        &MLDSA87_ECDSA_P521_SHA512,
        &MLDSA87_ECDSA_P521_SHA512_PARAMS,
    ),
];

const BACKEND_ERROR: Error = Error::Backend("composite ML-DSA traditional component");
const BAD_KEY: Error = Error::InvalidKey("composite ML-DSA traditional private key");

/// A traditional private key, ready to sign.
enum TraditionalKey {
    Ecdsa(EcdsaKeyPair),
    BrainpoolP256(ecdsa::SigningKey<bp256::BrainpoolP256r1>),
    BrainpoolP384(ecdsa::SigningKey<bp384::BrainpoolP384r1>),
    Ed25519(Ed25519KeyPair),
    Ed448(Box<ed448_goldilocks::SigningKey>),
    Rsa(RsaKeyPair),
}

impl Traditional {
    /// A fresh private key, in the form the composite signing key carries.
    fn generate(self) -> Result<Zeroizing<Vec<u8>>, Error> {
        match self {
            Self::Ecdsa(alg, _, oid, _) => {
                let pair = EcdsaKeyPair::generate(alg).map_err(|_| BACKEND_ERROR)?;
                let scalar: aws_lc_rs::encoding::EcPrivateKeyBin<'_> = pair
                    .private_key()
                    .as_be_bytes()
                    .map_err(|_| BACKEND_ERROR)?;
                ec_private_key(oid, scalar.as_ref())
            }
            Self::BrainpoolP256 | Self::BrainpoolP384 => {
                let (oid, n) = if matches!(self, Self::BrainpoolP256) {
                    (BP256_OID, 32)
                } else {
                    (BP384_OID, 48)
                };
                // A uniformly random scalar in [1, n): rejection of the rare out-of-range draw.
                loop {
                    let scalar = crate::random_vec(n)?;
                    if self.load(&ec_private_key(oid, &scalar)?).is_ok() {
                        return ec_private_key(oid, &scalar);
                    }
                }
            }
            Self::Ed25519 => crate::random_vec(32),
            Self::Ed448 => crate::random_vec(57),
            Self::Rsa(size, ..) => {
                let pair = RsaKeyPair::generate(size).map_err(|_| BACKEND_ERROR)?;
                let pkcs8: Pkcs8V1Der<'_> = pair.as_der().map_err(|_| BACKEND_ERROR)?;
                let info =
                    pkcs8::PrivateKeyInfo::from_der(pkcs8.as_ref()).map_err(|_| BACKEND_ERROR)?;
                Ok(Zeroizing::new(info.private_key.to_vec()))
            }
        }
    }

    /// Loads a private key of this component's form, and returns it with its public key.
    fn load(self, bytes: &[u8]) -> Result<(TraditionalKey, Vec<u8>), Error> {
        match self {
            Self::Ecdsa(alg, _, oid, n) => {
                ec_scalar(bytes, oid, n)?;
                let pair = EcdsaKeyPair::from_private_key_der(alg, bytes).map_err(|_| BAD_KEY)?;
                let public = pair.public_key().as_ref().to_vec();
                Ok((TraditionalKey::Ecdsa(pair), public))
            }
            Self::BrainpoolP256 => {
                let key = ecdsa::SigningKey::<bp256::BrainpoolP256r1>::from_slice(ec_scalar(
                    bytes, BP256_OID, 32,
                )?)
                .map_err(|_| BAD_KEY)?;
                let public = key.verifying_key().to_sec1_point(false).as_bytes().to_vec();
                Ok((TraditionalKey::BrainpoolP256(key), public))
            }
            Self::BrainpoolP384 => {
                let key = ecdsa::SigningKey::<bp384::BrainpoolP384r1>::from_slice(ec_scalar(
                    bytes, BP384_OID, 48,
                )?)
                .map_err(|_| BAD_KEY)?;
                let public = key.verifying_key().to_sec1_point(false).as_bytes().to_vec();
                Ok((TraditionalKey::BrainpoolP384(key), public))
            }
            Self::Ed25519 => {
                let pair = Ed25519KeyPair::from_seed_unchecked(bytes).map_err(|_| BAD_KEY)?;
                let public = pair.public_key().as_ref().to_vec();
                Ok((TraditionalKey::Ed25519(pair), public))
            }
            Self::Ed448 => {
                let key = ed448_goldilocks::SigningKey::try_from(bytes).map_err(|_| BAD_KEY)?;
                let public = key.verifying_key().to_bytes().to_vec();
                Ok((TraditionalKey::Ed448(Box::new(key)), public))
            }
            Self::Rsa(size, ..) => {
                // One DER value and nothing after it (AWS-LC reads the first and ignores
                // the rest).
                sec1::der::asn1::AnyRef::from_der(bytes).map_err(|_| BAD_KEY)?;
                let pair = RsaKeyPair::from_der(bytes).map_err(|_| BAD_KEY)?;
                if pair.public_modulus_len() != modulus_bytes(size) {
                    return Err(Error::InvalidKey("RSA key of another modulus size"));
                }
                let public = pair.public_key().as_ref().to_vec();
                Ok((TraditionalKey::Rsa(pair), public))
            }
        }
    }

    fn rsa_encoding(pss: bool, sha384: bool) -> &'static dyn awssig::RsaEncoding {
        match (pss, sha384) {
            (true, false) => &awssig::RSA_PSS_SHA256,
            (true, true) => &awssig::RSA_PSS_SHA384,
            (false, false) => &awssig::RSA_PKCS1_SHA256,
            (false, true) => &awssig::RSA_PKCS1_SHA384,
        }
    }

    /// Signs M' with the component's own hash.
    fn sign(self, key: &TraditionalKey, message: &[u8]) -> Result<Vec<u8>, Error> {
        Ok(match (key, self) {
            (TraditionalKey::Ecdsa(pair), _) => pair
                .sign(&SystemRandom::new(), message)
                .map_err(|_| BACKEND_ERROR)?
                .as_ref()
                .to_vec(),
            (TraditionalKey::BrainpoolP256(key), _) => {
                let sig: ecdsa::Signature<bp256::BrainpoolP256r1> = key.sign(message);
                sig.to_der().as_bytes().to_vec()
            }
            (TraditionalKey::BrainpoolP384(key), _) => {
                let sig: ecdsa::Signature<bp384::BrainpoolP384r1> = key.sign(message);
                sig.to_der().as_bytes().to_vec()
            }
            (TraditionalKey::Ed25519(pair), _) => pair.sign(message).as_ref().to_vec(),
            (TraditionalKey::Ed448(key), _) => key.sign_raw(message).to_bytes().to_vec(),
            (TraditionalKey::Rsa(pair), Self::Rsa(_, pss, sha384)) => {
                let mut sig = vec![0u8; pair.public_modulus_len()];
                pair.sign(
                    Self::rsa_encoding(pss, sha384),
                    &SystemRandom::new(),
                    message,
                    &mut sig,
                )
                .map_err(|_| BACKEND_ERROR)?;
                sig
            }
            (TraditionalKey::Rsa(_), _) => return Err(BACKEND_ERROR),
        })
    }

    /// Verifies the traditional half over M'; every failure is [`Error::BadSignature`].
    fn verify(self, public: &[u8], message: &[u8], signature: &[u8]) -> Result<(), Error> {
        match self {
            Self::Ecdsa(_, alg, ..) => UnparsedPublicKey::new(alg, public)
                .verify(message, signature)
                .map_err(|_| Error::BadSignature),
            Self::BrainpoolP256 => {
                let key = ecdsa::VerifyingKey::<bp256::BrainpoolP256r1>::from_sec1_bytes(public)
                    .map_err(|_| Error::BadSignature)?;
                let sig = ecdsa::Signature::<bp256::BrainpoolP256r1>::from_der(signature)
                    .map_err(|_| Error::BadSignature)?;
                key.verify(message, &sig).map_err(|_| Error::BadSignature)
            }
            Self::BrainpoolP384 => {
                let key = ecdsa::VerifyingKey::<bp384::BrainpoolP384r1>::from_sec1_bytes(public)
                    .map_err(|_| Error::BadSignature)?;
                let sig = ecdsa::Signature::<bp384::BrainpoolP384r1>::from_der(signature)
                    .map_err(|_| Error::BadSignature)?;
                key.verify(message, &sig).map_err(|_| Error::BadSignature)
            }
            Self::Ed25519 => UnparsedPublicKey::new(&awssig::ED25519, public)
                .verify(message, signature)
                .map_err(|_| Error::BadSignature),
            Self::Ed448 => {
                let public: &[u8; 57] = public.try_into().map_err(|_| Error::BadSignature)?;
                let key = ed448_goldilocks::VerifyingKey::from_bytes(public)
                    .map_err(|_| Error::BadSignature)?;
                let sig = ed448_goldilocks::Signature::from_slice(signature)
                    .map_err(|_| Error::BadSignature)?;
                key.verify_raw(&sig, message)
                    .map_err(|_| Error::BadSignature)
            }
            Self::Rsa(size, pss, sha384) => {
                let alg: &'static dyn awssig::VerificationAlgorithm = match (pss, sha384) {
                    (true, false) => &awssig::RSA_PSS_2048_8192_SHA256,
                    (true, true) => &awssig::RSA_PSS_2048_8192_SHA384,
                    (false, false) => &awssig::RSA_PKCS1_2048_8192_SHA256,
                    (false, true) => &awssig::RSA_PKCS1_2048_8192_SHA384,
                };
                if signature.len() != modulus_bytes(size) {
                    return Err(Error::BadSignature);
                }
                UnparsedPublicKey::new(alg, public)
                    .verify(message, signature)
                    .map_err(|_| Error::BadSignature)
            }
        }
    }
}

/// An RFC 5915 `ECPrivateKey` { version 1, privateKey, [0] namedCurve } without its public
/// key, the form the draft's §4.2 gives.
fn ec_private_key(curve: &str, scalar: &[u8]) -> Result<Zeroizing<Vec<u8>>, Error> {
    let oid = ObjectIdentifier::new(curve).map_err(|_| BACKEND_ERROR)?;
    let key = sec1::EcPrivateKey {
        private_key: scalar,
        parameters: Some(sec1::EcParameters::NamedCurve(oid)),
        public_key: None,
    };
    Ok(Zeroizing::new(key.to_der().map_err(|_| BACKEND_ERROR)?))
}

/// The scalar of an RFC 5915 `ECPrivateKey` on `curve`, exactly `n` bytes. The curve must be
/// named (P-256 and brainpoolP256r1 scalars, and P-384 and brainpoolP384r1 ones, have one size:
/// the name is what tells them apart), and the `[1]` public key absent (draft §4.2).
fn ec_scalar<'a>(der: &'a [u8], curve: &str, n: usize) -> Result<&'a [u8], Error> {
    let key = sec1::EcPrivateKey::from_der(der).map_err(|_| BAD_KEY)?;
    let oid = ObjectIdentifier::new(curve).map_err(|_| BACKEND_ERROR)?;
    if key.parameters.and_then(|p| p.named_curve()) != Some(oid) {
        return Err(Error::InvalidKey(
            "ECPrivateKey without its curve, or on another curve",
        ));
    }
    if key.public_key.is_some() {
        return Err(Error::InvalidKey(
            "ECPrivateKey with a public key (the composite form has none)",
        ));
    }
    if key.private_key.len() != n {
        return Err(Error::InvalidKey("ECPrivateKey scalar of the wrong size"));
    }
    Ok(key.private_key)
}

/// The composite backend: ML-DSA from pqkit-lattice, the traditional half as above.
struct CompositeBackend(&'static Composite);

impl SignatureBackend for CompositeBackend {
    fn signature_size_varies(&self) -> bool {
        self.0.signature_size_varies()
    }

    /// The traditional key's DER (an RSA key's size varies).
    fn expanded_size_varies(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        match self.0.traditional {
            BrainpoolP256 => "pqkit-lattice + RustCrypto bp256",
            BrainpoolP384 => "pqkit-lattice + RustCrypto bp384",
            Ed448 => "pqkit-lattice + RustCrypto ed448-goldilocks",
            _ => "pqkit-lattice + aws-lc-rs",
        }
    }

    fn generate(&self, alg: &'static SignatureAlgorithm) -> Result<Box<dyn SigningKeyImpl>, Error> {
        // Room for the whole key first: a reallocation would leave the seed in freed memory.
        let mut sk = Zeroizing::new(Vec::with_capacity(alg.signing_key_size));
        sk.extend_from_slice(&crate::random_vec(SEED_SIZE)?);
        sk.extend_from_slice(&self.0.traditional.generate()?);
        self.signing_key_from_expanded(alg, &sk)
    }

    fn signing_key_from_seed(
        &self,
        _alg: &'static SignatureAlgorithm,
        _seed: &[u8],
    ) -> Result<Box<dyn SigningKeyImpl>, Error> {
        Err(Error::Unsupported(
            "a composite ML-DSA key has no seed form (its private key is seed ‖ traditional key)",
        ))
    }

    fn signing_key_from_expanded(
        &self,
        alg: &'static SignatureAlgorithm,
        bytes: &[u8],
    ) -> Result<Box<dyn SigningKeyImpl>, Error> {
        let (seed, traditional) = bytes
            .split_at_checked(SEED_SIZE)
            .ok_or(Error::InvalidKey("composite ML-DSA private key"))?;
        let ml_dsa = self.0.ml_dsa.signing_key_from_seed(seed)?;
        let (key, traditional_public) = self.0.traditional.load(traditional)?;
        let mut public = ml_dsa.verifying_key().as_bytes().to_vec();
        public.extend_from_slice(&traditional_public);
        if public.len() != alg.verifying_key_size {
            return Err(Error::InvalidKey(
                "composite ML-DSA traditional key (an RSA exponent other than 65537)",
            ));
        }
        Ok(Box::new(CompositeSigningKey {
            params: self.0,
            ml_dsa,
            traditional: key,
            public,
            private: Zeroizing::new(bytes.to_vec()),
        }))
    }

    fn verify(
        &self,
        _alg: &'static SignatureAlgorithm,
        verifying_key: &[u8],
        message: &[u8],
        context: &[u8],
        signature: &[u8],
    ) -> Result<(), Error> {
        let c = self.0;
        // Draft §3.3 step 2: split by the ML-DSA lengths.
        let (ml_pk, trad_pk) = verifying_key
            .split_at_checked(c.ml_dsa_pk_len())
            .ok_or(Error::BadSignature)?;
        let (ml_sig, trad_sig) = signature
            .split_at_checked(c.ml_dsa.signature_size)
            .ok_or(Error::BadSignature)?;
        let m = c.message_representative(message, context)?;
        c.ml_dsa.verifying_key(ml_pk)?.verify(&m, c.label, ml_sig)?;
        c.traditional.verify(trad_pk, &m, trad_sig)
    }
}

/// A composite signing key: the ML-DSA key from its seed, the traditional key, and the
/// encodings. The private encoding is zeroized on drop; the ML-DSA key and the aws-lc-rs,
/// bp256/bp384 and ed448-goldilocks keys clear themselves.
struct CompositeSigningKey {
    params: &'static Composite,
    ml_dsa: SigningKey,
    traditional: TraditionalKey,
    public: Vec<u8>,
    private: Zeroizing<Vec<u8>>,
}

impl SigningKeyImpl for CompositeSigningKey {
    fn verifying_key(&self) -> &[u8] {
        &self.public
    }

    fn seed(&self) -> Option<&[u8]> {
        None
    }

    /// The composite private key, seed ‖ traditional key (draft §4.2).
    fn expanded(&self) -> Option<Zeroizing<Vec<u8>>> {
        Some(self.private.clone())
    }

    /// Draft §3.2; `randomness` is the ML-DSA half's (see the module docs).
    fn sign(
        &self,
        message: &[u8],
        context: &[u8],
        randomness: SigningRandomness<'_>,
    ) -> Result<Vec<u8>, Error> {
        let c = self.params;
        let m = c.message_representative(message, context)?;
        let mut signature = self.ml_dsa.sign_with(&m, c.label, randomness)?;
        signature.extend_from_slice(&c.traditional.sign(&self.traditional, &m)?);
        Ok(signature)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sizes the draft's Appendix A table gives as largest (pk, sk, signature).
    #[test]
    fn sizes_match_the_draft_table() {
        let table: [(usize, usize, usize); 18] = [
            (1582, 1226, 2676),
            (1582, 1226, 2676),
            (1344, 64, 2484),
            (1377, 83, 2492),
            (2350, 1802, 3693),
            (2350, 1802, 3693),
            (2478, 2383, 3821),
            (2478, 2383, 3821),
            (2017, 83, 3381),
            (2049, 96, 3413),
            (2017, 84, 3381),
            (1984, 64, 3373),
            (2689, 96, 4731),
            (2689, 100, 4731),
            (2649, 89, 4741),
            (2990, 1802, 5011),
            (3118, 2383, 5139),
            (2725, 114, 4766),
        ];
        for (alg, (pk, sk, sig)) in algorithms().zip(table) {
            assert_eq!(
                (
                    alg.verifying_key_size,
                    alg.signing_key_size,
                    alg.signature_size
                ),
                (pk, sk, sig),
                "{}",
                alg.name
            );
            assert!(parameters(alg).is_some());
        }
    }

    /// Every set: a fresh key signs, with and without a context; its private key loads back
    /// to the same key; a flipped bit in either half, another context or another message is
    /// refused.
    #[test]
    fn every_set_signs_and_refuses_changes() {
        for alg in algorithms() {
            let key = alg.generate().expect("generate");
            let sk = key.expanded().expect("private key");
            assert!(sk.len() <= alg.signing_key_size, "{}", alg.name);
            let again = alg.signing_key_from_expanded(&sk).expect("load");
            assert_eq!(again.verifying_key(), key.verifying_key(), "{}", alg.name);
            let vk = key.verifying_key();
            for ctx in [&b""[..], b"context"] {
                let sig = key.sign(b"message", ctx).expect("sign");
                assert!(sig.len() <= alg.signature_size);
                vk.verify(b"message", ctx, &sig).expect("verify");
                assert!(vk.verify(b"massage", ctx, &sig).is_err());
                assert!(vk.verify(b"message", b"other", &sig).is_err());
                let ml = parameters(alg).expect("composite").ml_dsa.signature_size;
                for at in [7, ml + 9, sig.len() - 2] {
                    let mut bad = sig.clone();
                    bad[at] ^= 0x04;
                    assert!(
                        matches!(vk.verify(b"message", ctx, &bad), Err(Error::BadSignature)),
                        "{} byte {at}",
                        alg.name
                    );
                }
                assert!(vk.verify(b"message", ctx, &sig[..ml]).is_err());
            }
            assert!(matches!(
                key.sign(b"m", &[0; 256]),
                Err(Error::ContextTooLong(256))
            ));
        }
    }

    /// The draft's worked message representative (Appendix "Message Representative
    /// Examples"): MLDSA65-ECDSA-P256-SHA512, M = 00 01 … 09, ctx = 0813061205162623.
    #[test]
    fn message_representative_matches_the_draft() {
        let params = parameters(&MLDSA65_ECDSA_P256_SHA512).expect("composite");
        let m: Vec<u8> = (0..10).collect();
        let ctx = [0x08, 0x13, 0x06, 0x12, 0x05, 0x16, 0x26, 0x23];
        let got = params.message_representative(&m, &ctx).expect("M'");
        let hex = |h: &str| -> Vec<u8> {
            (0..h.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&h[i..i + 2], 16).expect("hex"))
                .collect()
        };
        let mut want = PREFIX.to_vec();
        want.extend(hex(
            "434f4d505349472d4d4c44534136352d45434453412d503235362d534841353132",
        ));
        want.push(8);
        want.extend_from_slice(&ctx);
        want.extend(hex(
            "0f89ee1fcb7b0a4f7809d1267a029719004c5a5e5ec323a7c3523a20974f9a3f\
             202f56fadba4cd9e8d654ab9f2e96dc5c795ea176fa20ede8d854c342f903533",
        ));
        assert_eq!(got, want);
    }

    /// Two valid halves from two signatures do not make a signature: the ML-DSA half of one
    /// message's signature beside the traditional half of another's is refused, both ways.
    #[test]
    fn halves_of_different_signatures_do_not_combine() {
        for alg in [
            &MLDSA44_ED25519_SHA512,
            &MLDSA87_ECDSA_BP384_SHA512,
            &MLDSA87_ED448_SHAKE256,
        ] {
            let key = alg.generate().expect("key");
            let vk = key.verifying_key();
            let ml = parameters(alg).expect("composite").ml_dsa.signature_size;
            let a = key.sign(b"one", &[]).expect("sign");
            let b = key.sign(b"two", &[]).expect("sign");
            let spliced = [&a[..ml], &b[ml..]].concat();
            assert!(vk.verify(b"one", &[], &spliced).is_err(), "{}", alg.name);
            assert!(vk.verify(b"two", &[], &spliced).is_err(), "{}", alg.name);
            assert!(matches!(
                vk.verify(b"one", &[0; 256], &a),
                Err(Error::ContextTooLong(256))
            ));
        }
    }

    /// A traditional key is read only on its own curve, with the curve named and without a
    /// public key: a P-256 key (one size with brainpoolP256r1) is not a brainpool key.
    #[test]
    fn ec_keys_name_their_curve() {
        let p256 = MLDSA65_ECDSA_P256_SHA512.generate().expect("key");
        let sk = p256.expanded().expect("sk");
        assert!(
            MLDSA65_ECDSA_BP256_SHA512
                .signing_key_from_expanded(&sk)
                .is_err()
        );
        let p384 = MLDSA87_ECDSA_P384_SHA512.generate().expect("key");
        let sk384 = p384.expanded().expect("sk");
        assert!(
            MLDSA87_ECDSA_BP384_SHA512
                .signing_key_from_expanded(&sk384)
                .is_err()
        );
        // The same scalar without its curve, and with a public key.
        let scalar = ec_scalar(&sk[SEED_SIZE..], P256_OID, 32).expect("scalar");
        let bare = sec1::EcPrivateKey {
            private_key: scalar,
            parameters: None,
            public_key: None,
        }
        .to_der()
        .expect("DER");
        let point = p256.verifying_key().as_bytes()[ML_DSA_65.verifying_key_size..].to_vec();
        let with_public = sec1::EcPrivateKey {
            private_key: scalar,
            parameters: Some(sec1::EcParameters::NamedCurve(
                ObjectIdentifier::new(P256_OID).expect("oid"),
            )),
            public_key: Some(&point),
        }
        .to_der()
        .expect("DER");
        for traditional in [bare, with_public] {
            let key = [&sk[..SEED_SIZE], &traditional[..]].concat();
            assert!(
                MLDSA65_ECDSA_P256_SHA512
                    .signing_key_from_expanded(&key)
                    .is_err()
            );
        }
    }
}
