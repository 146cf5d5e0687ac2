//! `pqkit._pqkit`: the extension module under the `pqkit` Python package
//! (`python/pqkit/`). A thin layer over pqkit-core, pqkit-pki, pqkit-hbs and pqkit-pkcs11: every
//! class wraps a library type, every method one library call, and every failure becomes an
//! exception of `pqkit`'s hierarchy ([`errors`]).
//!
//! GIL: released (`Python::detach`) around key generation, signing and verification — the
//! calls that take tens of microseconds or more — and the encapsulation and decapsulation of
//! every KEM but ML-KEM, so other Python threads run meanwhile; not around ML-KEM's
//! encapsulation and decapsulation (a few microseconds, where releasing and taking the lock
//! back would be a visible share of the call). Byte inputs: a `bytes` object is read in
//! place; `bytearray`, `memoryview` and other buffers (mutable, and read while the GIL is
//! released) are copied into memory wiped after the call ([`Input`]).

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes};
use zeroize::Zeroizing;

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

/// A bytes-like argument: `bytes` read in place, without a copy; `bytearray`, `memoryview`
/// and any other object with the buffer protocol (`array.array`, `mmap`) copied, as their raw
/// bytes (what `bytes(memoryview(x))` holds), into memory wiped when the call ends — they are
/// mutable, and pqkit reads its inputs with the GIL released. `str`, integers and lists are
/// refused with `TypeError`.
pub(crate) enum Input<'a> {
    /// A `bytes` object's own buffer.
    Borrowed(&'a [u8]),
    /// A copy.
    Copied(Zeroizing<Vec<u8>>),
}

impl std::ops::Deref for Input<'_> {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Self::Borrowed(b) => b,
            Self::Copied(v) => v,
        }
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for Input<'a> {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        if let Ok(bytes) = <&'a [u8] as FromPyObject<'a, 'py>>::extract(obj) {
            return Ok(Self::Borrowed(bytes));
        }
        if let Ok(array) = obj.cast::<PyByteArray>() {
            return Ok(Self::Copied(Zeroizing::new(array.to_vec())));
        }
        // The buffer protocol, through memoryview (abi3 below Python 3.11 has no
        // PyObject_GetBuffer): a TypeError for anything without it (str, int, list).
        let builtins = obj.py().import("builtins")?;
        let view = builtins.getattr("memoryview")?.call1((obj,)).map_err(|_| {
            PyTypeError::new_err(format!(
                "expected a bytes-like object (bytes, bytearray, memoryview), got {}",
                obj.get_type()
                    .name()
                    .map_or_else(|_| "?".to_owned(), |n| n.to_string())
            ))
        })?;
        // Its raw bytes (C order), in a bytearray of ours that is wiped in place once copied.
        let scratch = builtins.getattr("bytearray")?.call1((view,))?;
        let scratch = scratch.cast::<PyByteArray>()?;
        let copy = Zeroizing::new(scratch.to_vec());
        scratch.set_item(
            pyo3::types::PySlice::full(obj.py()),
            PyBytes::new(obj.py(), &vec![0; copy.len()]),
        )?;
        Ok(Self::Copied(copy))
    }
}

/// `bytes` for Python from bytes here.
pub(crate) fn bytes_out<'py>(py: Python<'py>, data: &[u8]) -> Bound<'py, PyBytes> {
    PyBytes::new(py, data)
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
