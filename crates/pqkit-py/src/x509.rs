//! `pqkit.x509`: certificates, RFC 5280 path validation, CSRs (PKCS#10, RFC 2986) and
//! issuing — pqkit-pki's, as `pqkit x509`, `pqkit csr` and `pqkit pki` use them.

use std::net::IpAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use der::{Decode, Encode};
use pqkit_pki::cert::{self, CertRequest, Issuer, Profile};
use pqkit_pki::csr::{self, VerifiedCsr};
use pqkit_pki::key as pki_key;
use pqkit_pki::path::{PeerName, Policy, Purpose, TrustAnchors};
use pqkit_pki::pem as pki_pem;
use pqkit_pki::stateful_ca;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use rustls_pki_types::CertificateDer;
use x509_cert::Certificate as X509;

use crate::errors::{self, Kind, Reading};
use crate::hbs::{StatefulKey, StatefulPublicKey};
use crate::sig::{SigningKey, VerifyingKey};
use crate::{Input, bytes_out};

/// Longest certificate or CSR read, in bytes (a post-quantum certificate with an SLH-DSA-256s
/// signature is under 40 KiB).
const MAX_OBJECT: usize = 1 << 20;

/// One X.509 certificate (RFC 5280), its DER kept as read.
#[pyclass(module = "pqkit.x509", name = "Certificate", frozen)]
pub(crate) struct Certificate {
    pub(crate) der: Vec<u8>,
    cert: X509,
}

/// A certificate signing request whose self-signature verified (RFC 2986).
#[pyclass(module = "pqkit.x509", name = "CertificateRequest", frozen)]
pub(crate) struct CertificateRequest {
    der: Vec<u8>,
    csr: VerifiedCsr,
}

fn input(e: impl std::fmt::Display) -> PyErr {
    errors::raise(Kind::Input, e)
}

impl Certificate {
    /// Decodes one certificate.
    pub(crate) fn from_der(der: Vec<u8>) -> PyResult<Self> {
        if der.len() > MAX_OBJECT {
            return Err(input(format!(
                "certificate of {} bytes: over the {MAX_OBJECT}-byte bound",
                der.len()
            )));
        }
        let cert = X509::from_der(&der).map_err(|e| input(format!("certificate: {e}")))?;
        Ok(Self { der, cert })
    }
}

/// Seconds since 1970 as an aware UTC datetime.
fn datetime(py: Python<'_>, t: SystemTime) -> PyResult<Py<PyAny>> {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let datetime = py.import("datetime")?;
    let utc = datetime.getattr("timezone")?.getattr("utc")?;
    Ok(datetime
        .getattr("datetime")?
        .call_method1("fromtimestamp", (secs, utc))?
        .unbind())
}

/// A time argument: None (now), an aware datetime, or seconds since 1970 (int or float).
pub(crate) fn time_of(at: Option<&Bound<'_, PyAny>>) -> PyResult<SystemTime> {
    let Some(at) = at else {
        return Ok(SystemTime::now());
    };
    if at.is_instance_of::<pyo3::types::PyBool>() {
        return Err(input("at: a datetime or seconds since 1970, not a bool"));
    }
    let secs: f64 = if at.hasattr("timestamp")? {
        if at.getattr("tzinfo")?.is_none() {
            return Err(input(
                "at: a naive datetime is ambiguous; give one with tzinfo (e.g. timezone.utc)",
            ));
        }
        at.call_method0("timestamp")?.extract()?
    } else {
        at.extract()
            .map_err(|_| input("at: a datetime or seconds since 1970"))?
    };
    Duration::try_from_secs_f64(secs)
        .ok()
        .and_then(|d| UNIX_EPOCH.checked_add(d))
        // X.509 times end in the year 9999 (RFC 5280 §4.1.2.5).
        .filter(|t| *t <= UNIX_EPOCH + Duration::from_secs(253_402_300_799))
        .ok_or_else(|| input(format!("at: {secs} is not a time from 1970 to 9999")))
}

/// Certificates from a sequence of Certificate objects or DER bytes.
pub(crate) fn ders(items: &Bound<'_, PyAny>) -> PyResult<Vec<Vec<u8>>> {
    items.try_iter()?.map(|item| der_of(&item?)).collect()
}

