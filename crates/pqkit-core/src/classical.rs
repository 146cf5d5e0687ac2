//! Classical algorithms on aws-lc-rs: the ECDH halves of the hybrids, and ECDSA, Ed25519 and
//! RSA signatures for certificates and TLS peers without post-quantum signatures.

use aws_lc_rs::agreement;
use aws_lc_rs::encoding::AsDer;
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::rsa::KeySize;
use aws_lc_rs::signature::{
    self as awssig, EcdsaKeyPair, Ed25519KeyPair, KeyPair, RsaKeyPair, UnparsedPublicKey,
};
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use crate::code_point::TlsCodePoint;
use crate::error::{Error, check_len};
use crate::prehash::PreHash;
use crate::sig::{Family, SignatureAlgorithm, SignatureBackend, SigningKeyImpl, SigningRandomness};

/// An elliptic-curve Diffie–Hellman function used as the classical half of a hybrid group.
pub struct Ecdh {
    /// Name, e.g. "X25519" or "P-256".
    pub name: &'static str,
    /// Size of a key share in bytes (X25519: 32; P-256/384/521: uncompressed point 65/97/133,
    /// RFC 8446 §4.2.8.2).
    pub share_size: usize,
    /// Size of the shared secret in bytes (the x-coordinate for NIST curves).
    pub secret_size: usize,
    alg: &'static agreement::Algorithm,
}

/// X25519 (RFC 7748).
pub static X25519: Ecdh = Ecdh {
    name: "X25519",
    share_size: 32,
    secret_size: 32,
    alg: &agreement::X25519,
};
/// ECDH on P-256 (secp256r1).
pub static P256: Ecdh = Ecdh {
    name: "P-256",
    share_size: 65,
    secret_size: 32,
    alg: &agreement::ECDH_P256,
};
/// ECDH on P-384 (secp384r1).
pub static P384: Ecdh = Ecdh {
    name: "P-384",
    share_size: 97,
    secret_size: 48,
    alg: &agreement::ECDH_P384,
};
/// ECDH on P-521 (secp521r1).
pub static P521: Ecdh = Ecdh {
    name: "P-521",
    share_size: 133,
    secret_size: 66,
    alg: &agreement::ECDH_P521,
};

impl Ecdh {
    /// Generates an ephemeral private key and its public share.
    ///
    /// # Errors
    /// [`Error::Backend`] when aws-lc-rs fails.
    pub fn generate(&'static self) -> Result<EcdhKey, Error> {
        let key = agreement::PrivateKey::generate(self.alg).map_err(|_| Error::Backend("ECDH"))?;
        let share = key
            .compute_public_key()
            .map_err(|_| Error::Backend("ECDH"))?
            .as_ref()
            .to_vec();
        Ok(EcdhKey {
            ecdh: self,
            key,
            share,
        })
    }
}

/// An ephemeral ECDH private key and its public share.
///
/// # Security
/// AWS-LC cleanses the key on free; `Debug` prints no key material.
pub struct EcdhKey {
    ecdh: &'static Ecdh,
    key: agreement::PrivateKey,
    share: Vec<u8>,
}

impl EcdhKey {
    /// The public share, [`Ecdh::share_size`] bytes.
    pub fn share(&self) -> &[u8] {
        &self.share
    }

    /// Computes the shared secret with the peer's share.
    ///
    /// # Errors
    /// [`Error::InvalidLength`] for a share of the wrong size; [`Error::InvalidCiphertext`] for a
    /// point not on the curve, a compressed point, or an all-zero X25519 output (RFC 7748 §6.1,
    /// RFC 8446 §7.4.2).
    pub fn agree(&self, peer_share: &[u8]) -> Result<Zeroizing<Vec<u8>>, Error> {
        check_len("ECDH key share", peer_share, self.ecdh.share_size)?;
        if self.ecdh.share_size != 32 && peer_share[0] != 0x04 {
            return Err(Error::InvalidCiphertext(
                "ECDH key share (not an uncompressed point)",
            ));
        }
        let secret = agreement::agree(
            &self.key,
            agreement::UnparsedPublicKey::new(self.ecdh.alg, peer_share),
            Error::InvalidCiphertext("ECDH key share"),
            |s| Ok(Zeroizing::new(s.to_vec())),
        )?;
        // AWS-LC already refuses an all-zero X25519 output; this check keeps the RFC 8446
        // §7.4.2 rule whatever the backend.
        let zero = vec![0u8; secret.len()];
        if bool::from(secret.ct_eq(&zero[..])) {
            return Err(Error::InvalidCiphertext(
                "ECDH key share (all-zero shared secret)",
            ));
        }
        Ok(secret)
    }
}

