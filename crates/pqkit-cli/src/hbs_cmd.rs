//! `pqkit hbs params|keygen|sign|verify|status|pubkey|adopt|sector|ca|issue`: stateful
//! hash-based signatures whose state file and reservation ledger never hand out a one-time key
//! twice (pqkit-hbs).

use std::path::{Path, PathBuf};
use std::time::Duration;

use pqkit_hbs::ledger::{Ledger, LedgerError, LedgerSpec};
use pqkit_hbs::preset::{PRESETS, Shape};
use pqkit_hbs::public::PublicKey;
use pqkit_hbs::state::{AdoptTo, NewKey, StatefulKey};
use pqkit_hbs::xmss::{XMSS, XMSS_MT, XmssParams};
use pqkit_pki::cert::{CertRequest, Profile};
use pqkit_pki::output::{Outputs, Overwrite, Sensitivity};
use pqkit_pki::pem;

use crate::failure::Result;
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

pub(crate) fn threads(requested: Option<usize>) -> usize {
    requested
        .filter(|&t| t > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The ledger `given` (`--ledger`), `$PQKIT_HBS_LEDGER` or the default; a value that names
/// no ledger is a usage error.
fn ledger_spec(given: Option<&str>) -> Result<LedgerSpec> {
    LedgerSpec::resolve(given).map_err(|e| match e {
        LedgerError::BadSpec { .. } => Failure::usage(format!("--ledger: {e}")),
        LedgerError::NoDefault => Failure::usage(e.to_string()),
        other => Failure::other(other.to_string()),
    })
}

/// Opens the ledger [`ledger_spec`] names.
pub(crate) fn open_ledger(given: Option<&str>) -> Result<Ledger> {
    Ok(Ledger::open(&ledger_spec(given)?)?)
}

/// `pqkit hbs keygen`: an HSS shape ("L2_H10_W4") or an XMSS / XMSS^MT set name. The state
/// file is never overwritten, `--force` or not: it is a key whose counter may be in use. All or
/// nothing: the public key is written (not yet in place) before the state file and the ledger
/// record are made, and a key whose public key cannot be put in place is discarded.
pub(crate) fn keygen(
    preset: &str,
    state: &Path,
    public: &Path,
    threads_opt: Option<usize>,
    ledger: Option<&str>,
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
    let mut pub_out =
        Outputs::new(overwrite, &key_files.each()).claim(public, Sensitivity::Public)?;
    // The ledger before the work: one that cannot be reached fails in a moment, not after
    // minutes of key generation.
    let ledger = open_ledger(ledger)?;
    let shared = ledger.shared();
    let ledger_name = ledger.name().to_owned();
    let (new, name, signatures, signature_len) = with_progress(leaves, || {
        Ok(if xmss {
            let p = pqkit_hbs::xmss::by_name(preset)?;
            let key = NewKey::xmss(state, p, threads(threads_opt))?;
            (key, p.name.to_owned(), p.signatures(), p.signature_len())
        } else {
            let shape = Shape::parse(preset)?;
            let key = NewKey::hss(state, &shape.levels(), threads(threads_opt))?;
            (key, shape.name(), shape.signatures(), shape.signature_len())
        })
    })?;
    pub_out.prepare(new.public_key().to_pem()?.as_bytes())?;
    let key = new.commit(ledger)?;
    if let Err(e) = pub_out.place() {
        let _ = key.discard();
        return Err(e.into());
    }
    eprintln!(
        "{name}: {signatures} signatures of {signature_len} bytes; key generated in {:.2} s on \
         {} threads; state {} (secret, mode 0600; never copy it{}), reservations recorded in \
         {ledger_name}, tree cache {} (public nodes, so that opening the key computes no \
         trees), public key {} (PEM SubjectPublicKeyInfo, RFC 9802)",
        start.elapsed().as_secs_f64(),
        threads(threads_opt),
        state.display(),
        if shared {
            ", except to the signers that share it through this ledger"
        } else {
            ""
        },
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
    files: &[PathBuf],
    out: SignOutput<'_>,
    reserve: u64,
    threads_opt: Option<usize>,
    ledger: Option<&str>,
    overwrite: Overwrite,
) -> Result<()> {
    if let SignOutput::File(_) = out
        && files.len() != 1
    {
        return Err(Failure::usage(
            "-o takes one file to sign; use --out-dir for several",
        ));
    }
    // Every message is readable, and a regular file or `-`, before a one-time key is reserved.
    for file in files {
        pem::check_input(file)?;
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
            let message = pem::read_input(file)?;
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
    let before = pqkit_hbs::state::inspect(state)?;
    // A shared key's file does not follow the ledger: the ledger says what is left.
    if before.ledger.is_none_or(|(_, shared)| !shared) && count > before.status.remaining {
        return Err(Failure::other(format!(
            "{}: {count} files to sign but only {} one-time keys remain (of {})",
            state.display(),
            before.status.remaining,
            before.status.capacity
        )));
    }
    let mut key = StatefulKey::open(state, open_ledger(ledger)?, threads(threads_opt))?;
    key.set_batch(reserve.min(count));
    for (file, claim) in files.iter().zip(claims) {
        let message = pem::read_input(file)?;
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
    state: PathBuf,
    companions: [PathBuf; 2],
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

/// `pqkit hbs status`: reads the state file (takes no lock, writes nothing, builds no tree),
/// then asks the ledger how far the key's range has been handed out. A ledger that cannot be
/// reached is reported and makes the status fail (exit status 3).
pub(crate) fn status(state: &Path, json: bool, ledger: Option<&str>) -> Result<()> {
    let info = pqkit_hbs::state::inspect(state)?;
    let s = info.status;
    let mut mark: std::result::Result<Option<u64>, String> = Ok(None);
    let mut where_ = String::new();
    if let (Some((bound, _)), Some(record)) = (info.ledger, info.record) {
        mark = ledger_spec(ledger)
            .map_err(|e| e.to_string())
            .and_then(|spec| Ledger::open_existing(&spec).map_err(|e| e.to_string()))
            .and_then(|mut l| {
                where_ = l.name().to_owned();
                if l.id() != bound {
                    return Err(format!(
                        "{}: not this key's ledger (it is recorded in ledger {bound})",
                        l.name()
                    ));
                }
                l.high_water(&record).map_err(|e| e.to_string())
            });
    }
    let shared = info.ledger.is_some_and(|(_, s)| s);
    if json {
        let v = serde_json::json!({
            "state": state.display().to_string(),
            "used": s.used,
            "remaining": s.remaining,
            "capacity": s.capacity,
            "next": info.next,
            "range": [info.first, info.end],
            "version": info.version,
            "sealed": info.sealed,
            "ledger": where_,
            "ledger_id": info.ledger.map(|(id, _)| id.to_hex()),
            "shared": shared,
            "record": info.record.map(|r| r.to_hex()),
            "high_water": mark.as_ref().ok().copied().flatten(),
            "ledger_error": mark.as_ref().err(),
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else if shared {
        // A copy of a shared key keeps no counter: the ledger's mark is the key's.
        println!(
            "{}: a copy of a key shared through its ledger (one-time keys {}..{}, {} \
             signatures); the ledger hands out ranges to every copy",
            state.display(),
            info.first,
            info.end,
            s.capacity,
        );
    } else {
        println!(
            "{}: {} used, {} remaining of {} signatures (one-time keys {}..{})",
            state.display(),
            s.used,
            s.remaining,
            s.capacity,
            info.first,
            info.end,
        );
        match (&mark, info.ledger) {
            (_, None) => {
                println!("ledger: none (written by an earlier pqkit; `pqkit hbs adopt` records it)")
            }
            (Ok(Some(m)), _) => println!("ledger {where_}: one-time keys below {m} handed out"),
            (Ok(None), _) => println!("ledger {where_}: no record of this key"),
            (Err(_), _) => {}
        }
    }
    if let Err(e) = mark {
        return Err(Failure::other(e));
    }
    Ok(())
}

/// `pqkit hbs ledger`: the ledger's records (a ledger that is not there is not made).
pub(crate) fn ledger(json: bool, ledger: Option<&str>) -> Result<()> {
    let mut l = Ledger::open_existing(&ledger_spec(ledger)?)?;
    let records = l.records()?;
    if json {
        let rows: Vec<serde_json::Value> = records
            .iter()
            .map(|r| {
                serde_json::json!({
                    "record": r.record, "high_water": r.high_water, "note": r.note,
                })
            })
            .collect();
        let v = serde_json::json!({
            "ledger": l.name(),
            "id": l.id().to_hex(),
            "shared": l.shared(),
            "records": rows,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    println!(
        "{} (ledger {}{}): {} records",
        l.name(),
        l.id(),
        if l.shared() { ", shared" } else { "" },
        records.len()
    );
    for r in &records {
        println!("{}  {:>20}  {}", r.record, r.high_water, r.note);
    }
    Ok(())
}

/// `pqkit hbs pubkey`: the public key a state file records (PEM), or computes for an earlier
/// version's file. Takes no lock.
pub(crate) fn pubkey(state: &Path, out: &Path, overwrite: Overwrite) -> Result<()> {
    let key_files = key_files(state);
    let claim = Outputs::new(overwrite, &key_files.each()).claim(out, Sensitivity::Public)?;
    let pk = pqkit_hbs::state::public_key(state, threads(None))?;
    claim.commit(pk.to_pem()?.as_bytes())?;
    Ok(())
}

/// `pqkit hbs adopt`: the state file's present place becomes its own, after a copy, a restore
/// or a move, and it is recorded in the ledger; `to` moves the counter past one-time keys the
/// original may have used since, never below the ledger's mark. The risk is printed first,
/// and nothing changes without `yes`.
pub(crate) fn adopt(
    state: &Path,
    to: AdoptTo,
    yes: bool,
    ledger_lost: bool,
    ledger: Option<&str>,
) -> Result<()> {
    eprintln!("{ADOPT_WARNING}");
    let info = pqkit_hbs::state::inspect(state)?;
    let s = info.status;
    if let AdoptTo::Skip(skip) = to
        && skip > s.remaining
    {
        return Err(Failure::usage(format!(
            "{}: --skip {skip} is more than the {} one-time keys left; nothing changed",
            state.display(),
            s.remaining
        )));
    }
    if let AdoptTo::At(n) = to
        && n > info.end
    {
        return Err(Failure::usage(format!(
            "{}: --skip-to {n} is beyond the last one-time key ({}); nothing changed",
            state.display(),
            info.end
        )));
    }
    if !yes {
        return Err(Failure::usage(format!(
            "{}: not adopted ({} used of {}); re-run with --yes to adopt it{}",
            state.display(),
            s.used,
            s.capacity,
            match to {
                AdoptTo::Skip(0) => String::new(),
                AdoptTo::Skip(n) => format!(", moving the counter on by {n}"),
                AdoptTo::At(n) => format!(", moving the counter to {n}"),
            }
        )));
    }
    let done = StatefulKey::adopt(state, open_ledger(ledger)?, to, ledger_lost, threads(None))?;
    if done.was.is_empty() {
        eprintln!("{}: adopted", state.display());
    } else {
        eprintln!("{}: adopted ({})", state.display(), done.was.join("; "));
    }
    println!(
        "{}: next one-time key {} (was {}{}), {} remaining",
        state.display(),
        done.next,
        done.next_before,
        done.high_water_before.map_or_else(
            || "; the ledger had no record".to_owned(),
            |m| format!("; the ledger's mark was {m}")
        ),
        done.end - done.next,
    );
    Ok(())
}

/// `pqkit hbs sector`: splits what is left of the key in `state` into `count` sector state
/// files in `out_dir` (default: beside it), each recorded in the ledger.
pub(crate) fn sector(
    state: &Path,
    count: u32,
    out_dir: Option<&Path>,
    threads_opt: Option<usize>,
    ledger: Option<&str>,
) -> Result<()> {
    let name = state
        .file_name()
        .ok_or_else(|| Failure::usage(format!("{}: not a file name", state.display())))?
        .to_string_lossy()
        .into_owned();
    let dir = match out_dir {
        Some(d) => d.to_path_buf(),
        None => state
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
    };
    if !dir.is_dir() {
        return Err(Failure::other(format!(
            "{}: not a directory; nothing was split",
            dir.display()
        )));
    }
    let outputs: Vec<PathBuf> = (1..=count)
        .map(|i| dir.join(format!("{name}.{i}of{count}")))
        .collect();
    for out in &outputs {
        if std::fs::symlink_metadata(out).is_ok() {
            return Err(Failure::other(format!(
                "{}: exists already; refusing to overwrite a key (nothing was split)",
                out.display()
            )));
        }
    }
    let mut key = StatefulKey::open(state, open_ledger(ledger)?, threads(threads_opt))?;
    let ranges = key.split(&outputs)?;
    let ledger_name = key.ledger_name().to_owned();
    for (out, range) in outputs.iter().zip(&ranges) {
        println!(
            "{}: one-time keys {}..{} ({} signatures)",
            out.display(),
            range.start,
            range.end,
            range.end - range.start
        );
    }
    eprintln!(
        "{}: split into {count} sectors; it signs no more, and {ledger_name} records each sector \
         as released. Move each sector file to one site only (never copy one to two sites; \
         remove it here) and adopt it there into that site's ledger: `pqkit hbs adopt --state \
         FILE --ledger LEDGER --yes`",
        state.display()
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
with --skip N (or --skip-to N).";

/// `pqkit hbs ca`: a self-signed root CA certificate for a stateful key (RFC 9802). Spends
/// one one-time key.
pub(crate) fn ca(
    state: &Path,
    subject: &str,
    days: u64,
    out: &Path,
    ledger: Option<&str>,
    overwrite: Overwrite,
) -> Result<()> {
    pqkit_pki::cert::parse_subject(subject)
        .map_err(|e| Failure::usage(format!("--subject: {e}")))?;
    let key_files = key_files(state);
    let claim = Outputs::new(overwrite, &key_files.each()).claim(out, Sensitivity::Public)?;
    let mut key = StatefulKey::open(state, open_ledger(ledger)?, threads(None))?;
    let mut request = CertRequest::new(Profile::RootCa, "root");
    request.subject = subject.to_owned();
    request.validity = Duration::from_secs(days.saturating_mul(24 * 3600));
    let der = pqkit_pki::stateful_ca::issue_self_signed(&request, &mut key)?;
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

/// What `pqkit hbs issue` does: the stateful CA key in `state` (whose certificate is
/// `ca_cert`) certifies `subject` with `profile` for `days`, written to `out`.
pub(crate) struct Issue<'a> {
    pub(crate) state: &'a Path,
    pub(crate) ca_cert: &'a Path,
    pub(crate) subject: Subject<'a>,
    pub(crate) profile: Profile,
    pub(crate) days: u64,
    pub(crate) out: &'a Path,
    pub(crate) ledger: Option<&'a str>,
}

/// `pqkit hbs issue`. Spends one one-time key.
pub(crate) fn issue(request: &Issue<'_>, overwrite: Overwrite) -> Result<()> {
    let Issue {
        state,
        ca_cert,
        profile,
        days,
        out,
        ledger,
        ..
    } = *request;
    let key_files = key_files(state);
    let mut inputs = key_files.each().to_vec();
    inputs.push(ca_cert);
    let claim = Outputs::new(overwrite, &inputs).claim(out, Sensitivity::Public)?;
    let ca = pem::read_certificates(ca_cert)?.swap_remove(0);
    // A CA certificate that could not issue is refused before a one-time key is spent.
    pqkit_pki::path::check_can_issue(&ca, profile.is_ca(), std::time::SystemTime::now())
        .map_err(|e| Failure::other(format!("{}: {e}", ca_cert.display())))?;
    let (request, spki_der) = match request.subject {
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
    let mut key = StatefulKey::open(state, open_ledger(ledger)?, threads(None))?;
    let der = pqkit_pki::stateful_ca::issue(&request, &spki_der, &ca, &mut key)?;
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
