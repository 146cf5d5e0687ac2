//! ML-DSA (FIPS 204): the three parameter sets on pqkit's own implementation (pqkit-lattice:
//! key generation, signing and verification from μ, every mode — pure, HashML-DSA, external μ,
//! context strings, hedged and deterministic, seed and expanded keys).
//!
//! This module formats M′ (FIPS 204 Algorithm 2 line 10, Algorithm 4 line 23);
//! pqkit-lattice computes μ = H(tr ‖ M′, 64) (`pqkit_lattice::ml_dsa::mu`) and does the rest. The vector suites also run
//! aws-lc-rs and fips204 as independent implementations (`tests/oracles/mod.rs`; both are
//! dev-dependencies for ML-DSA).

use std::sync::Arc;

use pqkit_lattice::ml_dsa as lattice;
use zeroize::Zeroizing;

use crate::code_point::TlsCodePoint;
use crate::error::Error;
use crate::prehash::PreHash;
use crate::random_array;
use crate::sig::{
    Family, MU_SIZE, PreparedVerify, SIGNING_RANDOMNESS_SIZE, SignatureAlgorithm, SignatureBackend,
    SigningKeyImpl, SigningRandomness,
};

/// Size of the ML-DSA seed ξ in bytes (FIPS 204 Algorithm 1).
pub const SEED_SIZE: usize = 32;

/// ML-DSA-44, NIST category 2 (FIPS 204 §4, Table 2).
pub static ML_DSA_44: SignatureAlgorithm = SignatureAlgorithm {
    name: "ML-DSA-44",
    aliases: &["MLDSA44", "ML_DSA_44", "DILITHIUM_LEVEL2", "Dilithium2"],
    category: 2,
    verifying_key_size: 1312,
    signing_key_size: 2560,
    seed_size: SEED_SIZE,
    signature_size: 2420,
    oid: "2.16.840.1.101.3.4.3.17",
    spki_algorithm_id: &ALG_ID_44,
    signature_algorithm_id: &ALG_ID_44,
    // draft-ietf-tls-mldsa: mldsa44 = 0x0904.
    tls_scheme: Some(TlsCodePoint {
        value: 0x0904,
        iana: "mldsa44",
        source: "draft-ietf-tls-mldsa",
    }),
    standard: "FIPS 204",
    family: Family::MlDsa,
    backend: &MlDsa(Level::L44),
};

/// ML-DSA-65, NIST category 3 (FIPS 204 §4, Table 2).
pub static ML_DSA_65: SignatureAlgorithm = SignatureAlgorithm {
    name: "ML-DSA-65",
    aliases: &["MLDSA65", "ML_DSA_65", "DILITHIUM_LEVEL3", "Dilithium3"],
    category: 3,
    verifying_key_size: 1952,
    signing_key_size: 4032,
    seed_size: SEED_SIZE,
    signature_size: 3309,
    oid: "2.16.840.1.101.3.4.3.18",
    spki_algorithm_id: &ALG_ID_65,
    signature_algorithm_id: &ALG_ID_65,
    // draft-ietf-tls-mldsa: mldsa65 = 0x0905.
    tls_scheme: Some(TlsCodePoint {
        value: 0x0905,
        iana: "mldsa65",
        source: "draft-ietf-tls-mldsa",
    }),
    standard: "FIPS 204",
    family: Family::MlDsa,
    backend: &MlDsa(Level::L65),
};