/// One certificate's DER, from a Certificate object or DER bytes (decoded to check them).
pub(crate) fn der_of(item: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(c) = item.cast::<Certificate>() {
        return Ok(c.get().der.clone());
    }
    let der: Input<'_> = item.extract()?;
    Ok(Certificate::from_der(der.to_vec())?.der)
}

fn profile(name: &str) -> PyResult<Profile> {
    Ok(match name {
        "root-ca" => Profile::RootCa,
        "intermediate-ca" => Profile::IntermediateCa,
        "server" => Profile::Server,
        "client" => Profile::Client,
        "code-signing" => Profile::CodeSigning,
        "time-stamping" => Profile::TimeStamping,
        _ => {
            return Err(input(format!(
                "profile {name:?}: expected root-ca, intermediate-ca, server, client, \
                 code-signing or time-stamping"
            )));
        }
    })
}

fn ip_addresses(items: Vec<String>) -> PyResult<Vec<IpAddr>> {
    items
        .iter()
        .map(|s| {
            s.parse()
                .map_err(|_| input(format!("{s:?} is not an IP address")))
        })
        .collect()
}

fn validity(days: i64) -> PyResult<Duration> {
    // Up to the year 9999 from now or so: RFC 5280 §4.1.2.5's GeneralizedTime.
    match u64::try_from(days) {
        Ok(d @ 1..=2_900_000) => Ok(Duration::from_secs(d * 86_400)),
        _ => Err(input(format!("days: {days}; expected 1 to 2900000"))),
    }
}

#[pymethods]
impl Certificate {
    /// The subject (RFC 4514), e.g. "CN=pqkit server,O=pqkit".
    #[getter]
    fn subject(&self) -> String {
        self.cert.tbs_certificate.subject.to_string()
    }
    /// The issuer (RFC 4514).
    #[getter]
    fn issuer(&self) -> String {
        self.cert.tbs_certificate.issuer.to_string()
    }
    /// The serial number, hexadecimal.
    #[getter]
    fn serial(&self) -> String {
        hex::encode(self.cert.tbs_certificate.serial_number.as_bytes())
    }
    /// notBefore, an aware UTC datetime.
    #[getter]
    fn not_before(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        datetime(
            py,
            self.cert
                .tbs_certificate
                .validity
                .not_before
                .to_system_time(),
        )
    }
    /// notAfter, an aware UTC datetime.
    #[getter]
    fn not_after(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        datetime(
            py,
            self.cert
                .tbs_certificate
                .validity
                .not_after
                .to_system_time(),
        )
    }
    /// The signature algorithm's object identifier, dotted.
    #[getter]
    fn signature_algorithm_oid(&self) -> String {
        self.cert.signature_algorithm.oid.to_string()
    }

    /// The subject's public key.
    ///
    /// Raises UnknownAlgorithm for a key outside the catalogue (a stateful HBS key: use
    /// pqkit.hbs.load_public_key on the SPKI), InvalidKey.
    fn public_key(&self) -> PyResult<VerifyingKey> {
        let spki = self
            .cert
            .tbs_certificate
            .subject_public_key_info
            .to_der()
            .map_err(input)?;
        pki_key::verifying_key_from_spki(&spki)
            .map(VerifyingKey)
            .map_err(|e| errors::pki(e, Reading::Key))
    }

    /// The DER encoding.
    fn to_der<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        bytes_out(py, &self.der)
    }

    /// PEM ("CERTIFICATE").
    fn to_pem(&self) -> PyResult<String> {
        crate::encoding::pem("CERTIFICATE", &self.der)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<Self>().is_ok_and(|o| o.get().der == self.der)
    }

    fn __hash__(&self) -> u64 {
        crate::encoding::hash_of(&self.der)
    }

    fn __repr__(&self) -> String {
        format!("<pqkit.x509.Certificate {}>", self.subject())
    }
}

