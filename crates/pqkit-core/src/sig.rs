//! Signature algorithms: the descriptor every signature algorithm in the catalogue is, and its
//! signing and verifying keys.
//!
//! Terms follow FIPS 204: signing key, verifying key, context string, hedged and deterministic
//! signing.

use core::fmt;
use std::sync::{Arc, Mutex};

use zeroize::Zeroizing;

use crate::code_point::TlsCodePoint;
use crate::error::{Error, check_len};
use crate::prehash::PreHash;
use crate::random_vec;

/// Largest context string, in bytes (FIPS 204 §5.2).
pub const MAX_CONTEXT_SIZE: usize = 255;
/// Size of the per-signature randomness `rnd`, in bytes (FIPS 204 Algorithm 2).
pub const SIGNING_RANDOMNESS_SIZE: usize = 32;
/// Size of ML-DSA's message representative μ in bytes (FIPS 204 Algorithm 7, line 6).
pub const MU_SIZE: usize = 64;

/// The family an algorithm belongs to; it decides the operations and key encodings offered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// ML-DSA (FIPS 204): context, HashML-DSA, external μ, seed-form keys (RFC 9881).
    MlDsa,
    /// SLH-DSA (FIPS 205): context, HashSLH-DSA; private key SK.seed‖SK.prf‖PK.seed‖PK.root
    /// (RFC 9909).
    SlhDsa,
    /// Falcon round 3 (OQS code points and OIDs): no context, no pre-hash.
    Falcon,
    /// ECDSA (FIPS 186-5) on aws-lc-rs.
    Ecdsa,
    /// Ed25519 (RFC 8032) on aws-lc-rs.
    Ed25519,
    /// RSA (RFC 8017) on aws-lc-rs.
    Rsa,
    /// Composite ML-DSA (draft-ietf-lamps-pq-composite-sigs-19): ML-DSA and a traditional
    /// signature together; context string; the private key is seed ‖ traditional key.
    CompositeMlDsa,
}

impl Family {
    /// The kind, as `pqkit list` prints it.
    pub fn name(self) -> &'static str {
        match self {
            Self::MlDsa => "ML-DSA",
            Self::SlhDsa => "SLH-DSA",
            Self::Falcon => "Falcon",
            Self::Ecdsa => "ECDSA",
            Self::Ed25519 => "EdDSA",
            Self::Rsa => "RSA",
            Self::CompositeMlDsa => "Composite ML-DSA",
        }
    }

    /// Whether signing takes a context string (FIPS 204 §5.2, FIPS 205 §10.2).
    pub fn has_context(self) -> bool {
        matches!(self, Self::MlDsa | Self::SlhDsa | Self::CompositeMlDsa)
    }

    /// Whether signing a digest computed outside the signer exists: HashML-DSA, HashSLH-DSA
    /// (their own signature types), and ECDSA with its own hash (the same signature as over
    /// the message).
    pub fn has_prehash(self) -> bool {
        matches!(self, Self::MlDsa | Self::SlhDsa | Self::Ecdsa)
    }

    /// Whether signing from an external μ exists (ML-DSA only).
    pub fn has_external_mu(self) -> bool {
        self == Self::MlDsa
    }

    /// Whether the algorithm is post-quantum.
    pub fn is_post_quantum(self) -> bool {
        matches!(
            self,
            Self::MlDsa | Self::SlhDsa | Self::Falcon | Self::CompositeMlDsa
        )
    }
}

