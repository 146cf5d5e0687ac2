//! `pqkit.hazmat`: caller-chosen randomness and FIPS 205's internal functions, for
//! known-answer tests (ACVP) only. Kept out of the everyday classes: a repeated
//! encapsulation randomness m gives two parties the same shared secret and lets an observer
//! link them.

use pqkit_core::sig::{Family, SigningRandomness};
use pqkit_core::slh_dsa::hazmat as slh;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors::{self, Kind, Reading};
use crate::kem::EncapsulationKey;
use crate::sig::{SignatureAlgorithm, SigningKey, mu_of, prehash};
use crate::{Input, bytes_out};

/// Refuses a key whose signatures the given randomness would not determine: only ML-DSA's
/// rnd and SLH-DSA's addrnd are the whole of a signature's randomness (Falcon's sampler,
/// ECDSA's nonce, a composite's classical half and a token draw their own).
fn known_answer(key: &SigningKey) -> PyResult<()> {
    let family = key.0.algorithm().family;
    if matches!(family, Family::MlDsa | Family::SlhDsa) && key.0.takes_randomness() {
        Ok(())
    } else {
        Err(errors::raise(
            Kind::Unsupported,
            format!(
                "{}: caller-chosen randomness is for ML-DSA and SLH-DSA keys in memory",
                key.0.algorithm().name
            ),
        ))
    }
}

/// Signs with the randomness given: ML-DSA rnd (32 bytes, FIPS 204 Algorithm 2) or SLH-DSA
/// addrnd (n bytes, FIPS 205 Algorithm 22).
#[pyfunction]
#[pyo3(signature = (key, data, context = Input::Borrowed(b""), *, randomness))]
fn sign<'py>(
    py: Python<'py>,
    key: &SigningKey,
    data: Input<'_>,
    context: Input<'_>,
    randomness: Input<'_>,
) -> PyResult<Bound<'py, PyBytes>> {
    known_answer(key)?;
    let signature = py
        .detach(|| {
            key.0
                .sign_with(&data, &context, SigningRandomness::Fixed(&randomness))
        })
        .map_err(|e| key.failure(e))?;
    Ok(bytes_out(py, &signature))
}

/// HashML-DSA / HashSLH-DSA with the randomness given.
#[pyfunction]
#[pyo3(signature = (key, digest, hash, context = Input::Borrowed(b""), *, randomness))]
fn sign_prehashed<'py>(
    py: Python<'py>,
    key: &SigningKey,
    digest: Input<'_>,
    hash: &str,
    context: Input<'_>,
    randomness: Input<'_>,
) -> PyResult<Bound<'py, PyBytes>> {
    known_answer(key)?;
    let hash = prehash(hash)?;
    let signature = py
        .detach(|| {
            key.0.sign_prehashed(
                hash,
                &digest,
                &context,
                SigningRandomness::Fixed(&randomness),
            )
        })
        .map_err(|e| key.failure(e))?;
    Ok(bytes_out(py, &signature))
}

/// ML-DSA over an external μ (64 bytes) with rnd given (32 bytes).
#[pyfunction]
#[pyo3(signature = (key, mu, *, randomness))]
fn sign_mu<'py>(
    py: Python<'py>,
    key: &SigningKey,
    mu: Input<'_>,
    randomness: Input<'_>,
) -> PyResult<Bound<'py, PyBytes>> {
    known_answer(key)?;
    let mu = mu_of(&mu)?;
    let signature = py
        .detach(|| key.0.sign_mu(mu, SigningRandomness::Fixed(&randomness)))
        .map_err(|e| key.failure(e))?;
    Ok(bytes_out(py, &signature))
}

/// ML-KEM.Encaps_internal with m given (32 bytes; FIPS 203 Algorithm 17):
/// (shared_secret, ciphertext).
#[pyfunction]
fn encapsulate<'py>(
    py: Python<'py>,
    key: &EncapsulationKey,
    randomness: Input<'_>,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    let (ciphertext, secret) = key
        .0
        .encapsulate_deterministic(&randomness)
        .map_err(|e| errors::core(e, Reading::Other))?;
    Ok((bytes_out(py, secret.as_bytes()), bytes_out(py, &ciphertext)))
}

/// FIPS 205 Algorithm 19 (slh_sign_internal) over a caller-formatted M′ with the expanded
/// private key (4n bytes); addrnd None is the deterministic variant.
#[pyfunction]
#[pyo3(signature = (algorithm, private_key, m_prime, addrnd = None))]
fn slh_dsa_sign_internal<'py>(
    py: Python<'py>,
    algorithm: &SignatureAlgorithm,
    private_key: Input<'_>,
    m_prime: Input<'_>,
    addrnd: Option<Input<'_>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let alg = algorithm.0;
    let signature = py
        .detach(|| slh::sign_internal(alg, &private_key, &m_prime, addrnd.as_deref()))
        .map_err(|e| errors::core(e, Reading::Other))?;
    Ok(bytes_out(py, &signature))
}

/// FIPS 205 Algorithm 20 (slh_verify_internal) over a caller-formatted M′.
///
/// Raises InvalidSignature.
#[pyfunction]
fn slh_dsa_verify_internal(
    py: Python<'_>,
    algorithm: &SignatureAlgorithm,
    public_key: Input<'_>,
    m_prime: Input<'_>,
    signature: Input<'_>,
) -> PyResult<()> {
    let alg = algorithm.0;
    if public_key.len() != alg.verifying_key_size {
        return Err(errors::raise(
            Kind::InvalidKey,
            format!(
                "{} public key: expected {} bytes, got {}",
                alg.name,
                alg.verifying_key_size,
                public_key.len()
            ),
        ));
    }
    py.detach(|| slh::verify_internal(alg, &public_key, &m_prime, &signature))
        .map_err(|e| errors::core(e, Reading::Signature))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let hazmat = PyModule::new(m.py(), "hazmat")?;
    hazmat.add_function(wrap_pyfunction!(sign, &hazmat)?)?;
    hazmat.add_function(wrap_pyfunction!(sign_prehashed, &hazmat)?)?;
    hazmat.add_function(wrap_pyfunction!(sign_mu, &hazmat)?)?;
    hazmat.add_function(wrap_pyfunction!(encapsulate, &hazmat)?)?;
    hazmat.add_function(wrap_pyfunction!(slh_dsa_sign_internal, &hazmat)?)?;
    hazmat.add_function(wrap_pyfunction!(slh_dsa_verify_internal, &hazmat)?)?;
    m.add_submodule(&hazmat)?;
    Ok(())
}