/// ML-DSA-87, NIST category 5 (FIPS 204 §4, Table 2).
pub static ML_DSA_87: SignatureAlgorithm = SignatureAlgorithm {
    name: "ML-DSA-87",
    aliases: &["MLDSA87", "ML_DSA_87", "DILITHIUM_LEVEL5", "Dilithium5"],
    category: 5,
    verifying_key_size: 2592,
    signing_key_size: 4896,
    seed_size: SEED_SIZE,
    signature_size: 4627,
    oid: "2.16.840.1.101.3.4.3.19",
    spki_algorithm_id: &ALG_ID_87,
    signature_algorithm_id: &ALG_ID_87,
    // draft-ietf-tls-mldsa: mldsa87 = 0x0906.
    tls_scheme: Some(TlsCodePoint {
        value: 0x0906,
        iana: "mldsa87",
        source: "draft-ietf-tls-mldsa",
    }),
    standard: "FIPS 204",
    family: Family::MlDsa,
    backend: &MlDsa(Level::L87),
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Level {
    L44,
    L65,
    L87,
}

fn seed_array(seed: &[u8]) -> Result<Zeroizing<[u8; SEED_SIZE]>, Error> {
    crate::error::check_len("ML-DSA seed", seed, SEED_SIZE)?;
    let mut xi = Zeroizing::new([0u8; SEED_SIZE]);
    xi.copy_from_slice(seed);
    Ok(xi)
}

/// pqkit-lattice's parameter set of `level`.
fn params(level: Level) -> &'static lattice::Params {
    match level {
        Level::L44 => &lattice::ML_DSA_44,
        Level::L65 => &lattice::ML_DSA_65,
        Level::L87 => &lattice::ML_DSA_87,
    }
}

/// M′'s prefix: 0 ‖ |ctx| for pure ML-DSA (FIPS 204 Algorithm 2 line 10), 1 ‖ |ctx| for
/// HashML-DSA (Algorithm 4 line 23).
///
/// # Errors
/// [`Error::ContextTooLong`] over 255 bytes.
fn prefix(pre_hashed: bool, ctx: &[u8]) -> Result<[u8; 2], Error> {
    let len = u8::try_from(ctx.len()).map_err(|_| Error::ContextTooLong(ctx.len()))?;
    Ok([u8::from(pre_hashed), len])
}

/// ML-DSA.Verify (FIPS 204 Algorithm 3) on pqkit-lattice.
fn verify_pure(level: Level, pk: &[u8], msg: &[u8], ctx: &[u8], sig: &[u8]) -> Result<(), Error> {
    verify_m_prime(level, pk, &[&prefix(false, ctx)?, ctx, msg], sig)
}

/// ML-DSA.Verify_internal (FIPS 204 Algorithm 8) of M′ (the concatenation of `m_prime`) on
/// pqkit-lattice, which computes tr and μ.
fn verify_m_prime(level: Level, pk: &[u8], m_prime: &[&[u8]], sig: &[u8]) -> Result<(), Error> {
    verdict(lattice::verify(params(level), pk, m_prime, sig))
}

/// An ML-DSA verifying key with Â and tr computed (pqkit-lattice's `VerifyingKey`).
struct MlDsaVerifyingKey(lattice::VerifyingKey);

impl PreparedVerify for MlDsaVerifyingKey {
    /// ML-DSA.Verify (FIPS 204 Algorithm 3) under the prepared key.
    fn verify(&self, msg: &[u8], ctx: &[u8], sig: &[u8]) -> Result<(), Error> {
        verdict(self.0.verify(&[&prefix(false, ctx)?, ctx, msg], sig))
    }
}

/// ML-DSA.Verify_internal from μ (FIPS 204 Algorithm 8) on pqkit-lattice.
fn verify_mu(level: Level, pk: &[u8], mu: &[u8; MU_SIZE], sig: &[u8]) -> Result<(), Error> {
    verdict(lattice::verify_mu(params(level), pk, mu, sig))
}

/// pqkit-lattice's answer as pqkit-core's: [`Error::BadSignature`] for a refused signature.
fn verdict(valid: bool) -> Result<(), Error> {
    if valid {
        Ok(())
    } else {
        Err(Error::BadSignature)
    }
}

/// pqkit-lattice's refusal as pqkit-core's error.
fn key_error(e: lattice::Error) -> Error {
    match e {
        lattice::Error::WrongLength { expected, got, .. } => Error::InvalidLength {
            what: "ML-DSA expanded private key",
            expected,
            got,
        },
        lattice::Error::InvalidSigningKey(why) => Error::InvalidKey(why),
        _ => Error::InvalidKey("ML-DSA expanded private key"),
    }
}

/// The catalogue's ML-DSA backend: pqkit-lattice.
struct MlDsa(Level);

