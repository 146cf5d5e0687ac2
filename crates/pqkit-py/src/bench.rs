//! The Rust side of the Python-overhead micro-benchmark (tests/test_bench.py): the same
//! library call the Python method makes, timed in a Rust loop, so the test compares the two in
//! one run.

use std::time::Instant;

use pqkit_core::catalogue;
use pyo3::prelude::*;

use crate::errors::{self, Kind, Reading};

/// Seconds per call of `op` in a Rust loop of `iterations`: "ML-DSA-65 sign" (a 32-byte
/// message, empty context, hedged — `SigningKey.sign`) or "ML-KEM-768 encapsulate"
/// (`EncapsulationKey.encapsulate`). The GIL is released meanwhile.
#[pyfunction]
fn _rust_time(py: Python<'_>, op: &str, iterations: u32) -> PyResult<f64> {
    let err = |e| errors::core(e, Reading::Other);
    let iterations = iterations.max(1);
    match op {
        "ML-DSA-65 sign" => {
            let key = catalogue::signature("ML-DSA-65")
                .and_then(|a| a.generate())
                .map_err(err)?;
            let message = [7u8; 32];
            py.detach(|| {
                let start = Instant::now();
                for _ in 0..iterations {
                    std::hint::black_box(key.sign(std::hint::black_box(&message), &[])?);
                }
                Ok(start.elapsed().as_secs_f64() / f64::from(iterations))
            })
            .map_err(err)
        }
        "ML-KEM-768 encapsulate" => {
            let key = catalogue::kem("ML-KEM-768")
                .and_then(|a| a.generate())
                .map_err(err)?;
            let ek = key.encapsulation_key();
            py.detach(|| {
                let start = Instant::now();
                for _ in 0..iterations {
                    std::hint::black_box(std::hint::black_box(ek).encapsulate()?);
                }
                Ok(start.elapsed().as_secs_f64() / f64::from(iterations))
            })
            .map_err(err)
        }
        _ => Err(errors::raise(
            Kind::Input,
            format!("{op:?}: expected \"ML-DSA-65 sign\" or \"ML-KEM-768 encapsulate\""),
        )),
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_rust_time, m)?)?;
    Ok(())
}