#[pymethods]
impl CertificateRequest {
    /// The requested subject (RFC 4514).
    #[getter]
    fn subject(&self) -> String {
        self.csr.subject.to_string()
    }
    /// DNS names of the requested subjectAltName.
    #[getter]
    fn dns_names(&self) -> Vec<String> {
        self.csr.dns_names.clone()
    }
    /// IP addresses of the requested subjectAltName.
    #[getter]
    fn ip_addresses(&self) -> Vec<String> {
        self.csr
            .ip_addresses
            .iter()
            .map(ToString::to_string)
            .collect()
    }
    /// The requester's key (the CSR's signature verified under it).
    fn public_key(&self) -> VerifyingKey {
        VerifyingKey(self.csr.public_key.clone())
    }
    /// The DER encoding.
    fn to_der<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        bytes_out(py, &self.der)
    }
    /// PEM ("CERTIFICATE REQUEST").
    fn to_pem(&self) -> PyResult<String> {
        crate::encoding::pem("CERTIFICATE REQUEST", &self.der)
    }
    fn __repr__(&self) -> String {
        format!("<pqkit.x509.CertificateRequest {}>", self.subject())
    }
}

/// Every CERTIFICATE block of PEM text (str or bytes), in order.
///
/// Raises InvalidInput (no block, bad base64 or DER).
#[pyfunction]
fn load_pem_chain(data: &Bound<'_, PyAny>) -> PyResult<Vec<Certificate>> {
    let text = crate::encoding::pem_text(data)?;
    let blocks = pki_pem::decode_all(&text, "CERTIFICATE").map_err(input)?;
    if blocks.is_empty() {
        return Err(input("no PEM block labelled CERTIFICATE"));
    }
    blocks.into_iter().map(Certificate::from_der).collect()
}

/// One certificate from DER.
///
/// Raises InvalidInput.
#[pyfunction]
fn load_der_certificate(data: Input<'_>) -> PyResult<Certificate> {
    Certificate::from_der(data.to_vec())
}

