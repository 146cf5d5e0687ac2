//! `pqkit.sig`: the signature algorithms of the catalogue (FIPS 204 ML-DSA, FIPS 205 SLH-DSA,
//! Falcon, composite ML-DSA, ECDSA, Ed25519, RSA) and their keys.

use pqkit_core::catalogue;
use pqkit_core::prehash::PreHash;
use pqkit_core::sig::{
    MU_SIZE, SignatureAlgorithm as CoreAlg, SigningKey as CoreSk, SigningRandomness,
    VerifyingKey as CoreVk,
};
use pqkit_pki::key as pki_key;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use zeroize::Zeroizing;

use crate::errors::{self, Kind, Reading};
use crate::{Input, bytes_out};

/// One signature algorithm of the catalogue: its sizes in bytes and its operations. The
/// module constants (`pqkit.sig.MLDSA65`, …) and `pqkit.sig.by_name` give these.
#[pyclass(module = "pqkit.sig", name = "SignatureAlgorithm", frozen)]
pub(crate) struct SignatureAlgorithm(pub(crate) &'static CoreAlg);

/// A private key, in memory or in a PKCS#11 token. Zeroized when collected; its repr shows
/// no key material; it cannot be pickled. The GIL is released while it signs.
#[pyclass(module = "pqkit.sig", name = "SigningKey", frozen)]
pub(crate) struct SigningKey(pub(crate) CoreSk, Place);

/// Where a signing key lives: a token's failures are `TokenError`s.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Memory,
    Token,
}

impl SigningKey {
    /// A key in memory.
    pub(crate) fn memory(key: CoreSk) -> Self {
        Self(key, Place::Memory)
    }

    /// A key in a PKCS#11 token.
    pub(crate) fn token(key: CoreSk) -> Self {
        Self(key, Place::Token)
    }

    /// Whether the key is in a token.
    pub(crate) fn is_token(&self) -> bool {
        self.1 == Place::Token
    }

    /// A failure to sign: a token's own (its module or device) is a `TokenError`.
    pub(crate) fn failure(&self, e: pqkit_core::Error) -> PyErr {
        match e {
            pqkit_core::Error::Backend(_) if self.1 == Place::Token => {
                errors::raise(Kind::Token, e)
            }
            e => errors::core(e, Reading::Other),
        }
    }
}

/// A public key.
#[pyclass(module = "pqkit.sig", name = "VerifyingKey", frozen)]
pub(crate) struct VerifyingKey(pub(crate) CoreVk);

/// The randomness of a signature: hedged (fresh from the OS) or deterministic.
fn randomness(deterministic: bool) -> SigningRandomness<'static> {
    if deterministic {
        SigningRandomness::Deterministic
    } else {
        SigningRandomness::Hedged
    }
}

/// A pre-hash function by name ("SHA-256", "SHA-512", "SHAKE-128", …; FIPS 204 §5.4).
pub(crate) fn prehash(name: &str) -> PyResult<PreHash> {
    PreHash::from_name(name).map_err(|e| errors::core(e, Reading::Other))
}

/// μ from bytes: exactly 64.
pub(crate) fn mu_of(mu: &[u8]) -> PyResult<&[u8; MU_SIZE]> {
    mu.try_into().map_err(|_| {
        errors::raise(
            Kind::Input,
            format!("μ must be {MU_SIZE} bytes, got {}", mu.len()),
        )
    })
}

