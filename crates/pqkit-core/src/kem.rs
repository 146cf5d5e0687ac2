//! Key-encapsulation mechanisms: the descriptor every KEM in the catalogue is, and its keys.
//!
//! Terms follow FIPS 203: encapsulation key, decapsulation key, ciphertext, shared secret.

use core::fmt;

use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use crate::catalogue::TlsCodePoint;
use crate::error::{Error, check_len};
use crate::random_array;

/// Size of every ML-KEM shared secret, in bytes (FIPS 203 §3.3).
pub const SHARED_SECRET_SIZE: usize = 32;
/// Size of the ML-KEM key-generation seed d‖z, in bytes (FIPS 203 Algorithm 16).
pub const SEED_SIZE: usize = 64;
/// Size of the encapsulation randomness m, in bytes (FIPS 203 Algorithm 17).
pub const ENCAPSULATION_RANDOMNESS_SIZE: usize = 32;

/// One KEM of the catalogue: its names, sizes in bytes, identifiers and backend.
///
/// Every value is a `static`; [`crate::catalogue::kems`] lists them.
pub struct KemAlgorithm {
    /// Canonical name, e.g. "ML-KEM-768".
    pub name: &'static str,
    /// Other names users bring (case-insensitive), e.g. "Kyber768".
    pub aliases: &'static [&'static str],
    /// NIST security category (1, 3 or 5).
    pub category: u8,
    /// Encapsulation key size in bytes (FIPS 203 §8, Table 3).
    pub encapsulation_key_size: usize,
    /// Expanded decapsulation key size in bytes (FIPS 203 §8, Table 3).
    pub decapsulation_key_size: usize,
    /// Seed size in bytes (d‖z, 64 for ML-KEM).
    pub seed_size: usize,
    /// Ciphertext size in bytes.
    pub ciphertext_size: usize,
    /// Shared secret size in bytes.
    pub shared_secret_size: usize,
    /// Dotted object identifier (RFC 9935).
    pub oid: &'static str,
    /// The TLS named group of the pure KEM, if one is assigned.
    pub tls_group: Option<TlsCodePoint>,
    /// The standard that defines it.
    pub standard: &'static str,
    pub(crate) backend: &'static dyn KemBackend,
}

impl KemAlgorithm {
    /// Generates a key pair from the OS random number generator (FIPS 203 Algorithm 19).
    ///
    /// # Errors
    /// [`Error::Rng`] when the OS RNG fails.
    pub fn generate(&'static self) -> Result<DecapsulationKey, Error> {
        let seed = random_array::<SEED_SIZE>()?;
        self.generate_from_seed(&seed[..])
    }

    /// Derives a key pair from the 64-byte seed d‖z (FIPS 203 Algorithm 16,
    /// ML-KEM.KeyGen_internal). The same seed always gives the same keys.
    ///
    /// # Errors
    /// [`Error::InvalidLength`] unless `seed` is [`SEED_SIZE`] bytes.
    pub fn generate_from_seed(&'static self, seed: &[u8]) -> Result<DecapsulationKey, Error> {
        check_len("ML-KEM seed", seed, SEED_SIZE)?;
        let mut d_z = Zeroizing::new([0u8; SEED_SIZE]);
        d_z.copy_from_slice(seed);
        let (ek, dk) = self.backend.generate_from_seed(&d_z);
        Ok(DecapsulationKey {
            ek: EncapsulationKey {
                alg: self,
                bytes: ek,
            },
            seed: Some(d_z),
            expanded: dk,
        })
    }

    /// Parses and checks an encapsulation key: its length and the FIPS 203 §7.2 modulus check.
    ///
    /// # Errors
    /// [`Error::InvalidLength`] for a wrong length, [`Error::InvalidKey`] when a coefficient is
    /// not reduced modulo q.
    pub fn encapsulation_key(&'static self, bytes: &[u8]) -> Result<EncapsulationKey, Error> {
        check_len(
            "ML-KEM encapsulation key",
            bytes,
            self.encapsulation_key_size,
        )?;
        if !self.backend.check_encapsulation_key(bytes) {
            return Err(Error::InvalidKey(
                "ML-KEM encapsulation key (FIPS 203 §7.2 modulus check)",
            ));
        }
        Ok(EncapsulationKey {
            alg: self,
            bytes: bytes.to_vec(),
        })
    }