impl SignatureBackend for MlDsa {
    fn name(&self) -> &'static str {
        "pqkit-lattice"
    }

    fn signing_key_from_seed(
        &self,
        _alg: &'static SignatureAlgorithm,
        seed: &[u8],
    ) -> Result<Box<dyn SigningKeyImpl>, Error> {
        let seed = seed_array(seed)?;
        let key = lattice::hazmat::key_gen_internal(params(self.0), &seed);
        Ok(Box::new(MlDsaSigningKey {
            seed: Some(seed),
            key,
        }))
    }

    /// FIPS 204 Algorithm 25, with the checks FIPS 204 leaves out: s₁ and s₂ in range, and
    /// t₀ and tr equal to what ρ, s₁ and s₂ give (pqkit-lattice's `SigningKey::from_expanded`).
    fn signing_key_from_expanded(
        &self,
        _alg: &'static SignatureAlgorithm,
        bytes: &[u8],
    ) -> Result<Box<dyn SigningKeyImpl>, Error> {
        let key = lattice::SigningKey::from_expanded(params(self.0), bytes).map_err(key_error)?;
        Ok(Box::new(MlDsaSigningKey { seed: None, key }))
    }

    fn verify(
        &self,
        _alg: &'static SignatureAlgorithm,
        pk: &[u8],
        msg: &[u8],
        ctx: &[u8],
        sig: &[u8],
    ) -> Result<(), Error> {
        verify_pure(self.0, pk, msg, ctx, sig)
    }

    fn prepare(
        &self,
        _alg: &'static SignatureAlgorithm,
        pk: &[u8],
    ) -> Option<Arc<dyn PreparedVerify>> {
        let key = lattice::VerifyingKey::new(params(self.0), pk).ok()?;
        Some(Arc::new(MlDsaVerifyingKey(key)))
    }

    fn verify_prehashed(
        &self,
        _alg: &'static SignatureAlgorithm,
        pk: &[u8],
        hash: PreHash,
        digest: &[u8],
        ctx: &[u8],
        sig: &[u8],
    ) -> Result<(), Error> {
        let oid = hash.oid_der();
        verify_m_prime(self.0, pk, &[&prefix(true, ctx)?, ctx, &oid, digest], sig)
    }

    fn verify_mu(
        &self,
        _alg: &'static SignatureAlgorithm,
        pk: &[u8],
        mu: &[u8; MU_SIZE],
        sig: &[u8],
    ) -> Result<(), Error> {
        verify_mu(self.0, pk, mu, sig)
    }
}

/// An ML-DSA signing key: pqkit-lattice's, ready to sign, and ξ when it was made from one.
///
/// # Security
/// ξ is zeroized on drop, and pqkit-lattice wipes its key.
struct MlDsaSigningKey {
    seed: Option<Zeroizing<[u8; SEED_SIZE]>>,
    key: lattice::SigningKey,
}

impl MlDsaSigningKey {
    /// FIPS 204 Algorithm 7 from line 7 over μ.
    fn sign_from_mu(
        &self,
        mu: &[u8; MU_SIZE],
        randomness: SigningRandomness<'_>,
    ) -> Result<Vec<u8>, Error> {
        let rnd = rnd(randomness)?;
        let size = self.key.params().signature_size();
        let mut sig = vec![0u8; size];
        // `sig` has the parameter set's size, the only refusal: this cannot fail.
        lattice::hazmat::sign_internal(&self.key, mu, &rnd, &mut sig).map_err(|_| {
            Error::InvalidLength {
                what: "ML-DSA signature buffer",
                expected: size,
                got: size,
            }
        })?;
        Ok(sig)
    }
}

impl SigningKeyImpl for MlDsaSigningKey {
    fn verifying_key(&self) -> &[u8] {
        self.key.verifying_key()
    }

    fn seed(&self) -> Option<&[u8]> {
        self.seed.as_ref().map(|s| &s[..])
    }

    fn expanded(&self) -> Option<Zeroizing<Vec<u8>>> {
        Some(Zeroizing::new(self.key.expanded().to_vec()))
    }

    /// ML-DSA.Sign (FIPS 204 Algorithm 2).
    fn sign(
        &self,
        message: &[u8],
        context: &[u8],
        randomness: SigningRandomness<'_>,
    ) -> Result<Vec<u8>, Error> {
        let mu = lattice::mu(self.key.tr(), &[&prefix(false, context)?, context, message]);
        self.sign_from_mu(&mu, randomness)
    }