#[pymethods]
impl SignatureAlgorithm {
    /// The canonical name, e.g. "ML-DSA-65".
    #[getter]
    fn name(&self) -> &'static str {
        self.0.name
    }
    /// The family, e.g. "ML-DSA", "SLH-DSA", "Falcon", "Composite ML-DSA".
    #[getter]
    fn family(&self) -> &'static str {
        self.0.family.name()
    }
    /// NIST security category (1–5); 0 for classical algorithms.
    #[getter]
    fn category(&self) -> u8 {
        self.0.category
    }
    /// Verifying key size in bytes (ML-DSA-65: 1952).
    #[getter]
    fn verifying_key_size(&self) -> usize {
        self.0.verifying_key_size
    }
    /// Expanded signing key size in bytes (ML-DSA-65: 4032).
    #[getter]
    fn signing_key_size(&self) -> usize {
        self.0.signing_key_size
    }
    /// Seed size in bytes (ML-DSA ξ: 32; SLH-DSA SK.seed‖SK.prf‖PK.seed: 3n); 0 without a
    /// seed form.
    #[getter]
    fn seed_size(&self) -> usize {
        self.0.seed_size
    }
    /// The largest signature in bytes (exact for ML-DSA and SLH-DSA; ML-DSA-65: 3309).
    #[getter]
    fn signature_size(&self) -> usize {
        self.0.signature_size
    }
    /// The key's object identifier, dotted (RFC 9881 for ML-DSA, RFC 9909 for SLH-DSA).
    #[getter]
    fn oid(&self) -> &'static str {
        self.0.oid
    }
    /// The standard that defines it.
    #[getter]
    fn standard(&self) -> &'static str {
        self.0.standard
    }
    /// Whether it takes a context string (ML-DSA, SLH-DSA, composite ML-DSA).
    #[getter]
    fn has_context(&self) -> bool {
        self.0.family.has_context()
    }
    /// Whether it has a pre-hash variant (HashML-DSA, HashSLH-DSA).
    #[getter]
    fn has_prehash(&self) -> bool {
        self.0.family.has_prehash()
    }
    /// Whether it signs an external μ (ML-DSA, FIPS 204 Algorithm 7).
    #[getter]
    fn has_external_mu(&self) -> bool {
        self.0.family.has_external_mu()
    }

    /// A new signing key from the OS random number generator.
    ///
    /// Raises PqkitError if the random number generator fails.
    fn generate(&self, py: Python<'_>) -> PyResult<SigningKey> {
        let alg = self.0;
        py.detach(|| alg.generate())
            .map(SigningKey::memory)
            .map_err(|e| errors::core(e, Reading::Other))
    }

    /// The signing key of a seed: ML-DSA ξ, 32 bytes (FIPS 204 Algorithm 6); SLH-DSA
    /// SK.seed‖SK.prf‖PK.seed, 3n bytes (FIPS 205 Algorithm 18).
    ///
    /// Raises InvalidKey for a wrong length, Unsupported without a seed form.
    #[pyo3(name = "from_seed")]
    fn key_from_seed(&self, py: Python<'_>, seed: Input<'_>) -> PyResult<SigningKey> {
        let alg = self.0;
        py.detach(|| alg.signing_key_from_seed(&seed))
            .map(SigningKey::memory)
            .map_err(|e| errors::core(e, Reading::Key))
    }

    /// A verifying key from its raw encoding, verifying_key_size bytes.
    ///
    /// Raises InvalidKey.
    fn verifying_key(&self, data: Input<'_>) -> PyResult<VerifyingKey> {
        self.0
            .verifying_key(&data)
            .map(VerifyingKey)
            .map_err(|e| errors::core(e, Reading::Key))
    }

    /// A signing key from its expanded encoding (ML-DSA sk, FIPS 204 Algorithm 24; SLH-DSA
    /// SK.seed‖SK.prf‖PK.seed‖PK.root, FIPS 205 §9.1).
    ///
    /// Raises InvalidKey, Unsupported.
    fn signing_key(&self, py: Python<'_>, data: Input<'_>) -> PyResult<SigningKey> {
        let alg = self.0;
        py.detach(|| alg.signing_key_from_expanded(&data))
            .map(SigningKey::memory)
            .map_err(|e| errors::core(e, Reading::Key))
    }

    fn __repr__(&self) -> String {
        format!("<pqkit.sig.SignatureAlgorithm {}>", self.0.name)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<Self>()
            .is_ok_and(|o| std::ptr::eq(o.get().0, self.0))
    }

    fn __hash__(&self) -> u64 {
        crate::encoding::hash_of(self.0.name)
    }
}

#[pymethods]
impl SigningKey {
    /// The algorithm.
    #[getter]
    fn algorithm(&self) -> SignatureAlgorithm {
        SignatureAlgorithm(self.0.algorithm())
    }

