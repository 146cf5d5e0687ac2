//! `pqkit._pqkit`: the extension module under the `pqkit` Python package
//! (`python/pqkit/`). A thin layer over pqkit-core, pqkit-pki, pqkit-hbs and pqkit-pkcs11: every
//! class wraps a library type, every method one library call, and every failure becomes an
//! exception of `pqkit`'s hierarchy ([`errors`]).
//!
//! GIL: released (`Python::detach`) around key generation, signing and verification — the
//! calls that take tens of microseconds or more — so other Python threads run meanwhile; not
//! around encapsulation and decapsulation (a few microseconds, where releasing and taking the
//! lock back would be a visible share of the call). Byte inputs: a `bytes` object is read in
//! place; `bytearray` and `memoryview` (mutable, and read while the GIL is released) are
//! copied once ([`Input`]).

use std::borrow::Cow;

use pyo3::prelude::*;

mod bench;
mod cms;
mod encoding;
mod errors;
mod hazmat;
mod hbs;
mod kem;
mod keys;
mod pkcs11;
mod sig;
mod x509;

/// A bytes-like argument: `bytes` borrowed without a copy, `bytearray` and `memoryview`
/// copied once; `str` and integers are refused with `TypeError`.
pub(crate) type Input<'a> = Cow<'a, [u8]>;

/// `bytes` for Python from bytes here.
pub(crate) fn bytes_out<'py>(py: Python<'py>, data: &[u8]) -> Bound<'py, pyo3::types::PyBytes> {
    pyo3::types::PyBytes::new(py, data)
}

/// The module: classes and functions; `python/pqkit/*.py` sorts them into submodules.
#[pymodule]
fn _pqkit(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    kem::register(m)?;
    sig::register(m)?;
    keys::register(m)?;
    hbs::register(m)?;
    x509::register(m)?;
    cms::register(m)?;
    pkcs11::register(m)?;
    hazmat::register(m)?;
    bench::register(m)?;
    Ok(())
}
