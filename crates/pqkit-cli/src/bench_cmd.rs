//! `pqkit bench crypto|handshake|tls|boundary` and `pqkit report`: run pqkit-bench
//! measurements, print them as aligned tables (machine line on top), Markdown or JSON
//! (schema `pqkit-bench/1`), and write their plots as SVG files.

use std::path::{Path, PathBuf};
use std::time::Duration;

use pqkit_bench::machine::Machine;
use pqkit_bench::suite::{Measurement, Suite};
use pqkit_bench::timing::Budget;

use pqkit_pki::output::Overwrite;

use crate::failure::Failure;
use crate::failure::Result;

/// How to print, and where to write plots.
#[derive(Clone, Debug)]
pub(crate) struct Output {
    pub(crate) json: bool,
    pub(crate) markdown: bool,
    pub(crate) svg: Option<PathBuf>,
}

/// Prints `m` as `out` asks; writes its plots when asked.
pub(crate) fn print(m: std::result::Result<Measurement, String>, out: &Output) -> Result<()> {
    let m = m.map_err(Failure::other)?;
    let machine = Machine::detect();
    if let Some(dir) = &out.svg {
        for path in m.write_plots(dir).map_err(Failure::other)? {
            eprintln!("wrote {}", path.display());
        }
    }
    if out.json {
        println!("{}", serde_json::to_string_pretty(&m.envelope(&machine))?);
    } else if out.markdown {
        println!("Machine: {}\n", machine.line());
        for t in &m.tables {
            println!("{}", t.to_markdown());
        }
    } else {
        println!("{}\n", machine.line());
        for t in &m.tables {
            println!("{}", t.to_text());
        }
    }
    Ok(())
}

/// A [`Budget`] from the command line's seconds and count.
pub(crate) fn budget(min_time: f64, min_iterations: usize) -> Result<Budget> {
    Ok(Budget {
        min_time: seconds(min_time, "--min-time")?,
        min_iterations,
    })
}

/// `s` seconds as a duration.
pub(crate) fn seconds(s: f64, flag: &str) -> Result<Duration> {
    Duration::try_from_secs_f64(s)
        .map_err(|_| Failure::usage(format!("{flag}: {s} is not a number of seconds")))
}

/// `pqkit report`: refuses a directory that holds a report or a page already (minutes of
/// measurement are not spent to find that out at the end), unless `--force`.
pub(crate) fn report(
    out: &Path,
    pages: Option<&Path>,
    quick: bool,
    overwrite: Overwrite,
) -> Result<()> {
    let page_dir = pages.unwrap_or(out);
    let docs = pqkit_bench::reference::documents().map_err(Failure::other)?;
    let mut written = vec![out.join("index.html")];
    written.extend(docs.iter().map(|d| page_dir.join(format!("{}.md", d.key))));
    if overwrite == Overwrite::Refuse
        && let Some(exists) = written.iter().find(|p| p.exists())
    {
        return Err(Failure::other(format!(
            "{}: exists; refusing to overwrite a report (--force replaces it)",
            exists.display()
        )));
    }
    let suite = if quick {
        Suite::quick()
    } else {
        Suite::standard()
    }
    .with_servers(
        crate::heap_rerun::plain_executable()?,
        std::env::var_os("PQKIT_OPENSSL").map(PathBuf::from),
        std::env::var_os("PQKIT_GOTLS").map(PathBuf::from),
    );
    for path in suite.run(out, pages).map_err(Failure::other)? {
        println!("{}", path.display());
    }
    Ok(())
}

/// The `--hash-path` list: path names or "all" (every path this CPU supports); empty for the
/// dispatched path.
///
/// # Errors
/// An unknown name, or a path this CPU does not support.
pub(crate) fn hash_paths(names: &[String]) -> Result<Vec<pqkit_hash::Isa>> {
    use pqkit_hash::Isa;
    let mut out = Vec::new();
    for name in names {
        let name = name.trim().to_ascii_lowercase();
        if name == "all" {
            out.extend(Isa::supported().into_iter().rev());
            continue;
        }
        let isa = Isa::from_name(&name).ok_or_else(|| {
            Failure::usage(format!(
                "unknown hash path {name:?} (avx512, avx2, shani, portable or all)"
            ))
        })?;
        if !isa.is_supported() {
            return Err(Failure::usage(format!(
                "this CPU does not support the {isa} hash path"
            )));
        }
        out.push(isa);
    }
    out.dedup();
    Ok(out)
}
