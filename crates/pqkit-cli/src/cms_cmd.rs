//! `pqkit cms sign|verify|show`: CMS SignedData (RFC 5652) over pqkit-pki's `cms` module.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use pqkit_core::sig::SigningKey;
use pqkit_hbs::state::StatefulKey;
use pqkit_pki::cms::{self, DigestAlgorithm, Require, SignOptions, Signer, SignerKey};
use pqkit_pki::output::{Overwrite, Sensitivity};
use pqkit_pki::path::{Policy, Purpose, TrustAnchors};
use pqkit_pki::pem;

use crate::failure::{Context, Failure, Result};
use crate::files::{load_certificates, load_signing_key, outputs};

/// What `pqkit cms sign` takes, parsed.
pub(crate) struct SignArgs<'a> {
    pub(crate) signers: &'a [PathBuf],
    pub(crate) keys: &'a [PathBuf],
    pub(crate) certificates: &'a [PathBuf],
    pub(crate) digest: Option<DigestAlgorithm>,
    pub(crate) detached: bool,
    pub(crate) signed_attributes: bool,
    pub(crate) deterministic: bool,
    pub(crate) pem: bool,
    pub(crate) subject_key_identifier: bool,
    pub(crate) ledger: Option<&'a str>,
    pub(crate) out: &'a Path,
    pub(crate) file: &'a Path,
}

pub(crate) fn parse_digest(s: &str) -> std::result::Result<DigestAlgorithm, String> {
    DigestAlgorithm::from_name(s).ok_or_else(|| {
        format!(
            "{s:?}: expected SHA-256, SHA-384, SHA-512, SHAKE128, SHAKE256, SHA3-256, \
                 SHA3-384 or SHA3-512"
        )
    })
}

/// The content to sign or verify: `-` (standard input) or a regular file, streamed (no size
/// bound here; the library bounds what it must hold).
fn open_content(path: &Path) -> Result<Box<dyn Read>> {
    let inner: Box<dyn Read> = if path.as_os_str() == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(pem::open_regular(path, u64::MAX)?)
    };
    Ok(Box::new(Named {
        inner,
        name: path.display().to_string(),
    }))
}

/// A reader whose errors name its file (the library knows the content only as a reader).
struct Named {
    inner: Box<dyn Read>,
    name: String,
}

impl Read for Named {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.inner
            .read(buf)
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", self.name)))
    }
}

/// A signer's key: a `pkcs11:` URI or PKCS#8 file, or a pqkit-hbs state file.
enum LoadedKey {
    Key(SigningKey),
    Stateful(Box<StatefulKey>),
}

fn load_key(path: &Path, ledger: Option<&str>) -> Result<LoadedKey> {
    if !crate::files::is_token_uri(path) && path.as_os_str() != "-" {
        let mut head = [0u8; 16];
        let n = pem::open_regular(path, u64::MAX)?
            .read(&mut head)
            .about(path.display())?;
        if pqkit_hbs::state::looks_like_state_file(&head[..n]) {
            let ledger = crate::hbs_cmd::open_ledger(ledger)?;
            let key = StatefulKey::open(path, ledger, crate::hbs_cmd::threads(None))
                .about(path.display())?;
            return Ok(LoadedKey::Stateful(Box::new(key)));
        }
    }
    Ok(LoadedKey::Key(load_signing_key(path)?))
}

