//! `pqkit.cms`: CMS SignedData (RFC 5652) with every signature algorithm of the catalogue and
//! stateful keys — pqkit-pki's `cms::sign` and `cms::verify`, as `pqkit cms` uses them.

use pqkit_pki::cms::{self, CmsError, Require, SignOptions, Signer, SignerKey, VerifyOptions};
use pqkit_pki::path::{Policy, Purpose, TrustAnchors};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors::{self, Kind, Reading};
use crate::hbs::StatefulKey;
use crate::sig::SigningKey;
use crate::x509::{Certificate, der_of, ders, time_of};
use crate::{Input, bytes_out};

/// One signer's verdict: who, with what, and the certificate path that validated.
#[pyclass(module = "pqkit.cms", name = "SignerResult", frozen, get_all)]
pub(crate) struct SignerResult {
    /// The signer's certificate subject (RFC 4514).
    signer: String,
    /// The signature algorithm's name.
    signature_algorithm: String,
    /// The digest algorithm's name.
    digest_algorithm: String,
    /// The validated path, leaf first, trust anchor last.
    path: Vec<Py<Certificate>>,
}

/// A SignedData whose signers verified under the policy.
#[pyclass(module = "pqkit.cms", name = "Verified", frozen, get_all)]
pub(crate) struct Verified {
    /// The attached content, or None for a detached SignedData.
    content: Option<Py<PyBytes>>,
    /// Every signer that verified.
    signers: Vec<Py<SignerResult>>,
}

fn cms_error(e: CmsError) -> PyErr {
    match e {
        CmsError::Pki(e) => errors::pki(e, Reading::Other),
        e @ CmsError::Rejected { .. } => errors::raise(Kind::Validation, e),
        e => errors::raise(Kind::Input, e),
    }
}

/// A signer's key, from Python.
enum Key<'a> {
    Memory(&'a SigningKey),
    Stateful(&'a StatefulKey),
}

/// Why signing failed, kept apart from Python until the GIL is held again.
enum Failure {
    Key(crate::hbs::Failure),
    Pki(pqkit_pki::Error),
}

/// A SignedData (DER) over content by every signer, each given as (certificate, key): a
/// pqkit.sig.SigningKey (a token key too) or a pqkit.hbs.StatefulKey (one one-time key per
/// signature, spent only after every other check passed). Signed attributes (contentType,
/// signingTime, messageDigest, CMSAlgorithmProtection) by default; detached leaves the content
/// out (RFC 5652 §5.2); certificates adds intermediate CA certificates.
///
/// Raises InvalidInput (a certificate that does not hold the key, one stateful key given
/// twice), KeyExhausted or StateError (a stateful key), PqkitError.
#[pyfunction]
#[pyo3(signature = (content, signers, *, detached = false, signed_attributes = true,
                    certificates = None, deterministic = false))]
fn sign<'py>(
    py: Python<'py>,
    content: Input<'_>,
    signers: &Bound<'py, PyAny>,
    detached: bool,
    signed_attributes: bool,
    certificates: Option<&Bound<'py, PyAny>>,
    deterministic: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    // Everything of Python's first: no key is waited for while the GIL is held.
    let options = SignOptions {
        attached: !detached,
        signed_attributes,
        deterministic,
        certificates: match certificates {
            Some(c) => ders(c)?,
            None => Vec::new(),
        },
        ..SignOptions::default()
    };
    let (mut signer_certificates, mut given) = (Vec::new(), Vec::new());
    for pair in signers.try_iter()? {
        let (certificate, key): (Bound<'py, PyAny>, Bound<'py, PyAny>) = pair?.extract()?;
        signer_certificates.push(der_of(&certificate)?);
        given.push(key);
    }
    let mut keys = Vec::with_capacity(given.len());
    for key in &given {
        keys.push(if let Ok(k) = key.cast::<SigningKey>() {
            Key::Memory(k.get())
        } else if let Ok(k) = key.cast::<StatefulKey>() {
            let k = k.get();
            if keys
                .iter()
                .any(|other| matches!(other, Key::Stateful(o) if std::ptr::eq(*o, k)))
            {
                return Err(errors::raise(
                    Kind::Input,
                    "one stateful key given for two signers: each signature would spend a \
                     one-time key of the same key",
                ));
            }
            Key::Stateful(k)
        } else {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "a signer's key: a pqkit.sig.SigningKey or a pqkit.hbs.StatefulKey",
            ));
        });
    }
    let signed = py.detach(|| {
        // Stateful keys locked in one global order (their addresses), so that two calls with
        // the same keys in another order cannot wait for each other.
        let mut order: Vec<usize> = (0..keys.len()).collect();
        order.sort_by_key(|&i| match keys[i] {
            Key::Stateful(k) => std::ptr::from_ref(k) as usize,
            Key::Memory(_) => 0,
        });
        let mut guards: Vec<Option<_>> = keys.iter().map(|_| None).collect();
        for i in order {
            if let Key::Stateful(k) = keys[i] {
                guards[i] = Some(k.lock().map_err(Failure::Key)?);
            }
        }
        let mut list = Vec::with_capacity(keys.len());
        for ((certificate, key), guard) in
            signer_certificates.iter().zip(&keys).zip(guards.iter_mut())
        {
            let key = match (key, guard) {
                (Key::Memory(k), _) => SignerKey::Key(&k.0),
                (Key::Stateful(_), Some(guard)) => SignerKey::Stateful(
                    guard
                        .as_mut()
                        .ok_or(Failure::Key(crate::hbs::Failure::Closed))?,
                ),
                (Key::Stateful(_), None) => return Err(Failure::Key(crate::hbs::Failure::Closed)),
            };
            list.push(Signer {
                certificate: certificate.clone(),
                key,
                digest: None,
            });
        }
        cms::sign(&mut list, &mut &content[..], &options).map_err(Failure::Pki)
    });
    let signed = signed.map_err(|e| match e {
        Failure::Key(k) => PyErr::from(k),
        // A signer's failure: a token's own is a TokenError.
        Failure::Pki(pqkit_pki::Error::Crypto(c)) => match keys.iter().find_map(|k| match k {
            Key::Memory(k) if k.is_token() => Some(k),
            _ => None,
        }) {
            Some(token) => token.failure(c),
            None => errors::core(c, Reading::Other),
        },
        Failure::Pki(e) => errors::pki(e, Reading::Other),
    })?;
    Ok(bytes_out(py, &signed))
}

