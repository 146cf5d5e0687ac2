//! File operations: keys, signatures, KEM encapsulation, certificates and chains.
//!
//! Every input may be PEM or DER (told apart by its bytes) and `-` for standard input; every
//! output goes through [`pqkit_pki::output`]: claimed before the work (an existing file is an
//! error without `--force`, a missing directory fails before a key is used), secrets created
//! 0600, and no output may name one of the command's inputs.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use der::{Decode, Encode};
use pqkit_core::catalogue;
use pqkit_core::classical::{RsaPadding, rsa_padding, rsa_with_padding};
use pqkit_core::prehash::PreHash;
use pqkit_core::sig::{Family, SigningKey, SigningRandomness, VerifyingKey};
use pqkit_pki::describe::describe;
use pqkit_pki::key::{self, Algorithm, KeyFormat, PublicKey};
use pqkit_pki::output::{Outputs, Overwrite, Sensitivity};
use pqkit_pki::path::{Policy, TrustAnchors};
use pqkit_pki::{Pki, pem};
use rustls_pki_types::CertificateDer;
use x509_cert::Certificate;
use zeroize::Zeroizing;

use crate::failure::Result;
use crate::failure::{Context, Failure};

fn note_round3(name: &str) {
    if let Some(note) = catalogue::round3_note(name) {
        eprintln!("{note}");
    }
}

/// A signature or KEM algorithm by name, alias, OID or TLS code point (`pqkit list`).
pub(crate) fn algorithm(name: &str) -> Result<Algorithm> {
    note_round3(name);
    match catalogue::signature(name) {
        Ok(a) => return Ok(Algorithm::Signature(a)),
        Err(e @ pqkit_core::Error::AmbiguousName { .. }) => return Err(e.into()),
        Err(_) => {}
    }
    if let Ok(k) = catalogue::kem(name) {
        return Ok(Algorithm::Kem(k));
    }
    let sigs: Vec<&str> = catalogue::signatures().iter().map(|a| a.name).collect();
    let kems: Vec<&str> = catalogue::kems().iter().map(|k| k.name).collect();
    Err(Failure::usage(format!(
        "unknown algorithm {name:?}; signatures: {}; KEMs: {} (names, aliases, OIDs and TLS \
         code points as `pqkit list` shows them)",
        sigs.join(", "),
        kems.join(", ")
    )))
}

pub(crate) fn parse_format(s: &str) -> std::result::Result<KeyFormat, String> {
    match s.to_ascii_lowercase().as_str() {
        "seed" => Ok(KeyFormat::Seed),
        "expanded" => Ok(KeyFormat::Expanded),
        "both" => Ok(KeyFormat::Both),
        _ => Err(format!("{s:?}: expected seed, expanded or both")),
    }
}

/// Refuses `-` (standard input) for more than one input of a command: the first would read it
/// all and the second get nothing.
pub(crate) fn one_stdin(inputs: &[&Path]) -> Result<()> {
    if inputs.iter().filter(|p| p.as_os_str() == "-").count() > 1 {
        return Err(Failure::usage(
            "- (standard input) is given for more than one input",
        ));
    }
    Ok(())
}

