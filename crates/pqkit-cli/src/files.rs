//! File operations: keys, signatures, KEM encapsulation, certificates and chains.

use std::io::Read;
use std::path::Path;

use der::{Decode, Encode};
use pqkit_core::catalogue;
use pqkit_core::prehash::PreHash;
use pqkit_core::sig::{SigningRandomness, VerifyingKey};
use pqkit_pki::cert;
use pqkit_pki::key::{self, Algorithm, KeyFormat, PublicKey};
use pqkit_pki::{Pki, pem};
use x509_cert::Certificate;

use crate::commands::Result;

const PRIVATE_KEY: &str = "PRIVATE KEY";
const PUBLIC_KEY: &str = "PUBLIC KEY";
const CERTIFICATE: &str = "CERTIFICATE";

fn note_round3(name: &str) {
    if let Some(note) = catalogue::round3_note(name) {
        eprintln!("{note}");
    }
}

fn algorithm(name: &str) -> Result<Algorithm> {
    note_round3(name);
    if let Ok(a) = catalogue::signature(name) {
        return Ok(Algorithm::Signature(a));
    }
    if let Ok(k) = catalogue::kem(name) {
        return Ok(Algorithm::Kem(k));
    }
    let sigs: Vec<&str> = catalogue::signatures().iter().map(|a| a.name).collect();
    let kems: Vec<&str> = catalogue::kems().iter().map(|k| k.name).collect();
    Err(format!(
        "unknown algorithm {name:?}; signatures: {}; KEMs: {} (see `pqkit list`)",
        sigs.join(", "),
        kems.join(", ")
    )
    .into())
}

pub(crate) fn parse_format(s: &str) -> std::result::Result<KeyFormat, String> {
    match s.to_ascii_lowercase().as_str() {
        "seed" => Ok(KeyFormat::Seed),
        "expanded" => Ok(KeyFormat::Expanded),
        "both" => Ok(KeyFormat::Both),
        _ => Err(format!("{s:?}: expected seed, expanded or both")),
    }
}

/// `pqkit keygen`.
pub(crate) fn keygen(
    alg: &str,
    seed: Option<&str>,
    format: KeyFormat,
    out: &Path,
    public_out: Option<&Path>,
) -> Result<()> {
    let seed = seed
        .map(|h| hex::decode(h).map_err(|e| format!("--seed: not hex ({e})")))
        .transpose()?
        .map(zeroize::Zeroizing::new);
    let (der, spki, name) = match algorithm(alg)? {
        Algorithm::Signature(a) => {
            let key = match &seed {
                Some(s) => a.signing_key_from_seed(s)?,
                None => a.generate()?,
            };
            (
                key::signing_key_to_pkcs8(&key, format)?,
                key::spki_der(&key.verifying_key())?,
                a.name,
            )
        }
        Algorithm::Kem(k) => {
            let dk = match &seed {
                Some(s) => k.generate_from_seed(s)?,
                None => k.generate()?,
            };
            (
                key::decapsulation_key_to_pkcs8(&dk, format)?,
                key::encapsulation_key_spki_der(dk.encapsulation_key())?,
                k.name,
            )
        }
    };
    pem::write(out, &pem::encode(PRIVATE_KEY, &der)?, true)?;
    println!(
        "{name} private key ({} bytes of PKCS#8) written to {}",
        der.len(),
        out.display()
    );
    if let Some(p) = public_out {
        pem::write(p, &pem::encode(PUBLIC_KEY, &spki)?, false)?;
        println!(
            "public key ({} bytes of SPKI) written to {}",
            spki.len(),
            p.display()
        );
    }
    Ok(())
}

pub(crate) fn read_pem(path: &Path, label: &'static str) -> Result<Vec<u8>> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    pem::decode_all(&text, label)?
        .into_iter()
        .next()
        .ok_or_else(|| format!("{}: no PEM block labelled {label}", path.display()).into())
}

