//! Each benchmark as one [`Measurement`] — its JSON body, tables and plots — and the standard
//! suite `pqkit report` runs and writes as one HTML page.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::machine::Machine;
use crate::plot::{self, Plot};
use crate::render::{self, Table};
use crate::timing::Budget;
use crate::{SCHEMA, boundary, crypto, handshake, preset, primitives, tls};

/// One finished benchmark.
#[derive(Clone, Debug)]
pub struct Measurement {
    /// "crypto", "handshake", "tls", "server", "boundary", "primitives" or "ledger": the JSON
    /// `kind`.
    pub kind: &'static str,
    /// The JSON body: every field beside `schema`, `kind` and `machine`.
    pub body: Value,
    /// Its tables.
    pub tables: Vec<Table>,
    /// Its plots.
    pub plots: Vec<Plot>,
}

/// The JSON envelope of every report (schema `pqkit-bench/1`, in
/// `crates/pqkit-bench/schema/pqkit-bench-1.json`).
#[derive(Debug, Serialize)]
pub struct Envelope<'a> {
    /// [`SCHEMA`].
    pub schema: &'static str,
    /// The measurement's kind.
    pub kind: &'static str,
    /// Where it was measured.
    pub machine: &'a Machine,
    /// The measurement's own fields.
    #[serde(flatten)]
    pub body: &'a Value,
}

impl Measurement {
    fn new<T: Serialize>(
        kind: &'static str,
        body: &T,
        tables: Vec<Table>,
        plots: Result<Vec<Plot>, String>,
    ) -> Result<Self, String> {
        Ok(Self {
            kind,
            body: serde_json::to_value(body).map_err(|e| e.to_string())?,
            tables,
            plots: plots?,
        })
    }

    /// The JSON envelope for `machine`.
    pub fn envelope<'a>(&'a self, machine: &'a Machine) -> Envelope<'a> {
        Envelope {
            schema: SCHEMA,
            kind: self.kind,
            machine,
            body: &self.body,
        }
    }

    /// The name its JSON file and its section of the report take: the kind, and for a
    /// handshake preset the preset's name too ("handshake-m4-paper").
    pub fn stem(&self) -> String {
        match self.body.pointer("/preset/name").and_then(Value::as_str) {
            Some(name) => format!("{}-{name}", self.kind),
            None => self.kind.to_owned(),
        }
    }

    /// Writes each plot into `dir` (created if missing); returns the paths.
    ///
    /// # Errors
    /// I/O errors, with the path.
    pub fn write_plots(&self, dir: &Path) -> Result<Vec<PathBuf>, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        self.plots
            .iter()
            .map(|p| {
                let path = dir.join(p.file);
                std::fs::write(&path, &p.svg).map_err(|e| format!("{}: {e}", path.display()))?;
                Ok(path)
            })
            .collect()
    }
}

fn signing(deterministic: bool) -> &'static str {
    if deterministic {
        "deterministic"
    } else {
        "hedged"
    }
}

/// `bench crypto`.
///
/// # Errors
/// As [`crypto::run`], and plotting errors.
pub fn crypto(options: &crypto::Options) -> Result<Measurement, String> {
    #[derive(Serialize)]
    struct Body<'a> {
        message_bytes: usize,
        signing: &'static str,
        rows: &'a [crypto::Row],
        /// The engine's cost per compression / permutation on each path that ran (what the
        /// rows' `limit_ns` multiplies).
        #[serde(skip_serializing_if = "Vec::is_empty")]
        engine: Vec<crate::engine::Cost>,
    }
    let rows = crypto::run(options)?;
    let mut paths: Vec<pqkit_hash::Isa> = rows
        .iter()
        .filter_map(|r| r.hash_path.and_then(pqkit_hash::Isa::from_name))
        .collect();
    paths.sort();
    paths.dedup();
    let body = Body {
        message_bytes: crypto::MESSAGE_SIZE,
        signing: signing(options.deterministic),
        rows: &rows,
        engine: paths.iter().map(|&p| crate::engine::cost(p)).collect(),
    };
    let mut tables = vec![render::crypto(&rows)];
    tables.extend(render::crypto_peers(&rows));
    if !paths.is_empty() {
        tables.push(crate::engine::table(&paths));
    }
    Measurement::new("crypto", &body, tables, plot::crypto(&rows))
}