/// One signature algorithm of the catalogue: names, sizes in bytes, identifiers and backend.
pub struct SignatureAlgorithm {
    /// Canonical name, e.g. "ML-DSA-65".
    pub name: &'static str,
    /// Other names users bring (case-insensitive), e.g. "Dilithium3".
    pub aliases: &'static [&'static str],
    /// NIST security category (1–5); 0 for classical algorithms.
    pub category: u8,
    /// Verifying (public) key size in bytes, as it appears in the SPKI BIT STRING.
    pub verifying_key_size: usize,
    /// Expanded signing key size in bytes (FIPS 204 `sk`); for classical keys the scalar size;
    /// for composite ML-DSA the largest private key (an RSA key's size varies).
    pub signing_key_size: usize,
    /// Seed size in bytes (ML-DSA ξ: 32); 0 when the algorithm has no seed form.
    pub seed_size: usize,
    /// Largest signature in bytes (exact for ML-DSA).
    pub signature_size: usize,
    /// Dotted OID of the key (RFC 9881 for ML-DSA).
    pub oid: &'static str,
    /// DER contents (no outer SEQUENCE tag/length) of the SPKI `AlgorithmIdentifier`.
    pub spki_algorithm_id: &'static [u8],
    /// DER contents of the `AlgorithmIdentifier` of signatures made with this key.
    pub signature_algorithm_id: &'static [u8],
    /// The TLS 1.3 signature scheme, if one is assigned.
    pub tls_scheme: Option<TlsCodePoint>,
    /// The standard that defines it.
    pub standard: &'static str,
    /// The family (decides context, pre-hash, external μ and key encodings).
    pub family: Family,
    pub(crate) backend: &'static dyn SignatureBackend,
}

impl SignatureAlgorithm {
    /// Generates a signing key from the OS random number generator.
    ///
    /// # Errors
    /// [`Error::Rng`] when the RNG fails, [`Error::Backend`] when the backend does.
    pub fn generate(&'static self) -> Result<SigningKey, Error> {
        Ok(SigningKey {
            alg: self,
            inner: self.backend.generate(self)?,
        })
    }

    /// Derives a signing key from its seed (ML-DSA: ξ, 32 bytes, FIPS 204 Algorithm 6,
    /// ML-DSA.KeyGen_internal). The same seed always gives the same key.
    ///
    /// # Errors
    /// [`Error::InvalidLength`] for a wrong seed size, [`Error::Unsupported`] when the algorithm
    /// has no seed form.
    pub fn signing_key_from_seed(&'static self, seed: &[u8]) -> Result<SigningKey, Error> {
        if self.seed_size == 0 {
            return Err(Error::Unsupported("this algorithm has no seed form"));
        }
        check_len("signing key seed", seed, self.seed_size)?;
        Ok(SigningKey {
            alg: self,
            inner: self.backend.signing_key_from_seed(self, seed)?,
        })
    }

    /// Loads a classical signing key from its PKCS#8 encoding (RFC 5958).
    ///
    /// # Errors
    /// [`Error::InvalidKey`] when the backend rejects the key, [`Error::Unsupported`] for
    /// post-quantum algorithms (their PKCS#8 form is decoded by pqkit-pki into a seed).
    pub fn signing_key_from_pkcs8(&'static self, der: &[u8]) -> Result<SigningKey, Error> {
        Ok(SigningKey {
            alg: self,
            inner: self.backend.signing_key_from_pkcs8(self, der)?,
        })
    }

    /// Loads a signing key from its expanded encoding (ML-DSA `sk` of FIPS 204 Algorithm 24,
    /// SLH-DSA SK.seed‖SK.prf‖PK.seed‖PK.root of FIPS 205 §9.1, Falcon round-3 private key,
    /// composite ML-DSA seed ‖ traditional key), [`Self::signing_key_size`] bytes (at most
    /// that many for composite ML-DSA).
    ///
    /// # Errors
    /// [`Error::InvalidLength`]; [`Error::InvalidKey`] when the key is inconsistent (e.g. an
    /// SLH-DSA PK.root that does not match its seeds); [`Error::Unsupported`] for classical keys.
    pub fn signing_key_from_expanded(&'static self, bytes: &[u8]) -> Result<SigningKey, Error> {
        if !self.backend.expanded_size_varies() || bytes.len() > self.signing_key_size {
            check_len("expanded signing key", bytes, self.signing_key_size)?;
        }
        Ok(SigningKey {
            alg: self,
            inner: self.backend.signing_key_from_expanded(self, bytes)?,
        })
    }

