//! Key-encapsulation mechanisms: the descriptor every KEM in the catalogue is, and its keys.
//!
//! Terms follow FIPS 203: encapsulation key, decapsulation key, ciphertext, shared secret. The
//! same terms serve the KEMs that are not ML-KEM (BIKE, FrodoKEM, Classic McEliece): their
//! public key is the encapsulation key, their secret key the decapsulation key.

use core::fmt;

use pqkit_hash::Wiped;
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use crate::code_point::TlsCodePoint;
use crate::error::{Error, check_len};
use crate::random_vec;

/// Size of every ML-KEM shared secret, in bytes (FIPS 203 §3.3).
pub const SHARED_SECRET_SIZE: usize = 32;
/// Size of the ML-KEM key-generation seed d‖z, in bytes (FIPS 203 Algorithm 16).
pub const SEED_SIZE: usize = 64;
/// Size of the encapsulation randomness m, in bytes (FIPS 203 Algorithm 17).
pub const ENCAPSULATION_RANDOMNESS_SIZE: usize = 32;

/// The family of a KEM: which standard defines it and what its keys look like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KemFamily {
    /// ML-KEM (FIPS 203): seed-form keys, deterministic encapsulation for known-answer tests.
    MlKem,
    /// BIKE (NIST round 4, spec 5.1).
    Bike,
    /// eFrodoKEM: FrodoKEM round 3, the ISO/IEC 18033-2 amendment's variant for ephemeral
    /// keys (no salt).
    FrodoKem,
    /// Classic McEliece (NIST round 4; ISO/IEC 18033-2 amendment).
    ClassicMcEliece,
    /// HQC (specification 2025-08-22; FIPS 207 draft).
    Hqc,
}

impl KemFamily {
    /// The family's name, e.g. "ML-KEM".
    pub fn name(self) -> &'static str {
        match self {
            Self::MlKem => "ML-KEM",
            Self::Bike => "BIKE",
            Self::FrodoKem => "eFrodoKEM",
            Self::ClassicMcEliece => "Classic McEliece",
            Self::Hqc => "HQC",
        }
    }
}

/// One KEM of the catalogue: its names, sizes in bytes, identifiers and backend.
///
/// Every value is a `static`; [`crate::catalogue::kems`] lists them.
pub struct KemAlgorithm {
    /// Canonical name, e.g. "ML-KEM-768".
    pub name: &'static str,
    /// Other names users bring (case-insensitive), e.g. "Kyber768".
    pub aliases: &'static [&'static str],
    /// The family.
    pub family: KemFamily,
    /// NIST security category (1, 3 or 5).
    pub category: u8,
    /// Encapsulation key size in bytes (FIPS 203 §8, Table 3; the submission's for others).
    pub encapsulation_key_size: usize,
    /// Expanded decapsulation key size in bytes (FIPS 203 §8, Table 3).
    pub decapsulation_key_size: usize,
    /// Seed size in bytes (d‖z, 64 for ML-KEM); 0 when the KEM has no seed form.
    pub seed_size: usize,
    /// Ciphertext size in bytes.
    pub ciphertext_size: usize,
    /// Shared secret size in bytes.
    pub shared_secret_size: usize,
    /// The randomness of one encapsulation in bytes, for derandomized encapsulation (m: 32 for
    /// ML-KEM; m ‖ salt for HQC); 0 when the backend takes its randomness itself.
    pub encapsulation_randomness_size: usize,
    /// Whether the KEM's IND-CCA2 security is established, i.e. whether a decapsulation key
    /// may be used for many ciphertexts. BIKE's rests on an extrapolated, unproven
    /// decoding-failure rate (liboqs marks it not IND-CCA): its keys serve one key exchange.
    pub ind_cca: bool,
    /// Whether the KEM is meant for keys that serve one key exchange only (BIKE, see
    /// [`KemAlgorithm::ind_cca`]; eFrodoKEM, FrodoKEM's variant for ephemeral keys). pqkit
    /// offers these as TLS groups and does not write their keys to files.
    pub ephemeral: bool,
    /// Where the encapsulation key lies inside the decapsulation key, in bytes from its start
    /// (FIPS 203 §7.3: 384·k); `None` when the decapsulation key does not contain it.
    pub encapsulation_key_offset: Option<usize>,
    /// Dotted object identifier (RFC 9935 for ML-KEM; Bouncy Castle's arc for the others).
    pub oid: &'static str,
    /// The TLS named group of the pure KEM, if one is assigned.
    pub tls_group: Option<TlsCodePoint>,
    /// The standard or submission that defines it.
    pub standard: &'static str,
    pub(crate) backend: &'static dyn KemBackend,
}

