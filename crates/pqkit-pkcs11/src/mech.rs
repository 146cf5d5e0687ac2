//! Key types and mechanisms as data: which PKCS#11 3.2 key type and parameter set is which
//! pqkit algorithm, and what each mechanism does. The constants are cryptoki-sys's (the OASIS
//! 3.2 headers); the vendor-defined ones are defined here, once.

use cryptoki_sys::*;
use pqkit_core::prehash::PreHash;
use pqkit_core::sig::{Family, SignatureAlgorithm};

/// pqkit's vendor-defined range: CKK/CKM/CKA_VENDOR_DEFINED | "PQK" << 8 (PKCS#11 3.2 §6.2:
/// values at and above 0x80000000 are the vendor's).
const PQKIT: CK_ULONG = 0x0050_514B << 8;

/// Falcon (round 3, the OQS encodings pqkit uses): no FIPS 206 key type exists yet, so a
/// vendor-defined one. CKA_PARAMETER_SET is 512 or 1024.
pub const CKK_PQKIT_FALCON: CK_KEY_TYPE = CKK_VENDOR_DEFINED | PQKIT | 0x01;
/// Falcon key-pair generation (vendor-defined).
pub const CKM_PQKIT_FALCON_KEY_PAIR_GEN: CK_MECHANISM_TYPE = CKM_VENDOR_DEFINED | PQKIT | 0x01;
/// Falcon signing of the message (vendor-defined; round-3 hashing, no context).
pub const CKM_PQKIT_FALCON: CK_MECHANISM_TYPE = CKM_VENDOR_DEFINED | PQKIT | 0x02;
/// ML-DSA signing of an external μ (vendor-defined: PKCS#11 3.2 has no mechanism for it). The
/// data is μ, 64 bytes, computed by the caller as FIPS 204 Algorithm 7 line 6 does
/// (μ = H(BytesToBits(tr) ‖ M′, 64) with tr = H(pk, 64)); the signature equals the one CKM_ML_DSA
/// makes over M′'s message and context. Parameter: none, or a CK_SIGN_ADDITIONAL_CONTEXT whose
/// context is empty (the context is already inside μ) and whose hedgeVariant applies.
pub const CKM_PQKIT_ML_DSA_EXTERNAL_MU: CK_MECHANISM_TYPE = CKM_VENDOR_DEFINED | PQKIT | 0x10;
/// A private key's PKCS#8 DER (RFC 5958; the forms of RFC 9881/9909/9935), accepted by
/// C_CreateObject to import any key pqkit reads. Never returned.
pub const CKA_PQKIT_PKCS8: CK_ATTRIBUTE_TYPE = CKA_VENDOR_DEFINED | PQKIT | 0x01;
/// The state file of a stateful private key (HSS, XMSS, XMSS^MT) under the token's `hbs/`.
/// Internal; never returned and never accepted from a caller.
pub const CKA_PQKIT_STATE_FILE: CK_ATTRIBUTE_TYPE = CKA_VENDOR_DEFINED | PQKIT | 0x02;

/// Why a stateful key (HSS, XMSS, XMSS^MT) refused to sign: vendor-defined return values
/// (CKR_VENDOR_DEFINED | "PQK" << 8 | n), one per cause, so that a caller can tell them apart
/// ([`state_refusal`] gives each its message). No signature was made.
pub const CKR_PQKIT_STATE_ROLLED_BACK: CK_RV = CKR_VENDOR_DEFINED | PQKIT | 0x01;
/// The state file is not where it was last written (copied, moved, restored in a new file).
pub const CKR_PQKIT_STATE_MOVED: CK_RV = CKR_VENDOR_DEFINED | PQKIT | 0x02;
/// The state file has a second name (a hard link) or is a symbolic link.
pub const CKR_PQKIT_STATE_LINKED: CK_RV = CKR_VENDOR_DEFINED | PQKIT | 0x03;
/// The state file is damaged (checksum, format, or secrets that do not give its public key).
pub const CKR_PQKIT_STATE_DAMAGED: CK_RV = CKR_VENDOR_DEFINED | PQKIT | 0x04;
/// The state file is missing.
pub const CKR_PQKIT_STATE_MISSING: CK_RV = CKR_VENDOR_DEFINED | PQKIT | 0x05;
/// The reservation ledger has no record of the key, or the key is recorded in another ledger
/// (a lost or replaced ledger), or it was written before ledgers.
pub const CKR_PQKIT_STATE_NOT_IN_LEDGER: CK_RV = CKR_VENDOR_DEFINED | PQKIT | 0x06;
/// The reservation ledger cannot be reached or written (or an etcd lease lapsed).
pub const CKR_PQKIT_LEDGER_UNREACHABLE: CK_RV = CKR_VENDOR_DEFINED | PQKIT | 0x07;
/// The state file could not be written (a full disk, a read-only directory).
pub const CKR_PQKIT_STATE_UNWRITABLE: CK_RV = CKR_VENDOR_DEFINED | PQKIT | 0x08;
/// Another signer held the key longer than C_Sign waits, or moved its mark meanwhile.
pub const CKR_PQKIT_STATE_BUSY: CK_RV = CKR_VENDOR_DEFINED | PQKIT | 0x09;