impl core::fmt::Debug for EcdhKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("EcdhKey")
            .field("curve", &self.ecdh.name)
            .finish_non_exhaustive()
    }
}

/// ECDSA on P-256 with SHA-256 (FIPS 186-5), DER-encoded signatures (RFC 5480 / RFC 8446).
pub static ECDSA_P256_SHA256: SignatureAlgorithm = SignatureAlgorithm {
    name: "ECDSA-P256",
    aliases: &[
        "ECDSA-P256-SHA256",
        "P-256",
        "P256",
        "ecdsa_secp256r1_sha256",
        "ECC_SECP256R1",
    ],
    category: 0,
    verifying_key_size: 65,
    signing_key_size: 32,
    seed_size: 0,
    signature_size: 72,
    oid: "1.2.840.10045.2.1",
    spki_algorithm_id: &EC_PUBLIC_KEY_P256,
    signature_algorithm_id: &ECDSA_WITH_SHA256,
    // RFC 8446 §4.2.3.
    tls_scheme: Some(TlsCodePoint {
        value: 0x0403,
        iana: "ecdsa_secp256r1_sha256",
        source: "RFC 8446",
    }),
    standard: "FIPS 186-5",
    family: Family::Ecdsa,
    backend: &AwsLc::Ecdsa(
        &awssig::ECDSA_P256_SHA256_ASN1_SIGNING,
        &awssig::ECDSA_P256_SHA256_ASN1,
    ),
};

/// ECDSA on P-384 with SHA-384 (FIPS 186-5).
pub static ECDSA_P384_SHA384: SignatureAlgorithm = SignatureAlgorithm {
    name: "ECDSA-P384",
    aliases: &[
        "ECDSA-P384-SHA384",
        "P-384",
        "P384",
        "ecdsa_secp384r1_sha384",
        "ECC_SECP384R1",
    ],
    category: 0,
    verifying_key_size: 97,
    signing_key_size: 48,
    seed_size: 0,
    signature_size: 104,
    oid: "1.2.840.10045.2.1",
    spki_algorithm_id: &EC_PUBLIC_KEY_P384,
    signature_algorithm_id: &ECDSA_WITH_SHA384,
    // RFC 8446 §4.2.3.
    tls_scheme: Some(TlsCodePoint {
        value: 0x0503,
        iana: "ecdsa_secp384r1_sha384",
        source: "RFC 8446",
    }),
    standard: "FIPS 186-5",
    family: Family::Ecdsa,
    backend: &AwsLc::Ecdsa(
        &awssig::ECDSA_P384_SHA384_ASN1_SIGNING,
        &awssig::ECDSA_P384_SHA384_ASN1,
    ),
};

/// ECDSA on P-521 with SHA-512 (FIPS 186-5).
pub static ECDSA_P521_SHA512: SignatureAlgorithm = SignatureAlgorithm {
    name: "ECDSA-P521",
    aliases: &[
        "ECDSA-P521-SHA512",
        "P-521",
        "P521",
        "ecdsa_secp521r1_sha512",
        "ECC_SECP521R1",
    ],
    category: 0,
    verifying_key_size: 133,
    signing_key_size: 66,
    seed_size: 0,
    signature_size: 139,
    oid: "1.2.840.10045.2.1",
    spki_algorithm_id: &EC_PUBLIC_KEY_P521,
    signature_algorithm_id: &ECDSA_WITH_SHA512,
    // RFC 8446 §4.2.3.
    tls_scheme: Some(TlsCodePoint {
        value: 0x0603,
        iana: "ecdsa_secp521r1_sha512",
        source: "RFC 8446",
    }),
    standard: "FIPS 186-5",
    family: Family::Ecdsa,
    backend: &AwsLc::Ecdsa(
        &awssig::ECDSA_P521_SHA512_ASN1_SIGNING,
        &awssig::ECDSA_P521_SHA512_ASN1,
    ),
};