/// A CSR from PEM ("CERTIFICATE REQUEST") or DER, its signature verified.
///
/// Raises InvalidSignature (the signature does not verify), InvalidInput (it does not decode),
/// UnknownAlgorithm.
#[pyfunction]
fn load_csr(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<CertificateRequest> {
    let bytes = match data.extract::<String>() {
        Ok(text) => text.into_bytes(),
        Err(_) => data.extract::<Input<'_>>()?.to_vec(),
    };
    let mut blocks = pki_pem::decode_pem_or_der(&bytes, "CERTIFICATE REQUEST").map_err(input)?;
    if blocks.len() != 1 {
        return Err(input(format!("{} CSRs; expected one", blocks.len())));
    }
    let der = blocks.remove(0);
    if der.len() > MAX_OBJECT {
        return Err(input("CSR over the 1 MiB bound"));
    }
    let csr = py
        .detach(|| csr::verify(&der))
        .map_err(|e| errors::pki(e, Reading::Other))?;
    Ok(CertificateRequest { der, csr })
}

/// Validates chain (the leaf first, then intermediate CA certificates in any order) to one of
/// roots under RFC 5280 §6: signatures, validity at `at` (default now), basicConstraints,
/// keyUsage, extendedKeyUsage for purpose ("serverAuth", "clientAuth", "codeSigning",
/// "timeStamping", "any"), name constraints, and the leaf's name (a DNS name, IP address or
/// e-mail address, RFC 9525). Returns the path: leaf first, trust anchor last.
///
/// Raises ValidationError naming the certificate and the rule it broke; InvalidInput for
/// arguments that do not parse.
#[pyfunction]
#[pyo3(signature = (chain, roots, *, name = None, purpose = "any", at = None))]
fn verify(
    py: Python<'_>,
    chain: &Bound<'_, PyAny>,
    roots: &Bound<'_, PyAny>,
    name: Option<&str>,
    purpose: &str,
    at: Option<&Bound<'_, PyAny>>,
) -> PyResult<Vec<Certificate>> {
    let chain = ders(chain)?;
    if chain.is_empty() {
        return Err(input("chain: no certificate"));
    }
    let anchors = TrustAnchors::new(&ders(roots)?).map_err(input)?;
    let mut policy = Policy::new(Purpose::from_name(purpose).map_err(input)?, time_of(at)?);
    if let Some(name) = name {
        policy.names.push(PeerName::parse(name).map_err(input)?);
    }
    let chain: Vec<_> = chain.into_iter().map(CertificateDer::from).collect();
    let path = py
        .detach(|| anchors.validate(&chain, &policy))
        .map_err(|e| errors::raise(Kind::Validation, e))?;
    path.certificates
        .into_iter()
        .map(Certificate::from_der)
        .collect()
}

/// A CSR for key with subject (RFC 4514, e.g. "CN=device 7,O=pqkit") and a subjectAltName of
/// the names given (RFC 2986; the key's algorithm signs, with an empty context).
///
/// Raises InvalidInput (subject or names), TypeError (a key that is not a signing key).
#[pyfunction]
#[pyo3(signature = (key, subject, *, dns_names = Vec::new(), ip_addresses = Vec::new()))]
fn create_csr(
    py: Python<'_>,
    key: &SigningKey,
    subject: &str,
    dns_names: Vec<String>,
    ip_addresses: Vec<String>,
) -> PyResult<CertificateRequest> {
    let ips = self::ip_addresses(ip_addresses)?;
    let der = py
        .detach(|| csr::create(&key.0, subject, &dns_names, &ips))
        .map_err(|e| match e {
            pqkit_pki::Error::Crypto(c) => key.failure(c),
            e => errors::pki(e, Reading::Other),
        })?;
    let csr = csr::verify(&der).map_err(|e| errors::pki(e, Reading::Other))?;
    Ok(CertificateRequest { der, csr })
}

/// The key that signs a certificate: in memory or a token (a SigningKey), or stateful.
enum CaKey<'a> {
    Key(&'a SigningKey),
    Stateful(&'a StatefulKey),
}

impl<'a> CaKey<'a> {
    fn of(key: &'a Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(k) = key.cast::<SigningKey>() {
            Ok(Self::Key(k.get()))
        } else if let Ok(k) = key.cast::<StatefulKey>() {
            Ok(Self::Stateful(k.get()))
        } else {
            Err(pyo3::exceptions::PyTypeError::new_err(
                "the signing key: a pqkit.sig.SigningKey or a pqkit.hbs.StatefulKey",
            ))
        }
    }
}

/// Signs a certificate with a key of either kind, without the GIL.
fn sign_certificate(
    py: Python<'_>,
    key: &CaKey<'_>,
    memory: impl FnOnce(&SigningKey) -> Result<Vec<u8>, pqkit_pki::Error> + Send,
    stateful: impl FnOnce(&mut pqkit_hbs::state::StatefulKey) -> Result<Vec<u8>, pqkit_pki::Error>
    + Send,
) -> PyResult<Vec<u8>> {
    match key {
        CaKey::Key(k) => py.detach(|| memory(k)).map_err(|e| match e {
            pqkit_pki::Error::Crypto(c) => k.failure(c),
            e => errors::pki(e, Reading::Other),
        }),
        CaKey::Stateful(k) => py
            .detach(|| k.run(|key| Ok(stateful(key))))?
            .map_err(|e| errors::pki(e, Reading::Other)),
    }
}

/// A self-signed certificate for key — a pqkit.sig.SigningKey, or a pqkit.hbs.StatefulKey
/// (RFC 9802; one one-time key spent) — a root CA by default (profile "root-ca"), valid for
/// `days` from now.
///
/// Raises InvalidInput, KeyExhausted, StateError.
#[pyfunction]
#[pyo3(signature = (key, subject, *, profile = "root-ca", days = 365,
                    dns_names = Vec::new(), ip_addresses = Vec::new()))]
fn self_signed(
    py: Python<'_>,
    key: &Bound<'_, PyAny>,
    subject: &str,
    profile: &str,
    days: i64,
    dns_names: Vec<String>,
    ip_addresses: Vec<String>,
) -> PyResult<Certificate> {
    let key = CaKey::of(key)?;
    let request = CertRequest {
        subject: subject.to_owned(),
        dns_names,
        ip_addresses: self::ip_addresses(ip_addresses)?,
        validity: validity(days)?,
        profile: self::profile(profile)?,
    };
    let der = sign_certificate(
        py,
        &key,
        |k| cert::issue_self_signed(&request, &k.0),
        |k| stateful_ca::issue_self_signed(&request, k),
    )?;
    Certificate::from_der(der)
}

