//! `pqkit hbs params|keygen|sign|verify|status`: stateful hash-based signatures whose state
//! file never hands out a one-time key twice (pqkit-hbs).

use std::path::Path;
use std::time::Duration;

use pqkit_hbs::preset::{PRESETS, Shape};
use pqkit_hbs::public::PublicKey;
use pqkit_hbs::state::StatefulKey;
use pqkit_hbs::xmss::{XMSS, XMSS_MT, XmssParams};
use pqkit_pki::cert::{CertRequest, Profile};
use pqkit_pki::output::{Outputs, Overwrite, Sensitivity};
use pqkit_pki::pem;

use crate::commands::Result;
use crate::failure::{Context, Failure};

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

/// `pqkit hbs keygen`: an HSS shape ("L2_H10_W4") or an XMSS / XMSS^MT set name. The state
/// file is never overwritten, `--force` or not: it is a key whose counter may be in use.
pub(crate) fn keygen(
    preset: &str,
    state: &Path,
    public: &Path,
    threads_opt: Option<usize>,
    overwrite: Overwrite,
) -> Result<()> {
    let start = std::time::Instant::now();
    let xmss = preset.to_ascii_uppercase().starts_with("XMSS");
    // The leaves key generation computes: one tree per level / layer on the first path.
    let leaves = if xmss {
        let p = pqkit_hbs::xmss::by_name(preset).map_err(|e| Failure::usage(e.to_string()))?;
        u64::from(p.d) << p.tree_height()
    } else {
        let s = Shape::parse(preset).map_err(|e| Failure::usage(e.to_string()))?;
        u64::from(s.levels) << s.height
    };
    if std::fs::symlink_metadata(state).is_ok() {
        return Err(Failure::other(format!(
            "{}: a state file exists already; refusing to overwrite a key (even with --force)",
            state.display()
        )));
    }
    let key_files = key_files(state);
    let pub_out = Outputs::new(overwrite, &key_files.each()).claim(public, Sensitivity::Public)?;
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
    pub_out.commit(pem.as_bytes())?;
    eprintln!(
        "{name}: {signatures} signatures of {signature_len} bytes; key generated in {:.2} s on \
         {} threads; state {} (secret, mode 0600; never copy it), tree cache {} (public nodes, \
         so that opening the key computes no trees), public key {} (PEM SubjectPublicKeyInfo, \
         RFC 9802)",
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

/// `pqkit hbs sign`: signs each file in turn. Every input is opened and every output claimed
/// before the key is opened, so a missing file or output directory spends no one-time key.
/// `reserve` > 1 reserves that many one-time keys on disk at once (fewer writes), but never
/// more than there are files to sign: a reserved key left unused is skipped for good.
pub(crate) fn sign(
    state: &Path,
    files: &[std::path::PathBuf],
    out: SignOutput<'_>,
    reserve: u64,
    threads_opt: Option<usize>,
    overwrite: Overwrite,
) -> Result<()> {
    if let SignOutput::File(_) = out
        && files.len() != 1
    {
        return Err(Failure::usage(
            "-o takes one file to sign; use --out-dir for several",
        ));
    }
    for file in files {
        std::fs::File::open(file).about(file.display())?;
    }
    // A `pkcs11:` URI: the key and its state are in a token, which reserves each index itself.
    let token = crate::files::token_key(state).transpose()?;
    let key_files = key_files(state);
    let mut inputs: Vec<&Path> = files.iter().map(|f| f.as_path()).collect();
    if token.is_none() {
        inputs.extend(key_files.each());
    }
    let outputs = Outputs::new(overwrite, &inputs);
    let mut claims = Vec::with_capacity(files.len());
    for file in files {
        let dest = match out {
            SignOutput::File(p) => p.to_path_buf(),
            SignOutput::Dir(d) => {
                let mut name = file
                    .file_name()
                    .ok_or_else(|| Failure::usage(format!("{}: not a file name", file.display())))?
                    .to_owned();
                name.push(".sig");
                d.join(name)
            }
        };
        claims.push(outputs.claim(&dest, Sensitivity::Public)?);
    }
    let count = u64::try_from(files.len()).unwrap_or(u64::MAX);
    if let Some(key) = token {
        if !key.is_stateful() {
            return Err(Failure::usage(format!(
                "{}: not an HSS, XMSS or XMSS^MT key",
                state.display()
            )));
        }
        let remaining = key.keys_remaining().about(state.display())?;
        if count > remaining {
            return Err(Failure::other(format!(
                "{}: {count} files to sign but only {remaining} one-time keys remain",
                state.display()
            )));
        }
        for (file, claim) in files.iter().zip(claims) {
            let message = std::fs::read(file).about(file.display())?;
            let signature = key.sign_stateful(&message).about(state.display())?;
            claim.commit(&signature)?;
        }
        eprintln!(
            "signed {} file(s) in the token: {} remaining",
            files.len(),
            key.keys_remaining().about(state.display())?
        );
        return Ok(());
    }
    let before = pqkit_hbs::state::status(state)?;
    if count > before.remaining {
        return Err(Failure::other(format!(
            "{}: {count} files to sign but only {} one-time keys remain (of {})",
            state.display(),
            before.remaining,
            before.capacity
        )));
    }
    let mut key = StatefulKey::open(state, threads(threads_opt))?;
    let remaining = key.status().remaining;
    let reserve = reserve.min(count).min(remaining);
    if reserve > 1 {
        key.reserve(reserve)?;
    }
    for (file, claim) in files.iter().zip(claims) {
        let message = std::fs::read(file).about(file.display())?;
        let signature = key.sign(&message)?;
        claim.commit(&signature)?;
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

/// A key's state file and the files beside it (lock, cache): inputs no output may replace.
struct KeyFiles {
    state: std::path::PathBuf,
    companions: [std::path::PathBuf; 2],
}

impl KeyFiles {
    fn each(&self) -> [&Path; 3] {
        [&self.state, &self.companions[0], &self.companions[1]]
    }
}

fn key_files(state: &Path) -> KeyFiles {
    KeyFiles {
        state: state.to_path_buf(),
        companions: pqkit_hbs::state::companion_files(state),
    }
}

/// `pqkit hbs verify`.
pub(crate) fn verify(public: &Path, file: &Path, signature: &Path) -> Result<()> {
    let pk = pem::read_input(public)?;
    let pk = std::str::from_utf8(&pk)
        .ok()
        .filter(|t| t.contains("-----BEGIN"))
        .map_or_else(|| PublicKey::from_spki_der(&pk), PublicKey::from_pem)
        .map_err(|e| Failure::other(format!("{}: {e}", public.display())))?;
    let message = pem::read_input(file)?;
    let sig = pem::read_input(signature)?;
    pk.verify(&message, &sig).map_err(|e| {
        Failure::verification(format!(
            "{}: {} signature over {} under {}: {e}",
            signature.display(),
            pk.name(),
            file.display(),
            public.display()
        ))
    })?;
    println!(
        "OK: {} verifies under {}",
        signature.display(),
        public.display()
    );
    Ok(())
}

/// `pqkit hbs status`: reads the state file; takes no lock, writes nothing, builds no tree.
pub(crate) fn status(state: &Path, json: bool) -> Result<()> {
    let s = pqkit_hbs::state::status(state)?;
    if json {
        let v = serde_json::json!({
            "state": state.display().to_string(),
            "used": s.used,
            "remaining": s.remaining,
            "capacity": s.capacity,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!(
            "{}: {} used, {} remaining of {} signatures",
            state.display(),
            s.used,
            s.remaining,
            s.capacity,
        );
    }
    Ok(())
}

/// `pqkit hbs adopt`: the state file's present place becomes its own, after a copy, a restore
/// or a move; `skip` moves the counter past one-time keys the original may have used since.
/// The risk is printed first, and nothing changes without `yes`.
pub(crate) fn adopt(state: &Path, skip: u64, yes: bool) -> Result<()> {
    eprintln!("{ADOPT_WARNING}");
    let s = pqkit_hbs::state::status(state)?;
    if skip > s.remaining {
        return Err(Failure::usage(format!(
            "{}: --skip {skip} is more than the {} one-time keys left; nothing changed",
            state.display(),
            s.remaining
        )));
    }
    if !yes {
        return Err(Failure::usage(format!(
            "{}: not adopted ({} used of {}); re-run with --yes to adopt it{}",
            state.display(),
            s.used,
            s.capacity,
            if skip > 0 {
                format!(", moving the counter on by {skip}")
            } else {
                String::new()
            }
        )));
    }
    let done = StatefulKey::adopt(state, skip)?;
    match &done.was {
        Some(why) => eprintln!("{}: adopted ({why})", state.display()),
        None => eprintln!("{}: adopted", state.display()),
    }
    println!(
        "{}: next one-time key {} (was {}), {} remaining of {}",
        state.display(),
        done.next,
        done.next_before,
        done.capacity - done.next,
        done.capacity
    );
    Ok(())
}

/// What `pqkit hbs adopt` risks, printed each time it runs.
pub(crate) const ADOPT_WARNING: &str = "\
warning: a stateful key (LMS/HSS, XMSS) must never sign twice with one one-time key; two \
signatures from the same one-time key can let anyone forge signatures. Adopting makes this \
file the key. Before adopting, make sure that (1) every other copy of it is destroyed and \
will never sign, and (2) the key has not signed since this copy was made — a backup's \
counter is behind the original's. If it may have, move the counter past those signatures \
with --skip N.";

/// `pqkit hbs ca`: a self-signed root CA certificate for a stateful key (RFC 9802). Spends
/// one one-time key.
pub(crate) fn ca(
    state: &Path,
    subject: &str,
    days: u64,
    out: &Path,
    overwrite: Overwrite,
) -> Result<()> {
    pqkit_pki::cert::parse_subject(subject)
        .map_err(|e| Failure::usage(format!("--subject: {e}")))?;
    let key_files = key_files(state);
    let claim = Outputs::new(overwrite, &key_files.each()).claim(out, Sensitivity::Public)?;
    let mut key = StatefulKey::open(state, threads(None))?;
    let mut request = CertRequest::new(Profile::RootCa, "root");
    request.subject = subject.to_owned();
    request.validity = Duration::from_secs(days.saturating_mul(24 * 3600));
    let der = pqkit_pki::stateful::issue_self_signed(&request, &mut key)?;
    claim.commit(pem::encode(pem::CERTIFICATE, &der)?.as_bytes())?;
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
            _ => Err(Failure::usage(
                "give --csr FILE, or --pub FILE with --subject NAME",
            )),
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
    overwrite: Overwrite,
) -> Result<()> {
    let key_files = key_files(state);
    let mut inputs = key_files.each().to_vec();
    inputs.push(ca_cert);
    let claim = Outputs::new(overwrite, &inputs).claim(out, Sensitivity::Public)?;
    let ca = pem::read_certificates(ca_cert)?.swap_remove(0);
    // A CA certificate that could not issue is refused before a one-time key is spent.
    pqkit_pki::path::check_can_issue(&ca, profile.is_ca(), std::time::SystemTime::now())
        .map_err(|e| Failure::other(format!("{}: {e}", ca_cert.display())))?;
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
            pqkit_pki::cert::parse_subject(name)
                .map_err(|e| Failure::usage(format!("--subject: {e}")))?;
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
    claim.commit(pem::encode(pem::CERTIFICATE, &der)?.as_bytes())?;
    println!(
        "{profile} certificate for {} ({} bytes), signed by {}, valid {days} days, written to \
         {}; {} one-time keys remaining",
        request.subject,
        der.len(),
        key.public_key().name(),
        out.display(),
        key.status().remaining
    );
    Ok(())
}
