//! `pqkit.pkcs11`: a private key in a PKCS#11 token, by RFC 7512 URI — pqkit-pkcs11's client,
//! as every pqkit command takes `pkcs11:` keys.

use std::path::PathBuf;

use pqkit_pkcs11::client::{Options, TokenKey};
use pyo3::prelude::*;

use crate::errors::{self, Kind};
use crate::sig::SigningKey;

/// The private key a pkcs11: URI names (with object= or id=), in a logged-in session: a
/// pqkit.sig.SigningKey whose signatures the token makes (the key never leaves it; to_pem
/// raises Unsupported). module: the PKCS#11 module (else the URI's module-path, else
/// $PQKIT_PKCS11_MODULE); pin_source: "file:PATH" or "env:NAME" (else $PQKIT_PKCS11_PIN; none:
/// no login).
///
/// Raises TokenError naming what did not match.
#[pyfunction]
#[pyo3(signature = (uri, *, module = None, pin_source = None))]
fn load_key(
    py: Python<'_>,
    uri: &str,
    module: Option<PathBuf>,
    pin_source: Option<String>,
) -> PyResult<SigningKey> {
    let options = Options { module, pin_source };
    py.detach(|| TokenKey::open(uri, &options).and_then(TokenKey::into_signing_key))
        .map(SigningKey::token)
        .map_err(|e| errors::raise(Kind::Token, e))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let pkcs11 = PyModule::new(m.py(), "pkcs11")?;
    pkcs11.add_function(wrap_pyfunction!(load_key, &pkcs11)?)?;
    m.add_submodule(&pkcs11)?;
    Ok(())
}