    /// A signing key whose private part lives elsewhere — a PKCS#11 token, an HSM — and
    /// signs through `inner`; every pqkit tool that takes a [`SigningKey`] uses it unchanged.
    /// `inner.seed()` and `inner.expanded()` are expected to be `None`.
    ///
    /// # Errors
    /// [`Error::InvalidLength`] when `inner`'s verifying key is not
    /// [`Self::verifying_key_size`] bytes.
    pub fn token_key(&'static self, inner: Box<dyn SigningKeyImpl>) -> Result<SigningKey, Error> {
        check_len(
            "verifying key",
            inner.verifying_key(),
            self.verifying_key_size,
        )?;
        Ok(SigningKey { alg: self, inner })
    }

    /// Wraps an encoded verifying key after checking its length.
    ///
    /// # Errors
    /// [`Error::InvalidLength`] when `bytes` is not [`Self::verifying_key_size`] bytes.
    pub fn verifying_key(&'static self, bytes: &[u8]) -> Result<VerifyingKey, Error> {
        check_len("verifying key", bytes, self.verifying_key_size)?;
        Ok(VerifyingKey {
            alg: self,
            bytes: bytes.into(),
            prepared: None,
        })
    }

    /// Whether signatures vary in length, [`Self::signature_size`] being the largest: Falcon's
    /// compressed signatures, ECDSA's DER, and composite ML-DSA with an ECDSA half.
    pub fn signature_size_varies(&self) -> bool {
        self.backend.signature_size_varies()
    }

    /// The backend that implements this algorithm, e.g. "pqkit-lattice".
    pub fn backend_name(&self) -> &'static str {
        self.backend.name()
    }
}

impl fmt::Debug for SignatureAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// Where the per-signature randomness comes from (FIPS 204 Algorithm 2, `rnd`).
#[derive(Clone, Copy, Debug)]
pub enum SigningRandomness<'a> {
    /// Fresh randomness from the OS RNG (the default; FIPS 204 "hedged").
    Hedged,
    /// `rnd` = 32 zero bytes (FIPS 204 "deterministic").
    Deterministic,
    /// Caller-chosen randomness (ML-DSA `rnd`, 32 bytes; SLH-DSA `addrnd`, n bytes).
    /// **For known-answer tests only.**
    Fixed(&'a [u8]),
}

/// A signing key. Zeroized on drop by its backend; `Debug` prints no key material.
pub struct SigningKey {
    alg: &'static SignatureAlgorithm,
    inner: Box<dyn SigningKeyImpl>,
}

impl SigningKey {
    /// Signs `message` with context string `context` and hedged randomness
    /// (FIPS 204 Algorithm 2, ML-DSA.Sign).
    ///
    /// # Errors
    /// [`Error::ContextTooLong`] over 255 bytes; [`Error::Unsupported`] when the algorithm takes
    /// no context and one is given; [`Error::Rng`] or [`Error::Backend`] on failure.
    pub fn sign(&self, message: &[u8], context: &[u8]) -> Result<Vec<u8>, Error> {
        self.sign_with(message, context, SigningRandomness::Hedged)
    }

    /// Signs with explicitly chosen randomness (see [`SigningRandomness`]).
    ///
    /// # Errors
    /// As [`Self::sign`].
    pub fn sign_with(
        &self,
        message: &[u8],
        context: &[u8],
        randomness: SigningRandomness<'_>,
    ) -> Result<Vec<u8>, Error> {
        check_context(self.alg, context)?;
        self.inner.sign(message, context, randomness)
    }

    /// Signs a digest computed outside the signer: HashML-DSA (FIPS 204 Algorithm 4),
    /// HashSLH-DSA (FIPS 205 Algorithm 23), or ECDSA over H(M) with the algorithm's own hash
    /// (FIPS 186-5 §6.4.1; the signature verifies with [`VerifyingKey::verify`] over M). Only
    /// `digest` (28–64 bytes) and, for ML-DSA/SLH-DSA, the hash's OID reach the key.
    ///
    /// # Errors
    /// [`Error::InvalidLength`] for a digest of the wrong size; [`Error::ContextTooLong`];
    /// [`Error::Unsupported`] for algorithms without a pre-hash variant.
    pub fn sign_prehashed(
        &self,
        hash: PreHash,
        digest: &[u8],
        context: &[u8],
        randomness: SigningRandomness<'_>,
    ) -> Result<Vec<u8>, Error> {
        hash.check_digest(digest)?;
        check_context(self.alg, context)?;
        self.inner.sign_prehashed(hash, digest, context, randomness)
    }

