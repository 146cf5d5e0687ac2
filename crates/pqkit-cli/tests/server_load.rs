//! `pqkit server` under load and under idle connections, and `pqkit client` against a server
//! that never answers:
//!
//! - soak: 10 000 full handshakes (ML-DSA-44 certificates, X25519MLKEM768, mutual
//!   authentication) against one server process, its resident set size sampled every 1 000 —
//!   flat after warm-up;
//! - 100 idle TCP connections do not delay a real client by more than its own handshake time,
//!   and the server drops each after its handshake timeout;
//! - `pqkit client --timeout 1` against a listener that accepts and says nothing gives up
//!   within the timeout, with exit status 3.
//!
//! The figures are printed (run with `--nocapture` to see them).

mod support;

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use pqkit_rustls::session::{self, Timeouts};
use rustls::ClientConfig;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use support::{Guard, free_port, pqkit, run_ok, scratch, wait_listening};

/// A `pqkit server` serving forever, its output discarded (10 000 lines would fill a pipe).
fn server(pki: &Path, port: u16, extra: &[&str]) -> Guard {
    let mut cmd = pqkit();
    cmd.args(["server", "--mutual", "--port", &port.to_string()])
        .args(["--groups", "X25519MLKEM768"])
        .args(extra)
        .arg("--cert")
        .arg(pki.join("server.pem"))
        .arg("--key")
        .arg(pki.join("server.key"))
        .arg("--ca")
        .arg(pki.join("ca.pem"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut guard = Guard(Some(cmd.spawn().expect("spawn server")));
    wait_listening(port, guard.child());
    guard
}

fn client_config(pki: &Path) -> (Arc<ClientConfig>, Arc<pqkit_rustls::observe::PeerScheme>) {
    let certs = |f: &str| -> Vec<CertificateDer<'static>> {
        pqkit_pki::pem::read_certificates(&pki.join(f))
            .expect("certificates")
            .into_iter()
            .map(CertificateDer::from)
            .collect()
    };
    let key = pqkit_pki::pem::read_private_key(&pki.join("client.key")).expect("key");
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.to_vec()));
    let provider = Arc::new(pqkit_rustls::provider_with_groups(vec![
        pqkit_rustls::find_group("X25519MLKEM768").expect("group"),
    ]));
    let (config, seen) = pqkit_rustls::client_config(
        provider,
        &certs("ca.pem"),
        Some((certs("client.pem"), key.into())),
    )
    .expect("client config");
    (Arc::new(config), seen)
}

/// One full connection: connect, handshake, message, reply, close. Returns its wall time.
fn connection(
    addr: SocketAddr,
    config: &Arc<ClientConfig>,
    seen: &Arc<pqkit_rustls::observe::PeerScheme>,
) -> Duration {
    let start = Instant::now();
    let socket = TcpStream::connect(addr).expect("connect");
    let name = ServerName::try_from("localhost").expect("name");
    let report = session::run_client(
        socket,
        config.clone(),
        name,
        seen,
        b"soak",
        false,
        Timeouts::default(),
    )
    .expect("connection");
    assert_eq!(report.received, "soak");
    start.elapsed()
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("VmRSS")
}

/// The tests here measure time and memory: one at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

fn pki(name: &str) -> std::path::PathBuf {
    let dir = scratch(name);
    run_ok(
        pqkit()
            .args(["pki", "init", "--sig", "ML-DSA-44", "--dir"])
            .arg(&dir),
    );
    dir
}