    /// HashML-DSA.Sign (FIPS 204 Algorithm 4).
    fn sign_prehashed(
        &self,
        hash: PreHash,
        digest: &[u8],
        context: &[u8],
        randomness: SigningRandomness<'_>,
    ) -> Result<Vec<u8>, Error> {
        let oid = hash.oid_der();
        let mu = lattice::mu(
            self.key.tr(),
            &[&prefix(true, context)?, context, &oid, digest],
        );
        self.sign_from_mu(&mu, randomness)
    }

    fn sign_mu(
        &self,
        mu: &[u8; MU_SIZE],
        randomness: SigningRandomness<'_>,
    ) -> Result<Vec<u8>, Error> {
        self.sign_from_mu(mu, randomness)
    }
}

/// FIPS 204 Algorithm 2's `rnd`: fresh, zero (deterministic) or given (32 bytes).
fn rnd(
    randomness: SigningRandomness<'_>,
) -> Result<Zeroizing<[u8; SIGNING_RANDOMNESS_SIZE]>, Error> {
    match randomness {
        SigningRandomness::Hedged => random_array::<SIGNING_RANDOMNESS_SIZE>(),
        SigningRandomness::Deterministic => Ok(Zeroizing::new([0; SIGNING_RANDOMNESS_SIZE])),
        SigningRandomness::Fixed(given) => {
            crate::error::check_len("ML-DSA rnd", given, SIGNING_RANDOMNESS_SIZE)?;
            let mut out = Zeroizing::new([0; SIGNING_RANDOMNESS_SIZE]);
            out.copy_from_slice(given);
            Ok(out)
        }
    }
}

// DER contents of AlgorithmIdentifier { id-ml-dsa-NN } (RFC 9881 §2: parameters absent).
const ALG_ID_44: [u8; 11] = [
    0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x11,
];
const ALG_ID_65: [u8; 11] = [
    0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x12,
];
const ALG_ID_87: [u8; 11] = [
    0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x13,
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sig::MAX_CONTEXT_SIZE;

    #[test]
    fn context_binds_the_signature() {
        let key = ML_DSA_65.generate().expect("key");
        let pk = key.verifying_key();
        let sig = key.sign(b"msg", b"ctx").expect("sign");
        pk.verify(b"msg", b"ctx", &sig).expect("same context");
        assert_eq!(pk.verify(b"msg", b"other", &sig), Err(Error::BadSignature));
        assert_eq!(pk.verify(b"msg", &[], &sig), Err(Error::BadSignature));
        assert_eq!(pk.verify(b"msh", b"ctx", &sig), Err(Error::BadSignature));
        let long = [0u8; MAX_CONTEXT_SIZE + 1];
        assert_eq!(key.sign(b"msg", &long), Err(Error::ContextTooLong(256)));
        assert!(key.sign(b"msg", &long[..MAX_CONTEXT_SIZE]).is_ok());
    }

    #[test]
    fn bad_lengths_are_errors() {
        let key = ML_DSA_44.generate().expect("key");
        let sig = key.sign(b"m", &[]).expect("sign");
        let pk = key.verifying_key();
        for n in [0, 1, sig.len() - 1, sig.len() + 1] {
            let mut s = sig.clone();
            s.resize(n, 0);
            assert_eq!(
                pk.verify(b"m", &[], &s),
                Err(Error::BadSignature),
                "len {n}"
            );
        }
        for n in [0, 31, 33] {
            assert!(matches!(
                ML_DSA_44.signing_key_from_seed(&vec![0; n]),
                Err(Error::InvalidLength { expected: 32, .. })
            ));
        }
        assert!(ML_DSA_44.verifying_key(&pk.as_bytes()[1..]).is_err());
    }

    #[test]
    fn debug_prints_no_key_material() {
        let key = ML_DSA_44.signing_key_from_seed(&[0xab; 32]).expect("key");
        let shown = format!("{key:?}");
        assert!(
            !shown.contains("ab, ab") && !shown.contains("171"),
            "{shown}"
        );
    }
}