/// The message of a stateful key's refusal ([`CKR_PQKIT_STATE_ROLLED_BACK`] and the rest, and
/// CKR_KEY_EXHAUSTED); `None` for any other value.
pub fn state_refusal(rv: CK_RV) -> Option<&'static str> {
    Some(match rv {
        CKR_KEY_EXHAUSTED => "every one-time key of the key has been used",
        CKR_PQKIT_STATE_ROLLED_BACK => {
            "the key's state file is older than what the reservation ledger records (a \
             restored backup, a leftover temporary file moved into place, or an older copy): \
             signing would reuse one-time keys"
        }
        CKR_PQKIT_STATE_MOVED => {
            "the key's state file is not where it was last written (copied, moved or restored)"
        }
        CKR_PQKIT_STATE_LINKED => {
            "the key's state file has a second name (a hard link) or is a symbolic link"
        }
        CKR_PQKIT_STATE_DAMAGED => "the key's state file is damaged",
        CKR_PQKIT_STATE_MISSING => "the key's state file is missing from the token",
        CKR_PQKIT_STATE_NOT_IN_LEDGER => {
            "the reservation ledger has no record of the key (a lost or another ledger, or a \
             key from before ledgers)"
        }
        CKR_PQKIT_LEDGER_UNREACHABLE => {
            "the reservation ledger of the token's stateful keys cannot be reached or written"
        }
        CKR_PQKIT_STATE_UNWRITABLE => {
            "the key's state file cannot be written (a full disk or a read-only directory)"
        }
        CKR_PQKIT_STATE_BUSY => "another signer holds the key",
        _ => return None,
    })
}

/// CKA_EC_PARAMS of the curves pqkit offers: the DER of the named curve's OID (RFC 5480 §2.1.1).
pub const EC_PARAMS: [(&str, &[u8]); 3] = [
    ("ECDSA-P256", &[6, 8, 0x2a, 0x86, 0x48, 0xce, 0x3d, 3, 1, 7]),
    ("ECDSA-P384", &[6, 5, 0x2b, 0x81, 4, 0, 34]),
    ("ECDSA-P521", &[6, 5, 0x2b, 0x81, 4, 0, 35]),
];
/// CKA_EC_PARAMS of Ed25519: the OID 1.3.101.112 (RFC 8410), or the printable string
/// "edwards25519" that PKCS#11 3.0 §2.3.10 also allows.
pub const ED25519_PARAMS: &[u8] = &[6, 3, 0x2b, 101, 112];
const ED25519_PARAMS_NAME: &[u8] = b"\x13\x0cedwards25519";

/// Which pqkit algorithm a (key type, parameter set) pair is.
pub struct KeyKind {
    /// CKA_KEY_TYPE.
    pub key_type: CK_KEY_TYPE,
    /// CKA_PARAMETER_SET (PKCS#11 3.2 §6.67 ML-DSA, §6.68 SLH-DSA, §6.66 ML-KEM); 0 for keys that
    /// say it otherwise (EC: CKA_EC_PARAMS).
    pub parameter_set: CK_ULONG,
    /// The pqkit catalogue name.
    pub name: &'static str,
}

