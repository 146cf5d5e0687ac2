//! The catalogue: every algorithm pqkit knows, as static data, and name lookup.
//!
//! Lookup is case-insensitive over canonical names and the aliases users bring with them
//! (DESIGN.md, "names users bring").

use crate::classical::{
    ECDSA_P256_SHA256, ECDSA_P384_SHA384, ECDSA_P521_SHA512, ED25519, RSA_PKCS1_2048,
    RSA_PKCS1_3072, RSA_PKCS1_4096, RSA_PSS_2048, RSA_PSS_3072, RSA_PSS_4096,
};
pub use crate::code_point::TlsCodePoint;
use crate::error::Error;
use crate::falcon::{FALCON_512, FALCON_1024};
use crate::hybrid::{
    KeyExchangeGroup, MLKEM512, MLKEM768, MLKEM1024, P256_MLKEM512, P384_MLKEM768, P521_MLKEM1024,
    SECP256R1MLKEM768, SECP384R1MLKEM1024, X25519MLKEM768,
};
use crate::kem::KemAlgorithm;
use crate::ml_dsa::{ML_DSA_44, ML_DSA_65, ML_DSA_87};
use crate::ml_kem::{ML_KEM_512, ML_KEM_768, ML_KEM_1024};
use crate::sig::SignatureAlgorithm;
use crate::slh_dsa::{
    SLH_DSA_SHA2_128F, SLH_DSA_SHA2_128S, SLH_DSA_SHA2_192F, SLH_DSA_SHA2_192S, SLH_DSA_SHA2_256F,
    SLH_DSA_SHA2_256S, SLH_DSA_SHAKE_128F, SLH_DSA_SHAKE_128S, SLH_DSA_SHAKE_192F,
    SLH_DSA_SHAKE_192S, SLH_DSA_SHAKE_256F, SLH_DSA_SHAKE_256S,
};

/// The largest key share a TLS 1.3 KeyShareEntry carries, in bytes: `key_exchange<1..2^16-1>`
/// (RFC 8446 §4.2.8).
pub const MAX_KEY_SHARE: usize = 65535;

static ML_KEMS: &[&KemAlgorithm] = &[&ML_KEM_512, &ML_KEM_768, &ML_KEM_1024];

static SIGNATURES: &[&SignatureAlgorithm] = &[
    &ML_DSA_44,
    &ML_DSA_65,
    &ML_DSA_87,
    &FALCON_512,
    &FALCON_1024,
    &SLH_DSA_SHA2_128S,
    &SLH_DSA_SHA2_128F,
    &SLH_DSA_SHA2_192S,
    &SLH_DSA_SHA2_192F,
    &SLH_DSA_SHA2_256S,
    &SLH_DSA_SHA2_256F,
    &SLH_DSA_SHAKE_128S,
    &SLH_DSA_SHAKE_128F,
    &SLH_DSA_SHAKE_192S,
    &SLH_DSA_SHAKE_192F,
    &SLH_DSA_SHAKE_256S,
    &SLH_DSA_SHAKE_256F,
    &ECDSA_P256_SHA256,
    &ECDSA_P384_SHA384,
    &ECDSA_P521_SHA512,
    &ED25519,
    &RSA_PSS_2048,
    &RSA_PSS_3072,
    &RSA_PSS_4096,
    &RSA_PKCS1_2048,
    &RSA_PKCS1_3072,
    &RSA_PKCS1_4096,
];

static ML_KEM_GROUPS: &[&KeyExchangeGroup] = &[
    &X25519MLKEM768,
    &SECP256R1MLKEM768,
    &SECP384R1MLKEM1024,
    &MLKEM768,
    &MLKEM1024,
    &MLKEM512,
    &P256_MLKEM512,
    &P384_MLKEM768,
    &P521_MLKEM1024,
];

/// Every KEM: ML-KEM strongest last, HQC, then (with the `liboqs` feature) BIKE, eFrodoKEM
/// and Classic McEliece.
pub fn kems() -> &'static [&'static KemAlgorithm] {
    static ALL: std::sync::OnceLock<Vec<&'static KemAlgorithm>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        let mut all = ML_KEMS.to_vec();
        all.extend_from_slice(crate::hqc::KEMS);
        #[cfg(feature = "liboqs")]
        all.extend_from_slice(crate::oqs_kem::KEMS);
        all
    })
}