#[test]
fn ten_thousand_handshakes_leave_the_server_flat() {
    const TOTAL: usize = 10_000;
    const THREADS: usize = 2;
    let _one = serial();
    let dir = pki("soak");
    let port = free_port();
    let mut srv = server(&dir, port, &[]);
    let pid = srv.child().id();
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    let (config, seen) = client_config(&dir);
    let start = Instant::now();
    let mut samples = vec![(0usize, rss_kib(pid))];
    for round in 0..TOTAL / 1000 {
        std::thread::scope(|s| {
            for _ in 0..THREADS {
                s.spawn(|| {
                    for _ in 0..1000 / THREADS {
                        connection(addr, &config, &seen);
                    }
                });
            }
        });
        samples.push(((round + 1) * 1000, rss_kib(pid)));
    }
    let secs = start.elapsed().as_secs_f64();
    eprintln!(
        "soak: {TOTAL} handshakes in {secs:.1} s ({:.0}/s), server RSS KiB by handshakes: {samples:?}",
        TOTAL as f64 / secs
    );
    // Flat after warm-up: over the last 5 000 handshakes RSS moves by less than 1.5 MiB (a
    // leak of 300 bytes per connection would show). The first 5 000 are warm-up: glibc's
    // per-thread malloc arenas and the runtime's buffers settle.
    let after_warm_up: Vec<u64> = samples[5..].iter().map(|&(_, r)| r).collect();
    let (lo, hi) = (
        after_warm_up.iter().min().copied().unwrap_or(0),
        after_warm_up.iter().max().copied().unwrap_or(0),
    );
    assert!(
        hi - lo < 1536,
        "server RSS moved from {lo} to {hi} KiB over the last 5 000 handshakes: {samples:?}"
    );
    assert!(
        srv.child().try_wait().expect("wait").is_none(),
        "the server died"
    );
}

#[test]
fn idle_connections_do_not_delay_a_real_client() {
    let _one = serial();
    let dir = pki("idle");
    let port = free_port();
    let mut srv = server(&dir, port, &["--handshake-timeout", "3"]);
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    let (config, seen) = client_config(&dir);
    let median = |n: usize| {
        let mut t: Vec<Duration> = (0..n).map(|_| connection(addr, &config, &seen)).collect();
        t.sort();
        t[n / 2]
    };
    median(3);
    let alone = median(9);
    let idle: Vec<TcpStream> = (0..100)
        .map(|_| TcpStream::connect(addr).expect("idle connection"))
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let crowded = median(9);
    eprintln!("idle: a connection alone {alone:?}, beside 100 idle sockets {crowded:?}");
    assert!(
        crowded <= alone * 2 + Duration::from_millis(50),
        "100 idle sockets delayed a client from {alone:?} to {crowded:?}"
    );
    // The server drops an idle socket after its handshake timeout (3 s).
    let mut one = idle.into_iter().next().expect("socket");
    one.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let start = Instant::now();
    let mut buf = [0u8; 1];
    let n = std::io::Read::read(&mut one, &mut buf).unwrap_or(0);
    assert_eq!(n, 0, "the server closed the idle connection");
    assert!(
        start.elapsed() < Duration::from_secs(6),
        "{:?}",
        start.elapsed()
    );
    assert!(
        srv.child().try_wait().expect("wait").is_none(),
        "the server died"
    );
}

/// A client that completes its handshake and then trickles an application record a byte at a
/// time is dropped when the connection's time after the handshake (`--idle-timeout`) is up,
/// not kept as long as it keeps sending.
#[test]
fn a_trickling_client_is_dropped_at_the_idle_deadline() {
    use std::io::{Read, Write};
    let _one = serial();
    let dir = pki("trickle");
    let port = free_port();
    let mut srv = server(&dir, port, &["--idle-timeout", "2"]);
    let (config, _) = client_config(&dir);
    let mut sock = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let mut conn =
        rustls::ClientConnection::new(config, ServerName::try_from("localhost").expect("name"))
            .expect("client");
    while conn.is_handshaking() {
        conn.complete_io(&mut sock).expect("handshake");
    }
    let start = Instant::now();
    sock.set_read_timeout(Some(Duration::from_millis(300)))
        .expect("timeout");
    let mut closed = false;
    // An application_data record header promising 1000 bytes, then a byte every 300 ms.
    let mut trickle = vec![0x17, 0x03, 0x03, 0x03, 0xe8];
    trickle.extend(std::iter::repeat_n(0u8, 100));
    for byte in trickle {
        if sock.write_all(&[byte]).is_err() {
            closed = true;
            break;
        }
        // Room for the session tickets the server sends after the handshake (with client
        // authentication each carries the client's certificate chain).
        let mut buf = vec![0u8; 64 * 1024];
        match sock.read(&mut buf) {
            Ok(0) => {
                closed = true;
                break;
            }
            Err(e) if e.kind() != std::io::ErrorKind::WouldBlock => {
                closed = true;
                break;
            }
            _ => {}
        }
        if start.elapsed() > Duration::from_secs(15) {
            break;
        }
    }
    let held = start.elapsed();
    eprintln!("trickle: dropped after {held:?}");
    assert!(
        closed,
        "the server still held the connection after {held:?}"
    );
    assert!(held < Duration::from_secs(5), "{held:?}");
    assert!(
        srv.child().try_wait().expect("wait").is_none(),
        "the server died"
    );
}