/// The outputs of a command that reads `inputs` (at most one of them `-`).
pub(crate) fn outputs<'a>(overwrite: Overwrite, inputs: &'a [&'a Path]) -> Result<Outputs<'a>> {
    one_stdin(inputs)?;
    Ok(Outputs::new(overwrite, inputs))
}

/// How `pkcs11:` key URIs reach their token (the global --pkcs11-module and --pin-source).
static PKCS11: std::sync::OnceLock<pqkit_pkcs11::client::Options> = std::sync::OnceLock::new();

/// Records the global PKCS#11 options (once, at start).
pub(crate) fn set_pkcs11(options: pqkit_pkcs11::client::Options) {
    let _ = PKCS11.set(options);
}

/// Whether `path` is an RFC 7512 `pkcs11:` URI (a key in a token) rather than a file.
pub(crate) fn is_token_uri(path: &Path) -> bool {
    path.to_str().is_some_and(pqkit_pkcs11::client::is_uri)
}

/// The private key named by `path` when it is a `pkcs11:` URI: opened in its token (the key
/// stays there); `None` for a file.
pub(crate) fn token_key(path: &Path) -> Option<Result<pqkit_pkcs11::client::TokenKey>> {
    let text = path.to_str()?;
    pqkit_pkcs11::client::is_uri(text).then(|| {
        pqkit_pkcs11::client::TokenKey::open(text, PKCS11.get().unwrap_or(&Default::default()))
            .about(pqkit_pkcs11::client::redacted(text))
    })
}

/// The signing key in a PKCS#8 file (PEM or DER), checked against its public part — or in a
/// PKCS#11 token, when `path` is a `pkcs11:` URI.
pub(crate) fn load_signing_key(path: &Path) -> Result<SigningKey> {
    if let Some(key) = token_key(path) {
        let shown = pqkit_pkcs11::client::redacted(&path.to_string_lossy());
        return key?.into_signing_key().about(shown);
    }
    let der = pem::read_private_key(path)?;
    key::signing_key_from_pkcs8(&der).about(path.display())
}

/// The certificates in a PEM or DER file, in order.
pub(crate) fn load_certificates(path: &Path) -> Result<Vec<Vec<u8>>> {
    Ok(pem::read_certificates(path)?)
}

/// `pqkit keygen`.
pub(crate) fn keygen(
    alg: &str,
    seed: Option<&str>,
    format: KeyFormat,
    out: &Path,
    public_out: Option<&Path>,
    overwrite: Overwrite,
) -> Result<()> {
    let seed = seed
        .map(|h| hex::decode(h).map_err(|e| Failure::usage(format!("--seed: not hex ({e})"))))
        .transpose()?
        .map(Zeroizing::new);
    let alg = algorithm(alg)?;
    if let Algorithm::Kem(k) = alg
        && let Some(why) = k.key_file_refusal()
    {
        return Err(Failure::usage(why));
    }
    // --format chooses among ML-DSA's and ML-KEM's private-key forms; other keys have one.
    let forms = match alg {
        Algorithm::Signature(a) => a.family == Family::MlDsa,
        Algorithm::Kem(k) => k.seed_size > 0,
    };
    if format != KeyFormat::Seed && !forms {
        return Err(Failure::usage(
            "--format: only ML-DSA keys and KEM keys made from a seed (ML-KEM, HQC) have seed, \
             expanded and both forms (RFC 9881 §6, RFC 9935 §6); this key has one",
        ));
    }
    // A seed of the wrong length, or for an algorithm without seeds, is a usage error.
    if let Some(seed) = &seed {
        let (name, size) = match alg {
            Algorithm::Signature(a) => (a.name, a.seed_size),
            Algorithm::Kem(k) => (k.name, k.seed_size),
        };
        if size == 0 {
            return Err(Failure::usage(format!(
                "--seed: {name} keys are not made from a seed here"
            )));
        }
        if seed.len() != size {
            return Err(Failure::usage(format!(
                "--seed: {name} takes a {size}-byte seed ({} hex digits), not {} bytes",
                2 * size,
                seed.len()
            )));
        }
    }
    // Both outputs are claimed before the key exists.
    let outputs = Outputs::new(overwrite, &[]);
    let key_out = outputs.claim(out, Sensitivity::Secret)?;
    let pub_out = public_out
        .map(|p| outputs.claim(p, Sensitivity::Public))
        .transpose()?;
    let (der, spki, name) = match alg {
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
    let text = Zeroizing::new(pem::encode(pem::PRIVATE_KEY, &der)?);
    let public_text = pem::encode(pem::PUBLIC_KEY, &spki)?;
    // The private and public key files appear together or not at all.
    let mut files = vec![(key_out, text.as_bytes())];
    files.extend(pub_out.map(|claim| (claim, public_text.as_bytes())));
    pqkit_pki::output::commit_all(files)?;
    eprintln!(
        "{name} private key ({} bytes of PKCS#8) written to {}",
        der.len(),
        out.display()
    );
    if let Some(p) = public_out {
        eprintln!(
            "public key ({} bytes of SPKI) written to {}",
            spki.len(),
            p.display()
        );
    }
    Ok(())
}

/// The first object labelled `label` in a PEM or DER file.
pub(crate) fn read_pem(path: &Path, label: &'static str) -> Result<Vec<u8>> {
    Ok(pem::read_one(path, label)?.to_vec())
}

/// The SPKI DER of a private key file.
fn public_of_private(path: &Path) -> Result<Vec<u8>> {
    if let Some(text) = path.to_str().filter(|t| pqkit_pkcs11::client::is_uri(t)) {
        // The public-key object, read without a PIN; else the private key's own
        // CKA_PUBLIC_KEY_INFO, which needs the login.
        let options = PKCS11.get().cloned().unwrap_or_default();
        return match pqkit_pkcs11::client::public_key_info(text, &options) {
            Ok(spki) => Ok(spki),
            Err(public) => match token_key(path) {
                Some(Ok(key)) => Ok(key.spki().to_vec()),
                _ => Err(Failure::from(public).about(pqkit_pkcs11::client::redacted(text))),
            },
        };
    }
    let der = pem::read_private_key(path)?;
    let spki = match key::pkcs8_algorithm(&der).about(path.display())? {
        Algorithm::Signature(_) => key::spki_der(
            &key::signing_key_from_pkcs8(&der)
                .about(path.display())?
                .verifying_key(),
        )?,
        Algorithm::Kem(_) => key::encapsulation_key_spki_der(
            key::decapsulation_key_from_pkcs8(&der)
                .about(path.display())?
                .encapsulation_key(),
        )?,
    };
    Ok(spki)
}

/// `pqkit pubkey`.
pub(crate) fn pubkey(key_path: &Path, out: Option<&Path>, overwrite: Overwrite) -> Result<()> {
    let out = out.unwrap_or(Path::new("-"));
    let inputs: &[&Path] = if is_token_uri(key_path) {
        &[]
    } else {
        &[key_path]
    };
    let claim = Outputs::new(overwrite, inputs).claim(out, Sensitivity::Public)?;
    let spki = public_of_private(key_path)?;
    claim.commit(pem::encode(pem::PUBLIC_KEY, &spki)?.as_bytes())?;
    if out.as_os_str() != "-" {
        eprintln!("public key written to {}", out.display());
    }
    Ok(())
}

/// RSA padding asked for with `--padding`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Padding {
    /// RSASSA-PSS (RFC 8017 §8.1), the default.
    Pss,
    /// RSASSA-PKCS1-v1_5 (RFC 8017 §8.2).
    Pkcs1,
}

pub(crate) fn parse_padding(s: &str) -> std::result::Result<Padding, String> {
    match s.to_ascii_lowercase().as_str() {
        "pss" => Ok(Padding::Pss),
        "pkcs1" | "pkcs1v15" | "pkcs1-v1_5" | "pkcs1-v1.5" => Ok(Padding::Pkcs1),
        _ => Err(format!("{s:?}: expected pss or pkcs1")),
    }
}

/// Options of `pqkit sign` and `pqkit verify`.
pub(crate) struct SignOptions {
    pub(crate) context: Vec<u8>,
    pub(crate) prehash: Option<PreHash>,
    pub(crate) external_mu: bool,
    pub(crate) deterministic: bool,
    pub(crate) padding: Option<Padding>,
}

impl SignOptions {
    /// Refuses, as a usage error (exit 2), an option the algorithm has no use for, rather than
    /// ignoring it: a context exists for ML-DSA, SLH-DSA and composite ML-DSA, HashML-DSA/
    /// HashSLH-DSA pre-hashing for ML-DSA and SLH-DSA only (FIPS 204 §5.4, FIPS 205 §10.2),
    /// external μ for ML-DSA only (FIPS 204 §6.2), and deterministic signing where the
    /// algorithm has a deterministic variant (ML-DSA, SLH-DSA, Falcon's fixed seed) or is
    /// deterministic already (Ed25519, RSA PKCS#1 v1.5); ECDSA here, RSA-PSS and composites
    /// with either as their traditional half always draw fresh randomness.
    fn check(&self, alg: &pqkit_core::sig::SignatureAlgorithm, signing: bool) -> Result<()> {
        let name = alg.name;
        let lattice_or_hash = matches!(alg.family, Family::MlDsa | Family::SlhDsa);
        let refuse =
            |option: &str, why: &str| Err(Failure::usage(format!("{option}: {name} {why}")));
        if self.external_mu && alg.family != Family::MlDsa {
            return refuse(
                "--external-mu",
                "has no external μ; only ML-DSA does (FIPS 204 §6.2)",
            );
        }
        if !self.context.is_empty() && !alg.family.has_context() {
            return refuse(
                "--context",
                "takes no context string; ML-DSA, SLH-DSA and composite ML-DSA do (FIPS 204 \
                 §5.2, FIPS 205 §10.2, draft-ietf-lamps-pq-composite-sigs §3.2)",
            );
        }
        if self.prehash.is_some() && !lattice_or_hash {
            return refuse(
                "--prehash",
                "has no pre-hash variant; HashML-DSA and HashSLH-DSA do (FIPS 204 §5.4, FIPS \
                 205 §10.2.2)",
            );
        }
        let fresh = matches!(alg.family, Family::Ecdsa)
            || rsa_padding(alg) == Some(RsaPadding::Pss)
            || pqkit_core::composite::parameters(alg)
                .is_some_and(pqkit_core::composite::Composite::traditional_draws_randomness);
        if signing && self.deterministic && fresh {
            return refuse(
                "--deterministic",
                "signs with fresh randomness every time here; it has no deterministic mode",
            );
        }
        Ok(())
    }
}

/// The catalogue entry of the same RSA key size with the padding asked for; other keys
/// refuse `--padding`.
fn with_padding(
    alg: &'static pqkit_core::sig::SignatureAlgorithm,
    padding: Option<Padding>,
) -> Result<&'static pqkit_core::sig::SignatureAlgorithm> {
    let Some(padding) = padding else {
        return Ok(alg);
    };
    if alg.family != Family::Rsa {
        return Err(Failure::usage(format!(
            "--padding is for RSA keys; this is a {} key",
            alg.name
        )));
    }
    let wanted = match padding {
        Padding::Pss => RsaPadding::Pss,
        Padding::Pkcs1 => RsaPadding::Pkcs1v15,
    };
    rsa_with_padding(alg, wanted)
        .ok_or_else(|| Failure::usage(format!("no {padding:?} variant of {}", alg.name)))
}