const fn k(key_type: CK_KEY_TYPE, parameter_set: CK_ULONG, name: &'static str) -> KeyKind {
    KeyKind {
        key_type,
        parameter_set,
        name,
    }
}

/// Every non-stateful key kind of the token.
pub static KEY_KINDS: &[KeyKind] = &[
    k(CKK_ML_DSA, CKP_ML_DSA_44, "ML-DSA-44"),
    k(CKK_ML_DSA, CKP_ML_DSA_65, "ML-DSA-65"),
    k(CKK_ML_DSA, CKP_ML_DSA_87, "ML-DSA-87"),
    k(CKK_SLH_DSA, CKP_SLH_DSA_SHA2_128S, "SLH-DSA-SHA2-128s"),
    k(CKK_SLH_DSA, CKP_SLH_DSA_SHAKE_128S, "SLH-DSA-SHAKE-128s"),
    k(CKK_SLH_DSA, CKP_SLH_DSA_SHA2_128F, "SLH-DSA-SHA2-128f"),
    k(CKK_SLH_DSA, CKP_SLH_DSA_SHAKE_128F, "SLH-DSA-SHAKE-128f"),
    k(CKK_SLH_DSA, CKP_SLH_DSA_SHA2_192S, "SLH-DSA-SHA2-192s"),
    k(CKK_SLH_DSA, CKP_SLH_DSA_SHAKE_192S, "SLH-DSA-SHAKE-192s"),
    k(CKK_SLH_DSA, CKP_SLH_DSA_SHA2_192F, "SLH-DSA-SHA2-192f"),
    k(CKK_SLH_DSA, CKP_SLH_DSA_SHAKE_192F, "SLH-DSA-SHAKE-192f"),
    k(CKK_SLH_DSA, CKP_SLH_DSA_SHA2_256S, "SLH-DSA-SHA2-256s"),
    k(CKK_SLH_DSA, CKP_SLH_DSA_SHAKE_256S, "SLH-DSA-SHAKE-256s"),
    k(CKK_SLH_DSA, CKP_SLH_DSA_SHA2_256F, "SLH-DSA-SHA2-256f"),
    k(CKK_SLH_DSA, CKP_SLH_DSA_SHAKE_256F, "SLH-DSA-SHAKE-256f"),
    k(CKK_ML_KEM, CKP_ML_KEM_512, "ML-KEM-512"),
    k(CKK_ML_KEM, CKP_ML_KEM_768, "ML-KEM-768"),
    k(CKK_ML_KEM, CKP_ML_KEM_1024, "ML-KEM-1024"),
    k(CKK_PQKIT_FALCON, 512, "Falcon-512"),
    k(CKK_PQKIT_FALCON, 1024, "Falcon-1024"),
    k(CKK_EC, 0, "ECDSA-P256"),
    k(CKK_EC, 0, "ECDSA-P384"),
    k(CKK_EC, 0, "ECDSA-P521"),
    k(CKK_EC_EDWARDS, 0, "Ed25519"),
];

/// The key kind of a pqkit algorithm name.
pub fn kind_of(name: &str) -> Option<&'static KeyKind> {
    KEY_KINDS.iter().find(|k| k.name == name)
}

/// The key kind for a key type with its parameter set or EC parameters.
pub fn kind_for(
    key_type: CK_KEY_TYPE,
    parameter_set: Option<CK_ULONG>,
    ec_params: Option<&[u8]>,
) -> Option<&'static KeyKind> {
    match key_type {
        CKK_EC => {
            let params = ec_params?;
            let name = EC_PARAMS.iter().find(|(_, p)| *p == params)?.0;
            kind_of(name)
        }
        CKK_EC_EDWARDS => {
            let params = ec_params?;
            (params == ED25519_PARAMS || params == ED25519_PARAMS_NAME)
                .then(|| kind_of("Ed25519"))?
        }
        _ => {
            let set = parameter_set?;
            KEY_KINDS
                .iter()
                .find(|k| k.key_type == key_type && k.parameter_set == set)
        }
    }
}

/// The CKA_EC_PARAMS of an EC or Edwards algorithm.
pub fn ec_params_of(name: &str) -> Option<&'static [u8]> {
    if name == "Ed25519" {
        return Some(ED25519_PARAMS);
    }
    EC_PARAMS.iter().find(|(n, _)| *n == name).map(|(_, p)| *p)
}