#[test]
fn the_client_gives_up_on_a_silent_server() {
    let _one = serial();
    let dir = pki("silent");
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    // Accept and hold the connection without a byte.
    let held = std::thread::spawn(move || listener.accept().map(|(s, _)| s));
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_pqkit"))
        .args([
            "client",
            "--timeout",
            "1",
            "--port",
            &port.to_string(),
            "--ca",
        ])
        .arg(dir.join("ca.pem"))
        .stdin(Stdio::null())
        .output()
        .expect("run");
    let elapsed = start.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("timed out") && err.contains(&format!("127.0.0.1:{port}")),
        "{err}"
    );
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    drop(held.join());
}

/// A server at its `--max-connections` closes one more connection at once (logged, as JSON
/// with `--log-format json`), instead of leaving it in the listen queue; SIGTERM stops it:
/// connections in flight get `--drain-timeout`, the rest are cut, and it exits with status 0.
#[test]
fn a_full_server_refuses_at_once_and_sigterm_drains() {
    use std::io::{Read, Write};
    let _one = serial();
    let dir = pki("drain");
    let port = free_port();
    let mut cmd = pqkit();
    cmd.args(["server", "--port", &port.to_string()])
        .args(["--max-connections", "2", "--drain-timeout", "1"])
        .args(["--log-format", "json", "--log-level", "info", "--cert"])
        .arg(dir.join("server.pem"))
        .arg("--key")
        .arg(dir.join("server.key"));
    let mut srv = Guard::spawn(&mut cmd);
    wait_listening(port, srv.child());
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    let idle: Vec<TcpStream> = (0..2)
        .map(|_| TcpStream::connect(addr).expect("idle connection"))
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let start = Instant::now();
    let mut third = TcpStream::connect(addr).expect("connect");
    third
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    let _ = third.write_all(b"\x16\x03\x01");
    let mut buf = [0u8; 16];
    let read = third.read(&mut buf);
    assert!(
        matches!(&read, Ok(0))
            || read
                .as_ref()
                .is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionReset),
        "not closed at once: {read:?}"
    );
    let refused_after = start.elapsed();
    assert!(refused_after < Duration::from_secs(1), "{refused_after:?}");

    let start = Instant::now();
    let killed = Command::new("kill")
        .args(["-TERM", &srv.child().id().to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let out = srv.wait();
    let took = start.elapsed();
    assert!(out.status.success(), "{:?}", out.status);
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(5),
        "stopped after {took:?}"
    );
    let logs: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).expect("a JSON log line"))
        .collect();
    let find = |message: &str| {
        logs.iter()
            .find(|l| {
                l["fields"]["message"]
                    .as_str()
                    .is_some_and(|m| m.contains(message))
            })
            .unwrap_or_else(|| panic!("no log line with {message:?} in {logs:?}"))
    };
    let limit = find("connection limit");
    assert_eq!(limit["level"], "WARN");
    assert_eq!(limit["fields"]["limit"], 2);
    assert_eq!(find("stop requested")["fields"]["signal"], "SIGTERM");
    assert_eq!(find("cut at shutdown")["fields"]["cut"], 2);
    let stopped = find("stopped");
    assert_eq!(
        (&stopped["fields"]["served"], &stopped["fields"]["refused"]),
        (&serde_json::json!(2), &serde_json::json!(1))
    );
    println!(
        "limit: one more connection closed after {refused_after:?}; SIGTERM to exit {took:?} \
         (drain 1 s)"
    );
    drop(idle);
}