/// The JSON body of `bench handshake`, with the preset's comparison when one ran.
#[derive(Serialize)]
struct HandshakeBody<'a> {
    client_message: &'static str,
    server_reply: &'static str,
    rows: &'a [handshake::Row],
    skipped: &'a [handshake::Skipped],
    #[serde(skip_serializing_if = "Option::is_none")]
    preset: Option<PresetBody>,
}

/// A preset's document and its rows, each with pqkit's KEM bytes beside the document's.
#[derive(Serialize)]
struct PresetBody {
    name: &'static str,
    document: &'static str,
    platform: &'static str,
    missing: &'static str,
    rows: Vec<Compared>,
}

#[derive(Serialize)]
struct Compared {
    #[serde(flatten)]
    row: &'static preset::PresetRow,
    /// pqkit's KEM encapsulation key and ciphertext, in bytes.
    our_kem_bytes: Option<(usize, usize)>,
}

/// One handshake measurement: its body, the preset's table first when there is one.
fn handshake_measurement(
    rows: &[handshake::Row],
    skipped: &[handshake::Skipped],
    preset: Option<&preset::Preset>,
) -> Result<Measurement, String> {
    let mut tables = vec![render::handshake(rows, skipped), render::breakdown(rows)];
    if let Some(p) = preset {
        tables.insert(0, render::preset(p, rows));
    }
    let body = HandshakeBody {
        client_message: handshake::CLIENT_MESSAGE,
        server_reply: handshake::SERVER_REPLY,
        rows,
        skipped,
        preset: preset.map(|p| PresetBody {
            name: p.name,
            document: p.document,
            platform: p.platform,
            missing: p.missing,
            rows: p
                .rows
                .iter()
                .map(|row| Compared {
                    row,
                    our_kem_bytes: preset::kem_bytes(row.group),
                })
                .collect(),
        }),
    };
    Measurement::new("handshake", &body, tables, plot::handshake(rows))
}

/// `bench ledger`.
///
/// # Errors
/// As [`crate::ledger::run`].
pub fn ledger(options: &crate::ledger::Options) -> Result<Measurement, String> {
    let report = crate::ledger::run(options)?;
    let tables = vec![crate::ledger::table(&report)];
    Measurement::new("ledger", &report, tables, Ok(Vec::new()))
}

/// `bench handshake`.
///
/// # Errors
/// As [`handshake::run`], and plotting errors.
pub fn handshake(options: &handshake::Options) -> Result<Measurement, String> {
    let (rows, skipped) = handshake::run(options)?;
    handshake_measurement(&rows, &skipped, None)
}

/// `bench handshake --preset NAME`: the preset's rows, each labelled, with the reference
/// document's figures beside pqkit's where they are known (see [`preset`]).
///
/// # Errors
/// As [`handshake::run`], and plotting errors.
pub fn handshake_preset(
    preset: &preset::Preset,
    mutual: &[bool],
    repetitions: usize,
) -> Result<Measurement, String> {
    let pairs: Vec<(String, String)> = preset
        .rows
        .iter()
        .map(|r| (r.signature.to_owned(), r.group.to_owned()))
        .collect();
    let (rows, skipped) = handshake::run_pairs(&pairs, mutual, repetitions)?;
    handshake_measurement(&rows, &skipped, Some(preset))
}

/// `bench tls`.
///
/// # Errors
/// As [`tls::run`], and plotting errors.
pub fn tls(options: &tls::Options) -> Result<Measurement, String> {
    tls_with(options, None)
}

/// `bench tls` with the PKI's own server keys, then (when given) with each signature
/// algorithm's server key from `token` (name, key source): the same table for a server whose
/// key never leaves a PKCS#11 token, from one run.
///
/// # Errors
/// As [`tls`].
pub fn tls_with(
    options: &tls::Options,
    token: Option<(&str, &mut boundary::KeySource<'_>)>,
) -> Result<Measurement, String> {
    #[derive(Serialize)]
    struct Body<'a> {
        seconds: f64,
        bulk_round_bytes: usize,
        rows: &'a [tls::Row],
    }
    let mut rows = tls::run(options)?;
    if let Some(token) = token {
        rows.extend(tls::run_with(options, Some(token))?);
    }
    let body = Body {
        seconds: options.duration.as_secs_f64(),
        bulk_round_bytes: tls::BULK_ROUND,
        rows: &rows,
    };
    Measurement::new("tls", &body, vec![render::tls(&rows)], plot::tls(&rows))
}