/// What a signature mechanism does with the data it is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignOp {
    /// The whole message: ML-DSA/SLH-DSA pure (FIPS 204 Algorithm 2, FIPS 205 Algorithm 22),
    /// Falcon, EdDSA, HSS, XMSS.
    Message,
    /// A digest computed by the caller with the hash the parameter names: HashML-DSA (FIPS 204
    /// Algorithm 4) and HashSLH-DSA (FIPS 205 Algorithm 23), CKM_HASH_ML_DSA / CKM_HASH_SLH_DSA.
    Digest,
    /// The message, hashed inside the token with this hash, then HashML-DSA / HashSLH-DSA.
    HashThen(PreHash),
    /// μ, 64 bytes (vendor-defined external μ).
    Mu,
    /// ECDSA over a digest the caller computed (CKM_ECDSA): r ‖ s.
    EcdsaDigest,
    /// ECDSA hashing inside the token (CKM_ECDSA_SHA256/384/512): r ‖ s.
    EcdsaHash(PreHash),
}

/// One mechanism of the token.
pub struct Mechanism {
    /// CKM_*.
    pub ty: CK_MECHANISM_TYPE,
    /// The key type it takes or makes.
    pub key_type: CK_KEY_TYPE,
    /// CKF_* flags (CKF_SIGN | CKF_VERIFY, CKF_GENERATE_KEY_PAIR, CKF_ENCAPSULATE | …).
    pub flags: CK_FLAGS,
    /// Smallest and largest key (bits for EC; the parameter-set range otherwise).
    pub key_sizes: (CK_ULONG, CK_ULONG),
    /// For signature mechanisms, what the data is.
    pub sign: Option<SignOp>,
}

const SV: CK_FLAGS = CKF_SIGN | CKF_VERIFY;
const GEN: CK_FLAGS = CKF_GENERATE_KEY_PAIR;
/// Curves over F_p named by OID, points uncompressed (PKCS#11 3.2 §6.3.1 flags).
const ECF: CK_FLAGS = CKF_EC_F_P | CKF_EC_OID | CKF_EC_UNCOMPRESS;

const fn m(
    ty: CK_MECHANISM_TYPE,
    key_type: CK_KEY_TYPE,
    flags: CK_FLAGS,
    key_sizes: (CK_ULONG, CK_ULONG),
    sign: Option<SignOp>,
) -> Mechanism {
    Mechanism {
        ty,
        key_type,
        flags,
        key_sizes,
        sign,
    }
}

const MLDSA: (CK_ULONG, CK_ULONG) = (CKP_ML_DSA_44, CKP_ML_DSA_87);
const SLHDSA: (CK_ULONG, CK_ULONG) = (CKP_SLH_DSA_SHA2_128S, CKP_SLH_DSA_SHAKE_256F);
const MLKEM: (CK_ULONG, CK_ULONG) = (CKP_ML_KEM_512, CKP_ML_KEM_1024);
const EC: (CK_ULONG, CK_ULONG) = (256, 521);
const ONE: Option<SignOp> = Some(SignOp::Message);

macro_rules! hashed {
    ($key:expr, $sizes:expr, $($ckm:ident => $hash:ident),* $(,)?) => {
        [$(m($ckm, $key, SV, $sizes, Some(SignOp::HashThen(PreHash::$hash)))),*]
    };
}

const HASH_ML_DSA: [Mechanism; 10] = hashed!(CKK_ML_DSA, MLDSA,
    CKM_HASH_ML_DSA_SHA224 => Sha224, CKM_HASH_ML_DSA_SHA256 => Sha256,
    CKM_HASH_ML_DSA_SHA384 => Sha384, CKM_HASH_ML_DSA_SHA512 => Sha512,
    CKM_HASH_ML_DSA_SHA3_224 => Sha3_224, CKM_HASH_ML_DSA_SHA3_256 => Sha3_256,
    CKM_HASH_ML_DSA_SHA3_384 => Sha3_384, CKM_HASH_ML_DSA_SHA3_512 => Sha3_512,
    CKM_HASH_ML_DSA_SHAKE128 => Shake128, CKM_HASH_ML_DSA_SHAKE256 => Shake256);