/// The SPKI DER of a private key file.
fn public_of_private(path: &Path) -> Result<Vec<u8>> {
    let der = pem::read_private_key(path)?;
    Ok(match key::pkcs8_algorithm(&der)? {
        Algorithm::Signature(_) => {
            key::spki_der(&key::signing_key_from_pkcs8(&der)?.verifying_key())?
        }
        Algorithm::Kem(_) => key::encapsulation_key_spki_der(
            key::decapsulation_key_from_pkcs8(&der)?.encapsulation_key(),
        )?,
    })
}

/// `pqkit pubkey`.
pub(crate) fn pubkey(key_path: &Path, out: Option<&Path>) -> Result<()> {
    let spki = public_of_private(key_path)?;
    let text = pem::encode(PUBLIC_KEY, &spki)?;
    match out {
        Some(p) => {
            pem::write(p, &text, false)?;
            println!("public key written to {}", p.display());
        }
        None => print!("{text}"),
    }
    Ok(())
}

/// Options of `pqkit sign` and `pqkit verify`.
pub(crate) struct SignOptions {
    pub(crate) context: Vec<u8>,
    pub(crate) prehash: Option<PreHash>,
    pub(crate) external_mu: bool,
    pub(crate) deterministic: bool,
}

fn hash_file(path: &Path, mut update: impl FnMut(&[u8])) -> Result<u64> {
    let mut file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut buf = vec![0u8; 1 << 16];
    let mut total = 0u64;
    loop {
        let n = file
            .read(&mut buf)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        if n == 0 {
            return Ok(total);
        }
        update(&buf[..n]);
        total += n as u64;
    }
}

/// `pqkit sign`.
pub(crate) fn sign(key_path: &Path, file: &Path, out: &Path, o: &SignOptions) -> Result<()> {
    let key = key::signing_key_from_pkcs8(&pem::read_private_key(key_path)?)?;
    let randomness = if o.deterministic {
        SigningRandomness::Deterministic
    } else {
        SigningRandomness::Hedged
    };
    let name = key.algorithm().name;
    let (sig, how) = if o.external_mu {
        let vk = key.verifying_key();
        let mut h = vk.mu_hasher(&o.context)?;
        let n = hash_file(file, |b| h.update(b))?;
        let mu = h.finalize();
        (
            key.sign_mu(&mu, randomness)?,
            format!(
                "external μ: {n} message bytes hashed outside the signer; the signer received \
                 the 64-byte μ only (FIPS 204 Algorithm 7)"
            ),
        )
    } else if let Some(ph) = o.prehash {
        let mut h = ph.hasher();
        let n = hash_file(file, |b| h.update(b))?;
        let digest = h.finalize();
        (
            key.sign_prehashed(ph, &digest, &o.context, randomness)?,
            format!(
                "pre-hash {}: {n} message bytes hashed outside the signer; the signer received \
                 a {}-byte digest",
                ph.name(),
                digest.len()
            ),
        )
    } else {
        let msg = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
        (
            key.sign_with(&msg, &o.context, randomness)?,
            format!("pure: all {} message bytes entered the signer", msg.len()),
        )
    };
    std::fs::write(out, &sig).map_err(|e| format!("{}: {e}", out.display()))?;
    println!(
        "{name} signature ({} bytes) written to {}\n{how}",
        sig.len(),
        out.display()
    );
    Ok(())
}

/// The verifying key in a public-key, certificate or private-key PEM file.
fn verifying_key_of(path: &Path) -> Result<VerifyingKey> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if let Some(der) = pem::decode_all(&text, PUBLIC_KEY)?.into_iter().next() {
        return Ok(key::verifying_key_from_spki(&der)?);
    }
    if let Some(der) = pem::decode_all(&text, CERTIFICATE)?.into_iter().next() {
        let cert = Certificate::from_der(&der)?;
        let spki = cert.tbs_certificate.subject_public_key_info.to_der()?;
        return Ok(key::verifying_key_from_spki(&spki)?);
    }
    Ok(key::verifying_key_from_spki(&public_of_private(path)?)?)
}