    /// Signs the 64-byte message representative μ computed outside the signer (FIPS 204
    /// Algorithm 7 with external μ; μ from [`VerifyingKey::external_mu`]). The signature
    /// equals the one [`Self::sign_with`] makes over the message with the same randomness.
    ///
    /// # Errors
    /// [`Error::Unsupported`] for algorithms other than ML-DSA; [`Error::Rng`],
    /// [`Error::Backend`].
    pub fn sign_mu(
        &self,
        mu: &[u8; MU_SIZE],
        randomness: SigningRandomness<'_>,
    ) -> Result<Vec<u8>, Error> {
        self.inner.sign_mu(mu, randomness)
    }

    /// The matching verifying key.
    pub fn verifying_key(&self) -> VerifyingKey {
        VerifyingKey {
            alg: self.alg,
            bytes: self.inner.verifying_key().into(),
            prepared: None,
        }
    }

    /// The seed (ML-DSA ξ, 32 bytes), when the key has a seed form.
    pub fn seed(&self) -> Option<&[u8]> {
        self.inner.seed()
    }

    /// The expanded private key (FIPS 204 `sk`), when the backend can export it.
    pub fn expanded(&self) -> Option<Zeroizing<Vec<u8>>> {
        self.inner.expanded()
    }

    /// The PKCS#8 encoding of a classical key (post-quantum keys return `None`: pqkit-pki
    /// encodes their seed).
    pub fn classical_pkcs8(&self) -> Option<Zeroizing<Vec<u8>>> {
        self.inner.classical_pkcs8()
    }

    /// The algorithm of this key.
    pub fn algorithm(&self) -> &'static SignatureAlgorithm {
        self.alg
    }

    /// Whether randomness given to [`Self::sign_with`] reaches the signing (false for a key in
    /// a token, which draws its own inside its boundary).
    pub fn takes_randomness(&self) -> bool {
        self.inner.takes_randomness()
    }
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKey")
            .field("alg", &self.alg.name)
            .finish_non_exhaustive()
    }
}

/// A verifying (public) key of a known algorithm and length.
#[derive(Clone)]
pub struct VerifyingKey {
    alg: &'static SignatureAlgorithm,
    /// The encoding, shared by clones (a kept key is cloned for every verification).
    bytes: Arc<[u8]>,
    /// The backend's form with the key-only work done ([`Self::prepared`]), shared by clones.
    prepared: Option<Arc<dyn PreparedVerify>>,
}

impl VerifyingKey {
    /// Verifies `signature` over `message` with context `context` (FIPS 204 Algorithm 3,
    /// ML-DSA.Verify).
    ///
    /// # Errors
    /// [`Error::BadSignature`] for any invalid signature (no further detail);
    /// [`Error::ContextTooLong`]; [`Error::Unsupported`] for a context on an algorithm without.
    pub fn verify(&self, message: &[u8], context: &[u8], signature: &[u8]) -> Result<(), Error> {
        check_context(self.alg, context)?;
        match &self.prepared {
            Some(key) => key.verify(message, context, signature),
            None => self
                .alg
                .backend
                .verify(self.alg, &self.bytes, message, context, signature),
        }
    }

    /// This key with the work that depends on the key alone done now, once, instead of in
    /// every [`Self::verify`]: for ML-DSA, Â = ExpandA(ρ) in the NTT domain and tr = H(pk, 64)
    /// (FIPS 204 Algorithm 8 lines 5–6), which costs about one verification and keeps 16, 30
    /// or 56 KiB (ML-DSA-44, 65, 87). For verifiers that meet the same key again and again;
    /// [`PreparedKeys`] keeps such keys. Keys of other algorithms come back as they were
    /// ([`Self::is_prepared`] false). The answers of [`Self::verify`] do not change;
    /// [`Self::verify_prehashed`] and [`Self::verify_mu`] still start from the encoding.
    #[must_use]
    pub fn prepared(mut self) -> Self {
        if self.prepared.is_none() {
            self.prepared = self.alg.backend.prepare(self.alg, &self.bytes);
        }
        self
    }