/// Verifies a SignedData (DER): every signer (require="any": at least one) must have a valid
/// signature, valid signed attributes, a digest its algorithm's profile allows and a
/// certificate path to one of roots for purpose (default "codeSigning") at `at` (default now).
/// content: the signed content of a detached SignedData. certificates: more certificates to
/// find signers and intermediate CAs among.
///
/// Raises ValidationError with every signer's reason; InvalidInput for a malformed
/// SignedData, content missing (detached) or given twice.
#[pyfunction]
#[pyo3(signature = (signed, roots, *, content = None, purpose = "codeSigning", at = None,
                    certificates = None, require = "all"))]
#[allow(clippy::too_many_arguments)]
fn verify(
    py: Python<'_>,
    signed: Input<'_>,
    roots: &Bound<'_, PyAny>,
    content: Option<Input<'_>>,
    purpose: &str,
    at: Option<&Bound<'_, PyAny>>,
    certificates: Option<&Bound<'_, PyAny>>,
    require: &str,
) -> PyResult<Verified> {
    let input = |e: String| errors::raise(Kind::Input, e);
    let anchors = TrustAnchors::new(&ders(roots)?).map_err(|e| input(e.to_string()))?;
    let options = VerifyOptions {
        anchors: &anchors,
        policy: Policy::new(Purpose::from_name(purpose).map_err(input)?, time_of(at)?),
        certificates: match certificates {
            Some(c) => ders(c)?,
            None => Vec::new(),
        },
        signers: Vec::new(),
        require: Require::from_name(require).map_err(input)?,
        tsa_anchors: None,
    };
    let verified = py
        .detach(|| {
            let mut detached = content.as_deref();
            let reader: Option<&mut dyn std::io::Read> =
                detached.as_mut().map(|c| c as &mut dyn std::io::Read);
            cms::verify(&signed, reader, &options)
        })
        .map_err(cms_error)?;
    let mut signers = Vec::new();
    for verdict in verified.signers {
        let Ok(path) = verdict.result else { continue };
        let path = path
            .certificates
            .into_iter()
            .map(|der| Py::new(py, Certificate::from_der(der)?))
            .collect::<PyResult<Vec<_>>>()?;
        signers.push(Py::new(
            py,
            SignerResult {
                signer: verdict.signer,
                signature_algorithm: verdict.signature_algorithm,
                digest_algorithm: verdict.digest,
                path,
            },
        )?);
    }
    Ok(Verified {
        content: verified.content.map(|c| bytes_out(py, &c).unbind()),
        signers,
    })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<SignerResult>()?;
    m.add_class::<Verified>()?;
    let cms = PyModule::new(m.py(), "cms")?;
    cms.add_function(wrap_pyfunction!(sign, &cms)?)?;
    cms.add_function(wrap_pyfunction!(verify, &cms)?)?;
    m.add_submodule(&cms)?;
    Ok(())
}