/// Ed25519 (RFC 8032; RFC 8410 keys).
pub static ED25519: SignatureAlgorithm = SignatureAlgorithm {
    name: "Ed25519",
    aliases: &["ED25519", "EdDSA-Ed25519"],
    category: 0,
    verifying_key_size: 32,
    signing_key_size: 32,
    seed_size: 0,
    signature_size: 64,
    oid: "1.3.101.112",
    spki_algorithm_id: &ID_ED25519,
    signature_algorithm_id: &ID_ED25519,
    // RFC 8446 §4.2.3.
    tls_scheme: Some(TlsCodePoint {
        value: 0x0807,
        iana: "ed25519",
        source: "RFC 8446",
    }),
    standard: "RFC 8032",
    family: Family::Ed25519,
    backend: &AwsLc::Ed25519,
};

/// RSASSA-PSS with SHA-256, 2048-bit modulus (RFC 8017 §8.1; salt 32 bytes, RFC 4055 params).
pub static RSA_PSS_2048: SignatureAlgorithm =
    rsa_pss("RSA-PSS-2048", &["RSA2048-PSS"], KeySize::Rsa2048);
/// RSASSA-PSS with SHA-256, 3072-bit modulus.
pub static RSA_PSS_3072: SignatureAlgorithm =
    rsa_pss("RSA-PSS-3072", &["RSA3072-PSS"], KeySize::Rsa3072);
/// RSASSA-PSS with SHA-256, 4096-bit modulus.
pub static RSA_PSS_4096: SignatureAlgorithm =
    rsa_pss("RSA-PSS-4096", &["RSA4096-PSS"], KeySize::Rsa4096);
/// RSASSA-PKCS1-v1_5 with SHA-256, 2048-bit modulus (RFC 8017 §8.2).
pub static RSA_PKCS1_2048: SignatureAlgorithm =
    rsa_pkcs1("RSA-PKCS1-2048", &["RSA-2048", "RSA2048"], KeySize::Rsa2048);
/// RSASSA-PKCS1-v1_5 with SHA-256, 3072-bit modulus.
pub static RSA_PKCS1_3072: SignatureAlgorithm =
    rsa_pkcs1("RSA-PKCS1-3072", &["RSA-3072", "RSA3072"], KeySize::Rsa3072);
/// RSASSA-PKCS1-v1_5 with SHA-256, 4096-bit modulus.
pub static RSA_PKCS1_4096: SignatureAlgorithm =
    rsa_pkcs1("RSA-PKCS1-4096", &["RSA-4096", "RSA4096"], KeySize::Rsa4096);

/// An RSA signature padding (RFC 8017 §8.1 RSASSA-PSS, §8.2 RSASSA-PKCS1-v1_5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RsaPadding {
    /// RSASSA-PSS (RFC 8017 §8.1): probabilistic, a fresh salt per signature.
    Pss,
    /// RSASSA-PKCS1-v1_5 (RFC 8017 §8.2): deterministic.
    Pkcs1v15,
}

/// The catalogue's RSA entries: (algorithm, padding).
static RSA: [(&SignatureAlgorithm, RsaPadding); 6] = [
    (&RSA_PSS_2048, RsaPadding::Pss),
    (&RSA_PSS_3072, RsaPadding::Pss),
    (&RSA_PSS_4096, RsaPadding::Pss),
    (&RSA_PKCS1_2048, RsaPadding::Pkcs1v15),
    (&RSA_PKCS1_3072, RsaPadding::Pkcs1v15),
    (&RSA_PKCS1_4096, RsaPadding::Pkcs1v15),
];

