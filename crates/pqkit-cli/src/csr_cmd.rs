//! `pqkit csr create|show|sign`: PKCS#10 certificate signing requests (RFC 2986).

use std::net::IpAddr;
use std::path::Path;
use std::time::Duration;

use pqkit_pki::cert::{Issuer, Profile};
use pqkit_pki::output::{Outputs, Overwrite, Sensitivity};
use pqkit_pki::{csr, pem};

use crate::failure::Result;
use crate::failure::{Context, Failure};

pub(crate) fn parse_profile(s: &str) -> std::result::Result<Profile, String> {
    match s.to_ascii_lowercase().as_str() {
        "server" => Ok(Profile::Server),
        "client" => Ok(Profile::Client),
        "intermediate" => Ok(Profile::IntermediateCa),
        "code-signing" | "codesigning" | "firmware" => Ok(Profile::CodeSigning),
        "time-stamping" | "timestamping" | "tsa" => Ok(Profile::TimeStamping),
        _ => Err(format!(
            "{s:?}: expected server, client, intermediate, code-signing or time-stamping"
        )),
    }
}

pub(crate) fn read_csr(path: &Path) -> Result<csr::VerifiedCsr> {
    let der = crate::files::read_pem(path, pem::CERTIFICATE_REQUEST)?;
    csr::verify(&der).about(path.display())
}

/// `pqkit csr create`.
pub(crate) fn create(
    key_path: &Path,
    subject: &str,
    dns: &[String],
    ips: &[IpAddr],
    out: &Path,
    overwrite: Overwrite,
) -> Result<()> {
    let claim = Outputs::new(overwrite, &[key_path]).claim(out, Sensitivity::Public)?;
    let key = crate::files::load_signing_key(key_path)?;
    let der = csr::create(&key, subject, dns, ips)
        .map_err(|e| Failure::usage(format!("--subject {subject:?}: {e}")))?;
    claim.commit(pem::encode(pem::CERTIFICATE_REQUEST, &der)?.as_bytes())?;
    println!(
        "{} CSR for {subject} ({} bytes) written to {}",
        key.algorithm().name,
        der.len(),
        out.display()
    );
    Ok(())
}

#[derive(serde::Serialize)]
struct CsrInfo {
    subject: String,
    public_key_algorithm: &'static str,
    public_key_bytes: usize,
    signature_bytes: usize,
    subject_alt_names: Vec<String>,
    signature_valid: bool,
}

/// `pqkit csr show`: decodes the CSR and verifies its signature (an invalid one is an error).
pub(crate) fn show(path: &Path, json: bool) -> Result<()> {
    let csr = read_csr(path)?;
    let info = CsrInfo {
        subject: csr.subject.to_string(),
        public_key_algorithm: csr.public_key.algorithm().name,
        public_key_bytes: csr.public_key.as_bytes().len(),
        signature_bytes: csr.signature_size,
        subject_alt_names: csr
            .dns_names
            .iter()
            .map(|d| format!("DNS:{d}"))
            .chain(csr.ip_addresses.iter().map(|ip| format!("IP:{ip}")))
            .collect(),
        signature_valid: true,
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&info)?);
        return Ok(());
    }
    println!("certificate signing request");
    println!("  subject              {}", info.subject);
    println!(
        "  public key           {} ({} bytes)",
        info.public_key_algorithm, info.public_key_bytes
    );
    println!(
        "  signature            {} bytes, valid",
        info.signature_bytes
    );
    if !info.subject_alt_names.is_empty() {
        println!(
            "  subject alt names    {}",
            info.subject_alt_names.join(", ")
        );
    }
    Ok(())
}

/// `pqkit csr sign`: a CA issues a certificate for a CSR whose signature verifies.
pub(crate) fn sign(
    csr_path: &Path,
    ca_cert: &Path,
    ca_key: &Path,
    profile: Profile,
    days: u64,
    out: &Path,
    overwrite: Overwrite,
) -> Result<()> {
    let claim = crate::files::outputs(overwrite, &[csr_path, ca_cert, ca_key])?
        .claim(out, Sensitivity::Public)?;
    let csr = read_csr(csr_path)?;
    let ca = pem::read_certificates(ca_cert)?.swap_remove(0);
    pqkit_pki::path::check_can_issue(&ca, profile.is_ca(), std::time::SystemTime::now())
        .map_err(|e| Failure::other(format!("{}: {e}", ca_cert.display())))?;
    let ca_key_path = ca_key;
    let ca_key = crate::files::load_signing_key(ca_key)?;
    let issuer = Issuer {
        certificate: &ca,
        key: &ca_key,
    };
    let validity = Duration::from_secs(days.saturating_mul(24 * 3600));
    let der = csr::issue(&csr, profile, validity, issuer).about(ca_key_path.display())?;
    claim.commit(pem::encode(pem::CERTIFICATE, &der)?.as_bytes())?;
    println!(
        "{profile} certificate for {} ({} key, {} bytes), signed by {}, valid {days} days, \
         written to {}",
        csr.subject,
        csr.public_key.algorithm().name,
        der.len(),
        ca_key.algorithm().name,
        out.display()
    );
    Ok(())
}