/// `bench server`.
///
/// # Errors
/// As [`crate::servers::compare`].
pub fn servers(options: &crate::servers::Options) -> Result<Measurement, String> {
    #[derive(Serialize)]
    struct Body<'a> {
        seconds: f64,
        rounds: usize,
        busy_core: bool,
        rows: &'a [crate::servers::Row],
    }
    let rows = crate::servers::compare(options)?;
    let body = Body {
        seconds: options.load.duration.as_secs_f64(),
        rounds: options.rounds,
        busy_core: options.busy,
        rows: &rows,
    };
    Measurement::new(
        "server",
        &body,
        vec![crate::servers::table(&rows)],
        Ok(Vec::new()),
    )
}

/// `bench boundary`; `sizes` empty for [`boundary::DEFAULT_SIZES`].
///
/// # Errors
/// As [`boundary::run`], and plotting errors.
pub fn boundary(sizes: &[usize], budget: Budget) -> Result<Measurement, String> {
    boundary_with(sizes, budget, &mut [])
}

/// `bench boundary` with keys in process and then with each of `signers` (name, key source):
/// e.g. PKCS#11 tokens in this process and behind `p11-kit server`.
///
/// # Errors
/// As [`boundary`].
pub fn boundary_with(
    sizes: &[usize],
    budget: Budget,
    signers: &mut [(String, &mut boundary::KeySource<'_>)],
) -> Result<Measurement, String> {
    #[derive(Serialize)]
    struct Body<'a> {
        rows: &'a [boundary::Row],
    }
    let sizes = if sizes.is_empty() {
        &boundary::DEFAULT_SIZES[..]
    } else {
        sizes
    };
    let cases = boundary::default_cases();
    let mut rows = boundary::run(&cases, sizes, budget)?;
    for (name, keys) in signers.iter_mut() {
        rows.extend(boundary::run_with(name, *keys, &cases, sizes, budget)?);
    }
    Measurement::new(
        "boundary",
        &Body { rows: &rows },
        vec![render::boundary(&rows)],
        plot::boundary(&rows),
    )
}

/// `bench primitives`: the Cipher+ tables (ciphers and hashes in MB/s, signatures in ops/s,
/// on one core and on every core).
///
/// # Errors
/// As [`primitives::run`].
pub fn primitives(options: &primitives::Options) -> Result<Measurement, String> {
    #[derive(Serialize)]
    struct NotMeasured {
        algorithm: &'static str,
        reason: &'static str,
    }
    #[derive(Serialize)]
    struct Body<'a> {
        buffer_bytes: usize,
        threads: usize,
        rows: &'a [primitives::Row],
        not_offered: Vec<NotMeasured>,
        not_timed: Vec<NotMeasured>,
    }
    let rows = primitives::run(options)?;
    let list = |l: &[(&'static str, &'static str)]| {
        l.iter()
            .map(|&(algorithm, reason)| NotMeasured { algorithm, reason })
            .collect()
    };
    let body = Body {
        buffer_bytes: options.buffer,
        threads: options.threads,
        rows: &rows,
        not_offered: list(&primitives::NOT_OFFERED),
        not_timed: list(&primitives::NOT_TIMED),
    };
    Measurement::new(
        "primitives",
        &body,
        render::primitives(&rows),
        Ok(Vec::new()),
    )
}