/// The padding of an RSA entry of the catalogue; `None` for any other algorithm.
pub fn rsa_padding(alg: &SignatureAlgorithm) -> Option<RsaPadding> {
    RSA.iter()
        .find(|(a, _)| std::ptr::eq(*a, alg))
        .map(|(_, padding)| *padding)
}

/// The catalogue's RSA entry of `alg`'s modulus size with `padding`; `None` when `alg` is not
/// an RSA entry.
pub fn rsa_with_padding(
    alg: &SignatureAlgorithm,
    padding: RsaPadding,
) -> Option<&'static SignatureAlgorithm> {
    rsa_padding(alg)?;
    RSA.iter()
        .find(|(a, p)| *p == padding && a.verifying_key_size == alg.verifying_key_size)
        .map(|(a, _)| *a)
}

/// Modulus size in bytes.
const fn modulus_bytes(size: KeySize) -> usize {
    match size {
        KeySize::Rsa2048 => 256,
        KeySize::Rsa3072 => 384,
        KeySize::Rsa4096 => 512,
        _ => 1024,
    }
}

/// DER `RSAPublicKey { n, e = 65537 }` size in bytes for a modulus of `n` bytes: SEQUENCE
/// header (4) + INTEGER n with a leading zero (4 + n + 1) + INTEGER e (5).
const fn rsa_public_key_size(n: usize) -> usize {
    4 + (4 + n + 1) + 5
}

const fn rsa(
    name: &'static str,
    aliases: &'static [&'static str],
    size: KeySize,
    pss: bool,
) -> SignatureAlgorithm {
    let n = modulus_bytes(size);
    SignatureAlgorithm {
        name,
        aliases,
        category: 0,
        verifying_key_size: rsa_public_key_size(n),
        signing_key_size: n,
        seed_size: 0,
        signature_size: n,
        oid: "1.2.840.113549.1.1.1",
        spki_algorithm_id: &RSA_ENCRYPTION,
        signature_algorithm_id: if pss {
            &RSASSA_PSS_SHA256
        } else {
            &SHA256_WITH_RSA
        },
        // RFC 8446 §4.2.3. rsa_pkcs1_sha256 signs certificates only in TLS 1.3; a
        // CertificateVerify with an RSA key uses rsa_pss_rsae_sha256.
        tls_scheme: Some(if pss {
            TlsCodePoint {
                value: 0x0804,
                iana: "rsa_pss_rsae_sha256",
                source: "RFC 8446",
            }
        } else {
            TlsCodePoint {
                value: 0x0401,
                iana: "rsa_pkcs1_sha256",
                source: "RFC 8446",
            }
        }),
        standard: "RFC 8017",
        family: Family::Rsa,
        backend: if pss {
            match size {
                KeySize::Rsa2048 => &AwsLc::Rsa(KeySize::Rsa2048, true),
                KeySize::Rsa3072 => &AwsLc::Rsa(KeySize::Rsa3072, true),
                _ => &AwsLc::Rsa(KeySize::Rsa4096, true),
            }
        } else {
            match size {
                KeySize::Rsa2048 => &AwsLc::Rsa(KeySize::Rsa2048, false),
                KeySize::Rsa3072 => &AwsLc::Rsa(KeySize::Rsa3072, false),
                _ => &AwsLc::Rsa(KeySize::Rsa4096, false),
            }
        },
    }
}

const fn rsa_pss(
    name: &'static str,
    aliases: &'static [&'static str],
    size: KeySize,
) -> SignatureAlgorithm {
    rsa(name, aliases, size, true)
}

const fn rsa_pkcs1(
    name: &'static str,
    aliases: &'static [&'static str],
    size: KeySize,
) -> SignatureAlgorithm {
    rsa(name, aliases, size, false)
}

/// The classical signature backends, all on aws-lc-rs.
enum AwsLc {
    Ecdsa(
        &'static awssig::EcdsaSigningAlgorithm,
        &'static awssig::EcdsaVerificationAlgorithm,
    ),
    Ed25519,
    /// Modulus size; PSS (true) or PKCS#1 v1.5 (false), both with SHA-256.
    Rsa(KeySize, bool),
}