    /// Parses an expanded decapsulation key and runs the FIPS 203 §7.3 hash check.
    ///
    /// Expanded keys are the NIST byte encoding; the seed is the default form.
    ///
    /// # Errors
    /// [`Error::InvalidLength`] or [`Error::InvalidKey`].
    pub fn decapsulation_key_from_expanded(
        &'static self,
        bytes: &[u8],
    ) -> Result<DecapsulationKey, Error> {
        check_len(
            "ML-KEM decapsulation key",
            bytes,
            self.decapsulation_key_size,
        )?;
        if !self.backend.check_decapsulation_key(bytes) {
            return Err(Error::InvalidKey(
                "ML-KEM decapsulation key (FIPS 203 §7.3 hash check)",
            ));
        }
        // FIPS 203 §7.3: dk = dk_PKE ‖ ek ‖ H(ek) ‖ z; ek starts at 384·k.
        let ek_start = self.encapsulation_key_size - 32;
        let ek = &bytes[ek_start..ek_start + self.encapsulation_key_size];
        let key = DecapsulationKey {
            ek: self.encapsulation_key(ek)?,
            seed: None,
            expanded: Zeroizing::new(bytes.to_vec()),
        };
        // The §7.3 hash check covers ek inside dk, not the secret vector s: a damaged s would
        // decapsulate every ciphertext to the implicit-rejection key. A pairwise consistency
        // test (FIPS 140-3 IG 10.3.A) — encapsulate to ek, decapsulate with dk — catches it.
        let (ct, ss) = key.ek.encapsulate()?;
        if key.decapsulate(&ct)? != ss {
            return Err(Error::InvalidKey(
                "ML-KEM decapsulation key (it does not decapsulate what its encapsulation key \
                 encapsulates: the secret part is damaged)",
            ));
        }
        Ok(key)
    }

    /// The backend that implements this algorithm, e.g. "libcrux-ml-kem".
    pub fn backend_name(&self) -> &'static str {
        self.backend.name()
    }
}

impl fmt::Debug for KemAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// A checked encapsulation key (FIPS 203 `ek`).
#[derive(Clone)]
pub struct EncapsulationKey {
    alg: &'static KemAlgorithm,
    bytes: Vec<u8>,
}

impl EncapsulationKey {
    /// Encapsulates a fresh shared secret to this key (FIPS 203 Algorithm 20).
    ///
    /// Returns the ciphertext ([`KemAlgorithm::ciphertext_size`] bytes) and the shared secret.
    ///
    /// # Errors
    /// [`Error::Rng`] when the OS RNG fails, [`Error::Backend`] if the backend fails.
    pub fn encapsulate(&self) -> Result<(Vec<u8>, SharedSecret), Error> {
        let m = random_array::<ENCAPSULATION_RANDOMNESS_SIZE>()?;
        self.encapsulate_deterministic(&m)
    }

    /// Derandomized encapsulation with caller-chosen m (FIPS 203 Algorithm 17,
    /// ML-KEM.Encaps_internal). **For known-answer tests only**: reusing m reveals the secret.
    ///
    /// # Errors
    /// [`Error::Backend`] if the backend rejects the key.
    pub fn encapsulate_deterministic(
        &self,
        m: &[u8; ENCAPSULATION_RANDOMNESS_SIZE],
    ) -> Result<(Vec<u8>, SharedSecret), Error> {
        let (ct, ss) = self.alg.backend.encapsulate_deterministic(&self.bytes, m)?;
        Ok((ct, SharedSecret(ss)))
    }

    /// The encoded key, [`KemAlgorithm::encapsulation_key_size`] bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The algorithm of this key.
    pub fn algorithm(&self) -> &'static KemAlgorithm {
        self.alg
    }
}

impl fmt::Debug for EncapsulationKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EncapsulationKey")
            .field("alg", &self.alg.name)
            .finish_non_exhaustive()
    }
}

/// A decapsulation key: the seed d‖z where known, and the expanded FIPS 203 `dk`.
///
/// # Security
/// Zeroized on drop; `Debug` prints no key material.
pub struct DecapsulationKey {
    ek: EncapsulationKey,
    seed: Option<Zeroizing<[u8; SEED_SIZE]>>,
    expanded: Zeroizing<Vec<u8>>,
}

impl DecapsulationKey {
    /// Decapsulates a ciphertext (FIPS 203 Algorithm 21). A modified ciphertext yields the
    /// implicit-rejection secret, not an error.
    ///
    /// # Errors
    /// [`Error::InvalidLength`] when `ciphertext` is not [`KemAlgorithm::ciphertext_size`] bytes,
    /// [`Error::Backend`] if the backend fails.
    pub fn decapsulate(&self, ciphertext: &[u8]) -> Result<SharedSecret, Error> {
        let alg = self.ek.alg;
        check_len("ML-KEM ciphertext", ciphertext, alg.ciphertext_size)?;
        Ok(SharedSecret(
            alg.backend.decapsulate(&self.expanded, ciphertext)?,
        ))
    }

    /// The matching encapsulation key.
    pub fn encapsulation_key(&self) -> &EncapsulationKey {
        &self.ek
    }

    /// The 64-byte seed d‖z, when the key was made from one.
    pub fn seed(&self) -> Option<&[u8]> {
        self.seed.as_ref().map(|s| &s[..])
    }

    /// The expanded FIPS 203 decapsulation key, [`KemAlgorithm::decapsulation_key_size`] bytes.
    pub fn expanded(&self) -> &[u8] {
        &self.expanded
    }

    /// The algorithm of this key.
    pub fn algorithm(&self) -> &'static KemAlgorithm {
        self.ek.alg
    }
}

impl fmt::Debug for DecapsulationKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DecapsulationKey").finish_non_exhaustive()
    }
}