const HASH_SLH_DSA: [Mechanism; 10] = hashed!(CKK_SLH_DSA, SLHDSA,
    CKM_HASH_SLH_DSA_SHA224 => Sha224, CKM_HASH_SLH_DSA_SHA256 => Sha256,
    CKM_HASH_SLH_DSA_SHA384 => Sha384, CKM_HASH_SLH_DSA_SHA512 => Sha512,
    CKM_HASH_SLH_DSA_SHA3_224 => Sha3_224, CKM_HASH_SLH_DSA_SHA3_256 => Sha3_256,
    CKM_HASH_SLH_DSA_SHA3_384 => Sha3_384, CKM_HASH_SLH_DSA_SHA3_512 => Sha3_512,
    CKM_HASH_SLH_DSA_SHAKE128 => Shake128, CKM_HASH_SLH_DSA_SHAKE256 => Shake256);

/// Every mechanism but the hashed ML-DSA / SLH-DSA ones.
const BASE: &[Mechanism] = &[
    // FIPS 204 (PKCS#11 3.2 §6.67).
    m(CKM_ML_DSA_KEY_PAIR_GEN, CKK_ML_DSA, GEN, MLDSA, None),
    m(CKM_ML_DSA, CKK_ML_DSA, SV, MLDSA, ONE),
    m(CKM_HASH_ML_DSA, CKK_ML_DSA, SV, MLDSA, Some(SignOp::Digest)),
    m(
        CKM_PQKIT_ML_DSA_EXTERNAL_MU,
        CKK_ML_DSA,
        SV,
        MLDSA,
        Some(SignOp::Mu),
    ),
    // FIPS 205 (PKCS#11 3.2 §6.68).
    m(CKM_SLH_DSA_KEY_PAIR_GEN, CKK_SLH_DSA, GEN, SLHDSA, None),
    m(CKM_SLH_DSA, CKK_SLH_DSA, SV, SLHDSA, ONE),
    m(
        CKM_HASH_SLH_DSA,
        CKK_SLH_DSA,
        SV,
        SLHDSA,
        Some(SignOp::Digest),
    ),
    // FIPS 203 (PKCS#11 3.2 §6.66).
    m(CKM_ML_KEM_KEY_PAIR_GEN, CKK_ML_KEM, GEN, MLKEM, None),
    m(
        CKM_ML_KEM,
        CKK_ML_KEM,
        CKF_ENCAPSULATE | CKF_DECAPSULATE,
        MLKEM,
        None,
    ),
    // RFC 8554 / SP 800-208 (PKCS#11 3.2 §6.64) and RFC 8391 (§6.65).
    m(CKM_HSS_KEY_PAIR_GEN, CKK_HSS, GEN, (1, 8), None),
    m(CKM_HSS, CKK_HSS, SV, (1, 8), ONE),
    m(CKM_XMSS_KEY_PAIR_GEN, CKK_XMSS, GEN, (1, 21), None),
    m(CKM_XMSS, CKK_XMSS, SV, (1, 21), ONE),
    m(CKM_XMSSMT_KEY_PAIR_GEN, CKK_XMSSMT, GEN, (1, 32), None),
    m(CKM_XMSSMT, CKK_XMSSMT, SV, (1, 32), ONE),
    // Falcon, vendor-defined until FIPS 206.
    m(
        CKM_PQKIT_FALCON_KEY_PAIR_GEN,
        CKK_PQKIT_FALCON,
        GEN,
        (512, 1024),
        None,
    ),
    m(CKM_PQKIT_FALCON, CKK_PQKIT_FALCON, SV, (512, 1024), ONE),
    // Classical, for hybrid and classical chains (PKCS#11 3.2 §6.3, §6.5).
    m(CKM_EC_KEY_PAIR_GEN, CKK_EC, GEN | ECF, EC, None),
    m(CKM_ECDSA, CKK_EC, SV | ECF, EC, Some(SignOp::EcdsaDigest)),
    m(
        CKM_ECDSA_SHA256,
        CKK_EC,
        SV | ECF,
        EC,
        Some(SignOp::EcdsaHash(PreHash::Sha256)),
    ),
    m(
        CKM_ECDSA_SHA384,
        CKK_EC,
        SV | ECF,
        EC,
        Some(SignOp::EcdsaHash(PreHash::Sha384)),
    ),
    m(
        CKM_ECDSA_SHA512,
        CKK_EC,
        SV | ECF,
        EC,
        Some(SignOp::EcdsaHash(PreHash::Sha512)),
    ),
    m(
        CKM_EC_EDWARDS_KEY_PAIR_GEN,
        CKK_EC_EDWARDS,
        GEN,
        (255, 255),
        None,
    ),
    m(CKM_EDDSA, CKK_EC_EDWARDS, SV, (255, 255), ONE),
];