    /// Whether [`Self::prepared`] kept a prepared form of this key.
    pub fn is_prepared(&self) -> bool {
        self.prepared.is_some()
    }

    /// Verifies a HashML-DSA / HashSLH-DSA signature over a digest (FIPS 204 Algorithm 5,
    /// FIPS 205 Algorithm 25).
    ///
    /// # Errors
    /// [`Error::BadSignature`]; [`Error::InvalidLength`] for a digest of the wrong size;
    /// [`Error::ContextTooLong`]; [`Error::Unsupported`] without a pre-hash variant.
    pub fn verify_prehashed(
        &self,
        hash: PreHash,
        digest: &[u8],
        context: &[u8],
        signature: &[u8],
    ) -> Result<(), Error> {
        hash.check_digest(digest)?;
        check_context(self.alg, context)?;
        self.alg
            .backend
            .verify_prehashed(self.alg, &self.bytes, hash, digest, context, signature)
    }

    /// Computes ML-DSA's μ = H(tr ‖ 0 ‖ |ctx| ‖ ctx ‖ M, 64) outside the signer, with
    /// tr = H(pk, 64) (FIPS 204 Algorithm 2 lines 5–10 and Algorithm 7 line 6).
    ///
    /// # Errors
    /// [`Error::ContextTooLong`]; [`Error::Unsupported`] for algorithms other than ML-DSA.
    pub fn external_mu(&self, message: &[u8], context: &[u8]) -> Result<[u8; MU_SIZE], Error> {
        let mut h = self.mu_hasher(context)?;
        h.update(message);
        Ok(h.finalize())
    }

    /// An incremental μ computation for a message fed in pieces (see [`Self::external_mu`]).
    ///
    /// # Errors
    /// As [`Self::external_mu`].
    pub fn mu_hasher(&self, context: &[u8]) -> Result<MuHasher, Error> {
        if self.alg.family != Family::MlDsa {
            return Err(Error::Unsupported("external μ is defined for ML-DSA only"));
        }
        let len = u8::try_from(context.len()).map_err(|_| Error::ContextTooLong(context.len()))?;
        Ok(MuHasher::new(&self.bytes, &[&[0, len], context]))
    }

    /// Verifies an ML-DSA signature against μ (FIPS 204 Algorithm 8 from line 7).
    ///
    /// # Errors
    /// [`Error::BadSignature`]; [`Error::Unsupported`] for algorithms other than ML-DSA.
    pub fn verify_mu(&self, mu: &[u8; MU_SIZE], signature: &[u8]) -> Result<(), Error> {
        self.alg
            .backend
            .verify_mu(self.alg, &self.bytes, mu, signature)
    }

    /// The encoded key, [`SignatureAlgorithm::verifying_key_size`] bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The algorithm of this key.
    pub fn algorithm(&self) -> &'static SignatureAlgorithm {
        self.alg
    }
}

impl PartialEq for VerifyingKey {
    fn eq(&self, other: &Self) -> bool {
        core::ptr::eq(self.alg, other.alg) && self.bytes == other.bytes
    }
}

impl Eq for VerifyingKey {}

impl fmt::Debug for VerifyingKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VerifyingKey")
            .field("alg", &self.alg.name)
            .field("prepared", &self.is_prepared())
            .finish_non_exhaustive()
    }
}

/// A bounded set of prepared verifying keys ([`VerifyingKey::prepared`]), the most recently
/// used kept, for a verifier that meets the same keys again and again: a TLS client's CA and
/// server keys, a checker's signers. (Go's crypto/tls shares parsed certificates between live
/// connections in a similar way.) A key is found by its algorithm and every byte of its
/// encoding; keys with nothing to prepare are not kept. Shared between threads: the lock is
/// held for the search, never for a preparation or a verification.
///
/// # Security
/// Everything kept is public. A verification under a key that is kept is faster than one
/// under a key that is not, so its timing tells whether the key was used recently.
pub struct PreparedKeys {
    capacity: usize,
    /// Most recently used first.
    keys: Mutex<Vec<VerifyingKey>>,
}

impl PreparedKeys {
    /// An empty set that keeps at most `capacity` keys (the memory of one key: see
    /// [`VerifyingKey::prepared`]).
    pub const fn new(capacity: usize) -> Self {
        Self {
            capacity,
            keys: Mutex::new(Vec::new()),
        }
    }