/// `pqkit verify`.
pub(crate) fn verify(public: &Path, file: &Path, signature: &Path, o: &SignOptions) -> Result<()> {
    let vk = verifying_key_of(public)?;
    let sig = std::fs::read(signature).map_err(|e| format!("{}: {e}", signature.display()))?;
    let result = if o.external_mu {
        let mut h = vk.mu_hasher(&o.context)?;
        hash_file(file, |b| h.update(b))?;
        vk.verify_mu(&h.finalize(), &sig)
    } else if let Some(ph) = o.prehash {
        let mut h = ph.hasher();
        hash_file(file, |b| h.update(b))?;
        vk.verify_prehashed(ph, &h.finalize(), &o.context, &sig)
    } else {
        let msg = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
        vk.verify(&msg, &o.context, &sig)
    };
    result.map_err(|e| format!("{}: {e}", vk.algorithm().name))?;
    println!("{} signature OK", vk.algorithm().name);
    Ok(())
}

/// `pqkit kem encapsulate`.
pub(crate) fn encapsulate(public: &Path, ciphertext: &Path, secret: &Path) -> Result<()> {
    let der = read_pem(public, PUBLIC_KEY)?;
    let PublicKey::Encapsulation(ek) = key::public_key_from_spki(&der)? else {
        return Err(format!("{}: not an ML-KEM encapsulation key", public.display()).into());
    };
    let (ct, ss) = ek.encapsulate()?;
    std::fs::write(ciphertext, &ct).map_err(|e| format!("{}: {e}", ciphertext.display()))?;
    pem::write(secret, &format!("{}\n", hex::encode(ss.as_bytes())), true)?;
    println!(
        "{}: ciphertext ({} bytes) written to {}; shared secret ({} bytes, hex) to {}",
        ek.algorithm().name,
        ct.len(),
        ciphertext.display(),
        ss.as_bytes().len(),
        secret.display()
    );
    Ok(())
}

/// `pqkit kem decapsulate`.
pub(crate) fn decapsulate(key_path: &Path, ciphertext: &Path, secret: &Path) -> Result<()> {
    let dk = key::decapsulation_key_from_pkcs8(&pem::read_private_key(key_path)?)?;
    let ct = std::fs::read(ciphertext).map_err(|e| format!("{}: {e}", ciphertext.display()))?;
    let ss = dk.decapsulate(&ct)?;
    pem::write(secret, &format!("{}\n", hex::encode(ss.as_bytes())), true)?;
    println!(
        "{}: shared secret ({} bytes, hex) written to {}",
        dk.algorithm().name,
        ss.as_bytes().len(),
        secret.display()
    );
    Ok(())
}

/// `pqkit pki issue`: root → intermediate → server and client leaves, any algorithm per level.
pub(crate) fn pki_issue(dir: &Path, root: &str, intermediate: &str, leaf: &str) -> Result<()> {
    let find = |n: &str| -> Result<_> {
        note_round3(n);
        Ok(catalogue::signature(n).map_err(|e| format!("{e} (see `pqkit list`)"))?)
    };
    let (root_alg, int_alg, leaf_alg) = (find(root)?, find(intermediate)?, find(leaf)?);
    let pki = Pki::generate_chain(root_alg, Some(int_alg), leaf_alg)?;
    let paths = pki.write(dir)?;
    for (stem, chain) in [
        ("server", pki.server_chain()),
        ("client", pki.client_chain()),
    ] {
        let ders: Vec<_> = chain
            .into_iter()
            .map(rustls_pki_types::CertificateDer::from)
            .collect();
        if let Err(e) = pqkit_rustls::check_chain_fits(&ders, leaf_alg.signature_size) {
            eprintln!("warning: {stem}.pem: {e}");
        }
    }
    println!(
        "PKI written to {}: root {} -> intermediate {} -> leaves {}",
        dir.display(),
        root_alg.name,
        int_alg.name,
        leaf_alg.name
    );
    for p in [
        &paths.ca_cert,
        &paths.ca_key,
        &paths.intermediate_cert,
        &paths.intermediate_key,
        &paths.server_cert,
        &paths.server_key,
        &paths.client_cert,
        &paths.client_key,
    ] {
        println!("  {}", p.display());
    }
    Ok(())
}