/// Every mechanism, in C_GetMechanismList order.
pub fn all() -> impl Iterator<Item = &'static Mechanism> {
    BASE.iter()
        .chain(HASH_ML_DSA.iter())
        .chain(HASH_SLH_DSA.iter())
}

/// The mechanism `ty`.
pub fn find(ty: CK_MECHANISM_TYPE) -> Option<&'static Mechanism> {
    all().find(|m| m.ty == ty)
}

/// The pre-hash a CK_HASH_SIGN_ADDITIONAL_CONTEXT's `hash` names (PKCS#11 3.2 §6.67.6).
pub fn prehash_of(hash: CK_MECHANISM_TYPE) -> Option<PreHash> {
    PREHASHES.iter().find(|(m, _)| *m == hash).map(|(_, h)| *h)
}

/// The mechanism a CK_HASH_SIGN_ADDITIONAL_CONTEXT names `hash` by (the inverse of
/// [`prehash_of`]).
pub fn hash_mechanism_of(hash: PreHash) -> CK_MECHANISM_TYPE {
    PREHASHES
        .iter()
        .find(|(_, h)| *h == hash)
        .map_or(CK_UNAVAILABLE_INFORMATION, |(m, _)| *m)
}

/// Each pre-hash and the hash mechanism that names it. PKCS#11 3.2 names the SHAKE pre-hashes
/// by their key-derivation mechanisms.
const PREHASHES: [(CK_MECHANISM_TYPE, PreHash); 12] = [
    (CKM_SHA224, PreHash::Sha224),
    (CKM_SHA256, PreHash::Sha256),
    (CKM_SHA384, PreHash::Sha384),
    (CKM_SHA512, PreHash::Sha512),
    (CKM_SHA512_224, PreHash::Sha512_224),
    (CKM_SHA512_256, PreHash::Sha512_256),
    (CKM_SHA3_224, PreHash::Sha3_224),
    (CKM_SHA3_256, PreHash::Sha3_256),
    (CKM_SHA3_384, PreHash::Sha3_384),
    (CKM_SHA3_512, PreHash::Sha3_512),
    (CKM_SHAKE_128_KEY_DERIVATION, PreHash::Shake128),
    (CKM_SHAKE_256_KEY_DERIVATION, PreHash::Shake256),
];

/// The hash ECDSA uses with a curve (the one pqkit's ECDSA algorithms sign with).
pub fn ecdsa_hash(alg: &SignatureAlgorithm) -> Option<PreHash> {
    (alg.family == Family::Ecdsa).then_some(match alg.signing_key_size {
        32 => PreHash::Sha256,
        48 => PreHash::Sha384,
        _ => PreHash::Sha512,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_names_a_catalogue_algorithm_and_is_unique() {
        for kind in KEY_KINDS {
            let known = pqkit_core::catalogue::signature(kind.name).is_ok()
                || pqkit_core::catalogue::kem(kind.name).is_ok();
            assert!(known, "{}", kind.name);
            if kind.parameter_set != 0 {
                let found = kind_for(kind.key_type, Some(kind.parameter_set), None).unwrap();
                assert_eq!(found.name, kind.name);
            }
        }
        let mut types: Vec<_> = all().map(|m| m.ty).collect();
        types.sort_unstable();
        types.dedup();
        assert_eq!(types.len(), all().count(), "a mechanism is listed twice");
    }

    #[test]
    fn every_prehash_has_one_hash_mechanism() {
        for hash in PreHash::ALL {
            assert_eq!(
                prehash_of(hash_mechanism_of(hash)),
                Some(hash),
                "{}",
                hash.name()
            );
        }
    }
}
