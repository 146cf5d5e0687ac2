//! Key files: PKCS#8 private keys and SubjectPublicKeyInfo public keys, PEM or DER, of every
//! algorithm of the catalogue (`pqkit.load_*`). The encodings are pqkit-pki's, byte for byte
//! what `pqkit keygen` and `pqkit pubkey` write.

use pqkit_pki::key::{self as pki_key, Algorithm, PublicKey};
use pqkit_pki::pem as pki_pem;
use pyo3::prelude::*;
use zeroize::Zeroizing;

use crate::Input;
use crate::errors::{self, Kind, Reading};
use crate::kem::{DecapsulationKey, EncapsulationKey};
use crate::sig::{SigningKey, VerifyingKey};

/// The single block labelled `label` in `data` (PEM text).
fn single_block(data: &Bound<'_, PyAny>, label: &str, what: Kind) -> PyResult<Zeroizing<Vec<u8>>> {
    let text = crate::encoding::pem_text(data)?;
    let mut blocks = pki_pem::decode_all(&text, label).map_err(|e| errors::raise(what, e))?;
    match blocks.len() {
        1 => Ok(Zeroizing::new(blocks.remove(0))),
        0 => Err(errors::raise(
            what,
            format!("no PEM block labelled {label}"),
        )),
        n => {
            blocks.iter_mut().for_each(zeroize::Zeroize::zeroize);
            Err(errors::raise(
                what,
                format!("{n} PEM blocks labelled {label}; expected one"),
            ))
        }
    }
}

/// A private key from PKCS#8 DER.
fn private_from_der(py: Python<'_>, der: &[u8]) -> PyResult<Py<PyAny>> {
    let bad = |e| errors::pki(e, Reading::Key);
    match pki_key::pkcs8_algorithm(der).map_err(bad)? {
        Algorithm::Signature(_) => {
            let key = py
                .detach(|| pki_key::signing_key_from_pkcs8(der))
                .map_err(bad)?;
            Ok(Py::new(py, SigningKey::memory(key))?.into_any())
        }
        Algorithm::Kem(_) => {
            let key = py
                .detach(|| pki_key::decapsulation_key_from_pkcs8(der))
                .map_err(bad)?;
            Ok(Py::new(py, DecapsulationKey(key))?.into_any())
        }
    }
}

/// A public key from SubjectPublicKeyInfo DER.
fn public_from_der(py: Python<'_>, der: &[u8]) -> PyResult<Py<PyAny>> {
    match pki_key::public_key_from_spki(der).map_err(|e| errors::pki(e, Reading::Key))? {
        PublicKey::Verifying(k) => Ok(Py::new(py, VerifyingKey(k))?.into_any()),
        PublicKey::Encapsulation(k) => Ok(Py::new(py, EncapsulationKey(k))?.into_any()),
    }
}

/// A private key from PKCS#8 PEM ("PRIVATE KEY"): a pqkit.sig.SigningKey or a
/// pqkit.kem.DecapsulationKey. ML-DSA and ML-KEM keys in any of the three forms (seed,
/// expanded, both; RFC 9881 §6, RFC 9935 §6; "both" checked for agreement).
///
/// Raises InvalidKey (no block, bad DER, a failed check), UnknownAlgorithm.
#[pyfunction]
fn load_pem_private_key(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let der = single_block(data, "PRIVATE KEY", Kind::InvalidKey)?;
    private_from_der(py, &der)
}

/// As load_pem_private_key, from PKCS#8 DER.
#[pyfunction]
fn load_der_private_key(py: Python<'_>, data: Input<'_>) -> PyResult<Py<PyAny>> {
    private_from_der(py, &data)
}

/// A public key from SubjectPublicKeyInfo PEM ("PUBLIC KEY"): a pqkit.sig.VerifyingKey or a
/// pqkit.kem.EncapsulationKey (for ML-KEM, FIPS 203 §7.2 checked).
///
/// Raises InvalidKey, UnknownAlgorithm.
#[pyfunction]
fn load_pem_public_key(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let der = single_block(data, "PUBLIC KEY", Kind::InvalidKey)?;
    public_from_der(py, &der)
}

/// As load_pem_public_key, from SubjectPublicKeyInfo DER.
#[pyfunction]
fn load_der_public_key(py: Python<'_>, data: Input<'_>) -> PyResult<Py<PyAny>> {
    public_from_der(py, &data)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(load_pem_private_key, m)?)?;
    m.add_function(wrap_pyfunction!(load_der_private_key, m)?)?;
    m.add_function(wrap_pyfunction!(load_pem_public_key, m)?)?;
    m.add_function(wrap_pyfunction!(load_der_public_key, m)?)?;
    Ok(())
}
