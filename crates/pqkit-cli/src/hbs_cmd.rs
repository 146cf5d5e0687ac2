//! `pqkit hbs params|keygen|sign|verify|status`: stateful hash-based signatures whose state
//! file never hands out a one-time key twice (pqkit-hbs).

use std::path::Path;

use pqkit_hbs::preset::{PRESETS, Shape};
use pqkit_hbs::public::PublicKey;
use pqkit_hbs::state::StatefulKey;
use pqkit_hbs::xmss::{XMSS, XMSS_MT, XmssParams};

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
         {} threads; state {} (secret), public key {} (PEM SubjectPublicKeyInfo, RFC 9802)",
        start.elapsed().as_secs_f64(),
        threads(threads_opt),
        state.display(),
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
                std::thread::sleep(std::time::Duration::from_millis(100));
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
/// mid-write leaves no partial signature under the final name.
fn write_whole(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp-{}", std::process::id()));
    std::fs::write(&tmp, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("{}: {e}", path.display()))?;
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
