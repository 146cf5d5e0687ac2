//! `pqkit bench server`: TLS servers side by side under the same load ([`crate::load`]) — `pqkit
//! server`, `pqkit proxy` (in front of an echo service in this process, over TCP and over a
//! Unix-domain socket), OpenSSL `s_server` and
//! Go crypto/tls (`../shared/peers/gotls`) when their programs are given — on the same
//! certificate and key, rounds interleaved (each round runs every server once, in order), each
//! server started once and kept running for the whole comparison.
//!
//! Per server: connections per second (each round's, then their median), latency percentiles
//! p50/p90/p99/p99.9 over every connection of every round, the server process's CPU time
//! per connection (`/proc/PID/stat`) with its ratio to `pqkit server`'s, and the server's and
//! this process's together (the clients, and the echo service behind the proxy; kernel
//! threads — loopback receive work moved to ksoftirqd — are in neither).
//!
//! A proxy pays for a second connection per client, to a service that shares the cores. What
//! that costs is measured in each round beside the servers: the **bare second hop** — connect
//! to the same echo service, [`load::REQUEST`] written, the echo and the end of stream read,
//! close; blocking calls, one at a time, no TLS, no runtime — in CPU µs per hop (this
//! process's: both ends run here). A proxy that spent nothing of its own on the hop would serve
//! about `m / (m + hop)` of `pqkit server`'s connections per second, `m` being `pqkit
//! server`'s server-and-load CPU per connection, once the cores are all busy: the proxy rows'
//! **ideal proxy** estimate (closed loop only; an estimate, not a bound: under load some of
//! the hop's wake-ups are shared between connections, which one-at-a-time hops cannot show).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use pqkit_pki::Pki;
use pqkit_pki::output::Overwrite;
use rustls_pki_types::CertificateDer;
use serde::Serialize;

use crate::load::{self, Load, Server};

/// What to compare.
#[derive(Clone, Debug)]
pub struct Options {
    /// The certificates' signature algorithm.
    pub signature: String,
    /// The named group the clients offer (and the servers accept).
    pub group: String,
    /// The load of each run.
    pub load: Load,
    /// Rounds: each runs every server once.
    pub rounds: usize,
    /// The `pqkit` executable (`pqkit server` and `pqkit proxy`).
    pub pqkit: PathBuf,
    /// Also `pqkit proxy`.
    pub proxy: bool,
    /// OpenSSL's `openssl` (3.5 or newer for ML-DSA and ML-KEM), when compared.
    pub openssl: Option<PathBuf>,
    /// The gotls peer built with Go (1.27 for ML-DSA certificates), when compared.
    pub gotls: Option<PathBuf>,
    /// Keep one core busy with another process (a shell loop) during every run.
    pub busy: bool,
    /// `pqkit server`'s and `pqkit proxy`'s worker threads (`None`: one per core).
    pub workers: Option<usize>,
}

/// One server's results over all rounds.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// The server.
    pub server: String,
    /// The certificates' signature algorithm.
    pub signature: String,
    /// The named group.
    pub group: String,
    /// "full" (RFC 8446 full handshakes) or "resumed".
    pub handshakes: &'static str,
    /// Client threads.
    pub clients: usize,
    /// Connections per second started, open loop (`None`: closed loop).
    pub rate: Option<f64>,
    /// Connections completed, all rounds.
    pub connections: u64,
    /// Failed connections, all rounds.
    pub errors: u64,
    /// The first failure, in words.
    pub first_error: Option<String>,
    /// Completed connections that resumed.
    pub resumed: u64,
    /// Each round's connections per second.
    pub connections_per_sec_rounds: Vec<f64>,
    /// Their median.
    pub connections_per_sec: f64,
    /// Latency percentiles from (scheduled) start to answer, in ms.
    pub p50_ms: f64,
    /// 90th percentile, ms.
    pub p90_ms: f64,
    /// 99th percentile, ms.
    pub p99_ms: f64,
    /// 99.9th percentile, ms.
    pub p999_ms: f64,
    /// Server CPU time per completed connection, in µs (`None`: not measured).
    pub server_cpu_us_per_connection: Option<f64>,
    /// That CPU time over `pqkit server`'s in the same run.
    pub cpu_vs_pqkit_server: Option<f64>,
    /// Connections per second over `pqkit server`'s in the same run.
    pub rate_vs_pqkit_server: Option<f64>,
    /// The server's and the load generator's CPU time per completed connection, in µs (with
    /// the echo service behind a proxy; `None`: the server's not measured).
    pub server_and_load_cpu_us_per_connection: Option<f64>,
    /// Proxy rows: the bare second hop to the same echo service, machine CPU µs per hop (the
    /// median of the rounds; module docs).
    pub second_hop_cpu_us: Option<f64>,
    /// Proxy rows, closed loop: about the connections per second over `pqkit server`'s that a
    /// proxy spending nothing of its own on the second hop would reach, `m / (m + hop)` (module
    /// docs).
    pub rate_ideal_proxy_vs_pqkit_server: Option<f64>,
}