fn open_input(path: &Path) -> Result<Box<dyn Read>> {
    if path.as_os_str() == "-" {
        return Ok(Box::new(std::io::stdin()));
    }
    let file = std::fs::File::open(path).about(path.display())?;
    Ok(Box::new(file))
}

fn hash_file(path: &Path, mut update: impl FnMut(&[u8])) -> Result<u64> {
    let mut file = open_input(path)?;
    let mut buf = vec![0u8; 1 << 16];
    let mut total = 0u64;
    loop {
        let n = file.read(&mut buf).about(path.display())?;
        if n == 0 {
            return Ok(total);
        }
        update(&buf[..n]);
        total += n as u64;
    }
}

fn read_all(path: &Path) -> Result<Zeroizing<Vec<u8>>> {
    Ok(pem::read_input(path)?)
}

/// `pqkit sign`.
pub(crate) fn sign(
    key_path: &Path,
    file: &Path,
    out: &Path,
    o: &SignOptions,
    overwrite: Overwrite,
) -> Result<()> {
    let claim = outputs(overwrite, &[key_path, file])?.claim(out, Sensitivity::Public)?;
    let mut key = load_signing_key(key_path)?;
    let alg = with_padding(key.algorithm(), o.padding)?;
    o.check(alg, true)?;
    if !core::ptr::eq(alg, key.algorithm()) {
        key = alg
            .signing_key_from_pkcs8(&pem::read_private_key(key_path)?)
            .about(key_path.display())?;
    }
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
            key.sign_mu(&mu, randomness).about(key_path.display())?,
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
            key.sign_prehashed(ph, &digest, &o.context, randomness)
                .about(key_path.display())?,
            format!(
                "pre-hash {}: {n} message bytes hashed outside the signer; the signer received \
                 a {}-byte digest",
                ph.name(),
                digest.len()
            ),
        )
    } else {
        let msg = read_all(file)?;
        (
            key.sign_with(&msg, &o.context, randomness)
                .about(key_path.display())?,
            format!("pure: all {} message bytes entered the signer", msg.len()),
        )
    };
    claim.commit(&sig)?;
    eprintln!(
        "{name} signature ({} bytes) written to {}\n{how}",
        sig.len(),
        out.display()
    );
    Ok(())
}

