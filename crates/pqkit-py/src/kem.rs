//! `pqkit.kem`: the KEMs of the catalogue (FIPS 203 ML-KEM; HQC, BIKE, eFrodoKEM, Classic
//! McEliece) and their keys.

use pqkit_core::catalogue;
use pqkit_core::kem::{
    DecapsulationKey as CoreDk, EncapsulationKey as CoreEk, KemAlgorithm, KemFamily,
};
use pqkit_pki::key as pki_key;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use zeroize::Zeroizing;

use crate::errors::{self, Kind, Reading};
use crate::{Input, bytes_out};

/// One KEM of the catalogue: its sizes in bytes and its operations. The module constants
/// (`pqkit.kem.MLKEM768`, …) and `pqkit.kem.by_name` give these.
#[pyclass(module = "pqkit.kem", name = "Kem", frozen)]
pub(crate) struct Kem(pub(crate) &'static KemAlgorithm);

/// A KEM's public key (FIPS 203 `ek` for ML-KEM).
#[pyclass(module = "pqkit.kem", name = "EncapsulationKey", frozen)]
pub(crate) struct EncapsulationKey(pub(crate) CoreEk);

/// A KEM's private key (FIPS 203 `dk`, with its seed d‖z when it has one). Zeroized when
/// collected; its repr shows no key material; it cannot be pickled.
#[pyclass(module = "pqkit.kem", name = "DecapsulationKey", frozen)]
pub(crate) struct DecapsulationKey(pub(crate) CoreDk);

#[pymethods]
impl Kem {
    /// The canonical name, e.g. "ML-KEM-768".
    #[getter]
    fn name(&self) -> &'static str {
        self.0.name
    }
    /// The family, e.g. "ML-KEM", "HQC", "Classic McEliece".
    #[getter]
    fn family(&self) -> &'static str {
        self.0.family.name()
    }
    /// NIST security category: 1, 3 or 5.
    #[getter]
    fn category(&self) -> u8 {
        self.0.category
    }
    /// Encapsulation key size in bytes (FIPS 203 Table 3 for ML-KEM: 800, 1184, 1568).
    #[getter]
    fn encapsulation_key_size(&self) -> usize {
        self.0.encapsulation_key_size
    }
    /// Expanded decapsulation key size in bytes (ML-KEM: 1632, 2400, 3168).
    #[getter]
    fn decapsulation_key_size(&self) -> usize {
        self.0.decapsulation_key_size
    }
    /// Seed size in bytes (ML-KEM d‖z: 64); 0 when the KEM has no seed form.
    #[getter]
    fn seed_size(&self) -> usize {
        self.0.seed_size
    }
    /// Ciphertext size in bytes (ML-KEM: 768, 1088, 1568).
    #[getter]
    fn ciphertext_size(&self) -> usize {
        self.0.ciphertext_size
    }
    /// Shared secret size in bytes (32 for ML-KEM).
    #[getter]
    fn shared_secret_size(&self) -> usize {
        self.0.shared_secret_size
    }
    /// The key's object identifier, dotted (RFC 9935 for ML-KEM).
    #[getter]
    fn oid(&self) -> &'static str {
        self.0.oid
    }
    /// The standard or submission that defines it.
    #[getter]
    fn standard(&self) -> &'static str {
        self.0.standard
    }
    /// Whether its keys serve one key exchange only (BIKE, eFrodoKEM): pqkit writes no key
    /// files for these.
    #[getter]
    fn ephemeral(&self) -> bool {
        self.0.ephemeral
    }

    /// A new key pair from the OS random number generator (FIPS 203 Algorithm 19 for ML-KEM).
    ///
    /// Raises PqkitError if the random number generator fails.
    fn generate(&self, py: Python<'_>) -> PyResult<DecapsulationKey> {
        let alg = self.0;
        py.detach(|| alg.generate())
            .map(DecapsulationKey)
            .map_err(|e| errors::core(e, Reading::Other))
    }

    /// The key pair of a seed: ML-KEM d‖z, 64 bytes (FIPS 203 Algorithm 16,
    /// ML-KEM.KeyGen_internal).
    ///
    /// Raises InvalidKey for a seed of the wrong length, Unsupported for a KEM without a seed
    /// form.
    #[pyo3(name = "from_seed")]
    fn key_from_seed(&self, py: Python<'_>, seed: Input<'_>) -> PyResult<DecapsulationKey> {
        let alg = self.0;
        py.detach(|| alg.generate_from_seed(&seed))
            .map(DecapsulationKey)
            .map_err(|e| errors::core(e, Reading::Key))
    }

    /// An encapsulation key from its encoding, encapsulation_key_size bytes (for ML-KEM the
    /// FIPS 203 §7.2 modulus check is made).
    ///
    /// Raises InvalidKey.
    fn encapsulation_key(&self, data: Input<'_>) -> PyResult<EncapsulationKey> {
        self.0
            .encapsulation_key(&data)
            .map(EncapsulationKey)
            .map_err(|e| errors::core(e, Reading::Key))
    }

    /// A decapsulation key from its expanded encoding, decapsulation_key_size bytes (for
    /// ML-KEM the FIPS 203 §7.3 hash check is made).
    ///
    /// Raises InvalidKey.
    fn decapsulation_key(&self, data: Input<'_>) -> PyResult<DecapsulationKey> {
        self.0
            .decapsulation_key_from_expanded(&data)
            .map(DecapsulationKey)
            .map_err(|e| errors::core(e, Reading::Key))
    }

    /// (shared_secret, ciphertext) for an encapsulation key given as bytes or as an
    /// EncapsulationKey of this KEM (FIPS 203 Algorithm 20).
    ///
    /// Raises InvalidKey.
    fn encapsulate<'py>(
        &self,
        py: Python<'py>,
        encapsulation_key: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        if let Ok(key) = encapsulation_key.cast::<EncapsulationKey>() {
            let key = key.get();
            self.same(key.0.algorithm())?;
            return key.encapsulate(py);
        }
        let bytes: Input<'_> = encapsulation_key.extract()?;
        self.encapsulation_key(bytes)?.encapsulate(py)
    }

    /// The shared secret of a ciphertext under a decapsulation key of this KEM (FIPS 203
    /// Algorithm 21).
    ///
    /// Raises InvalidCiphertext for a ciphertext of the wrong length, InvalidKey for a key of
    /// another KEM.
    fn decapsulate<'py>(
        &self,
        py: Python<'py>,
        decapsulation_key: &DecapsulationKey,
        ciphertext: Input<'_>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.same(decapsulation_key.0.algorithm())?;
        decapsulation_key.decapsulate(py, ciphertext)
    }

    fn __repr__(&self) -> String {
        format!("<pqkit.kem.Kem {}>", self.0.name)
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

impl Kem {
    /// Refuses a key of another KEM.
    fn same(&self, other: &'static KemAlgorithm) -> PyResult<()> {
        if std::ptr::eq(self.0, other) {
            Ok(())
        } else {
            Err(errors::raise(
                Kind::InvalidKey,
                format!("a {} key given to {}", other.name, self.0.name),
            ))
        }
    }
}

#[pymethods]
impl EncapsulationKey {
    /// The KEM.
    #[getter]
    fn algorithm(&self) -> Kem {
        Kem(self.0.algorithm())
    }

    /// (shared_secret, ciphertext), shared_secret_size and ciphertext_size bytes, with fresh
    /// randomness from the OS (FIPS 203 Algorithm 20). pyca/cryptography's order.
    ///
    /// Raises PqkitError if the random number generator fails.
    fn encapsulate<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        let (ciphertext, secret) = unlocked(py, self.0.algorithm(), || self.0.encapsulate())
            .map_err(|e| errors::core(e, Reading::Other))?;
        Ok((bytes_out(py, secret.as_bytes()), bytes_out(py, &ciphertext)))
    }

    /// The raw encoding, encapsulation_key_size bytes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        bytes_out(py, self.0.as_bytes())
    }

    /// SubjectPublicKeyInfo DER (RFC 9935 §4 for ML-KEM).
    fn to_der<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let der = pki_key::encapsulation_key_spki_der(&self.0)
            .map_err(|e| errors::pki(e, Reading::Key))?;
        Ok(bytes_out(py, &der))
    }

    /// SubjectPublicKeyInfo PEM ("PUBLIC KEY").
    fn to_pem(&self) -> PyResult<String> {
        let der = pki_key::encapsulation_key_spki_der(&self.0)
            .map_err(|e| errors::pki(e, Reading::Key))?;
        crate::encoding::pem("PUBLIC KEY", &der)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<Self>().is_ok_and(|o| {
            let o = &o.get().0;
            std::ptr::eq(o.algorithm(), self.0.algorithm()) && o.as_bytes() == self.0.as_bytes()
        })
    }

    fn __hash__(&self) -> u64 {
        crate::encoding::hash_of(self.0.as_bytes())
    }

    fn __repr__(&self) -> String {
        format!("<pqkit.kem.EncapsulationKey {}>", self.0.algorithm().name)
    }
}