/// A started server process, stopped (killed and reaped) when dropped.
struct Started {
    server: Server,
    child: Option<Child>,
    /// A proxy's echo service (`--target`'s value), for the bare hop.
    echo: Option<String>,
}

impl Drop for Started {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Runs the comparison (see the module docs).
///
/// # Errors
/// When the PKI cannot be made, a server does not start listening within 10 s, or the load
/// cannot run; each names the server.
pub fn compare(options: &Options) -> Result<Vec<Row>, String> {
    let algorithm =
        pqkit_core::catalogue::signature(&options.signature).map_err(|e| e.to_string())?;
    let dir = std::env::temp_dir().join(format!(
        "pqkit-bench-server-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    // Created here, exclusively: a directory already there is not this run's to remove.
    std::fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let _cleanup = RemoveOnDrop(dir.clone());
    let pki = Pki::generate(algorithm).map_err(|e| e.to_string())?;
    let paths = pki
        .write(&dir, Overwrite::Refuse)
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut servers = Vec::new();
    servers.push(start_pqkit(
        options,
        &paths.server_cert,
        &paths.server_key,
        None,
    )?);
    if options.proxy {
        // The same echo behind a TCP port and behind a Unix-domain socket: a proxy's second
        // hop costs a loopback TCP connection per client in the first, not in the second.
        for target in [echo_tcp()?, echo_unix(&dir.join("echo.sock"))?] {
            servers.push(start_pqkit(
                options,
                &paths.server_cert,
                &paths.server_key,
                Some(target),
            )?);
        }
    }
    if let Some(openssl) = &options.openssl {
        servers.push(start_openssl(
            openssl,
            options,
            &dir,
            &paths.server_cert,
            &paths.server_key,
        )?);
    }
    if let Some(gotls) = &options.gotls {
        servers.push(start_go(
            gotls,
            options,
            &paths.server_cert,
            &paths.server_key,
        )?);
    }
    let roots = [CertificateDer::from(pki.ca_cert.clone())];
    let provider = Arc::new(pqkit_rustls::provider_with_groups(vec![
        pqkit_rustls::find_group(&options.group).map_err(|e| e.to_string())?,
    ]));
    let (config, _seen) =
        pqkit_rustls::client_config(provider, &roots, None).map_err(|e| e.to_string())?;
    let _busy = if options.busy {
        Some(busy_core()?)
    } else {
        None
    };
    let mut runs: Vec<Vec<load::Run>> = vec![Vec::new(); servers.len()];
    // A first short run of each server, not counted: connections, tickets and page faults warm.
    let warm = Load {
        duration: Duration::from_millis(300),
        rate: None,
        ..options.load.clone()
    };
    for s in &servers {
        load::run(&s.server, &config, &warm).map_err(|e| format!("{}: {e}", s.server.name))?;
    }
    let mut hops: Vec<Vec<f64>> = vec![Vec::new(); servers.len()];
    for _ in 0..options.rounds.max(1) {
        for (i, s) in servers.iter().enumerate() {
            if let Some(echo) = &s.echo {
                hops[i].push(bare_hop(echo, HOP_TIME)?);
            }
            let run = load::run(&s.server, &config, &options.load)
                .map_err(|e| format!("{}: {e}", s.server.name))?;
            runs[i].push(run);
        }
    }
    let mut rows: Vec<Row> = runs.iter().map(|r| row(options, r)).collect();
    let (base_cpu, base_rate) = rows
        .first()
        .map(|r| (r.server_cpu_us_per_connection, r.connections_per_sec))
        .unwrap_or_default();
    let base_machine = rows
        .first()
        .and_then(|r| r.server_and_load_cpu_us_per_connection);
    for (r, hops) in rows.iter_mut().zip(&mut hops) {
        hops.sort_by(f64::total_cmp);
        r.second_hop_cpu_us = hops.get(hops.len() / 2).copied();
        r.rate_ideal_proxy_vs_pqkit_server = r
            .second_hop_cpu_us
            .zip(base_machine)
            .filter(|_| options.load.rate.is_none())
            .map(|(hop, m)| m / (m + hop));
    }
    for r in &mut rows {
        r.cpu_vs_pqkit_server = r
            .server_cpu_us_per_connection
            .zip(base_cpu)
            .filter(|(_, b)| *b > 0.0)
            .map(|(c, b)| c / b);
        r.rate_vs_pqkit_server = (base_rate > 0.0).then(|| r.connections_per_sec / base_rate);
    }
    Ok(rows)
}

fn row(options: &Options, runs: &[load::Run]) -> Row {
    let mut latencies: Vec<u32> = runs.iter().flat_map(|r| r.latencies_us.clone()).collect();
    latencies.sort_unstable();
    let mut rates: Vec<f64> = runs
        .iter()
        .map(|r| r.connections as f64 / r.seconds.max(1e-9))
        .collect();
    let connections: u64 = runs.iter().map(|r| r.connections).sum();
    let cpu: Option<f64> = runs.iter().map(|r| r.server_cpu_seconds).sum();
    let load_cpu: f64 = runs.iter().map(|r| r.load_cpu_seconds).sum();
    let ms = |per_mille| f64::from(load::percentile(&latencies, per_mille)) / 1e3;
    let per_round = rates.clone();
    rates.sort_by(f64::total_cmp);
    Row {
        server: runs.first().map(|r| r.server.clone()).unwrap_or_default(),
        signature: options.signature.clone(),
        group: options.group.clone(),
        handshakes: if options.load.resume {
            "resumed"
        } else {
            "full"
        },
        clients: options.load.clients,
        rate: options.load.rate,
        connections,
        errors: runs.iter().map(|r| r.errors).sum(),
        first_error: runs.iter().find_map(|r| r.first_error.clone()),
        resumed: runs.iter().map(|r| r.resumed).sum(),
        connections_per_sec: rates.get(rates.len() / 2).copied().unwrap_or(0.0),
        connections_per_sec_rounds: per_round,
        p50_ms: ms(500),
        p90_ms: ms(900),
        p99_ms: ms(990),
        p999_ms: ms(999),
        server_cpu_us_per_connection: cpu
            .filter(|_| connections > 0)
            .map(|c| c * 1e6 / connections as f64),
        cpu_vs_pqkit_server: None,
        rate_vs_pqkit_server: None,
        server_and_load_cpu_us_per_connection: cpu
            .filter(|_| connections > 0)
            .map(|c| (c + load_cpu) * 1e6 / connections as f64),
        second_hop_cpu_us: None,
        rate_ideal_proxy_vs_pqkit_server: None,
    }
}

/// How long each round measures the bare second hop.
const HOP_TIME: Duration = Duration::from_millis(500);

/// The longest one bare hop's connect, write or read may take.
const HOP_TIMEOUT: Duration = Duration::from_secs(5);

/// The bare second hop to `target` (`host:port` or `unix:PATH`, an echo service of this
/// process) for `time`: the machine's CPU µs per hop, this process's CPU over the hops (the
/// hop's client side and the echo service both run here, and nothing else does meanwhile).
///
/// # Errors
/// A failed hop, naming the target.
fn bare_hop(target: &str, time: Duration) -> Result<f64, String> {
    fn once<S: Read + Write>(mut socket: S) -> std::io::Result<()> {
        socket.write_all(load::REQUEST)?;
        let mut answer = Vec::with_capacity(load::REQUEST.len());
        socket
            .take(load::REQUEST.len() as u64 + 1)
            .read_to_end(&mut answer)?;
        if answer == load::REQUEST {
            Ok(())
        } else {
            Err(std::io::Error::other("the echo answered something else"))
        }
    }
    let failed = |e: std::io::Error| format!("the bare second hop to {target}: {e}");
    // Parsed once, outside the timed loop.
    let tcp_address = match target.strip_prefix("unix:") {
        Some(_) => None,
        None => Some(
            target
                .parse::<SocketAddr>()
                .map_err(|e| format!("the bare second hop to {target}: {e}"))?,
        ),
    };
    let before = load::cpu_seconds(std::process::id())?;
    let start = Instant::now();
    let mut hops = 0u32;
    while start.elapsed() < time {
        match tcp_address {
            None => {
                let path = target.trim_start_matches("unix:");
                let unix = std::os::unix::net::UnixStream::connect(path).map_err(failed)?;
                unix.set_read_timeout(Some(HOP_TIMEOUT)).map_err(failed)?;
                unix.set_write_timeout(Some(HOP_TIMEOUT)).map_err(failed)?;
                once(unix)
            }
            Some(address) => {
                let tcp = TcpStream::connect_timeout(&address, HOP_TIMEOUT).map_err(failed)?;
                tcp.set_nodelay(true).map_err(failed)?;
                tcp.set_read_timeout(Some(HOP_TIMEOUT)).map_err(failed)?;
                tcp.set_write_timeout(Some(HOP_TIMEOUT)).map_err(failed)?;
                once(tcp)
            }
        }
        .map_err(failed)?;
        hops += 1;
    }
    let cpu = load::cpu_seconds(std::process::id())? - before;
    Ok(cpu * 1e6 / f64::from(hops.max(1)))
}

/// `pqkit server`, or `pqkit proxy` in front of `target` (`host:port` or `unix:PATH`), on a
/// free port.
fn start_pqkit(
    options: &Options,
    cert: &Path,
    key: &Path,
    target: Option<String>,
) -> Result<Started, String> {
    let port = free_port()?;
    let mut cmd = Command::new(&options.pqkit);
    let name = match &target {
        None => {
            cmd.args(["server", "--port", &port.to_string()]);
            "pqkit server"
        }
        Some(t) => {
            cmd.args(["proxy", "--listen", &format!("127.0.0.1:{port}")])
                .args(["--target", t, "--disable-authentication"]);
            if t.starts_with("unix:") {
                "pqkit proxy (unix target)"
            } else {
                "pqkit proxy (TCP target)"
            }
        }
    };
    cmd.args(["--groups", &options.group, "--max-connections", "4096"])
        .args(["--log-level", "error"])
        .arg("--cert")
        .arg(cert)
        .arg("--key")
        .arg(key);
    if let Some(w) = options.workers {
        cmd.args(["--workers", &w.to_string()]);
    }
    let mut started = start(name.to_owned(), port, &mut cmd)?;
    started.echo = target;
    Ok(started)
}

/// OpenSSL's `s_server -rev` (answers each line reversed), TLS 1.3, on a free port.
fn start_openssl(
    openssl: &Path,
    options: &Options,
    dir: &Path,
    cert: &Path,
    key: &Path,
) -> Result<Started, String> {
    let version = Command::new(openssl)
        .arg("version")
        .output()
        .map_err(|e| format!("{}: {e}", openssl.display()))?;
    let version = String::from_utf8_lossy(&version.stdout);
    let version = version
        .split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ");
    let conf = dir.join("openssl.cnf");
    std::fs::write(&conf, "[req]\ndistinguished_name = dn\n[dn]\n")
        .map_err(|e| format!("{}: {e}", conf.display()))?;
    let port = free_port()?;
    let mut cmd = Command::new(openssl);
    cmd.env("OPENSSL_CONF", &conf)
        .args(["s_server", "-accept", &format!("127.0.0.1:{port}")])
        .args(["-tls1_3", "-rev", "-quiet", "-groups", &options.group])
        .arg("-cert")
        .arg(cert)
        .arg("-key")
        .arg(key);
    start(format!("{version} s_server"), port, &mut cmd)
}

/// The gotls peer in echo mode, on a free port.
fn start_go(gotls: &Path, options: &Options, cert: &Path, key: &Path) -> Result<Started, String> {
    let port = free_port()?;
    let mut cmd = Command::new(gotls);
    cmd.args([
        "server",
        "-mode",
        "echo",
        "-addr",
        &format!("127.0.0.1:{port}"),
    ])
    .args(["-groups", &options.group])
    .arg("-cert")
    .arg(cert)
    .arg("-key")
    .arg(key);
    start("Go crypto/tls (gotls)".to_owned(), port, &mut cmd)
}

/// Spawns `cmd` (its output discarded: servers that print a line per connection would fill a
/// pipe) and waits until it listens on `port`.
fn start(name: String, port: u16, cmd: &mut Command) -> Result<Started, String> {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{name}: {e}"))?;
    let mut started = Started {
        echo: None,
        server: Server {
            name,
            address: SocketAddr::from(([127, 0, 0, 1], port)),
            pid: Some(child.id()),
        },
        child: Some(child),
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(started.server.address).is_err() {
        if let Some(c) = started.child.as_mut()
            && let Ok(Some(status)) = c.try_wait()
        {
            return Err(format!(
                "{} exited at start ({status})",
                started.server.name
            ));
        }
        if Instant::now() > deadline {
            return Err(format!(
                "{} does not listen on {} after 10 s",
                started.server.name, started.server.address
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(started)
}

fn free_port() -> Result<u16, String> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("a free port: {e}"))
}

/// The service behind `pqkit proxy`: answers each connection's first bytes with themselves,
/// then closes — on a few threads of this process that accept in turn (no thread per
/// connection: the load generator shares the cores, and the proxy's figures should not pay
/// for a costly backend). Returns `--target`'s value.
fn echo_tcp() -> Result<String, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("echo service: {e}"))?;
    let address = listener
        .local_addr()
        .map_err(|e| format!("echo service: {e}"))?;
    for _ in 0..ECHO_THREADS {
        let listener = listener
            .try_clone()
            .map_err(|e| format!("echo service: {e}"))?;
        std::thread::spawn(move || listener.incoming().flatten().for_each(echo_once));
    }
    Ok(address.to_string())
}

/// [`echo_tcp`] on a Unix-domain socket at `path`; returns `unix:PATH`.
fn echo_unix(path: &Path) -> Result<String, String> {
    let listener = std::os::unix::net::UnixListener::bind(path)
        .map_err(|e| format!("echo service at {}: {e}", path.display()))?;
    for _ in 0..ECHO_THREADS {
        let listener = listener
            .try_clone()
            .map_err(|e| format!("echo service: {e}"))?;
        std::thread::spawn(move || listener.incoming().flatten().for_each(echo_once));
    }
    Ok(format!("unix:{}", path.display()))
}

/// One echo: the first bytes back, then the end of the connection.
fn echo_once<S: Read + Write>(mut socket: S) {
    let mut buf = [0u8; 4096];
    if let Ok(n) = socket.read(&mut buf)
        && n > 0
    {
        let _ = socket.write_all(&buf[..n]);
    }
}

/// Threads of the echo service behind `pqkit proxy`.
const ECHO_THREADS: usize = 4;

/// Another process spinning on one core until dropped.
fn busy_core() -> Result<Started, String> {
    let child = Command::new("sh")
        .args(["-c", "while :; do :; done"])
        .stdin(Stdio::null())
        .spawn()
        .map_err(|e| format!("a busy process (sh): {e}"))?;
    Ok(Started {
        echo: None,
        server: Server {
            name: "busy".to_owned(),
            address: SocketAddr::from(([127, 0, 0, 1], 0)),
            pid: Some(child.id()),
        },
        child: Some(child),
    })
}

struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The comparison as a table: one row per server, ratios to `pqkit server`'s in the same run.
pub fn table(rows: &[Row]) -> crate::render::Table {
    let first = rows.first();
    let mut t = crate::render::Table::new(
        &format!(
            "TLS servers under load: {} certificates, {}, {} handshakes, {} client threads{}",
            first.map_or("", |r| r.signature.as_str()),
            first.map_or("", |r| r.group.as_str()),
            first.map_or("", |r| r.handshakes),
            first.map_or(0, |r| r.clients),
            first
                .and_then(|r| r.rate)
                .map_or_else(String::new, |r| format!(", {r:.0} connections/s offered"))
        ),
        &[
            "server",
            "conn/s",
            "×pqkit",
            "p50 ms",
            "p90 ms",
            "p99 ms",
            "p99.9 ms",
            "server CPU µs/conn",
            "×pqkit",
            "server+load CPU µs/conn",
            "bare hop µs",
            "ideal proxy ×pqkit",
            "connections",
            "resumed",
            "errors",
        ],
    );
    let ratio = |r: Option<f64>| r.map_or_else(|| "-".to_owned(), |r| format!("{r:.2}"));
    for r in rows {
        t.rows.push(vec![
            r.server.clone(),
            format!("{:.0}", r.connections_per_sec),
            ratio(r.rate_vs_pqkit_server),
            format!("{:.2}", r.p50_ms),
            format!("{:.2}", r.p90_ms),
            format!("{:.2}", r.p99_ms),
            format!("{:.2}", r.p999_ms),
            r.server_cpu_us_per_connection
                .map_or_else(|| "-".to_owned(), |c| format!("{c:.0}")),
            ratio(r.cpu_vs_pqkit_server),
            r.server_and_load_cpu_us_per_connection
                .map_or_else(|| "-".to_owned(), |c| format!("{c:.0}")),
            r.second_hop_cpu_us
                .map_or_else(|| "-".to_owned(), |c| format!("{c:.0}")),
            ratio(r.rate_ideal_proxy_vs_pqkit_server),
            r.connections.to_string(),
            format!(
                "{:.0} %",
                100.0 * r.resumed as f64 / r.connections.max(1) as f64
            ),
            r.errors.to_string(),
        ]);
    }
    t
}
