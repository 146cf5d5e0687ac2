//! Encodings shared by the classes: PEM text in and out, the private-key forms, hashes for
//! `__hash__`.

use std::hash::{Hash, Hasher};

use pqkit_pki::key::KeyFormat;
use pqkit_pki::pem as pki_pem;
use pyo3::prelude::*;
use zeroize::Zeroizing;

use crate::Input;
use crate::errors::{self, Kind, Reading};

/// One PEM block of `der` with `label`.
pub(crate) fn pem(label: &'static str, der: &[u8]) -> PyResult<String> {
    pki_pem::encode(label, der).map_err(|e| errors::pki(e, Reading::Other))
}

/// A private key's PKCS#8 PEM ("PRIVATE KEY") as a Python `str`; the text made here is wiped
/// (the `str` is Python's to keep).
pub(crate) fn private_pem<'py>(
    py: Python<'py>,
    der: &[u8],
) -> PyResult<Bound<'py, pyo3::types::PyString>> {
    let text = Zeroizing::new(pem("PRIVATE KEY", der)?);
    Ok(pyo3::types::PyString::new(py, &text))
}

/// A `str`, or bytes-like holding text, as the text of PEM blocks.
pub(crate) fn pem_text(data: &Bound<'_, PyAny>) -> PyResult<Zeroizing<String>> {
    if let Ok(text) = data.extract::<String>() {
        return Ok(Zeroizing::new(text));
    }
    let bytes: Input<'_> = data.extract()?;
    String::from_utf8(bytes.to_vec())
        .map(Zeroizing::new)
        .map_err(|_| errors::raise(Kind::Input, "PEM text is not UTF-8"))
}

/// The form of a private key file: "seed", "expanded" or "both" (RFC 9881 §6, RFC 9935 §6).
pub(crate) fn key_format(form: &str) -> PyResult<KeyFormat> {
    match form {
        "seed" => Ok(KeyFormat::Seed),
        "expanded" => Ok(KeyFormat::Expanded),
        "both" => Ok(KeyFormat::Both),
        _ => Err(errors::raise(
            Kind::Input,
            format!("form {form:?}: expected \"seed\", \"expanded\" or \"both\""),
        )),
    }
}

/// A hash of bytes for `__hash__`.
pub(crate) fn hash_of(bytes: impl AsRef<[u8]>) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.as_ref().hash(&mut h);
    h.finish()
}