/// `pqkit cms sign`.
pub(crate) fn sign(a: &SignArgs<'_>, overwrite: Overwrite) -> Result<()> {
    if a.signers.len() != a.keys.len() {
        return Err(Failure::usage(format!(
            "{} --signer certificates and {} --key keys: give one key per signer, in order",
            a.signers.len(),
            a.keys.len()
        )));
    }
    let mut inputs: Vec<&Path> = vec![a.file];
    inputs.extend(a.signers.iter().map(PathBuf::as_path));
    inputs.extend(a.keys.iter().map(PathBuf::as_path));
    inputs.extend(a.certificates.iter().map(PathBuf::as_path));
    let outs = outputs(overwrite, &inputs)?;
    // The output is claimed before any key is opened or spent.
    let claim = outs.claim(a.out, Sensitivity::Public)?;
    let mut keys = Vec::with_capacity(a.keys.len());
    for path in a.keys {
        keys.push(load_key(path, a.ledger)?);
    }
    let mut signers = Vec::with_capacity(keys.len());
    let mut extra = Vec::new();
    for (cert_path, key) in a.signers.iter().zip(&mut keys) {
        // The signer's certificate first; the rest of the file (its chain) goes in too.
        let mut chain = load_certificates(cert_path)?.into_iter();
        let certificate = chain
            .next()
            .ok_or_else(|| Failure::other(format!("{}: no certificate", cert_path.display())))?;
        extra.extend(chain);
        let key = match key {
            LoadedKey::Key(k) => SignerKey::Key(k),
            LoadedKey::Stateful(k) => SignerKey::Stateful(k),
        };
        signers.push(Signer {
            certificate,
            key,
            digest: a.digest,
        });
    }
    for path in a.certificates {
        extra.extend(load_certificates(path)?);
    }
    let options = SignOptions {
        attached: !a.detached,
        signed_attributes: a.signed_attributes,
        deterministic: a.deterministic,
        certificates: extra,
        subject_key_identifier: a.subject_key_identifier,
        ..SignOptions::default()
    };
    let mut content = open_content(a.file)?;
    let der = cms::sign(&mut signers, &mut content, &options)?;
    let bytes = if a.pem {
        pem::encode(cms::PEM_LABEL, &der)?.into_bytes()
    } else {
        der
    };
    claim.commit(&bytes)?;
    eprintln!(
        "SignedData ({}, {} signer{}{}) written to {}",
        if a.detached { "detached" } else { "attached" },
        signers.len(),
        if signers.len() == 1 { "" } else { "s" },
        if a.signed_attributes {
            ", signed attributes"
        } else {
            ", no signed attributes"
        },
        a.out.display()
    );
    Ok(())
}

/// A CMS object from a file: PEM (CMS or PKCS7) or DER.
fn read_signed(path: &Path) -> Result<Vec<u8>> {
    let limit = cms::MAX_HELD_CONTENT + (16 << 20);
    let bytes = pem::read_input_limited(path, limit)?;
    for label in [cms::PEM_LABEL, "PKCS7"] {
        if let Some(der) = pem::decode_pem_or_der(&bytes, label)
            .about(path.display())?
            .into_iter()
            .next()
        {
            return Ok(der);
        }
    }
    Err(Failure::other(format!(
        "{}: no CMS or PKCS7 PEM block",
        path.display()
    )))
}

/// What `pqkit cms verify` takes, parsed.
pub(crate) struct VerifyArgs<'a> {
    pub(crate) signed: &'a Path,
    pub(crate) content: Option<&'a Path>,
    pub(crate) ca: &'a Path,
    pub(crate) tsa_ca: Option<&'a Path>,
    pub(crate) certificates: &'a [PathBuf],
    pub(crate) signers: &'a [PathBuf],
    pub(crate) require: Require,
    pub(crate) purposes: &'a [Purpose],
    pub(crate) at: Option<SystemTime>,
    pub(crate) out: Option<&'a Path>,
}