const BACKEND_ERROR: Error = Error::Backend("aws-lc-rs");

impl AwsLc {
    fn key(&self, pkcs8: &[u8]) -> Result<Classical, Error> {
        let bad = |_| Error::InvalidKey("classical PKCS#8 private key");
        Ok(match self {
            Self::Ecdsa(alg, _) => {
                Classical::Ecdsa(EcdsaKeyPair::from_pkcs8(alg, pkcs8).map_err(bad)?)
            }
            Self::Ed25519 => {
                Classical::Ed25519(Ed25519KeyPair::from_pkcs8_maybe_unchecked(pkcs8).map_err(bad)?)
            }
            Self::Rsa(size, pss) => {
                let pair = RsaKeyPair::from_pkcs8(pkcs8).map_err(bad)?;
                if pair.public_modulus_len() != modulus_bytes(*size) {
                    return Err(Error::InvalidKey("RSA key of another modulus size"));
                }
                Classical::Rsa(pair, *pss)
            }
        })
    }
}

impl SignatureBackend for AwsLc {
    fn name(&self) -> &'static str {
        "aws-lc-rs"
    }

    /// ECDSA's DER `Ecdsa-Sig-Value` (RFC 5480 §2.2.3).
    fn signature_size_varies(&self) -> bool {
        matches!(self, Self::Ecdsa(..))
    }

    fn generate(&self, alg: &'static SignatureAlgorithm) -> Result<Box<dyn SigningKeyImpl>, Error> {
        let pkcs8 = Zeroizing::new(match self {
            Self::Ecdsa(a, _) => EcdsaKeyPair::generate_pkcs8(a, &SystemRandom::new())
                .map_err(|_| BACKEND_ERROR)?
                .as_ref()
                .to_vec(),
            Self::Ed25519 => Ed25519KeyPair::generate_pkcs8v1(&SystemRandom::new())
                .map_err(|_| BACKEND_ERROR)?
                .as_ref()
                .to_vec(),
            Self::Rsa(size, _) => {
                let pair = RsaKeyPair::generate(*size).map_err(|_| BACKEND_ERROR)?;
                let der: aws_lc_rs::encoding::Pkcs8V1Der<'_> =
                    pair.as_der().map_err(|_| BACKEND_ERROR)?;
                der.as_ref().to_vec()
            }
        });
        self.signing_key_from_pkcs8(alg, &pkcs8)
    }

    fn signing_key_from_seed(
        &self,
        _alg: &'static SignatureAlgorithm,
        _seed: &[u8],
    ) -> Result<Box<dyn SigningKeyImpl>, Error> {
        Err(Error::Unsupported(
            "classical keys have no seed form in pqkit",
        ))
    }

    fn signing_key_from_pkcs8(
        &self,
        alg: &'static SignatureAlgorithm,
        der: &[u8],
    ) -> Result<Box<dyn SigningKeyImpl>, Error> {
        let key = self.key(der)?;
        let verifying_key = match &key {
            Classical::Ecdsa(p) => p.public_key().as_ref().to_vec(),
            Classical::Ed25519(p) => p.public_key().as_ref().to_vec(),
            Classical::Rsa(p, _) => p.public_key().as_ref().to_vec(),
        };
        Ok(Box::new(ClassicalSigningKey {
            key,
            alg,
            pkcs8: Zeroizing::new(der.to_vec()),
            verifying_key,
        }))
    }

    fn verify(
        &self,
        _alg: &'static SignatureAlgorithm,
        pk: &[u8],
        msg: &[u8],
        _ctx: &[u8],
        sig: &[u8],
    ) -> Result<(), Error> {
        let alg: &'static dyn awssig::VerificationAlgorithm = match self {
            Self::Ecdsa(_, v) => *v,
            Self::Ed25519 => &awssig::ED25519,
            Self::Rsa(_, true) => &awssig::RSA_PSS_2048_8192_SHA256,
            Self::Rsa(_, false) => &awssig::RSA_PKCS1_2048_8192_SHA256,
        };
        UnparsedPublicKey::new(alg, pk)
            .verify(msg, sig)
            .map_err(|_| Error::BadSignature)
    }

    fn verify_prehashed(
        &self,
        alg: &'static SignatureAlgorithm,
        pk: &[u8],
        hash: PreHash,
        digest: &[u8],
        _ctx: &[u8],
        sig: &[u8],
    ) -> Result<(), Error> {
        let Self::Ecdsa(_, v) = self else {
            return Err(Error::Unsupported("this algorithm has no pre-hash variant"));
        };
        let digest = ecdsa_digest(alg, hash, digest)?;
        UnparsedPublicKey::new(*v, pk)
            .verify_digest(&digest, sig)
            .map_err(|_| Error::BadSignature)
    }
}