    /// The key `bytes` of `alg`, prepared: the one kept, or one made now and kept in place
    /// of the least recently used when the set is full.
    ///
    /// # Errors
    /// As [`SignatureAlgorithm::verifying_key`].
    pub fn get_or_prepare(
        &self,
        alg: &'static SignatureAlgorithm,
        bytes: &[u8],
    ) -> Result<VerifyingKey, Error> {
        let same = |k: &VerifyingKey| core::ptr::eq(k.alg, alg) && *k.bytes == *bytes;
        {
            let mut keys = self.lock();
            if let Some(at) = keys.iter().position(same) {
                keys[..=at].rotate_right(1);
                return Ok(keys[0].clone());
            }
        }
        // Prepared outside the lock: as long as a verification, and other keys may be in use.
        let key = alg.verifying_key(bytes)?.prepared();
        if key.is_prepared() && self.capacity > 0 {
            let mut keys = self.lock();
            if !keys.iter().any(same) {
                keys.truncate(self.capacity - 1);
                keys.insert(0, key.clone());
            }
        }
        Ok(key)
    }

    /// How many keys are kept.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no key is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The keys; a panic elsewhere while the lock was held leaves a list that is still whole.
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<VerifyingKey>> {
        self.keys
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl fmt::Debug for PreparedKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PreparedKeys")
            .field("capacity", &self.capacity)
            .field("len", &self.len())
            .finish()
    }
}

/// The one place a context string is checked: at most 255 bytes (FIPS 204 §5.2, FIPS 205
/// §10.2), and none for families that take none (Falcon round 3, classical).
pub(crate) fn check_context(alg: &SignatureAlgorithm, context: &[u8]) -> Result<(), Error> {
    if context.len() > MAX_CONTEXT_SIZE {
        return Err(Error::ContextTooLong(context.len()));
    }
    if !context.is_empty() && !alg.family.has_context() {
        return Err(Error::Unsupported("this algorithm takes no context string"));
    }
    Ok(())
}

/// ML-DSA's μ computed in pieces: SHAKE256(tr ‖ prefix ‖ M), 64 bytes, tr = SHAKE256(pk, 64)
/// (pqkit-lattice's, the one computation of μ; FIPS 204 Algorithm 7 line 6).
pub use pqkit_lattice::ml_dsa::MuHasher;