/// Every signature algorithm: the standalone ones, then the 18 composite ML-DSA
/// combinations in OID order.
pub fn signatures() -> &'static [&'static SignatureAlgorithm] {
    static ALL: std::sync::OnceLock<Vec<&'static SignatureAlgorithm>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        let mut all = SIGNATURES.to_vec();
        all.extend(crate::composite::algorithms());
        all
    })
}

/// Every KEM-based TLS key-exchange group: the ML-KEM ones in pqkit's preference order (the
/// ones offered by default), HQC's, then (with the `liboqs` feature) BIKE's and eFrodoKEM's.
pub fn groups() -> &'static [&'static KeyExchangeGroup] {
    static ALL: std::sync::OnceLock<Vec<&'static KeyExchangeGroup>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        let mut all = ML_KEM_GROUPS.to_vec();
        all.extend_from_slice(crate::hybrid::HQC_GROUPS);
        #[cfg(feature = "liboqs")]
        all.extend_from_slice(crate::hybrid::LIBOQS_GROUPS);
        all
    })
}

/// The ML-KEM groups, in pqkit's preference order: the groups offered when none are named.
pub fn ml_kem_groups() -> &'static [&'static KeyExchangeGroup] {
    ML_KEM_GROUPS
}

/// Finds a KEM by name or alias (case-insensitively), by OID ("2.16.840.1.101.3.4.4.2"), or by
/// the code point of its pure TLS group ("0x0201") — as `pqkit list` shows them.
///
/// # Errors
/// [`Error::UnknownAlgorithm`].
pub fn kem(name: &str) -> Result<&'static KemAlgorithm, Error> {
    if let Some(k) = kems().iter().copied().find(|k| k.oid == name.trim()) {
        return Ok(k);
    }
    if let Some(v) = code_point(name)
        && let Some(g) = groups()
            .iter()
            .find(|g| g.classical.is_none() && g.code_point.value == v)
    {
        return Ok(g.kem);
    }
    find(kems(), name, |a| (a.name, a.aliases))
}

/// Finds a signature algorithm by name or alias (case-insensitively), by its TLS signature
/// scheme's IANA name or code point ("mldsa65", "0x0905"), or by OID ("2.16.840.1.101.3.4.3.18")
/// — as `pqkit list` shows them.
///
/// # Errors
/// [`Error::UnknownAlgorithm`]; [`Error::AmbiguousName`] for an OID, code point or scheme name
/// several entries share (RSA's, for every key size; ECDSA's key OID).
pub fn signature(name: &str) -> Result<&'static SignatureAlgorithm, Error> {
    if let Ok(a) = find(signatures(), name, |a| (a.name, a.aliases)) {
        return Ok(a);
    }
    let code = code_point(name);
    let matches: Vec<&'static SignatureAlgorithm> = signatures()
        .iter()
        .copied()
        .filter(|a| {
            a.oid == name.trim()
                || a.tls_scheme.is_some_and(|cp| {
                    Some(cp.value) == code || normalize(cp.iana) == normalize(name)
                })
        })
        .collect();
    match matches[..] {
        [] => Err(Error::UnknownAlgorithm(name.to_owned())),
        [one] => Ok(one),
        _ => Err(Error::AmbiguousName {
            name: name.to_owned(),
            candidates: matches
                .iter()
                .map(|a| a.name)
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// A TLS code point written as `0x` and four hex digits.
fn code_point(name: &str) -> Option<u16> {
    let n = name.trim();
    let hex = n.strip_prefix("0x").or_else(|| n.strip_prefix("0X"))?;
    u16::from_str_radix(hex, 16).ok()
}

/// Finds a key-exchange group by IANA name, alias or code point ("0x11ec"), case-insensitively.
/// A KEM name ("ML-KEM-768", "Kyber768") means that KEM's pure group (MLKEM768).
///
/// # Errors
/// [`Error::UnknownAlgorithm`]; [`Error::Unsupported`] for a KEM too large for a key share
/// (Classic McEliece).
pub fn group(name: &str) -> Result<&'static KeyExchangeGroup, Error> {
    if let Ok(kem) = kem(name) {
        if let Some(g) = groups()
            .iter()
            .find(|g| g.classical.is_none() && core::ptr::eq(g.kem, kem))
        {
            return Ok(g);
        }
        if kem.encapsulation_key_size > MAX_KEY_SHARE {
            return Err(Error::Unsupported(
                "this KEM has no TLS named group: its encapsulation key exceeds the 65535 bytes \
                 of a key share (RFC 8446 §4.2.8)",
            ));
        }
    }
    if let Some(g) =
        code_point(name).and_then(|v| groups().iter().find(|g| g.code_point.value == v))
    {
        return Ok(g);
    }
    find(groups(), name, |g| (g.name, g.aliases))
}

/// Finds a signature algorithm by its DER `AlgorithmIdentifier` contents in an SPKI and the
/// verifying key's length (RSA keys of every size share one identifier).
pub fn signature_by_spki_algorithm(
    alg_id: &[u8],
    key_len: usize,
) -> Option<&'static SignatureAlgorithm> {
    signatures()
        .iter()
        .copied()
        .find(|a| a.spki_algorithm_id == alg_id && a.verifying_key_size == key_len)
}

/// Finds the signature algorithm that made a signature, from the signature's
/// `AlgorithmIdentifier` contents and the signer's SPKI `AlgorithmIdentifier` contents and key
/// length (RSA-PSS and RSA PKCS#1 v1.5 share a key type).
pub fn signature_by_algorithms(
    signature_alg_id: &[u8],
    spki_alg_id: &[u8],
    key_len: usize,
) -> Option<&'static SignatureAlgorithm> {
    signatures().iter().copied().find(|a| {
        a.signature_algorithm_id == signature_alg_id
            && a.spki_algorithm_id == spki_alg_id
            && a.verifying_key_size == key_len
    })
}