/// ECDSA signs H(M) (FIPS 186-5 §6.4.1 step 1); pqkit accepts H(M) computed outside the signer
/// only with the hash the algorithm names (ecdsa-with-SHA256 on P-256, SHA-384 on P-384,
/// SHA-512 on P-521), so the signature is the one signing M gives.
fn ecdsa_digest(
    alg: &'static SignatureAlgorithm,
    hash: PreHash,
    digest: &[u8],
) -> Result<aws_lc_rs::digest::Digest, Error> {
    let (expected, aws) = match alg.signature_algorithm_id {
        id if id == ECDSA_WITH_SHA256 => (PreHash::Sha256, &aws_lc_rs::digest::SHA256),
        id if id == ECDSA_WITH_SHA384 => (PreHash::Sha384, &aws_lc_rs::digest::SHA384),
        _ => (PreHash::Sha512, &aws_lc_rs::digest::SHA512),
    };
    if hash != expected {
        return Err(Error::Unsupported(
            "ECDSA signs a digest of its own hash only (SHA-256 on P-256, SHA-384 on P-384, \
             SHA-512 on P-521)",
        ));
    }
    aws_lc_rs::digest::Digest::import_less_safe(digest, aws).map_err(|_| BACKEND_ERROR)
}

enum Classical {
    Ecdsa(EcdsaKeyPair),
    Ed25519(Ed25519KeyPair),
    Rsa(RsaKeyPair, bool),
}

/// A classical signing key and its PKCS#8 encoding.
///
/// # Security
/// AWS-LC cleanses its keys on free; the PKCS#8 copy is zeroized on drop.
struct ClassicalSigningKey {
    key: Classical,
    alg: &'static SignatureAlgorithm,
    pkcs8: Zeroizing<Vec<u8>>,
    verifying_key: Vec<u8>,
}

impl SigningKeyImpl for ClassicalSigningKey {
    fn verifying_key(&self) -> &[u8] {
        &self.verifying_key
    }

    fn seed(&self) -> Option<&[u8]> {
        None
    }

    fn expanded(&self) -> Option<Zeroizing<Vec<u8>>> {
        None
    }

    fn classical_pkcs8(&self) -> Option<Zeroizing<Vec<u8>>> {
        Some(self.pkcs8.clone())
    }

    fn sign(
        &self,
        message: &[u8],
        _context: &[u8],
        _randomness: SigningRandomness<'_>,
    ) -> Result<Vec<u8>, Error> {
        match &self.key {
            Classical::Ecdsa(p) => Ok(p
                .sign(&SystemRandom::new(), message)
                .map_err(|_| BACKEND_ERROR)?
                .as_ref()
                .to_vec()),
            Classical::Ed25519(p) => Ok(p.sign(message).as_ref().to_vec()),
            Classical::Rsa(p, pss) => {
                let encoding: &'static dyn awssig::RsaEncoding = if *pss {
                    &awssig::RSA_PSS_SHA256
                } else {
                    &awssig::RSA_PKCS1_SHA256
                };
                let mut sig = vec![0u8; p.public_modulus_len()];
                p.sign(encoding, &SystemRandom::new(), message, &mut sig)
                    .map_err(|_| BACKEND_ERROR)?;
                Ok(sig)
            }
        }
    }

    fn sign_prehashed(
        &self,
        hash: PreHash,
        digest: &[u8],
        _context: &[u8],
        _randomness: SigningRandomness<'_>,
    ) -> Result<Vec<u8>, Error> {
        let Classical::Ecdsa(p) = &self.key else {
            return Err(Error::Unsupported("this algorithm has no pre-hash variant"));
        };
        Ok(p.sign_digest(&ecdsa_digest(self.alg, hash, digest)?)
            .map_err(|_| BACKEND_ERROR)?
            .as_ref()
            .to_vec())
    }
}