#[pymethods]
impl DecapsulationKey {
    /// The KEM.
    #[getter]
    fn algorithm(&self) -> Kem {
        Kem(self.0.algorithm())
    }

    /// The encapsulation key.
    fn public_key(&self) -> EncapsulationKey {
        EncapsulationKey(self.0.encapsulation_key().clone())
    }

    /// The shared secret, shared_secret_size bytes (FIPS 203 Algorithm 21). ML-KEM rejects a
    /// damaged ciphertext implicitly: the secret is then pseudo-random (FIPS 203 §6.3), no
    /// exception.
    ///
    /// Raises InvalidCiphertext for a ciphertext of the wrong length.
    fn decapsulate<'py>(
        &self,
        py: Python<'py>,
        ciphertext: Input<'_>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let secret = unlocked(py, self.0.algorithm(), || self.0.decapsulate(&ciphertext))
            .map_err(|e| errors::core(e, Reading::Ciphertext))?;
        Ok(bytes_out(py, secret.as_bytes()))
    }

    /// The seed (ML-KEM d‖z, 64 bytes), or None for a key loaded without it. The bytes
    /// returned are a copy Python cannot wipe: keep them no longer than needed.
    fn seed<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        self.0.seed().map(|s| bytes_out(py, s))
    }

    /// The expanded decapsulation key, decapsulation_key_size bytes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        bytes_out(py, self.0.expanded())
    }

    /// PKCS#8 DER: form "seed" (default), "expanded" or "both" (RFC 9935 §6 for ML-KEM).
    ///
    /// Raises Unsupported for a KEM whose keys serve one exchange (BIKE, eFrodoKEM) or a form
    /// the key lacks (a seed for a key loaded expanded).
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
        format!("<pqkit.kem.DecapsulationKey {}>", self.0.algorithm().name)
    }
}