/// A certificate for subject — a CertificateRequest (its subject and names), a
/// pqkit.sig.VerifyingKey or a pqkit.hbs.StatefulPublicKey (subject_name and the names
/// given) — with the extensions of profile, valid for `days` from now, signed by issuer_key:
/// the key of the CA certificate issuer (a SigningKey, or a StatefulKey: one one-time key
/// spent), which must be a CA that may issue it now.
///
/// Raises InvalidInput (names, an issuer key that is not the issuer certificate's),
/// ValidationError (an issuer that may not issue it now: not a CA, expired, a CA without
/// keyCertSign), KeyExhausted and StateError (a stateful issuer key).
#[pyfunction]
#[pyo3(signature = (subject, issuer, issuer_key, *, profile = "server", days = 365,
                    subject_name = None, dns_names = Vec::new(), ip_addresses = Vec::new()))]
#[allow(clippy::too_many_arguments)]
fn issue(
    py: Python<'_>,
    subject: &Bound<'_, PyAny>,
    issuer: &Certificate,
    issuer_key: &Bound<'_, PyAny>,
    profile: &str,
    days: i64,
    subject_name: Option<&str>,
    dns_names: Vec<String>,
    ip_addresses: Vec<String>,
) -> PyResult<Certificate> {
    let key = CaKey::of(issuer_key)?;
    let (profile, validity) = (self::profile(profile)?, validity(days)?);
    let named = |spki: Vec<u8>| -> PyResult<(CertRequest, Vec<u8>, Option<&VerifiedCsr>)> {
        let request = CertRequest {
            subject: subject_name
                .ok_or_else(|| input("subject_name: required when subject is a public key"))?
                .to_owned(),
            dns_names: dns_names.clone(),
            ip_addresses: self::ip_addresses(ip_addresses.clone())?,
            validity,
            profile,
        };
        Ok((request, spki, None))
    };
    let request_of_csr;
    let (request, spki, csr) = if let Ok(r) = subject.cast::<CertificateRequest>() {
        request_of_csr = r.get();
        let csr = &request_of_csr.csr;
        let request = CertRequest {
            subject: csr.subject.to_string(),
            dns_names: csr.dns_names.clone(),
            ip_addresses: csr.ip_addresses.clone(),
            validity,
            profile,
        };
        let spki = pki_key::spki_der(&csr.public_key).map_err(|e| errors::pki(e, Reading::Key))?;
        (request, spki, Some(csr))
    } else if let Ok(k) = subject.cast::<VerifyingKey>() {
        named(pki_key::spki_der(&k.get().0).map_err(|e| errors::pki(e, Reading::Key))?)?
    } else if let Ok(k) = subject.cast::<StatefulPublicKey>() {
        named(
            k.get()
                .0
                .to_spki_der()
                .map_err(|e| errors::raise(Kind::InvalidKey, e))?,
        )?
    } else {
        return Err(pyo3::exceptions::PyTypeError::new_err(
            "subject: a pqkit.x509.CertificateRequest, a pqkit.sig.VerifyingKey or a \
             pqkit.hbs.StatefulPublicKey",
        ));
    };
    let ca = &issuer.der;
    let der = sign_certificate(
        py,
        &key,
        |k| {
            let by = Issuer {
                certificate: ca,
                key: &k.0,
            };
            match csr {
                Some(csr) => csr::issue(csr, profile, validity, by),
                None => cert::issue_for_spki(&request, &spki, by),
            }
        },
        |k| match csr {
            Some(csr) => stateful_ca::issue_named(&request, csr.subject.clone(), &spki, ca, k),
            None => stateful_ca::issue(&request, &spki, ca, k),
        },
    )?;
    Certificate::from_der(der)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Certificate>()?;
    m.add_class::<CertificateRequest>()?;
    m.add_function(wrap_pyfunction!(load_pem_chain, m)?)?;
    m.add_function(wrap_pyfunction!(load_der_certificate, m)?)?;
    m.add_function(wrap_pyfunction!(load_csr, m)?)?;
    m.add_function(wrap_pyfunction!(verify, m)?)?;
    m.add_function(wrap_pyfunction!(create_csr, m)?)?;
    m.add_function(wrap_pyfunction!(self_signed, m)?)?;
    m.add_function(wrap_pyfunction!(issue, m)?)?;
    Ok(())
}