/// A signature implementation behind a [`SignatureAlgorithm`].
pub trait SignatureBackend: Send + Sync {
    /// Name of the implementation(s), e.g. "pqkit-lattice".
    fn name(&self) -> &'static str;
    /// A fresh key from the OS RNG. The default draws a seed and calls
    /// [`Self::signing_key_from_seed`].
    ///
    /// # Errors
    /// [`Error::Rng`] or the errors of [`Self::signing_key_from_seed`].
    fn generate(&self, alg: &'static SignatureAlgorithm) -> Result<Box<dyn SigningKeyImpl>, Error> {
        let seed = random_vec(alg.seed_size)?;
        self.signing_key_from_seed(alg, &seed)
    }
    /// A key from its seed; the length is already checked.
    ///
    /// # Errors
    /// [`Error::Backend`] or [`Error::Unsupported`].
    fn signing_key_from_seed(
        &self,
        alg: &'static SignatureAlgorithm,
        seed: &[u8],
    ) -> Result<Box<dyn SigningKeyImpl>, Error>;
    /// A classical key from PKCS#8.
    ///
    /// # Errors
    /// [`Error::Unsupported`] by default.
    fn signing_key_from_pkcs8(
        &self,
        _alg: &'static SignatureAlgorithm,
        _der: &[u8],
    ) -> Result<Box<dyn SigningKeyImpl>, Error> {
        Err(Error::Unsupported(
            "PKCS#8 import is for classical keys; use pqkit-pki",
        ))
    }
    /// A key from its expanded encoding; the length is already checked.
    ///
    /// # Errors
    /// [`Error::Unsupported`] by default.
    fn signing_key_from_expanded(
        &self,
        _alg: &'static SignatureAlgorithm,
        _bytes: &[u8],
    ) -> Result<Box<dyn SigningKeyImpl>, Error> {
        Err(Error::Unsupported(
            "this algorithm has no expanded key form",
        ))
    }
    /// Verifies a pre-hash signature; digest and context lengths are already checked.
    ///
    /// # Errors
    /// [`Error::Unsupported`] by default; [`Error::BadSignature`].
    fn verify_prehashed(
        &self,
        _alg: &'static SignatureAlgorithm,
        _verifying_key: &[u8],
        _hash: PreHash,
        _digest: &[u8],
        _context: &[u8],
        _signature: &[u8],
    ) -> Result<(), Error> {
        Err(Error::Unsupported("this algorithm has no pre-hash variant"))
    }
    /// Verifies against μ.
    ///
    /// # Errors
    /// [`Error::Unsupported`] by default; [`Error::BadSignature`].
    fn verify_mu(
        &self,
        _alg: &'static SignatureAlgorithm,
        _verifying_key: &[u8],
        _mu: &[u8; MU_SIZE],
        _signature: &[u8],
    ) -> Result<(), Error> {
        Err(Error::Unsupported("external μ is defined for ML-DSA only"))
    }
    /// Verifies; the context is already checked (length, and empty for families without one).
    ///
    /// # Errors
    /// [`Error::BadSignature`] for every invalid signature.
    fn verify(
        &self,
        alg: &'static SignatureAlgorithm,
        verifying_key: &[u8],
        message: &[u8],
        context: &[u8],
        signature: &[u8],
    ) -> Result<(), Error>;
    /// Whether an expanded signing key may be shorter than
    /// [`SignatureAlgorithm::signing_key_size`] (its largest); `false` by default.
    fn expanded_size_varies(&self) -> bool {
        false
    }
    /// Whether signatures vary in length (see [`SignatureAlgorithm::signature_size_varies`]);
    /// `false` by default.
    fn signature_size_varies(&self) -> bool {
        false
    }
    /// `verifying_key` (length already checked) with the work that depends on the key alone
    /// done, for [`VerifyingKey::prepared`]; `None`, the default, when there is nothing worth
    /// keeping.
    fn prepare(
        &self,
        _alg: &'static SignatureAlgorithm,
        _verifying_key: &[u8],
    ) -> Option<Arc<dyn PreparedVerify>> {
        None
    }
}

/// A backend's verifying key with the work that depends on the key alone done
/// ([`SignatureBackend::prepare`]).
pub trait PreparedVerify: Send + Sync {
    /// Verifies as [`SignatureBackend::verify`] under this key; the context is already
    /// checked.
    ///
    /// # Errors
    /// [`Error::BadSignature`] for every invalid signature.
    fn verify(&self, message: &[u8], context: &[u8], signature: &[u8]) -> Result<(), Error>;
}

