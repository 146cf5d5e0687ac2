//! `pqkit hbs params|keygen|sign|verify|status`: stateful hash-based signatures whose state
//! file never hands out a one-time key twice (pqkit-hbs).

use std::path::Path;
use std::time::Duration;

use pqkit_hbs::preset::{PRESETS, Shape};
use pqkit_hbs::public::PublicKey;
use pqkit_hbs::state::StatefulKey;
use pqkit_hbs::xmss::{XMSS, XMSS_MT, XmssParams};
use pqkit_pki::cert::{CertRequest, Profile};
use pqkit_pki::pem;

use crate::commands::Result;

/// `pqkit hbs params`: the presets' signature sizes and counts, computed from the
/// implementation's parameter sets.
pub(crate) fn params(json: bool) -> Result<()> {
    let rows: Vec<(String, usize, u64)> = PRESETS
        .iter()
        .map(|name| {
            let s = Shape::parse(name)?;
            Ok((s.name(), s.signature_len(), s.signatures()))
        })
        .collect::<std::result::Result<_, pqkit_hbs::Error>>()?;
    let xmss: Vec<&XmssParams> = XMSS.iter().chain(XMSS_MT.iter()).collect();
    if json {
        let lms: Vec<serde_json::Value> = rows
            .iter()
            .map(|(n, len, count)| {
                serde_json::json!({"preset": n, "signature_bytes": len, "signatures": count})
            })
            .collect();
        let xmss: Vec<serde_json::Value> = xmss
            .iter()
            .map(|p| {
                serde_json::json!({
                    "set": p.name, "oid": p.oid, "n": p.n, "w": 16, "h": p.h, "d": p.d,
                    "signature_bytes": p.signature_len(), "signatures": p.signatures(),
                })
            })
            .collect();
        let v = serde_json::json!({"lms": lms, "xmss": xmss});
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    println!("LMS/HSS presets (LMS_SHA256_M32_H<h> / LMOTS_SHA256_N32_W<w> at every level)");
    println!(
        "{:<10}  {:>16}  {:>20}",
        "preset", "signature bytes", "signatures"
    );
    for (n, len, count) in rows {
        println!("{n:<10}  {len:>16}  {count:>20}");
    }
    println!("\nXMSS / XMSS^MT sets (WOTS+ w = 16; RFC 8391, SP 800-208)");
    println!(
        "{:<26}  {:>4}  {:>3}  {:>3}  {:>3}  {:>2}  {:>16}",
        "set", "OID", "n", "w", "h", "d", "signature bytes"
    );
    for p in xmss {
        println!(
            "{:<26}  {:>4}  {:>3}  {:>3}  {:>3}  {:>2}  {:>16}",
            p.name,
            format!("0x{:02x}", p.oid),
            p.n,
            16,
            p.h,
            p.d,
            p.signature_len()
        );
    }
    Ok(())
}

fn threads(requested: Option<usize>) -> usize {
    requested
        .filter(|&t| t > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// `pqkit hbs keygen`: an HSS shape ("L2_H10_W4") or an XMSS / XMSS^MT set name.
pub(crate) fn keygen(
    preset: &str,
    state: &Path,
    public: &Path,
    threads_opt: Option<usize>,
) -> Result<()> {
    let start = std::time::Instant::now();
    let xmss = preset.to_ascii_uppercase().starts_with("XMSS");
    // The leaves key generation computes: one tree per level / layer on the first path.
    let leaves = if xmss {
        let p = pqkit_hbs::xmss::by_name(preset)?;
        u64::from(p.d) << p.tree_height()
    } else {
        let s = Shape::parse(preset)?;
        u64::from(s.levels) << s.height
    };
    let (key, name, signatures, signature_len) = with_progress(leaves, || {
        Ok(if xmss {
            let p = pqkit_hbs::xmss::by_name(preset)?;
            let key = StatefulKey::create_xmss(state, p, threads(threads_opt))?;
            (key, p.name.to_owned(), p.signatures(), p.signature_len())
        } else {
            let shape = Shape::parse(preset)?;
            let key = StatefulKey::create(state, &shape.levels(), threads(threads_opt))?;
            (key, shape.name(), shape.signatures(), shape.signature_len())
        })
    })?;
    let pem = key.public_key().to_pem()?;
    std::fs::write(public, &pem).map_err(|e| format!("{}: {e}", public.display()))?;
    eprintln!(
        "{name}: {signatures} signatures of {signature_len} bytes; key generated in {:.2} s on \
         {} threads; state {} (secret), tree cache {} (public nodes, so that opening the key \
         computes no trees), public key {} (PEM SubjectPublicKeyInfo, RFC 9802)",
        start.elapsed().as_secs_f64(),
        threads(threads_opt),
        state.display(),
        key.cache_path().display(),
        public.display(),
    );
    Ok(())
}

/// Runs `f` with a progress bar on stderr over `leaves` one-time public keys (drawn only when
/// stderr is a terminal), fed by [`pqkit_hbs::tree::leaves_computed`].
fn with_progress<T>(leaves: u64, f: impl FnOnce() -> Result<T>) -> Result<T> {
    let bar = indicatif::ProgressBar::new(leaves);
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("keygen [{bar:30}] {pos}/{len} leaves {eta}")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    let base = pqkit_hbs::tree::leaves_computed();
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                bar.set_position(pqkit_hbs::tree::leaves_computed() - base);
                std::thread::sleep(Duration::from_millis(100));
            }
            bar.finish_and_clear();
        });
        let out = f();
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        out
    })
}