/// The verifying key in a public-key, certificate or private-key file (PEM or DER).
fn verifying_key_of(path: &Path) -> Result<VerifyingKey> {
    let bytes = read_all(path)?;
    let text = core::str::from_utf8(&bytes).ok();
    let has = |label: &str| text.is_some_and(|t| t.contains(&format!("-----BEGIN {label}-----")));
    if has(pem::PUBLIC_KEY) {
        let der = pem::read_one(path, pem::PUBLIC_KEY)?;
        return key::verifying_key_from_spki(&der).about(path.display());
    }
    if has(pem::CERTIFICATE) {
        let der = load_certificates(path)?.swap_remove(0);
        return verifying_key_of_certificate(&der).about(path.display());
    }
    if has(pem::PRIVATE_KEY) {
        return key::verifying_key_from_spki(&public_of_private(path)?).about(path.display());
    }
    // DER: an SPKI, a certificate, or a private key.
    if let Ok(k) = key::verifying_key_from_spki(&bytes) {
        return Ok(k);
    }
    if let Ok(k) = verifying_key_of_certificate(&bytes) {
        return Ok(k);
    }
    Ok(key::signing_key_from_pkcs8(&bytes)
        .map_err(|_| {
            Failure::other(format!(
                "{}: neither a public key, a certificate nor a private key (PEM or DER)",
                path.display()
            ))
        })?
        .verifying_key())
}