/// Name of the catalogue algorithm behind an `AlgorithmIdentifier`, or its OID.
fn algorithm_name(
    id: &spki::AlgorithmIdentifierOwned,
    spki_id: &spki::AlgorithmIdentifierOwned,
    key_len: usize,
    signature: bool,
) -> String {
    let contents = |a: &spki::AlgorithmIdentifierOwned| key::algorithm_contents(a).ok();
    let found = match (contents(id), contents(spki_id)) {
        // The signer's key is known when the file holds the issuer; else the signature
        // algorithm identifier alone names it (RSA sizes cannot be told apart then).
        (Some(s), Some(k)) if signature => catalogue::signature_by_algorithms(&s, &k, key_len)
            .or_else(|| {
                catalogue::signatures()
                    .iter()
                    .copied()
                    .find(|a| a.signature_algorithm_id == s.as_slice())
            }),
        (_, Some(k)) => catalogue::signature_by_spki_algorithm(&k, key_len),
        _ => None,
    };
    found.map_or_else(|| id.oid.to_string(), |a| a.name.to_owned())
}

#[derive(serde::Serialize)]
struct CertInfo {
    subject: String,
    issuer: String,
    serial: String,
    not_before: String,
    not_after: String,
    public_key_algorithm: String,
    public_key_bytes: usize,
    signature_algorithm: String,
    signature_bytes: usize,
    certificate_bytes: usize,
    subject_alt_names: Vec<String>,
    ca: bool,
}

/// A stateful key's name, when `spki` is an HSS, XMSS or XMSS^MT key (RFC 9802 puts the
/// parameters in the key, not the AlgorithmIdentifier).
fn stateful_name(spki: &spki::SubjectPublicKeyInfoOwned) -> Option<String> {
    use der::Encode;
    if !pqkit_pki::stateful::is_stateful(&spki.algorithm) {
        return None;
    }
    let der = spki.to_der().ok()?;
    pqkit_hbs::public::PublicKey::from_spki_der(&der)
        .ok()
        .map(|k| k.name())
}

fn cert_info(
    der: &[u8],
    issuer_spki: Option<&spki::SubjectPublicKeyInfoOwned>,
) -> Result<CertInfo> {
    use x509_cert::ext::pkix::{BasicConstraints, SubjectAltName, name::GeneralName};
    let cert = Certificate::from_der(der)?;
    let tbs = &cert.tbs_certificate;
    let spki = &tbs.subject_public_key_info;
    let key_len = spki.subject_public_key.raw_bytes().len();
    let signer = issuer_spki.unwrap_or(spki);
    let mut sans = Vec::new();
    if let Some((_, san)) = tbs.get::<SubjectAltName>()? {
        for n in san.0 {
            sans.push(match n {
                GeneralName::DnsName(d) => format!("DNS:{}", d.as_str()),
                GeneralName::IpAddress(ip) => match ip.as_bytes().len() {
                    4 => {
                        let b = ip.as_bytes();
                        format!("IP:{}.{}.{}.{}", b[0], b[1], b[2], b[3])
                    }
                    _ => format!("IP:{}", hex::encode(ip.as_bytes())),
                },
                other => format!("{other:?}"),
            });
        }
    }
    let ca = tbs.get::<BasicConstraints>()?.is_some_and(|(_, bc)| bc.ca);
    Ok(CertInfo {
        subject: tbs.subject.to_string(),
        issuer: tbs.issuer.to_string(),
        serial: tbs.serial_number.to_string(),
        not_before: tbs.validity.not_before.to_string(),
        not_after: tbs.validity.not_after.to_string(),
        public_key_algorithm: stateful_name(spki)
            .unwrap_or_else(|| algorithm_name(&spki.algorithm, &spki.algorithm, key_len, false)),
        public_key_bytes: key_len,
        signature_algorithm: match stateful_name(signer) {
            Some(name) if signer.algorithm.oid == cert.signature_algorithm.oid => name,
            // Without the issuer's key, RFC 9802's OID names only the scheme.
            _ if pqkit_pki::stateful::is_stateful(&cert.signature_algorithm) => {
                let oid = cert.signature_algorithm.oid;
                match oid {
                    pqkit_hbs::public::HSS_OID => "HSS".to_owned(),
                    pqkit_hbs::public::XMSS_OID => "XMSS".to_owned(),
                    _ => "XMSS^MT".to_owned(),
                }
            }
            _ => algorithm_name(
                &cert.signature_algorithm,
                &signer.algorithm,
                signer.subject_public_key.raw_bytes().len(),
                true,
            ),
        },
        signature_bytes: cert.signature.raw_bytes().len(),
        certificate_bytes: der.len(),
        subject_alt_names: sans,
        ca,
    })
}