/// Where `pqkit hbs sign` writes.
pub(crate) enum SignOutput<'a> {
    /// One file's signature to this path.
    File(&'a Path),
    /// Each file's signature to `<dir>/<file name>.sig`.
    Dir(&'a Path),
}

/// Writes `bytes` to `path` through a temporary file and a rename, so a process killed
/// mid-write leaves no partial signature under the final name. A path that exists and is not
/// a regular file (/dev/stdout, a FIFO) is written in place: renaming over it would replace
/// the device.
fn write_whole(path: &Path, bytes: &[u8]) -> Result<()> {
    let err = |e: std::io::Error| format!("{}: {e}", path.display());
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        return Ok(std::fs::write(path, bytes).map_err(err)?);
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp-{}", std::process::id()));
    std::fs::write(&tmp, bytes).map_err(err)?;
    std::fs::rename(&tmp, path).map_err(err)?;
    Ok(())
}

/// `pqkit hbs sign`: signs each file in turn; with `reserve` > 1, reserves that many one-time
/// keys on disk at once (fewer writes; unused ones are skipped after the process ends).
pub(crate) fn sign(
    state: &Path,
    files: &[std::path::PathBuf],
    out: SignOutput<'_>,
    reserve: u64,
    threads_opt: Option<usize>,
) -> Result<()> {
    if let SignOutput::File(_) = out
        && files.len() != 1
    {
        return Err("-o takes one file to sign; use --out-dir for several".into());
    }
    let mut key = StatefulKey::open(state, threads(threads_opt))?;
    if reserve > 1 {
        key.reserve(reserve)?;
    }
    for file in files {
        let message = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let signature = key.sign(&message)?;
        let dest = match out {
            SignOutput::File(p) => p.to_path_buf(),
            SignOutput::Dir(d) => {
                let mut name = file
                    .file_name()
                    .ok_or_else(|| format!("{}: not a file name", file.display()))?
                    .to_owned();
                name.push(".sig");
                d.join(name)
            }
        };
        write_whole(&dest, &signature)?;
    }
    let status = key.status();
    eprintln!(
        "signed {} file(s): {} used, {} remaining",
        files.len(),
        status.used,
        status.remaining
    );
    Ok(())
}

/// `pqkit hbs verify`.
pub(crate) fn verify(public: &Path, file: &Path, signature: &Path) -> Result<()> {
    let pk = std::fs::read_to_string(public).map_err(|e| format!("{}: {e}", public.display()))?;
    let pk = PublicKey::from_pem(&pk).map_err(|e| format!("{}: {e}", public.display()))?;
    let message = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let sig = std::fs::read(signature).map_err(|e| format!("{}: {e}", signature.display()))?;
    pk.verify(&message, &sig)?;
    println!(
        "OK: {} verifies under {}",
        signature.display(),
        public.display()
    );
    Ok(())
}

/// `pqkit hbs status`.
pub(crate) fn status(state: &Path, json: bool) -> Result<()> {
    let key = StatefulKey::open(state, threads(None))?;
    let s = key.status();
    if json {
        let v = serde_json::json!({
            "state": state.display().to_string(),
            "used": s.used,
            "remaining": s.remaining,
            "capacity": s.capacity,
            "cache_bytes": key.cache_bytes(),
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!(
            "{}: {} used, {} remaining of {} signatures (tree nodes kept in memory: {} bytes)",
            state.display(),
            s.used,
            s.remaining,
            s.capacity,
            key.cache_bytes()
        );
    }
    Ok(())
}

/// `pqkit hbs ca`: a self-signed root CA certificate for a stateful key (RFC 9802). Spends
/// one one-time key.
pub(crate) fn ca(state: &Path, subject: &str, days: u64, out: &Path) -> Result<()> {
    let mut key = StatefulKey::open(state, threads(None))?;
    let mut request = CertRequest::new(Profile::RootCa, "root");
    request.subject = subject.to_owned();
    request.validity = Duration::from_secs(days.saturating_mul(24 * 3600));
    let der = pqkit_pki::stateful::issue_self_signed(&request, &mut key)?;
    pem::write(out, &pem::encode(pem::CERTIFICATE, &der)?, false)?;
    let status = key.status();
    println!(
        "root CA {subject} ({}, {} bytes), valid {days} days, written to {}; {} one-time keys \
         remaining",
        key.public_key().name(),
        der.len(),
        out.display(),
        status.remaining
    );
    Ok(())
}

/// What `pqkit hbs issue` certifies: a CSR (its signature verified; subject and SAN from
/// it), or a bare public key with a subject — the way to certify another stateful key, which
/// should not spend a one-time key on a CSR.
pub(crate) enum Subject<'a> {
    /// A PKCS#10 request (PEM).
    Csr(&'a Path),
    /// A SubjectPublicKeyInfo PEM of any algorithm, and the subject name (RFC 4514).
    Key(&'a Path, &'a str),
}

impl<'a> Subject<'a> {
    /// From the command line's `--csr`, `--pub` and `--subject`.
    ///
    /// # Errors
    /// Neither a CSR nor a key with a subject.
    pub(crate) fn from_args(
        csr: Option<&'a Path>,
        public: Option<&'a Path>,
        subject: Option<&'a str>,
    ) -> Result<Self> {
        match (csr, public, subject) {
            (Some(c), None, _) => Ok(Self::Csr(c)),
            (None, Some(p), Some(s)) => Ok(Self::Key(p, s)),
            _ => Err("give --csr FILE, or --pub FILE with --subject NAME".into()),
        }
    }
}

/// `pqkit hbs issue`: the stateful CA key in `state` (whose certificate is `ca_cert`) issues
/// a certificate. Spends one one-time key.
pub(crate) fn issue(
    state: &Path,
    ca_cert: &Path,
    subject: Subject<'_>,
    profile: Profile,
    days: u64,
    out: &Path,
) -> Result<()> {
    let ca = pem::read_certificates(ca_cert)?
        .into_iter()
        .next()
        .ok_or("CA certificate file is empty")?;
    let (request, spki_der) = match subject {
        Subject::Csr(path) => {
            let csr = crate::csr_cmd::read_csr(path)?;
            let request = CertRequest {
                subject: csr.subject.to_string(),
                dns_names: csr.dns_names.clone(),
                ip_addresses: csr.ip_addresses.clone(),
                validity: Duration::ZERO,
                profile,
            };
            (request, pqkit_pki::key::spki_der(&csr.public_key)?)
        }
        Subject::Key(path, name) => {
            let mut request = CertRequest::new(profile, "subject");
            request.subject = name.to_owned();
            (request, crate::files::read_pem(path, pem::PUBLIC_KEY)?)
        }
    };
    let request = CertRequest {
        validity: Duration::from_secs(days.saturating_mul(24 * 3600)),
        ..request
    };
    let mut key = StatefulKey::open(state, threads(None))?;
    let der = pqkit_pki::stateful::issue(&request, &spki_der, &ca, &mut key)?;
    pem::write(out, &pem::encode(pem::CERTIFICATE, &der)?, false)?;
    println!(
        "{profile:?} certificate for {} ({} bytes), signed by {}, valid {days} days, written to \
         {}; {} one-time keys remaining",
        request.subject,
        der.len(),
        key.public_key().name(),
        out.display(),
        key.status().remaining
    );
    Ok(())
}