/// What `pqkit report` runs.
#[derive(Clone, Debug)]
pub struct Suite {
    /// `bench crypto` options.
    pub crypto: crypto::Options,
    /// `bench handshake` options.
    pub handshake: handshake::Options,
    /// `bench tls` options.
    pub tls: tls::Options,
    /// `bench boundary` message sizes, in bytes.
    pub boundary_sizes: Vec<usize>,
    /// `bench boundary` budget.
    pub boundary_budget: Budget,
    /// `bench handshake --preset`: the preset and how many of its rows (all: its length).
    pub preset: (&'static preset::Preset, usize),
    /// `bench primitives` options.
    pub primitives: primitives::Options,
    /// `bench server` options, when the caller can start `pqkit server` (it knows where the
    /// `pqkit` executable is): [`Suite::with_servers`].
    pub servers: Option<crate::servers::Options>,
    /// "standard" or "quick", as the document pages name the run.
    pub name: &'static str,
}

impl Suite {
    /// The standard suite: every algorithm and the wolfSSL manual's stateful sets (0.2 s
    /// per operation), the default handshake matrix (3 connections per combination, mutual
    /// on and off), the default `bench tls` set (1 s each phase), the boundary table at the
    /// HSM paper's sizes, the m4-paper handshake preset and every classical primitive.
    /// Minutes on a small machine, most of them in SLH-DSA "s" signing and stateful key
    /// generation.
    pub fn standard() -> Self {
        let budget = Budget {
            min_time: std::time::Duration::from_millis(200),
            min_iterations: 3,
        };
        // Every catalogue entry, and the stateful sets of the wolfSSL manual's tables.
        let catalogue = pqkit_core::catalogue::signatures()
            .iter()
            .map(|a| a.name)
            .chain(pqkit_core::catalogue::kems().iter().map(|k| k.name))
            .chain(pqkit_core::catalogue::groups().iter().map(|g| g.name));
        Self {
            crypto: crypto::Options {
                algorithms: catalogue
                    .chain(crate::stateful::REFERENCE)
                    .map(str::to_owned)
                    .collect(),
                budget,
                deterministic: false,
                hash_paths: Vec::new(),
                threads: 1,
                rounds: 1,
            },
            handshake: handshake::Options {
                repetitions: 3,
                ..handshake::Options::default()
            },
            tls: tls::Options::default(),
            boundary_sizes: boundary::DEFAULT_SIZES.to_vec(),
            boundary_budget: budget,
            preset: (&preset::M4_PAPER, preset::M4_PAPER.rows.len()),
            primitives: primitives::Options::default(),
            servers: None,
            name: "standard",
        }
    }

    /// A suite of seconds, for trying the command and for CI: one algorithm of each kind,
    /// two handshake combinations, one `bench tls` combination, two boundary sizes, the first
    /// row of the m4-paper preset, three classical primitives.
    pub fn quick() -> Self {
        let budget = Budget {
            min_time: std::time::Duration::ZERO,
            min_iterations: 2,
        };
        Self {
            crypto: crypto::Options {
                algorithms: vec![
                    "ML-DSA-44".into(),
                    "ML-KEM-768".into(),
                    "X25519MLKEM768".into(),
                ],
                budget,
                deterministic: false,
                hash_paths: Vec::new(),
                threads: 1,
                rounds: 1,
            },
            handshake: handshake::Options {
                signatures: vec!["ML-DSA-44".into(), "ECDSA-P256".into()],
                groups: vec!["X25519MLKEM768".into()],
                mutual: vec![true],
                repetitions: 1,
            },
            tls: tls::Options {
                signatures: vec!["ML-DSA-44".into()],
                groups: vec!["X25519MLKEM768".into()],
                duration: std::time::Duration::from_millis(200),
                ..tls::Options::default()
            },
            boundary_sizes: vec![1 << 10, 64 << 10],
            boundary_budget: budget,
            preset: (&preset::M4_PAPER, 1),
            primitives: primitives::Options {
                min_time: std::time::Duration::from_millis(20),
                only: vec!["AES-128".into(), "SHA-256".into(), "ECDSA-P256".into()],
                ..primitives::Options::default()
            },
            servers: None,
            name: "quick",
        }
    }

    /// Adds `bench server` with the `pqkit` executable at `pqkit` (and OpenSSL's `openssl`
    /// and the gotls peer when given): ML-DSA-65 certificates, X25519MLKEM768, 8 client
    /// threads, 3 rounds of 3 s (the quick suite: 2 threads, one round of 0.3 s).
    #[must_use]
    pub fn with_servers(
        mut self,
        pqkit: PathBuf,
        openssl: Option<PathBuf>,
        gotls: Option<PathBuf>,
    ) -> Self {
        let quick = self.name == "quick";
        self.servers = Some(crate::servers::Options {
            signature: "ML-DSA-65".to_owned(),
            group: "X25519MLKEM768".to_owned(),
            load: crate::load::Load {
                clients: if quick { 2 } else { 8 },
                duration: std::time::Duration::from_millis(if quick { 300 } else { 3000 }),
                rate: None,
                resume: false,
                timeout: std::time::Duration::from_secs(10),
            },
            rounds: if quick { 1 } else { 3 },
            pqkit,
            proxy: true,
            openssl,
            gotls,
            busy: false,
            workers: None,
        });
        self
    }

