//! `bench ledger`: what the reservation ledger costs a stateful signer — signatures per second
//! through `StatefulKey` with the state file alone (an in-memory ledger: the ledger-less rate),
//! with the SQLite ledger, and with an etcd cluster for one and for several signers sharing one
//! key, each reserving `reserve` one-time keys at a time, the next batch reserved in the
//! background while one is signed (`StatefulKey::set_ahead`). The in-memory signer (no state
//! file) is the floor.
//!
//! Each round generates a fresh key outside the timing and signs its whole range (a key of
//! 2^h one-time keys; several signers share it by taking ranges from the ledger), so no
//! one-time key is used twice. Each signer's first batch — its first reservation, made before
//! any signature as opening a key makes it — is signed before the clock starts. The
//! configurations take rounds in turn until each has had its time (three rounds at least);
//! a row's rate is the median of its rounds'. The ledger's cost per signature is the
//! difference from the ledger-less row, also as a share of its time per signature (one signer;
//! several share the processors).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pqkit_hbs::hazmat::SignAt as _;
use pqkit_hbs::ledger::{Ledger, LedgerSpec, hazmat};
use pqkit_hbs::preset::Shape;
use pqkit_hbs::signer::Signer;
use pqkit_hbs::state::{NewKey, StateError, StatefulKey};
use serde::Serialize;

use crate::render::Table;

/// What to measure.
#[derive(Clone, Debug)]
pub struct Options {
    /// The HSS preset signed with (default L1_H10_W4: one LMS tree of 1024 one-time keys).
    pub preset: String,
    /// One-time keys reserved per ledger write (`--reserve`).
    pub reserve: u64,
    /// Signers sharing the key on etcd, besides the single signer (0: none).
    pub signers: usize,
    /// Wall time to spend on each row (at least three keys each).
    pub min_time: Duration,
    /// The etcd cluster: `Some(spec)` to use one, `None` to start a 3-member cluster on
    /// 127.0.0.1 when an etcd binary is found, and skip the etcd rows when not.
    pub etcd: Option<String>,
    /// Skip the etcd rows.
    pub no_etcd: bool,
    /// Where the state files and the SQLite ledger go (default: the temporary directory).
    pub dir: Option<PathBuf>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            preset: "L1_H10_W4".to_owned(),
            reserve: 64,
            signers: 3,
            min_time: Duration::from_secs(2),
            etcd: None,
            no_etcd: false,
            dir: None,
        }
    }
}

/// One row.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// "none (in-memory signer)", "none (state file only)", "SQLite", "etcd".
    pub ledger: String,
    /// Where the ledger is (a path, an etcd URL), or empty.
    pub location: String,
    /// Signers signing at once (all of one key).
    pub signers: usize,
    /// One-time keys reserved per ledger write.
    pub reserve: u64,
    /// Signatures timed (each key's first batch is not).
    pub signatures: u64,
    /// Wall time of the timed signing, in ns.
    pub wall_ns: u64,
    /// Signatures per second, all signers together: the median of the rounds' rates.
    pub signatures_per_sec: f64,
    /// Wall time per signature, in ns (1e9 / rate).
    pub ns_per_signature: f64,
    /// The ledger's cost per signature beside the ledger-less row, in ns (`None` for the
    /// ledger-less rows).
    pub ledger_ns_per_signature: Option<f64>,
    /// That cost as a share of the ledger-less time per signature, in percent.
    pub ledger_percent: Option<f64>,
}

/// What `bench ledger` measured.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The preset signed with.
    pub preset: String,
    /// Its one-time keys.
    pub capacity: u64,
    /// The rows.
    pub rows: Vec<Row>,
    /// Why rows are missing, if some are.
    pub skipped: Vec<String>,
}

/// A scratch directory for one run, removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn e(err: StateError) -> String {
    err.to_string()
}

/// One signer of a round: in memory (the floor) or through a state file.
enum Signing {
    Memory(Box<Signer>, u64),
    Key(Box<StatefulKey>),
}

impl Signing {
    /// Signs one message; `false` when the key (or its range on a shared ledger) is exhausted.
    fn sign(&mut self, msg: &[u8]) -> Result<bool, String> {
        match self {
            Self::Memory(s, q) => match s.sign_at(*q, msg) {
                Ok(_) => {
                    *q += 1;
                    Ok(true)
                }
                Err(pqkit_hbs::Error::Exhausted) => Ok(false),
                Err(err) => Err(err.to_string()),
            },
            Self::Key(key) => match key.sign(msg) {
                Ok(_) => Ok(true),
                Err(StateError::Hbs(pqkit_hbs::Error::Exhausted)) => Ok(false),
                Err(err) => Err(e(err)),
            },
        }
    }
}