/// `pqkit x509 show`.
pub(crate) fn x509_show(path: &Path, json: bool) -> Result<()> {
    let certs = pem::read_certificates(path)?;
    let mut infos = Vec::new();
    for (i, der) in certs.iter().enumerate() {
        // The issuer of certs[i] is certs[i + 1] when the file is a chain; else itself.
        let issuer = certs
            .get(i + 1)
            .map(|d| Certificate::from_der(d).map(|c| c.tbs_certificate.subject_public_key_info))
            .transpose()?;
        infos.push(cert_info(der, issuer.as_ref())?);
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&infos)?);
        return Ok(());
    }
    for (i, c) in infos.iter().enumerate() {
        println!("certificate {i} ({} bytes)", c.certificate_bytes);
        println!("  subject              {}", c.subject);
        println!("  issuer               {}", c.issuer);
        println!("  serial               {}", c.serial);
        println!("  valid                {} to {}", c.not_before, c.not_after);
        println!(
            "  public key           {} ({} bytes)",
            c.public_key_algorithm, c.public_key_bytes
        );
        println!(
            "  signature            {} ({} bytes)",
            c.signature_algorithm, c.signature_bytes
        );
        println!("  CA                   {}", c.ca);
        if !c.subject_alt_names.is_empty() {
            println!("  subject alt names    {}", c.subject_alt_names.join(", "));
        }
    }
    Ok(())
}

/// `pqkit x509 verify`: each certificate signed by the next, the last by a CA in `ca`, every
/// one within its validity period.
pub(crate) fn x509_verify(chain_path: &Path, ca_path: &Path) -> Result<()> {
    let chain = pem::read_certificates(chain_path)?;
    let roots = pem::read_certificates(ca_path)?;
    let now = std::time::SystemTime::now();
    for (i, der) in chain.iter().enumerate() {
        let cert = Certificate::from_der(der)?;
        let v = &cert.tbs_certificate.validity;
        if now < v.not_before.to_system_time() || now > v.not_after.to_system_time() {
            return Err(format!("certificate {i}: outside its validity period").into());
        }
        // The next certificate in the chain must have signed this one; the last must be signed
        // by one of the CAs. Each signature is checked once.
        let signer = match chain.get(i + 1) {
            Some(next) => {
                cert::verify_signed_by(der, next).map_err(|e| format!("certificate {i}: {e}"))?;
                next
            }
            None => roots
                .iter()
                .find(|r| cert::verify_signed_by(der, r).is_ok())
                .ok_or_else(|| {
                    format!(
                        "certificate {i}: not signed by any CA in {}",
                        ca_path.display()
                    )
                })?,
        };
        let info = cert_info(
            der,
            Some(
                &Certificate::from_der(signer)?
                    .tbs_certificate
                    .subject_public_key_info,
            ),
        )?;
        println!(
            "certificate {i}: {} signed by {} — OK",
            info.subject, info.signature_algorithm
        );
    }
    println!(
        "chain OK ({} certificates, anchored in {})",
        chain.len(),
        ca_path.display()
    );
    Ok(())
}