/// A 32-byte shared secret. Zeroized on drop, compared in constant time.
pub struct SharedSecret(Zeroizing<[u8; SHARED_SECRET_SIZE]>);

impl SharedSecret {
    /// The secret bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0[..]
    }
}

impl PartialEq for SharedSecret {
    fn eq(&self, other: &Self) -> bool {
        self.0.ct_eq(&*other.0).into()
    }
}

impl Eq for SharedSecret {}

impl fmt::Debug for SharedSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SharedSecret { .. }")
    }
}

/// A KEM implementation behind a [`KemAlgorithm`]. Lengths are checked before it is called.
pub trait KemBackend: Send + Sync {
    /// Name of the implementation, e.g. "libcrux-ml-kem".
    fn name(&self) -> &'static str;
    /// FIPS 203 Algorithm 16: (ek, dk) from d‖z.
    fn generate_from_seed(&self, seed: &[u8; SEED_SIZE]) -> (Vec<u8>, Zeroizing<Vec<u8>>);
    /// FIPS 203 §7.2 encapsulation-key check (modulus check).
    fn check_encapsulation_key(&self, ek: &[u8]) -> bool;
    /// FIPS 203 §7.3 decapsulation-key check (hash check).
    fn check_decapsulation_key(&self, dk: &[u8]) -> bool;
    /// FIPS 203 Algorithm 17: (c, K) from ek and m.
    ///
    /// # Errors
    /// [`Error::Backend`] when the backend cannot take the key.
    fn encapsulate_deterministic(
        &self,
        ek: &[u8],
        m: &[u8; ENCAPSULATION_RANDOMNESS_SIZE],
    ) -> Result<(Vec<u8>, Zeroizing<[u8; SHARED_SECRET_SIZE]>), Error>;
    /// FIPS 203 Algorithm 18: K from dk and c, with implicit rejection.
    ///
    /// # Errors
    /// [`Error::Backend`] when the backend cannot take the key or ciphertext.
    fn decapsulate(
        &self,
        dk: &[u8],
        ct: &[u8],
    ) -> Result<Zeroizing<[u8; SHARED_SECRET_SIZE]>, Error>;
}

#[cfg(test)]
mod tests {
    use crate::ml_kem::{ML_KEM_512, ML_KEM_768, ML_KEM_1024};

    use super::*;

    #[test]
    fn round_trip_and_implicit_rejection() {
        for alg in [&ML_KEM_512, &ML_KEM_768, &ML_KEM_1024] {
            let dk = alg.generate().expect("keygen");
            let (ct, ss) = dk.encapsulation_key().encapsulate().expect("encaps");
            assert_eq!(ct.len(), alg.ciphertext_size);
            assert_eq!(dk.decapsulate(&ct).expect("decaps"), ss);
            let mut bad = ct.clone();
            bad[0] ^= 1;
            // A modified ciphertext gives a different (pseudo-random) secret, not an error.
            assert_ne!(dk.decapsulate(&bad).expect("decaps"), ss);
        }
    }

    #[test]
    fn every_truncation_and_extension_is_an_error() {
        let alg = &ML_KEM_768;
        let dk = alg.generate_from_seed(&[5; SEED_SIZE]).expect("keygen");
        let ek = dk.encapsulation_key().as_bytes().to_vec();
        let (ct, _) = dk.encapsulation_key().encapsulate().expect("encaps");
        for n in 0..ek.len() {
            assert!(
                alg.encapsulation_key(&ek[..n]).is_err(),
                "ek truncated to {n}"
            );
        }
        for n in 0..ct.len() {
            assert!(dk.decapsulate(&ct[..n]).is_err(), "ct truncated to {n}");
        }
        for extra in 1..=100 {
            let mut long = ek.clone();
            long.resize(ek.len() + extra, 0);
            assert!(alg.encapsulation_key(&long).is_err());
            let mut long = ct.clone();
            long.resize(ct.len() + extra, 0);
            assert!(dk.decapsulate(&long).is_err());
        }
        let expanded = dk.expanded().to_vec();
        for n in [0, 1, expanded.len() - 1, expanded.len() + 1] {
            let mut e = expanded.clone();
            e.resize(n, 0);
            assert!(alg.decapsulation_key_from_expanded(&e).is_err());
        }
        assert!(alg.generate_from_seed(&[0; 63]).is_err());
    }

    #[test]
    fn seed_and_expanded_forms_agree() {
        let dk = ML_KEM_1024
            .generate_from_seed(&[9; SEED_SIZE])
            .expect("keygen");
        let again = ML_KEM_1024
            .decapsulation_key_from_expanded(dk.expanded())
            .expect("expanded");
        assert_eq!(
            again.encapsulation_key().as_bytes(),
            dk.encapsulation_key().as_bytes()
        );
        let (ct, ss) = dk.encapsulation_key().encapsulate().expect("encaps");
        assert_eq!(again.decapsulate(&ct).expect("decaps"), ss);
        assert_eq!(format!("{dk:?}"), "DecapsulationKey { .. }");
        assert_eq!(format!("{ss:?}"), "SharedSecret { .. }");
    }
}