// AlgorithmIdentifier contents (no outer SEQUENCE header), as webpki compares them.
// { id-ecPublicKey, prime256v1 } (RFC 5480 §2.1.1).
const EC_PUBLIC_KEY_P256: [u8; 19] = [
    0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d,
    0x03, 0x01, 0x07,
];
// { id-ecPublicKey, secp384r1 }.
const EC_PUBLIC_KEY_P384: [u8; 16] = [
    0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22,
];
// { id-ecPublicKey, secp521r1 }.
const EC_PUBLIC_KEY_P521: [u8; 16] = [
    0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x23,
];
// { ecdsa-with-SHA256 / SHA384 / SHA512 }, parameters absent (RFC 5758 §3.2).
const ECDSA_WITH_SHA256: [u8; 10] = [0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02];
const ECDSA_WITH_SHA384: [u8; 10] = [0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x03];
const ECDSA_WITH_SHA512: [u8; 10] = [0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x04];
// { id-Ed25519 }, parameters absent (RFC 8410 §3).
const ID_ED25519: [u8; 5] = [0x06, 0x03, 0x2b, 0x65, 0x70];
// { rsaEncryption, NULL } (RFC 3279 §2.3.1).
const RSA_ENCRYPTION: [u8; 13] = [
    0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00,
];
// { sha256WithRSAEncryption, NULL } (RFC 4055 §5).
const SHA256_WITH_RSA: [u8; 13] = [
    0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0b, 0x05, 0x00,
];
// { id-RSASSA-PSS, { sha256, mgf1SHA256, saltLength 32 } } (RFC 4055 §3.1), as webpki expects.
const RSASSA_PSS_SHA256: [u8; 65] = [
    0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0a, 0x30, 0x34, 0xa0, 0x0f, 0x30,
    0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0xa1, 0x1c,
    0x30, 0x1a, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x08, 0x30, 0x0d, 0x06,
    0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0xa2, 0x03, 0x02, 0x01,
    0x20,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ecdsa_signs_a_digest_of_its_own_hash_only() {
        for (alg, hash) in [
            (&ECDSA_P256_SHA256, PreHash::Sha256),
            (&ECDSA_P384_SHA384, PreHash::Sha384),
            (&ECDSA_P521_SHA512, PreHash::Sha512),
        ] {
            let key = alg.generate().expect("key");
            let vk = key.verifying_key();
            let message = b"a document hashed outside the signer";
            let digest = hash.digest(message);
            let sig = key
                .sign_prehashed(hash, &digest, &[], SigningRandomness::Hedged)
                .expect("sign digest");
            // The same signature as over the message.
            vk.verify(message, &[], &sig).expect("verifies over M");
            vk.verify_prehashed(hash, &digest, &[], &sig)
                .expect("verifies over H(M)");
            let other = key.sign(message, &[]).expect("sign");
            vk.verify_prehashed(hash, &digest, &[], &other)
                .expect("message signature verifies over H(M)");
            let wrong = PreHash::Sha3_256;
            assert!(
                key.sign_prehashed(
                    wrong,
                    &wrong.digest(message),
                    &[],
                    SigningRandomness::Hedged
                )
                .is_err()
            );
            assert!(
                key.sign_prehashed(hash, &digest, b"ctx", SigningRandomness::Hedged)
                    .is_err()
            );
        }
        let ed = ED25519.generate().expect("key");
        assert!(
            ed.sign_prehashed(PreHash::Sha512, &[0; 64], &[], SigningRandomness::Hedged)
                .is_err()
        );
    }
}