/// Signs one fresh key's whole range with `signers` (one thread each). Each signer's first
/// `warmup` signatures (its first reservation, the worker's start: what opening a key costs
/// once) are signed before the clock starts, all signers together; the rest is timed until
/// every signer has run out. Returns the timed signatures and the wall time.
fn round(mut signers: Vec<Signing>, warmup: u64) -> Result<(u64, Duration), String> {
    let ready = std::sync::Barrier::new(signers.len() + 1);
    let (counts, elapsed) = std::thread::scope(|s| {
        let handles: Vec<_> = signers
            .iter_mut()
            .map(|signer| {
                let ready = &ready;
                s.spawn(move || {
                    let mut n = 0u64;
                    let mut warm = Ok(true);
                    while n < warmup && matches!(warm, Ok(true)) {
                        warm = signer.sign(&n.to_be_bytes());
                        n += 1;
                    }
                    ready.wait();
                    if !warm? {
                        return Ok(0);
                    }
                    let mut timed = 0u64;
                    while signer.sign(&(n + timed).to_be_bytes())? {
                        timed += 1;
                    }
                    Ok(timed)
                })
            })
            .collect();
        ready.wait();
        let start = Instant::now();
        let counts: Vec<Result<u64, String>> = handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("a signer panicked".into())))
            .collect();
        (counts, start.elapsed())
    });
    let mut total = 0;
    for c in counts {
        total += c?;
    }
    Ok((total, elapsed))
}

/// One configuration: a row's label and how to make a fresh key's signers.
struct Config<'a> {
    ledger: &'static str,
    location: String,
    signers: usize,
    reserve: u64,
    make: Box<dyn FnMut(usize) -> Result<Vec<Signing>, String> + 'a>,
    /// Each round's rate, signatures per second.
    rates: Vec<f64>,
    signatures: u64,
    wall: Duration,
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

impl Config<'_> {
    fn row(&self) -> Row {
        let rate = median(&self.rates);
        Row {
            ledger: self.ledger.to_owned(),
            location: self.location.clone(),
            signers: self.signers,
            reserve: self.reserve,
            signatures: self.signatures,
            wall_ns: u64::try_from(self.wall.as_nanos()).unwrap_or(u64::MAX),
            signatures_per_sec: rate,
            ns_per_signature: 1e9 / rate.max(1e-9),
            ledger_ns_per_signature: None,
            ledger_percent: None,
        }
    }
}

/// Sets the ledger cost of each one-signer row against the ledger-less row (several signers
/// share the processors: their rate is the fleet's, not a cost per signature).
fn compare(rows: &mut [Row], baseline_ns: f64) {
    for r in rows.iter_mut().filter(|r| r.signers == 1) {
        let per = r.ns_per_signature;
        r.ledger_ns_per_signature = Some(per - baseline_ns);
        r.ledger_percent = Some(100.0 * (per - baseline_ns) / baseline_ns.max(1e-9));
    }
}