fn verifying_key_of_certificate(der: &[u8]) -> Result<VerifyingKey> {
    let cert = Certificate::from_der(der)?;
    let spki = cert.tbs_certificate.subject_public_key_info.to_der()?;
    Ok(key::verifying_key_from_spki(&spki)?)
}

/// `pqkit verify`.
pub(crate) fn verify(public: &Path, file: &Path, signature: &Path, o: &SignOptions) -> Result<()> {
    one_stdin(&[public, file, signature])?;
    let mut vk = verifying_key_of(public)?;
    let alg = with_padding(vk.algorithm(), o.padding)?;
    o.check(alg, false)?;
    if !core::ptr::eq(alg, vk.algorithm()) {
        vk = alg.verifying_key(vk.as_bytes())?;
    }
    let sig = read_all(signature)?;
    let result = if o.external_mu {
        let mut h = vk.mu_hasher(&o.context)?;
        hash_file(file, |b| h.update(b))?;
        vk.verify_mu(&h.finalize(), &sig)
    } else if let Some(ph) = o.prehash {
        let mut h = ph.hasher();
        hash_file(file, |b| h.update(b))?;
        vk.verify_prehashed(ph, &h.finalize(), &o.context, &sig)
    } else {
        let msg = read_all(file)?;
        vk.verify(&msg, &o.context, &sig)
    };
    result.about(format!(
        "{}: {} signature over {} under {}",
        signature.display(),
        vk.algorithm().name,
        file.display(),
        public.display()
    ))?;
    println!("{} signature OK", vk.algorithm().name);
    Ok(())
}