/// The backend's half of a [`SigningKey`]. Implementations zeroize their secrets on drop.
pub trait SigningKeyImpl: Send + Sync {
    /// The encoded verifying key.
    fn verifying_key(&self) -> &[u8];
    /// The seed, when the key has one.
    fn seed(&self) -> Option<&[u8]>;
    /// The expanded private key, when exportable.
    fn expanded(&self) -> Option<Zeroizing<Vec<u8>>>;
    /// PKCS#8 of a classical key.
    fn classical_pkcs8(&self) -> Option<Zeroizing<Vec<u8>>> {
        None
    }
    /// Whether [`SigningRandomness::Fixed`] reaches the signing (false for a key that draws
    /// its randomness behind a boundary, such as a token's); `true` by default.
    fn takes_randomness(&self) -> bool {
        true
    }
    /// Signs; the context is already checked (length, and empty for families without one).
    ///
    /// # Errors
    /// [`Error::Unsupported`], [`Error::Rng`] or [`Error::Backend`].
    fn sign(
        &self,
        message: &[u8],
        context: &[u8],
        randomness: SigningRandomness<'_>,
    ) -> Result<Vec<u8>, Error>;
    /// Signs a pre-hash digest (lengths already checked).
    ///
    /// # Errors
    /// [`Error::Unsupported`] by default.
    fn sign_prehashed(
        &self,
        _hash: PreHash,
        _digest: &[u8],
        _context: &[u8],
        _randomness: SigningRandomness<'_>,
    ) -> Result<Vec<u8>, Error> {
        Err(Error::Unsupported("this algorithm has no pre-hash variant"))
    }
    /// Signs μ.
    ///
    /// # Errors
    /// [`Error::Unsupported`] by default.
    fn sign_mu(
        &self,
        _mu: &[u8; MU_SIZE],
        _randomness: SigningRandomness<'_>,
    ) -> Result<Vec<u8>, Error> {
        Err(Error::Unsupported("external μ is defined for ML-DSA only"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue;

    /// The encodings kept, most recently used first.
    fn kept(set: &PreparedKeys) -> Vec<Vec<u8>> {
        set.lock().iter().map(|k| k.bytes.to_vec()).collect()
    }

    /// A key found again is the one kept and moves to the front; the least recently used
    /// goes when the set is full; keys of the wrong length and keys with nothing to prepare
    /// are not kept; a prepared key answers as the encoded one does.
    #[test]
    fn prepared_keys_keep_the_most_recently_used() {
        let alg = catalogue::signature("ML-DSA-44").expect("catalogue");
        let keys: Vec<SigningKey> = (0..3).map(|_| alg.generate().expect("key")).collect();
        let pks: Vec<Vec<u8>> = keys
            .iter()
            .map(|k| k.verifying_key().as_bytes().to_vec())
            .collect();
        let set = PreparedKeys::new(2);
        for (key, pk) in keys.iter().zip(&pks) {
            let sig = key.sign(b"message", b"context").expect("sign");
            let mut bad = sig.clone();
            bad[7] ^= 0x10;
            let plain = alg.verifying_key(pk).expect("length");
            let prepared = set.get_or_prepare(alg, pk).expect("length");
            assert!(prepared.is_prepared() && !plain.is_prepared());
            assert_eq!(prepared, plain);
            for (vk, what) in [(&plain, "encoded"), (&prepared, "prepared")] {
                assert!(vk.verify(b"message", b"context", &sig).is_ok(), "{what}");
                assert!(matches!(
                    vk.verify(b"message", b"context", &bad),
                    Err(Error::BadSignature)
                ));
                assert!(vk.verify(b"message", b"", &sig).is_err(), "{what}: context");
                assert!(vk.verify(b"massage", b"context", &sig).is_err(), "{what}");
                assert!(matches!(
                    vk.verify(b"message", &[0; 256], &sig),
                    Err(Error::ContextTooLong(256))
                ));
            }
        }
        assert_eq!(kept(&set), [pks[2].clone(), pks[1].clone()]);
        // A key found again is the one kept: its prepared form is shared, and it verifies.
        let again = set.get_or_prepare(alg, &pks[1]).expect("kept");
        let kept_form = set.lock()[0].prepared.clone().expect("prepared");
        assert!(Arc::ptr_eq(
            &again.prepared.clone().expect("prepared"),
            &kept_form
        ));
        let sig = keys[1].sign(b"message", b"").expect("sign");
        assert!(again.verify(b"message", b"", &sig).is_ok());
        assert_eq!(kept(&set), [pks[1].clone(), pks[2].clone()]);
        set.get_or_prepare(alg, &pks[0]).expect("made again");
        assert_eq!(kept(&set), [pks[0].clone(), pks[1].clone()]);
        // Refused, or nothing to keep: the set is unchanged.
        assert!(matches!(
            set.get_or_prepare(alg, &pks[0][1..]),
            Err(Error::InvalidLength { .. })
        ));
        let slh = catalogue::signature("SLH-DSA-SHA2-128f").expect("catalogue");
        let other = set.get_or_prepare(slh, &[1; 32]).expect("length");
        assert!(!other.is_prepared());
        assert_eq!(kept(&set), [pks[0].clone(), pks[1].clone()]);
        assert_eq!(set.len(), 2);
        let none_kept = PreparedKeys::new(0);
        assert!(
            none_kept
                .get_or_prepare(alg, &pks[0])
                .expect("made")
                .is_prepared()
        );
        assert!(none_kept.is_empty());
    }
}
