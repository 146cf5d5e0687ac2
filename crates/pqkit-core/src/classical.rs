//! Classical algorithms on aws-lc-rs: the ECDH halves of the hybrids, and ECDSA P-256 for
//! certificates that peers without ML-DSA can verify.

use aws_lc_rs::agreement;
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{self as awssig, EcdsaKeyPair, KeyPair, UnparsedPublicKey};
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use crate::catalogue::TlsCodePoint;
use crate::error::{Error, check_len};
use crate::sig::{SignatureAlgorithm, SignatureBackend, SigningKeyImpl, SigningRandomness};

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
    // RFC 8446 §4.2.3: ecdsa_secp256r1_sha256 = 0x0403.
    tls_scheme: Some(TlsCodePoint {
        value: 0x0403,
        iana: "ecdsa_secp256r1_sha256",
        source: "RFC 8446",
    }),
    standard: "FIPS 186-5",
    backend: &AwsLcEcdsaP256,
};

struct AwsLcEcdsaP256;

impl SignatureBackend for AwsLcEcdsaP256 {
    fn name(&self) -> &'static str {
        "aws-lc-rs"
    }

    fn generate(&self, alg: &'static SignatureAlgorithm) -> Result<Box<dyn SigningKeyImpl>, Error> {
        let doc = EcdsaKeyPair::generate_pkcs8(
            &awssig::ECDSA_P256_SHA256_ASN1_SIGNING,
            &SystemRandom::new(),
        )
        .map_err(|_| Error::Backend("aws-lc-rs ECDSA"))?;
        self.signing_key_from_pkcs8(alg, doc.as_ref())
    }

    fn signing_key_from_seed(
        &self,
        _alg: &'static SignatureAlgorithm,
        _seed: &[u8],
    ) -> Result<Box<dyn SigningKeyImpl>, Error> {
        Err(Error::Unsupported("ECDSA keys have no seed form"))
    }

    fn signing_key_from_pkcs8(
        &self,
        _alg: &'static SignatureAlgorithm,
        der: &[u8],
    ) -> Result<Box<dyn SigningKeyImpl>, Error> {
        let pair = EcdsaKeyPair::from_pkcs8(&awssig::ECDSA_P256_SHA256_ASN1_SIGNING, der)
            .map_err(|_| Error::InvalidKey("ECDSA P-256 PKCS#8 key"))?;
        let verifying_key = pair.public_key().as_ref().to_vec();
        Ok(Box::new(EcdsaSigningKey {
            pair,
            pkcs8: Zeroizing::new(der.to_vec()),
            verifying_key,
        }))
    }

    fn verify(
        &self,
        _alg: &'static SignatureAlgorithm,
        pk: &[u8],
        msg: &[u8],
        ctx: &[u8],
        sig: &[u8],
    ) -> Result<(), Error> {
        if !ctx.is_empty() {
            return Err(Error::Unsupported("ECDSA takes no context string"));
        }
        UnparsedPublicKey::new(&awssig::ECDSA_P256_SHA256_ASN1, pk)
            .verify(msg, sig)
            .map_err(|_| Error::BadSignature)
    }
}

struct EcdsaSigningKey {
    pair: EcdsaKeyPair,
    pkcs8: Zeroizing<Vec<u8>>,
    verifying_key: Vec<u8>,
}

impl SigningKeyImpl for EcdsaSigningKey {
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
        context: &[u8],
        _randomness: SigningRandomness<'_>,
    ) -> Result<Vec<u8>, Error> {
        if !context.is_empty() {
            return Err(Error::Unsupported("ECDSA takes no context string"));
        }
        let sig = self
            .pair
            .sign(&SystemRandom::new(), message)
            .map_err(|_| Error::Backend("aws-lc-rs ECDSA"))?;
        Ok(sig.as_ref().to_vec())
    }
}

// AlgorithmIdentifier { id-ecPublicKey, prime256v1 } contents (RFC 5480 §2.1.1).
const EC_PUBLIC_KEY_P256: [u8; 19] = [
    0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d,
    0x03, 0x01, 0x07,
];
// AlgorithmIdentifier { ecdsa-with-SHA256 } contents, parameters absent (RFC 5758 §3.2).
const ECDSA_WITH_SHA256: [u8; 10] = [0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02];