/// The one-line note for a name that maps to something with different bytes (round-3 Kyber
/// and SPHINCS+, FrodoKEM's salted variant); `None` for other names.
pub fn round3_note(name: &str) -> Option<&'static str> {
    let n = normalize(name);
    if n.contains("kyber") {
        Some(crate::ml_kem::KYBER_NOTE)
    } else if n.contains("sphincs") {
        Some(SPHINCS_NOTE)
    } else if n.contains("frodo") && !n.contains("efrodo") {
        Some(FRODO_NOTE)
    } else if ["hqc128", "hqc192", "hqc256"]
        .iter()
        .any(|old| n.contains(old))
    {
        Some(HQC_NOTE)
    } else {
        None
    }
}

/// Printed when a FrodoKEM name without the "e" is used.
pub const FRODO_NOTE: &str = "note: pqkit offers eFrodoKEM (FrodoKEM round 3, for ephemeral \
     keys; liboqs <= 0.13 calls it FrodoKEM); the salted FrodoKEM of the ISO draft (liboqs >= \
     0.14, 32 more ciphertext bytes) is not offered: name eFrodoKEM-640-AES, efrodo640aes, …";

/// Printed when an HQC name of the 2023 version is used.
pub const HQC_NOTE: &str = "note: HQC-128/192/256 name the 2023 HQC (liboqs <= 0.13, the \
     paper tables of round 4), which the 2025 revision changed; pqkit offers HQC-1/3/5 of \
     2025 (hqc1, hqc3, hqc5), whose keys and ciphertexts differ";

/// Printed when a SPHINCS+ round-3 name is used.
pub const SPHINCS_NOTE: &str = "note: SPHINCS+ (round 3) is not SLH-DSA (FIPS 205): FIPS 205 \
     changed the message hashing and adds a context; pqkit uses SLH-DSA, whose signatures do \
     not verify under round-3 SPHINCS+";

fn find<T: ?Sized>(
    list: &'static [&'static T],
    name: &str,
    names: impl Fn(&T) -> (&'static str, &'static [&'static str]),
) -> Result<&'static T, Error> {
    let wanted = normalize(name);
    list.iter()
        .copied()
        .find(|item| {
            let (canonical, aliases) = names(item);
            normalize(canonical) == wanted || aliases.iter().any(|a| normalize(a) == wanted)
        })
        .ok_or_else(|| Error::UnknownAlgorithm(name.to_owned()))
}

/// Case-folds and drops '-' and '_' so "ml_dsa_65", "ML-DSA-65" and "mldsa65" all match.
fn normalize(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}