    /// Signs data (FIPS 204 Algorithm 2 ML-DSA.Sign, FIPS 205 Algorithm 22 slh_sign, …):
    /// hedged with fresh randomness, or deterministic (FIPS 204 rnd = 0, FIPS 205 opt_rand =
    /// PK.seed) where the algorithm has that variant. context: at most 255 bytes, for ML-DSA,
    /// SLH-DSA and composite ML-DSA (FIPS 204 §5.2). Returns at most signature_size bytes.
    ///
    /// Raises InvalidInput (context over 255 bytes), Unsupported (a context for an algorithm
    /// without one), TokenError (a token key whose token fails).
    #[pyo3(signature = (data, context = Input::Borrowed(b""), *, deterministic = false))]
    fn sign<'py>(
        &self,
        py: Python<'py>,
        data: Input<'_>,
        context: Input<'_>,
        deterministic: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let signature = py
            .detach(|| self.0.sign_with(&data, &context, randomness(deterministic)))
            .map_err(|e| self.failure(e))?;
        Ok(bytes_out(py, &signature))
    }

    /// HashML-DSA (FIPS 204 Algorithm 4) or HashSLH-DSA (FIPS 205 Algorithm 23) over a digest
    /// computed outside: hash names the function ("SHA-256", "SHA-512", "SHAKE-128", …) and
    /// the digest must have its length.
    ///
    /// Raises InvalidInput (digest length, context), UnknownAlgorithm (hash name),
    /// Unsupported (no pre-hash variant).
    #[pyo3(signature = (digest, hash, context = Input::Borrowed(b""), *, deterministic = false))]
    fn sign_prehashed<'py>(
        &self,
        py: Python<'py>,
        digest: Input<'_>,
        hash: &str,
        context: Input<'_>,
        deterministic: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let hash = prehash(hash)?;
        let signature = py
            .detach(|| {
                self.0
                    .sign_prehashed(hash, &digest, &context, randomness(deterministic))
            })
            .map_err(|e| self.failure(e))?;
        Ok(bytes_out(py, &signature))
    }

    /// ML-DSA over an external μ, 64 bytes (FIPS 204 Algorithm 7; μ from
    /// VerifyingKey.external_mu where the message is). The signature verifies with verify over
    /// the message.
    ///
    /// Raises InvalidInput (μ length), Unsupported (not ML-DSA).
    #[pyo3(signature = (mu, *, deterministic = false))]
    fn sign_mu<'py>(
        &self,
        py: Python<'py>,
        mu: Input<'_>,
        deterministic: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let mu = mu_of(&mu)?;
        let signature = py
            .detach(|| self.0.sign_mu(mu, randomness(deterministic)))
            .map_err(|e| self.failure(e))?;
        Ok(bytes_out(py, &signature))
    }

    /// The verifying key.
    fn public_key(&self) -> VerifyingKey {
        VerifyingKey(self.0.verifying_key())
    }

    /// The seed (ML-DSA ξ, 32 bytes; SLH-DSA 3n bytes), or None for a key without one. The
    /// bytes returned are a copy Python cannot wipe: keep them no longer than needed.
    fn seed<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        self.0.seed().map(|s| bytes_out(py, s))
    }

    /// PKCS#8 DER: form "seed" (default), "expanded" or "both" for ML-DSA (RFC 9881 §6); the
    /// one form of SLH-DSA (RFC 9909), Falcon, composite and classical keys.
    ///
    /// Raises Unsupported for a token key (it never leaves the token) or a form the key lacks.
    #[pyo3(signature = (form = "seed"))]
    fn to_der<'py>(&self, py: Python<'py>, form: &str) -> PyResult<Bound<'py, PyBytes>> {
        let der = self.pkcs8(form)?;
        Ok(bytes_out(py, &der))
    }

    /// PKCS#8 PEM ("PRIVATE KEY"), as to_der.
    #[pyo3(signature = (form = "seed"))]
    fn to_pem<'py>(
        &self,
        py: Python<'py>,
        form: &str,
    ) -> PyResult<Bound<'py, pyo3::types::PyString>> {
        crate::encoding::private_pem(py, &self.pkcs8(form)?)
    }

    fn __repr__(&self) -> String {
        format!("<pqkit.sig.SigningKey {}>", self.0.algorithm().name)
    }
}

impl SigningKey {
    fn pkcs8(&self, form: &str) -> PyResult<Zeroizing<Vec<u8>>> {
        pki_key::signing_key_to_pkcs8(&self.0, crate::encoding::key_format(form)?)
            .map_err(|e| errors::pki(e, Reading::Key))
    }
}

#[pymethods]
impl VerifyingKey {
    /// The algorithm.
    #[getter]
    fn algorithm(&self) -> SignatureAlgorithm {
        SignatureAlgorithm(self.0.algorithm())
    }