impl KemAlgorithm {
    /// Generates a key pair from the OS random number generator (FIPS 203 Algorithm 19): from
    /// a fresh seed, kept with the key, when the KEM has a seed form.
    ///
    /// # Errors
    /// [`Error::Rng`] when the OS RNG fails, [`Error::Backend`] if the backend fails.
    pub fn generate(&'static self) -> Result<DecapsulationKey, Error> {
        if self.seed_size > 0 {
            return self.key_of_seed(random_vec(self.seed_size)?);
        }
        let (ek, mut dk) = self.backend.generate()?;
        Ok(DecapsulationKey {
            ek: EncapsulationKey {
                alg: self,
                bytes: ek,
            },
            seed: None,
            expanded: wiped(&mut dk),
        })
    }

    /// Derives a key pair from its seed of [`KemAlgorithm::seed_size`] bytes: d‖z for ML-KEM
    /// (64 bytes, FIPS 203 Algorithm 16, ML-KEM.KeyGen_internal), seed_kem for HQC (32
    /// bytes). The same seed always gives the same keys.
    ///
    /// # Errors
    /// [`Error::InvalidLength`] unless `seed` is [`KemAlgorithm::seed_size`] bytes;
    /// [`Error::Unsupported`] for a KEM without a seed form.
    pub fn generate_from_seed(&'static self, seed: &[u8]) -> Result<DecapsulationKey, Error> {
        if self.seed_size == 0 {
            return Err(Error::Unsupported(
                "this KEM has no seed form: its keys come from the OS RNG",
            ));
        }
        check_len("KEM seed", seed, self.seed_size)?;
        self.key_of_seed(Zeroizing::new(seed.to_vec()))
    }

    /// The key pair of `seed` ([`KemAlgorithm::seed_size`] bytes, checked by the caller),
    /// which the key keeps: moved in, not copied.
    fn key_of_seed(&'static self, seed: Zeroizing<Vec<u8>>) -> Result<DecapsulationKey, Error> {
        let (ek, mut dk) = self.backend.generate_from_seed(&seed)?;
        Ok(DecapsulationKey {
            ek: EncapsulationKey {
                alg: self,
                bytes: ek,
            },
            seed: Some(seed),
            expanded: wiped(&mut dk),
        })
    }

    /// Parses and checks an encapsulation key: its length and, for ML-KEM, the FIPS 203 §7.2
    /// modulus check.
    ///
    /// # Errors
    /// [`Error::InvalidLength`] for a wrong length, [`Error::InvalidKey`] when a coefficient is
    /// not reduced modulo q.
    pub fn encapsulation_key(&'static self, bytes: &[u8]) -> Result<EncapsulationKey, Error> {
        check_len("KEM encapsulation key", bytes, self.encapsulation_key_size)?;
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

    /// Parses an expanded decapsulation key that contains its encapsulation key (ML-KEM,
    /// FIPS 203 §7.3 hash check; BIKE; FrodoKEM).
    ///
    /// # Errors
    /// [`Error::InvalidLength`] or [`Error::InvalidKey`]; [`Error::Unsupported`] when the
    /// decapsulation key does not contain its encapsulation key (Classic McEliece: use
    /// [`KemAlgorithm::decapsulation_key_from_parts`]).
    pub fn decapsulation_key_from_expanded(
        &'static self,
        bytes: &[u8],
    ) -> Result<DecapsulationKey, Error> {
        check_len("KEM decapsulation key", bytes, self.decapsulation_key_size)?;
        let start = self.encapsulation_key_offset.ok_or(Error::Unsupported(
            "this KEM's decapsulation key does not contain its encapsulation key: give both",
        ))?;
        let ek = &bytes[start..start + self.encapsulation_key_size];
        self.decapsulation_key_from_parts(bytes, ek)
    }

    /// Parses an expanded decapsulation key together with its encapsulation key. Where the
    /// decapsulation key contains the encapsulation key, the two must agree.
    ///
    /// # Errors
    /// [`Error::InvalidLength`] or [`Error::InvalidKey`] (a failed family check such as the FIPS
    /// 203 §7.3 hash check, an encapsulation key that is not the one inside, or a pair that
    /// fails the pairwise test).
    pub fn decapsulation_key_from_parts(
        &'static self,
        dk: &[u8],
        ek: &[u8],
    ) -> Result<DecapsulationKey, Error> {
        check_len("KEM decapsulation key", dk, self.decapsulation_key_size)?;
        self.backend.check_decapsulation_key(dk)?;
        let ek = self.encapsulation_key(ek)?;
        if let Some(start) = self.encapsulation_key_offset {
            let inside = &dk[start..start + self.encapsulation_key_size];
            if !bool::from(inside.ct_eq(ek.as_bytes())) {
                return Err(Error::InvalidKey(
                    "KEM key pair (the encapsulation key is not the one inside the \
                     decapsulation key)",
                ));
            }
        }
        self.backend.check_key_pair(dk, ek.as_bytes())?;
        let key = DecapsulationKey {
            ek,
            seed: None,
            expanded: Wiped::from_vec(dk.to_vec()),
        };
        // The §7.3 hash check covers ek inside dk, not the secret vector s: a damaged s would
        // decapsulate every ciphertext to the implicit-rejection key. A pairwise consistency
        // test (FIPS 140-3 IG 10.3.A) — encapsulate to ek, decapsulate with dk — catches it,
        // for every family.
        let (ct, ss) = key.ek.encapsulate()?;
        if key.decapsulate(&ct)? != ss {
            return Err(Error::InvalidKey(
                "KEM decapsulation key (it does not decapsulate what its encapsulation key \
                 encapsulates: the secret part is damaged)",
            ));
        }
        Ok(key)
    }

    /// The backend that implements this algorithm, e.g. "pqkit-lattice".
    pub fn backend_name(&self) -> &'static str {
        self.backend.name()
    }