    /// Runs every benchmark and writes into `dir`: `index.html` (every table and plot on one
    /// page), `<kind>.json` per benchmark (`handshake-<preset>.json` for the preset), each plot
    /// as an SVG file, and one Markdown page per reference document ([`crate::documents`]) —
    /// into `pages` if given (e.g. the book's `docs/src/perf/measured`). Returns the paths.
    ///
    /// # Errors
    /// A benchmark's error, or an I/O error with its path.
    pub fn run(&self, dir: &Path, pages: Option<&Path>) -> Result<Vec<PathBuf>, String> {
        let machine = Machine::detect();
        let docs = crate::reference::documents()?;
        let (preset, rows) = self.preset;
        let subset = preset::Preset {
            rows: &preset.rows[..rows.min(preset.rows.len())],
            ..*preset
        };
        let mut preset_run = handshake_preset(&subset, &[true], self.handshake.repetitions)?;
        // Its plots would have the matrix's file names; the matrix's plots are the report's.
        preset_run.plots.clear();
        let mut measurements = vec![
            crypto(&self.crypto)?,
            handshake(&self.handshake)?,
            tls(&self.tls)?,
            boundary(&self.boundary_sizes, self.boundary_budget)?,
            preset_run,
            primitives(&self.primitives)?,
        ];
        if let Some(servers) = &self.servers {
            measurements.push(self::servers(servers)?);
        }
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut written = Vec::new();
        for m in &measurements {
            written.extend(m.write_plots(dir)?);
            let path = dir.join(format!("{}.json", m.stem()));
            let json =
                serde_json::to_string_pretty(&m.envelope(&machine)).map_err(|e| e.to_string())?;
            std::fs::write(&path, json).map_err(|e| format!("{}: {e}", path.display()))?;
            written.push(path);
        }
        let page_dir = pages.unwrap_or(dir);
        std::fs::create_dir_all(page_dir).map_err(|e| format!("{}: {e}", page_dir.display()))?;
        let bodies: Vec<(&str, &Value)> = measurements.iter().map(|m| (m.kind, &m.body)).collect();
        for (name, text) in crate::documents::pages(&docs, &machine, &bodies, self.name) {
            let path = page_dir.join(name);
            std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
            written.push(path);
        }
        let path = dir.join("index.html");
        std::fs::write(&path, html(&machine, &measurements))
            .map_err(|e| format!("{}: {e}", path.display()))?;
        written.push(path);
        Ok(written)
    }
}

/// One self-contained page: the machine line, then per benchmark its tables and inline plots.
pub fn html(machine: &Machine, measurements: &[Measurement]) -> String {
    let mut out = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>pqkit-bench report</title><style>\
         body{font-family:sans-serif;margin:2em;max-width:1400px}\
         table{border-collapse:collapse;margin:1em 0;font-size:13px}\
         th,td{border:1px solid #ccc;padding:2px 6px}td.n{text-align:right}\
         th{background:#eee}svg{max-width:100%;height:auto}</style></head><body>\n\
         <h1>pqkit-bench report</h1>\n",
    );
    out.push_str(&format!(
        "<p>Machine: {} · schema {SCHEMA}</p>\n",
        render::escape(&machine.line())
    ));
    for m in measurements {
        out.push_str(&format!("<h2>bench {}</h2>\n", m.stem()));
        for t in &m.tables {
            out.push_str(&t.to_html());
        }
        for p in &m.plots {
            // plotters writes a standalone document; inline it without the XML declaration.
            let svg = p.svg.find("<svg").map_or(&p.svg[..], |i| &p.svg[i..]);
            out.push_str(&format!(
                "<figure>{svg}<figcaption>{}</figcaption></figure>\n",
                p.file
            ));
        }
    }
    out.push_str("</body></html>\n");
    out
}