impl DecapsulationKey {
    fn pkcs8(&self, form: &str) -> PyResult<Zeroizing<Vec<u8>>> {
        if let Some(why) = self.0.algorithm().key_file_refusal() {
            return Err(errors::raise(Kind::Unsupported, why));
        }
        pki_key::decapsulation_key_to_pkcs8(&self.0, crate::encoding::key_format(form)?)
            .map_err(|e| errors::pki(e, Reading::Key))
    }
}

/// Runs an encapsulation or decapsulation: with the GIL for ML-KEM (microseconds, where
/// releasing and taking the GIL back would be a visible share), without it for the others
/// (HQC, BIKE, eFrodoKEM and Classic McEliece take up to milliseconds).
fn unlocked<T: Send>(py: Python<'_>, alg: &KemAlgorithm, f: impl FnOnce() -> T + Send) -> T {
    if alg.family == KemFamily::MlKem {
        f()
    } else {
        py.detach(f)
    }
}

/// Every KEM of the catalogue.
#[pyfunction]
fn kem_algorithms() -> Vec<Kem> {
    catalogue::kems().iter().map(|k| Kem(k)).collect()
}

/// The KEM of a name or alias ("ML-KEM-768", "Kyber768", "HQC-1", …).
///
/// Raises UnknownAlgorithm.
#[pyfunction]
fn kem_by_name(name: &str) -> PyResult<Kem> {
    catalogue::kem(name)
        .map(Kem)
        .map_err(|e| errors::core(e, Reading::Other))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Kem>()?;
    m.add_class::<EncapsulationKey>()?;
    m.add_class::<DecapsulationKey>()?;
    m.add_function(wrap_pyfunction!(kem_algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(kem_by_name, m)?)?;
    Ok(())
}