    /// Why pqkit writes no key file for this KEM ([`KemAlgorithm::ephemeral`]), in words for
    /// the user; `None` when it does. The CLI's `keygen` and the Python binding's `to_pem`
    /// refuse with it.
    pub fn key_file_refusal(&self) -> Option<String> {
        if !self.ephemeral {
            return None;
        }
        let why = if self.ind_cca {
            "is the variant meant for ephemeral keys"
        } else {
            "rests its IND-CCA claim on an unproven decoding-failure rate"
        };
        Some(format!(
            "{}: pqkit does not write long-term {} keys: the KEM {why}, so a key should serve \
             one encapsulation, as in a TLS key exchange (named group {}); for a key kept in a \
             file use ML-KEM or Classic McEliece",
            self.name,
            self.family.name(),
            self.tls_group.map_or("-", |g| g.iana)
        ))
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
    /// Returns the ciphertext ([`KemAlgorithm::ciphertext_size`] bytes) and the shared secret
    /// ([`KemAlgorithm::shared_secret_size`] bytes).
    ///
    /// # Errors
    /// [`Error::Rng`] when the OS RNG fails, [`Error::Backend`] if the backend fails.
    pub fn encapsulate(&self) -> Result<(Vec<u8>, SharedSecret), Error> {
        let (ct, ss) = self.alg.backend.encapsulate(&self.bytes)?;
        Ok((ct, SharedSecret(ss)))
    }

    /// Derandomized encapsulation with caller-chosen randomness of
    /// [`KemAlgorithm::encapsulation_randomness_size`] bytes: m for ML-KEM (FIPS 203 Algorithm
    /// 17, ML-KEM.Encaps_internal), m ‖ salt for HQC. **For known-answer tests only**: reusing
    /// the randomness reveals the secret.
    ///
    /// # Errors
    /// [`Error::InvalidLength`] for randomness of another size; [`Error::Backend`] if the
    /// backend rejects the key; [`Error::Unsupported`] for a KEM whose backend draws its own
    /// randomness (liboqs).
    pub fn encapsulate_deterministic(
        &self,
        randomness: &[u8],
    ) -> Result<(Vec<u8>, SharedSecret), Error> {
        if self.alg.encapsulation_randomness_size == 0 {
            return Err(Error::Unsupported(
                "this KEM's backend draws its encapsulation randomness itself",
            ));
        }
        check_len(
            "KEM encapsulation randomness",
            randomness,
            self.alg.encapsulation_randomness_size,
        )?;
        let (ct, ss) = self
            .alg
            .backend
            .encapsulate_deterministic(&self.bytes, randomness)?;
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

/// A decapsulation key: the seed (d‖z for ML-KEM) where known, and the expanded key.
///
/// # Security
/// Zeroized on drop; `Debug` prints no key material.
pub struct DecapsulationKey {
    ek: EncapsulationKey,
    seed: Option<Zeroizing<Vec<u8>>>,
    /// Wiped by a vectorized fill ([`Wiped`]): `zeroize`'s byte-by-byte volatile writes over
    /// 1.6–3.2 KB cost a sizable part of an ML-KEM key generation.
    expanded: Wiped<u8>,
}

/// Moves a backend's expanded key into a [`Wiped`] buffer (no copy; the emptied `Zeroizing`
/// has nothing left to clear).
fn wiped(dk: &mut Zeroizing<Vec<u8>>) -> Wiped<u8> {
    Wiped::from_vec(core::mem::take(&mut **dk))
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
        check_len("KEM ciphertext", ciphertext, alg.ciphertext_size)?;
        Ok(SharedSecret(
            alg.backend.decapsulate(&self.expanded, ciphertext)?,
        ))
    }

    /// The matching encapsulation key.
    pub fn encapsulation_key(&self) -> &EncapsulationKey {
        &self.ek
    }

    /// The seed ([`KemAlgorithm::seed_size`] bytes), when the key was made from one.
    pub fn seed(&self) -> Option<&[u8]> {
        self.seed.as_deref().map(|s| &s[..])
    }

    /// The expanded decapsulation key, [`KemAlgorithm::decapsulation_key_size`] bytes.
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

/// A shared secret ([`KemAlgorithm::shared_secret_size`] bytes: 32 for ML-KEM, 16 to 32 for
/// FrodoKEM). Zeroized on drop, compared in constant time.
pub struct SharedSecret(Zeroizing<Vec<u8>>);

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

/// An encoded key pair as a backend returns it: (encapsulation key, decapsulation key).
pub(crate) type KeyPair = (Vec<u8>, Zeroizing<Vec<u8>>);

/// A KEM implementation behind a [`KemAlgorithm`]. Lengths are checked before it is called.
pub(crate) trait KemBackend: Send + Sync {
    /// Name of the implementation, e.g. "pqkit-lattice".
    fn name(&self) -> &'static str;
    /// FIPS 203 Algorithm 16: (ek, dk) from d‖z. Called only when the KEM's `seed_size` > 0.
    ///
    /// # Errors
    /// [`Error::Backend`] when the backend cannot take the seed.
    fn generate_from_seed(&self, seed: &[u8]) -> Result<KeyPair, Error>;
    /// (ek, dk) from the OS RNG. Called only when the KEM's `seed_size` is 0.
    ///
    /// # Errors
    /// [`Error::Backend`] when the backend fails.
    fn generate(&self) -> Result<KeyPair, Error> {
        Err(Error::Unsupported("this KEM generates keys from a seed"))
    }
    /// FIPS 203 §7.2 encapsulation-key check (modulus check); `true` where none is defined.
    fn check_encapsulation_key(&self, _ek: &[u8]) -> bool {
        true
    }
    /// The family's decapsulation-key check (FIPS 203 §7.3 hash check for ML-KEM); none by
    /// default.
    ///
    /// # Errors
    /// [`Error::InvalidKey`] naming the check that failed.
    fn check_decapsulation_key(&self, _dk: &[u8]) -> Result<(), Error> {
        Ok(())
    }
    /// The family's check that `ek` belongs to `dk`, beyond one pairwise test; none by default.
    ///
    /// # Errors
    /// [`Error::InvalidKey`] naming the check that failed.
    fn check_key_pair(&self, _dk: &[u8], _ek: &[u8]) -> Result<(), Error> {
        Ok(())
    }
    /// FIPS 203 Algorithm 20: (c, K) from ek and fresh randomness.
    ///
    /// # Errors
    /// [`Error::Rng`], or [`Error::Backend`] when the backend cannot take the key.
    fn encapsulate(&self, ek: &[u8]) -> Result<(Vec<u8>, Zeroizing<Vec<u8>>), Error>;
    /// FIPS 203 Algorithm 17: (c, K) from ek and m (for HQC, m ‖ salt); the randomness has the
    /// KEM's `encapsulation_randomness_size`.
    ///
    /// # Errors
    /// [`Error::Backend`] when the backend cannot take the key; [`Error::Unsupported`] where
    /// the KEM has no derandomized encapsulation.
    fn encapsulate_deterministic(
        &self,
        _ek: &[u8],
        _randomness: &[u8],
    ) -> Result<(Vec<u8>, Zeroizing<Vec<u8>>), Error> {
        Err(Error::Unsupported(
            "this KEM's backend draws its encapsulation randomness itself",
        ))
    }
    /// FIPS 203 Algorithm 18: K from dk and c, with implicit rejection.
    ///
    /// # Errors
    /// [`Error::Backend`] when the backend cannot take the key or ciphertext.
    fn decapsulate(&self, dk: &[u8], ct: &[u8]) -> Result<Zeroizing<Vec<u8>>, Error>;
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