/// Runs `bench ledger`.
///
/// # Errors
/// An unknown preset, a directory that cannot be written, a ledger that fails; an etcd cluster
/// named but not reachable, or one that cannot be started when an etcd binary is found.
pub fn run(options: &Options) -> Result<Report, String> {
    let shape = Shape::parse(&options.preset).map_err(|e| format!("{}: {e}", options.preset))?;
    let levels = shape.levels();
    let base = options.dir.clone().unwrap_or_else(std::env::temp_dir);
    let scratch = Scratch(base.join(format!("pqkit-bench-ledger-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&scratch.0);
    std::fs::create_dir_all(&scratch.0).map_err(|e| format!("{}: {e}", scratch.0.display()))?;
    let dir = scratch.0.as_path();
    let reserve = options.reserve.max(1);
    let mut skipped = Vec::new();
    let file = |tag: &str, round: usize| dir.join(format!("{tag}-{round}.hss"));
    let fresh = |path: &Path, ledger: Ledger| -> Result<StatefulKey, String> {
        let mut key = NewKey::hss(path, &levels, 1)
            .and_then(|k| k.commit(ledger))
            .map_err(e)?;
        key.set_batch(reserve);
        key.set_ahead(true);
        Ok(key)
    };
    let fresh = &fresh;
    let file = &file;
    let levels = &levels;

    // etcd: a cluster named, or one started here.
    let mut cluster = None;
    let spec = match (&options.etcd, options.no_etcd) {
        (_, true) => None,
        (Some(spec), false) => Some(LedgerSpec::parse(spec).map_err(|e| e.to_string())?),
        (None, false) if crate::etcd::binary().is_some() => {
            let c = crate::etcd::Cluster::start(3)?;
            let spec = LedgerSpec::parse(&c.spec()).map_err(|e| e.to_string())?;
            cluster = Some(c);
            Some(spec)
        }
        (None, false) => {
            skipped.push(
                "etcd: no etcd binary (Debian's etcd-server) and no --etcd cluster".to_owned(),
            );
            None
        }
    };
    let sqlite_path = dir.join("hbs-ledger.sqlite3");
    let mut configs: Vec<Config<'_>> = Vec::new();
    let mut add = |ledger, location, signers, reserve, make| {
        configs.push(Config {
            ledger,
            location,
            signers,
            reserve,
            make,
            rates: Vec::new(),
            signatures: 0,
            wall: Duration::ZERO,
        });
    };
    // The floor: the signer in memory, no state file, no ledger.
    add(
        "none (in-memory signer)",
        String::new(),
        1,
        0,
        Box::new(move |_| {
            let m = levels.first().map_or(32, |(l, _)| l.m);
            let (mut seed, mut id) = (vec![0u8; m], [0u8; 16]);
            getrandom04::fill(&mut seed).map_err(|e| e.to_string())?;
            getrandom04::fill(&mut id).map_err(|e| e.to_string())?;
            let s = pqkit_hbs::hss::HssSigner::generate(levels, id, &seed, 1)
                .map_err(|e| e.to_string())?;
            Ok(vec![Signing::Memory(Box::new(Signer::Hss(s)), 0)])
        }),
    );
    // The state file alone: its reservations recorded in a ledger in this process's memory.
    add(
        "none (state file only)",
        String::new(),
        1,
        reserve,
        Box::new(move |round| {
            let key = fresh(&file("state", round), hazmat::in_memory())?;
            Ok(vec![Signing::Key(Box::new(key))])
        }),
    );
    let sqlite_location = sqlite_path.display().to_string();
    let sqlite_path = &sqlite_path;
    add(
        "SQLite",
        sqlite_location,
        1,
        reserve,
        Box::new(move |round| {
            let ledger = Ledger::sqlite(sqlite_path).map_err(|e| e.to_string())?;
            Ok(vec![Signing::Key(Box::new(fresh(
                &file("sqlite", round),
                ledger,
            )?))])
        }),
    );
    if let Some(spec) = &spec {
        let counts: Vec<usize> = if options.signers > 1 {
            vec![1, options.signers]
        } else {
            vec![1]
        };
        for signers in counts {
            add(
                "etcd",
                spec.to_string(),
                signers,
                reserve,
                Box::new(move |round| {
                    let connect = || Ledger::open(spec).map_err(|e| e.to_string());
                    let first = file(&format!("etcd{signers}"), round);
                    drop(fresh(&first, connect()?)?);
                    let mut keys = Vec::with_capacity(signers);
                    for i in 0..signers {
                        let path = first.with_extension(format!("hss.{i}"));
                        std::fs::copy(&first, &path).map_err(|e| e.to_string())?;
                        let mut key = StatefulKey::open(&path, connect()?, 1).map_err(e)?;
                        key.set_batch(reserve);
                        key.set_ahead(true);
                        keys.push(Signing::Key(Box::new(key)));
                    }
                    Ok(keys)
                }),
            );
        }
    }
    // Rounds of every configuration in turn, until each has had its time (at least three):
    // a busy moment of the machine falls on one round, and the median leaves it out.
    let mut pass = 0;
    while pass < 3 || configs.iter().any(|c| c.wall < options.min_time) {
        for c in &mut configs {
            let (n, wall) = round((c.make)(pass)?, reserve)?;
            c.rates.push(n as f64 / wall.as_secs_f64().max(1e-9));
            c.signatures += n;
            c.wall += wall;
        }
        pass += 1;
    }
    drop(cluster);
    let mut rows: Vec<Row> = configs.iter().map(Config::row).collect();
    let baseline_ns = rows[1].ns_per_signature;
    compare(&mut rows[2..], baseline_ns);
    Ok(Report {
        preset: shape.name(),
        capacity: shape.signatures(),
        rows,
        skipped,
    })
}

/// A ledger's cost, which is a difference of two medians: one below zero is the machine's
/// noise, not a ledger that makes signing faster.
fn cost(x: f64, places: usize) -> String {
    if x < 0.0 {
        "≈ 0 (noise)".to_owned()
    } else {
        format!("{x:.places$}")
    }
}

/// The table: one row per ledger and signer count.
pub fn table(report: &Report) -> Table {
    let mut t = Table::new(
        &format!(
            "Stateful signing with a reservation ledger: {} ({} one-time keys), signatures per \
             second after each signer's first batch (all signers of one key together); ledger \
             cost beside the state file alone",
            report.preset, report.capacity
        ),
        &[
            "ledger",
            "signers",
            "reserve",
            "signatures",
            "signatures/s",
            "µs/signature",
            "ledger µs/signature",
            "ledger % of signature",
        ],
    );
    for r in &report.rows {
        t.rows.push(vec![
            r.ledger.clone(),
            r.signers.to_string(),
            r.reserve.to_string(),
            r.signatures.to_string(),
            format!("{:.0}", r.signatures_per_sec),
            format!("{:.1}", r.ns_per_signature / 1e3),
            r.ledger_ns_per_signature
                .map_or_else(|| "-".to_owned(), |n| cost(n / 1e3, 2)),
            r.ledger_percent
                .map_or_else(|| "-".to_owned(), |p| cost(p, 1)),
        ]);
    }
    t
}