    /// Returns None when signature is a valid signature of data under this key and context;
    /// pyca/cryptography's argument order (signature first).
    ///
    /// Raises InvalidSignature (for a signature of any length, a flipped bit, another
    /// message, key or context), InvalidInput (context over 255 bytes).
    #[pyo3(signature = (signature, data, context = Input::Borrowed(b"")))]
    fn verify(
        &self,
        py: Python<'_>,
        signature: Input<'_>,
        data: Input<'_>,
        context: Input<'_>,
    ) -> PyResult<()> {
        py.detach(|| self.0.verify(&data, &context, &signature))
            .map_err(|e| errors::core(e, Reading::Signature))
    }

    /// HashML-DSA / HashSLH-DSA verification over a digest made with hash.
    ///
    /// Raises InvalidSignature, InvalidInput (digest length), Unsupported.
    #[pyo3(signature = (signature, digest, hash, context = Input::Borrowed(b"")))]
    fn verify_prehashed(
        &self,
        py: Python<'_>,
        signature: Input<'_>,
        digest: Input<'_>,
        hash: &str,
        context: Input<'_>,
    ) -> PyResult<()> {
        let hash = prehash(hash)?;
        hash.check_digest(&digest)
            .map_err(|e| errors::core(e, Reading::Other))?;
        py.detach(|| self.0.verify_prehashed(hash, &digest, &context, &signature))
            .map_err(|e| errors::core(e, Reading::Signature))
    }

    /// μ = SHAKE256(tr ‖ 0 ‖ |ctx| ‖ ctx ‖ M, 64 bytes), tr = SHAKE256(pk, 64) (FIPS 204
    /// Algorithm 7 line 6): what SigningKey.sign_mu signs where the message is not.
    ///
    /// Raises Unsupported (not ML-DSA), InvalidInput (context over 255 bytes).
    #[pyo3(signature = (data, context = Input::Borrowed(b"")))]
    fn external_mu<'py>(
        &self,
        py: Python<'py>,
        data: Input<'_>,
        context: Input<'_>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let mu = self
            .0
            .external_mu(&data, &context)
            .map_err(|e| errors::core(e, Reading::Other))?;
        Ok(bytes_out(py, &mu))
    }

    /// Verifies an ML-DSA signature over μ (64 bytes; FIPS 204 Algorithm 8 from line 7).
    ///
    /// Raises InvalidSignature, InvalidInput (μ length), Unsupported.
    fn verify_mu(&self, py: Python<'_>, signature: Input<'_>, mu: Input<'_>) -> PyResult<()> {
        let mu = mu_of(&mu)?;
        py.detach(|| self.0.verify_mu(mu, &signature))
            .map_err(|e| errors::core(e, Reading::Signature))
    }

    /// The raw encoding, verifying_key_size bytes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        bytes_out(py, self.0.as_bytes())
    }

    /// SubjectPublicKeyInfo DER (RFC 9881 §4 for ML-DSA, RFC 9909 for SLH-DSA).
    fn to_der<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let der = pki_key::spki_der(&self.0).map_err(|e| errors::pki(e, Reading::Key))?;
        Ok(bytes_out(py, &der))
    }

    /// SubjectPublicKeyInfo PEM ("PUBLIC KEY").
    fn to_pem(&self) -> PyResult<String> {
        let der = pki_key::spki_der(&self.0).map_err(|e| errors::pki(e, Reading::Key))?;
        crate::encoding::pem("PUBLIC KEY", &der)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<Self>().is_ok_and(|o| o.get().0 == self.0)
    }

    fn __hash__(&self) -> u64 {
        crate::encoding::hash_of(self.0.as_bytes())
    }

    fn __repr__(&self) -> String {
        format!("<pqkit.sig.VerifyingKey {}>", self.0.algorithm().name)
    }
}

/// Every signature algorithm of the catalogue.
#[pyfunction]
fn sig_algorithms() -> Vec<SignatureAlgorithm> {
    catalogue::signatures()
        .iter()
        .map(|a| SignatureAlgorithm(a))
        .collect()
}

/// The signature algorithm of a name or alias ("ML-DSA-65", "Dilithium3", …).
///
/// Raises UnknownAlgorithm.
#[pyfunction]
fn sig_by_name(name: &str) -> PyResult<SignatureAlgorithm> {
    catalogue::signature(name)
        .map(SignatureAlgorithm)
        .map_err(|e| errors::core(e, Reading::Other))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<SignatureAlgorithm>()?;
    m.add_class::<SigningKey>()?;
    m.add_class::<VerifyingKey>()?;
    m.add_function(wrap_pyfunction!(sig_algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(sig_by_name, m)?)?;
    Ok(())
}