/// `pqkit cms verify`.
pub(crate) fn verify(a: &VerifyArgs<'_>, overwrite: Overwrite) -> Result<()> {
    let mut inputs: Vec<&Path> = vec![a.signed, a.ca];
    inputs.extend(a.tsa_ca);
    inputs.extend(a.content);
    inputs.extend(a.certificates.iter().map(PathBuf::as_path));
    inputs.extend(a.signers.iter().map(PathBuf::as_path));
    let outs = outputs(overwrite, &inputs)?;
    let claim = a
        .out
        .map(|o| outs.claim(o, Sensitivity::Public))
        .transpose()?;
    let der = read_signed(a.signed)?;
    if a.out.is_some() {
        let shown = cms::describe(&der).about(a.signed.display())?;
        if shown.attached_bytes.is_none() {
            return Err(Failure::usage(format!(
                "--out: {} is detached; it holds no content to write",
                a.signed.display()
            )));
        }
    }
    let roots = load_certificates(a.ca)?;
    let anchors = TrustAnchors::new(&roots).about(a.ca.display())?;
    let mut certificates = Vec::new();
    for path in a.certificates {
        certificates.extend(load_certificates(path)?);
    }
    let mut signers = Vec::new();
    for path in a.signers {
        signers.extend(load_certificates(path)?);
    }
    let mut policy = Policy::new(Purpose::CodeSigning, a.at.unwrap_or_else(SystemTime::now));
    if !a.purposes.is_empty() {
        policy.purposes = a.purposes.to_vec();
    }
    let tsa_anchors = match a.tsa_ca {
        Some(path) => Some(TrustAnchors::new(&load_certificates(path)?).about(path.display())?),
        None => None,
    };
    let options = cms::VerifyOptions {
        anchors: &anchors,
        policy,
        certificates,
        signers,
        require: a.require,
        tsa_anchors: tsa_anchors.as_ref(),
    };
    let mut reader = a.content.map(open_content).transpose()?;
    let verified = cms::verify(&der, reader.as_mut().map(|r| r as &mut dyn Read), &options)
        .about(a.signed.display())?;
    for v in &verified.signers {
        let status = match &v.result {
            Ok(path) => format!("OK (path of {} certificates)", path.certificates.len()),
            Err(r) => format!("refused: {r}"),
        };
        let stamped = v.timestamp.map_or(String::new(), |t| {
            let secs = t
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            format!(", time-stamped at {secs} (Unix seconds; its certificate valid then)")
        });
        println!(
            "signer {}: {} — {}, {}{}{stamped}: {status}",
            v.index,
            v.signer,
            v.signature_algorithm,
            v.digest,
            if v.signed_attributes {
                ", signed attributes"
            } else {
                ", no signed attributes"
            },
        );
    }
    if let (Some(claim), Some(content)) = (claim, &verified.content) {
        claim.commit(content)?;
    }
    println!("{}: verified", a.signed.display());
    Ok(())
}

/// `pqkit cms timestamp`: the signature value out, or a token in.
pub(crate) fn timestamp(
    signed: &Path,
    index: usize,
    signature_out: Option<&Path>,
    token: Option<(&Path, &Path)>,
    overwrite: Overwrite,
) -> Result<()> {
    let mut inputs = vec![signed];
    inputs.extend(token.map(|(t, _)| t));
    let outs = outputs(overwrite, &inputs)?;
    let der = read_signed(signed)?;
    if let Some(path) = signature_out {
        let claim = outs.claim(path, Sensitivity::Public)?;
        let value = cms::timestamp::signature_value(&der, index).about(signed.display())?;
        claim.commit(&value)?;
        eprintln!(
            "signer {index}'s signature value ({} bytes) written to {}",
            value.len(),
            path.display()
        );
    }
    if let Some((token_path, out)) = token {
        let claim = outs.claim(out, Sensitivity::Public)?;
        let token = pem::read_input(token_path)?;
        let stamped = cms::timestamp::attach(&der, &token).about(token_path.display())?;
        claim.commit(&stamped)?;
        eprintln!(
            "the signer whose signature {} stamps is time-stamped; written to {}",
            token_path.display(),
            out.display()
        );
    }
    Ok(())
}

/// `pqkit cms show`.
pub(crate) fn show(path: &Path, json: bool) -> Result<()> {
    let der = read_signed(path)?;
    let d = cms::describe(&der).about(path.display())?;
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&d).map_err(|e| Failure::other(e.to_string()))?
        );
        return Ok(());
    }
    println!("SignedData version {}", d.version);
    println!("content type: {}", d.content_type);
    match d.attached_bytes {
        Some(n) => println!("content: attached, {n} bytes"),
        None => println!("content: detached"),
    }
    println!("digest algorithms: {}", d.digest_algorithms.join(", "));
    for c in &d.certificates {
        println!("certificate: {c}");
    }
    for (i, s) in d.signers.iter().enumerate() {
        println!("signer {i}: {}", s.identifier);
        if let Some(subject) = &s.certificate_subject {
            println!("  certificate: {subject}");
        }
        println!(
            "  {} over {}, {} signature bytes",
            s.signature_algorithm, s.digest_algorithm, s.signature_bytes
        );
        match &s.signed_attributes {
            Some(a) => println!("  signed attributes: {}", a.join(", ")),
            None => println!("  no signed attributes (the signature covers the content)"),
        }
        if let Some(t) = s.signing_time {
            println!("  signingTime: {t} (Unix seconds)");
        }
        if !s.unsigned_attributes.is_empty() {
            println!(
                "  unsigned attributes: {}",
                s.unsigned_attributes.join(", ")
            );
        }
    }
    Ok(())
}