/// `pqkit kem encapsulate`.
pub(crate) fn encapsulate(
    public: &Path,
    ciphertext: &Path,
    secret: &Path,
    overwrite: Overwrite,
) -> Result<()> {
    let inputs = [public];
    let outputs = Outputs::new(overwrite, &inputs);
    let ct_out = outputs.claim(ciphertext, Sensitivity::Public)?;
    let ss_out = outputs.claim(secret, Sensitivity::Secret)?;
    let der = read_pem(public, pem::PUBLIC_KEY)?;
    let PublicKey::Encapsulation(ek) = key::public_key_from_spki(&der).about(public.display())?
    else {
        return Err(Failure::other(format!(
            "{}: not a KEM encapsulation key",
            public.display()
        )));
    };
    let (ct, ss) = ek.encapsulate()?;
    ct_out.commit(&ct)?;
    ss_out.commit(Zeroizing::new(format!("{}\n", hex::encode(ss.as_bytes()))).as_bytes())?;
    eprintln!(
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
pub(crate) fn decapsulate(
    key_path: &Path,
    ciphertext: &Path,
    secret: &Path,
    overwrite: Overwrite,
) -> Result<()> {
    let ss_out = outputs(overwrite, &[key_path, ciphertext])?.claim(secret, Sensitivity::Secret)?;
    let dk = key::decapsulation_key_from_pkcs8(&pem::read_private_key(key_path)?)
        .about(key_path.display())?;
    let ct = read_all(ciphertext)?;
    let ss = dk.decapsulate(&ct).about(ciphertext.display())?;
    ss_out.commit(Zeroizing::new(format!("{}\n", hex::encode(ss.as_bytes()))).as_bytes())?;
    eprintln!(
        "{}: shared secret ({} bytes, hex) written to {}",
        dk.algorithm().name,
        ss.as_bytes().len(),
        secret.display()
    );
    Ok(())
}

/// `pqkit pki issue`: root → intermediate → server and client leaves, any algorithm per level.
pub(crate) fn pki_issue(
    dir: &Path,
    root: &str,
    intermediate: &str,
    leaf: &str,
    overwrite: Overwrite,
) -> Result<()> {
    let find = |n: &str| -> Result<_> {
        note_round3(n);
        catalogue::signature(n).map_err(|e| Failure::usage(format!("{e} (see `pqkit list`)")))
    };
    let (root_alg, int_alg, leaf_alg) = (find(root)?, find(intermediate)?, find(leaf)?);
    let pki = Pki::generate_chain(root_alg, Some(int_alg), leaf_alg)?;
    let paths = pki.write(dir, overwrite)?;
    for (stem, chain) in [
        ("server", pki.server_chain()),
        ("client", pki.client_chain()),
    ] {
        let ders: Vec<_> = chain.into_iter().map(CertificateDer::from).collect();
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

/// `pqkit x509 show`.
pub(crate) fn x509_show(path: &Path, json: bool) -> Result<()> {
    let certs = pem::read_certificates(path)?;
    let mut infos = Vec::new();
    for (i, der) in certs.iter().enumerate() {
        // The issuer of certs[i] is certs[i + 1] when the file is a chain; else itself.
        let issuer = certs
            .get(i + 1)
            .map(|d| Certificate::from_der(d).map(|c| c.tbs_certificate.subject_public_key_info))
            .transpose()
            .about(format!("{}: certificate {}", path.display(), i + 1))?;
        infos.push(
            describe(der, issuer.as_ref()).about(format!("{}: certificate {i}", path.display()))?,
        );
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
        if let Some(bc) = &c.basic_constraints {
            println!("  basic constraints    {bc}");
        }
        if !c.key_usage.is_empty() {
            println!("  key usage            {}", c.key_usage.join(", "));
        }
        if !c.extended_key_usage.is_empty() {
            println!("  extended key usage   {}", c.extended_key_usage.join(", "));
        }
        if !c.subject_alt_names.is_empty() {
            println!("  subject alt names    {}", c.subject_alt_names.join(", "));
        }
        println!("  SPKI SHA-256         {}", c.spki_sha256);
    }
    Ok(())
}

/// `pqkit x509 verify`: RFC 5280 §6 path validation of the chain (the leaf first, then
/// intermediate CAs in any order, then `--untrusted` certificates) against the CA certificates
/// of `--ca`, under the policy the options make — the validator every pqkit tool uses
/// ([`pqkit_pki::path`]).
pub(crate) fn x509_verify(args: &crate::X509VerifyArgs) -> Result<()> {
    let (chain_path, ca_path) = (args.chain.as_path(), args.ca.as_path());
    let mut inputs = vec![chain_path, ca_path];
    inputs.extend(args.untrusted.iter().map(PathBuf::as_path));
    inputs.extend(args.crl.iter().map(PathBuf::as_path));
    one_stdin(&inputs)?;
    let mut chain = load_certificates(chain_path)?;
    for path in &args.untrusted {
        chain.extend(load_certificates(path)?);
    }
    let roots = load_certificates(ca_path)?;
    let anchors = TrustAnchors::new(&roots).about(ca_path.display())?;
    let mut crls = Vec::new();
    // Which file each CRL came from, to name it in a message.
    let mut crl_files: Vec<&Path> = Vec::new();
    for path in &args.crl {
        let bytes = pem::read_input(path)?;
        let found = pem::decode_pem_or_der(&bytes, "X509 CRL").about(path.display())?;
        // A file of certificates or keys named as a CRL is a mistake, not "no revocation".
        if found.is_empty() {
            return Err(Failure::other(format!(
                "{}: no PEM block labelled X509 CRL",
                path.display()
            )));
        }
        crl_files.extend(found.iter().map(|_| path.as_path()));
        crls.extend(found);
    }
    let policy = Policy {
        purposes: args.purpose.clone(),
        names: args.name.clone(),
        time: args.at.unwrap_or_else(SystemTime::now),
        crls,
        max_depth: args.max_depth,
        profile: args.profile,
        key_identifiers: true,
    };
    let ders: Vec<CertificateDer<'_>> =
        chain.iter().map(|c| CertificateDer::from(&c[..])).collect();
    // A certificate that does not decode fails verification like any other broken rule.
    let path = anchors.validate(&ders, &policy).map_err(|e| {
        let about = e
            .certificate
            .strip_prefix("CRL ")
            .and_then(|i| i.parse::<usize>().ok())
            .and_then(|i| crl_files.get(i))
            .map_or(chain_path, |p| *p);
        Failure::verification(format!("{}: {e}", about.display()))
    })?;
    let certs = &path.certificates;
    for (i, der) in certs.iter().enumerate() {
        let issuer = certs.get(i + 1).unwrap_or(der);
        let info = describe(
            der,
            Some(
                &Certificate::from_der(issuer)?
                    .tbs_certificate
                    .subject_public_key_info,
            ),
        )?;
        let role = if i + 1 == certs.len() {
            "trust anchor"
        } else if i == 0 {
            "leaf"
        } else {
            "intermediate"
        };
        println!(
            "certificate {i} ({role}): {} signed by {} — OK",
            info.subject, info.signature_algorithm
        );
    }
    let purposes: Vec<String> = args.purpose.iter().map(ToString::to_string).collect();
    let names: Vec<String> = args.name.iter().map(ToString::to_string).collect();
    println!(
        "chain OK for {}{} ({} certificates, anchored in {})",
        purposes.join(", "),
        if names.is_empty() {
            String::new()
        } else {
            format!(" and {}", names.join(", "))
        },
        certs.len(),
        ca_path.display()
    );
    Ok(())
}
