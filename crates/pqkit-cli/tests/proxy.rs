//! `pqkit proxy` end to end on 127.0.0.1, in front of a plain TCP echo service:
//!
//! - Go 1.27 (`GOTOOLCHAIN=go1.27.1`), OpenSSL 3.6 and pqkit clients through it with ML-DSA-65
//!   certificates and X25519MLKEM768, mutual TLS with the allow-list (admitted by the client
//!   key's SPKI pin); the same client refused with access_denied when not on the list; the
//!   /metrics text parsed by the Prometheus project's own parser (Python `prometheus_client`)
//!   and its counts checked;
//! - SIGHUP with 50 connections open: none dropped (each still echoes), the next full handshake
//!   shows the new certificate, a ticket from before the reload still resumes;
//! - SIGTERM: no new connections, open ones finish, exit 0.

mod support;

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::{ClientConfig, ClientConnection, StreamOwned};
use rustls_pki_types::{CertificateDer, ServerName};
use support::{
    Guard, build_gotls, free_port, json_lines, openssl_cmd, pqkit, run_ok, scratch, wait_listening,
};

/// A TCP echo service on a free port: each connection's bytes are sent back as they come
/// until the client closes; with `one_shot`, the first read is sent back and the connection
/// closed (a request/response service, for clients that read until the end).
fn echo_service(one_shot: bool) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind echo");
    let address = listener.local_addr().expect("echo address");
    std::thread::spawn(move || {
        for socket in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut socket = socket;
                let mut buf = [0u8; 16 * 1024];
                while let Ok(n) = socket.read(&mut buf) {
                    if n == 0 || socket.write_all(&buf[..n]).is_err() {
                        break;
                    }
                    if one_shot {
                        break;
                    }
                }
                let _ = socket.shutdown(Shutdown::Both);
            });
        }
    });
    address
}

fn pki(dir: &Path, alg: &str) {
    run_ok(
        pqkit()
            .args(["pki", "init", "--sig", alg, "--dir"])
            .arg(dir),
    );
}

/// Starts `pqkit proxy` in front of `target`, with `args` after the certificate and key of
/// `pki`; returns once it listens on `port`.
fn proxy(pki: &Path, port: u16, target: SocketAddr, args: &[&str]) -> Guard {
    let mut cmd = pqkit();
    cmd.args(["proxy", "--listen", &format!("127.0.0.1:{port}")])
        .args(["--target", &target.to_string()])
        .args(["--groups", "X25519MLKEM768", "--log-level", "info"])
        .arg("--cert")
        .arg(pki.join("server.pem"))
        .arg("--key")
        .arg(pki.join("server.key"))
        .args(args);
    let mut guard = Guard::spawn(&mut cmd);
    wait_listening(port, guard.child());
    guard
}

/// `GET /metrics` on 127.0.0.1:`port`; returns the body.
fn scrape(port: u16) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect to /metrics");
    s.set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .expect("request");
    let mut response = String::new();
    s.read_to_string(&mut response).expect("response");
    let (head, body) = response.split_once("\r\n\r\n").expect("HTTP response");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: application/openmetrics-text"),
        "{head}"
    );
    body.to_owned()
}

/// The samples of an OpenMetrics text, as parsed by the Prometheus project's Python parser
/// (`prometheus_client.openmetrics.parser`, which refuses text that breaks the format):
/// (name, labels, value).
fn parse_metrics(dir: &Path, text: &str) -> Vec<(String, serde_json::Value, f64)> {
    let file = dir.join("metrics.txt");
    std::fs::write(&file, text).expect("metrics file");
    let script = "import json, sys\n\
        from prometheus_client.openmetrics.parser import text_string_to_metric_families\n\
        for family in text_string_to_metric_families(open(sys.argv[1]).read()):\n\
        \x20   for s in family.samples:\n\
        \x20       print(json.dumps([s.name, s.labels, s.value]))\n";
    let out = Command::new("python3")
        .args(["-c", script])
        .arg(&file)
        .output()
        .expect("python3 (with `pip install prometheus-client`)");
    assert!(
        out.status.success(),
        "the Prometheus parser refused /metrics (or is missing: pip install \
         prometheus-client):\n{}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("sample");
            (
                v[0].as_str().expect("name").to_owned(),
                v[1].clone(),
                v[2].as_f64().expect("value"),
            )
        })
        .collect()
}

/// The sum of the samples named `name` whose labels include `labels`.
fn sample(
    samples: &[(String, serde_json::Value, f64)],
    name: &str,
    labels: &[(&str, &str)],
) -> f64 {
    samples
        .iter()
        .filter(|(n, l, _)| n == name && labels.iter().all(|(k, v)| l[*k] == *v))
        .map(|(_, _, v)| v)
        .sum()
}

fn spki_pin(cert: &Path) -> String {
    let out = run_ok(pqkit().args(["x509", "show", "--json"]).arg(cert));
    let shown: serde_json::Value = serde_json::from_slice(&out.stdout).expect("x509 show JSON");
    let first = if shown.is_array() { &shown[0] } else { &shown };
    first["spki_sha256"]
        .as_str()
        .expect("spki_sha256")
        .to_owned()
}

#[test]
fn go_openssl_and_pqkit_clients_through_the_proxy_with_an_allow_list() {
    let dir = scratch("proxy-e2e");
    let pki_dir = dir.join("pki");
    pki(&pki_dir, "ML-DSA-65");
    let gotls = build_gotls(&dir, "go1.27.1");
    let echo = echo_service(true);
    let pin = spki_pin(&pki_dir.join("client.pem"));
    let (port, metrics) = (free_port(), free_port());
    let admitted = proxy(
        &pki_dir,
        port,
        echo,
        &[
            "--ca",
            pki_dir.join("ca.pem").to_str().expect("path"),
            "--allow-spki-sha256",
            &pin,
            "--metrics",
            &format!("127.0.0.1:{metrics}"),
        ],
    );

    // Go 1.27.
    let go = run_ok(
        Command::new(&gotls)
            .args(["client", "-groups", "X25519MLKEM768", "-print"])
            .args(["-send", "hello from Go through the proxy"])
            .args(["-addr", &format!("127.0.0.1:{port}")])
            .arg("-ca")
            .arg(pki_dir.join("ca.pem"))
            .arg("-cert")
            .arg(pki_dir.join("client.pem"))
            .arg("-key")
            .arg(pki_dir.join("client.key")),
    );
    let report = &json_lines(&go.stdout)[0];
    assert_eq!(report["ok"], true, "{report}");
    assert_eq!(report["group"], "X25519MLKEM768", "{report}");
    assert_eq!(report["peer_sig_scheme"], "mldsa65", "{report}");
    assert!(
        String::from_utf8_lossy(&go.stderr).contains("hello from Go through the proxy"),
        "Go's echo: {}",
        String::from_utf8_lossy(&go.stderr)
    );

    // OpenSSL 3.6.
    let mut s_client = openssl_cmd(&dir)
        .args(["s_client", "-connect", &format!("127.0.0.1:{port}")])
        .args([
            "-groups",
            "X25519MLKEM768",
            "-verify_return_error",
            "-quiet",
        ])
        .arg("-CAfile")
        .arg(pki_dir.join("ca.pem"))
        .arg("-cert")
        .arg(pki_dir.join("client.pem"))
        .arg("-key")
        .arg(pki_dir.join("client.key"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("openssl s_client");
    s_client
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"hello from OpenSSL through the proxy\n")
        .expect("write to s_client");
    let out = Guard(Some(s_client)).wait();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("hello from OpenSSL through the proxy"),
        "OpenSSL's echo: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    // pqkit.
    let ours = run_ok(
        pqkit()
            .args(["client", "--json", "--groups", "X25519MLKEM768"])
            .args(["--port", &port.to_string(), "--message", "hello from pqkit"])
            .arg("--ca")
            .arg(pki_dir.join("ca.pem"))
            .arg("--cert")
            .arg(pki_dir.join("client.pem"))
            .arg("--key")
            .arg(pki_dir.join("client.key")),
    );
    let ours = &json_lines(&ours.stdout)[0];
    assert_eq!(ours["received"], "hello from pqkit", "{ours}");

    // With client certificates, no resumption: a second connection with the same client
    // configuration (and its tickets, had there been any) is a full handshake again.
    let mutual = client_config_with(&pki_dir.join("ca.pem"), true, Some(&pki_dir));
    for _ in 0..2 {
        let mut c = Client::connect(port, &mutual);
        assert_eq!(
            c.tls.conn.handshake_kind(),
            Some(rustls::HandshakeKind::Full)
        );
        assert_eq!(c.echo("again").expect("echo"), "again");
    }

    let samples = parse_metrics(&dir, &scrape(metrics));
    let full = [
        ("group", "X25519MLKEM768"),
        ("scheme", "mldsa65"),
        ("client_scheme", "mldsa65"),
        ("kind", "full"),
    ];
    assert_eq!(
        sample(&samples, "pqkit_proxy_handshakes_total", &full),
        5.0,
        "{samples:?}"
    );
    assert_eq!(
        sample(&samples, "pqkit_proxy_handshake_seconds_count", &[]),
        5.0
    );
    let sent = "hello from Go through the proxy".len()
        + "hello from OpenSSL through the proxy\n".len()
        + "hello from pqkit".len()
        + 2 * "again".len();
    for direction in ["from_client", "from_upstream"] {
        assert_eq!(
            sample(
                &samples,
                "pqkit_proxy_bytes_total",
                &[("direction", direction)]
            ),
            sent as f64,
            "{direction}"
        );
    }
    assert_eq!(sample(&samples, "pqkit_proxy_connections_total", &[]), 5.0);
    drop(admitted);

    // The same client, not on the list: access_denied, counted.
    let (port, metrics) = (free_port(), free_port());
    let _refusing = proxy(
        &pki_dir,
        port,
        echo,
        &[
            "--ca",
            pki_dir.join("ca.pem").to_str().expect("path"),
            "--allow-dns",
            "someone-else.example",
            "--metrics",
            &format!("127.0.0.1:{metrics}"),
        ],
    );
    let go = Command::new(&gotls)
        .args(["client", "-groups", "X25519MLKEM768", "-send", "let me in"])
        .args(["-addr", &format!("127.0.0.1:{port}")])
        .arg("-ca")
        .arg(pki_dir.join("ca.pem"))
        .arg("-cert")
        .arg(pki_dir.join("client.pem"))
        .arg("-key")
        .arg(pki_dir.join("client.key"))
        .output()
        .expect("gotls");
    let report = &json_lines(&go.stdout)[0];
    assert_eq!(report["ok"], false, "{report}");
    assert!(
        report["error"]
            .as_str()
            .is_some_and(|e| e.contains("access denied")),
        "Go saw the alert access_denied: {report}"
    );
    let refused = pqkit()
        .args(["client", "--groups", "X25519MLKEM768"])
        .args(["--port", &port.to_string()])
        .arg("--ca")
        .arg(pki_dir.join("ca.pem"))
        .arg("--cert")
        .arg(pki_dir.join("client.pem"))
        .arg("--key")
        .arg(pki_dir.join("client.key"))
        .output()
        .expect("pqkit client");
    assert!(!refused.status.success());
    // Counted once the proxy has let the refused connection end (it lingers for the client's
    // close).
    until_metric(
        &dir,
        metrics,
        "pqkit_proxy_handshake_failures_total",
        &[("reason", "alert_sent"), ("alert", "access_denied")],
        2.0,
    );
    let samples = parse_metrics(&dir, &scrape(metrics));
    assert_eq!(sample(&samples, "pqkit_proxy_handshakes_total", &[]), 0.0);
    println!(
        "Go 1.27, OpenSSL 3.6 and pqkit through pqkit proxy (ML-DSA-65, X25519MLKEM768, mutual TLS): echoed; off the allow-list: access_denied"
    );
}

/// A blocking TLS client of the proxy.
struct Client {
    tls: StreamOwned<ClientConnection, TcpStream>,
}

impl Client {
    fn connect(port: u16, config: &Arc<ClientConfig>) -> Self {
        let socket = TcpStream::connect(("127.0.0.1", port)).expect("connect to the proxy");
        socket
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        let name = ServerName::try_from("localhost").expect("name");
        let conn = ClientConnection::new(config.clone(), name).expect("client connection");
        let mut tls = StreamOwned::new(conn, socket);
        while tls.conn.is_handshaking() {
            tls.conn
                .complete_io(&mut tls.sock)
                .expect("handshake through the proxy");
        }
        Self { tls }
    }

    /// Sends `message` and reads its echo.
    fn echo(&mut self, message: &str) -> std::io::Result<String> {
        self.tls.write_all(message.as_bytes())?;
        self.tls.flush()?;
        let mut got = vec![0u8; message.len()];
        self.tls.read_exact(&mut got)?;
        Ok(String::from_utf8_lossy(&got).into_owned())
    }

    fn server_certificate(&self) -> Vec<u8> {
        self.tls.conn.peer_certificates().expect("server chain")[0].to_vec()
    }
}

fn client_config(roots: &Path, resumption: bool) -> Arc<ClientConfig> {
    client_config_with(roots, resumption, None)
}

/// A client configuration trusting `roots`, presenting `pki`'s client.pem when given.
fn client_config_with(roots: &Path, resumption: bool, pki: Option<&Path>) -> Arc<ClientConfig> {
    let certs = |p: &Path| -> Vec<CertificateDer<'static>> {
        pqkit_pki::pem::read_certificates(p)
            .expect("certificates")
            .into_iter()
            .map(CertificateDer::from)
            .collect()
    };
    let auth = pki.map(|dir| {
        let key = pqkit_pki::pem::read_private_key(&dir.join("client.key")).expect("key");
        let key = rustls_pki_types::PrivateKeyDer::Pkcs8(key.to_vec().into());
        (certs(&dir.join("client.pem")), key.into())
    });
    let provider = Arc::new(pqkit_rustls::provider_with_groups(vec![
        pqkit_rustls::find_group("X25519MLKEM768").expect("group"),
    ]));
    let (mut config, _) =
        pqkit_rustls::client_config(provider, &certs(roots), auth).expect("client config");
    if !resumption {
        config.resumption = rustls::client::Resumption::disabled();
    }
    Arc::new(config)
}

fn der(pem: &Path) -> Vec<u8> {
    pqkit_pki::pem::read_certificates(pem).expect("certificate")[0].clone()
}

fn signal(guard: &mut Guard, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &guard.child().id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
}

/// Waits (at most 10 s) until the proxy's metrics show `value` for `name` with `labels`.
fn until_metric(dir: &Path, port: u16, name: &str, labels: &[(&str, &str)], value: f64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let samples = parse_metrics(dir, &scrape(port));
        let got = sample(&samples, name, labels);
        if got == value {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{name}{labels:?} = {got}, not {value}, after 10 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn sighup_reloads_with_50_connections_open_and_sigterm_drains() {
    let dir = scratch("proxy-reload");
    let (old, new) = (dir.join("old"), dir.join("new"));
    pki(&old, "ML-DSA-65");
    pki(&new, "ML-DSA-65");
    // The files the proxy serves, replaced at the reload; clients trust both CAs.
    let live = dir.join("live");
    std::fs::create_dir_all(&live).expect("live dir");
    for f in ["server.pem", "server.key"] {
        std::fs::copy(old.join(f), live.join(f)).expect("copy");
    }
    let roots = dir.join("roots.pem");
    let both = [old.join("ca.pem"), new.join("ca.pem")]
        .iter()
        .map(|p| std::fs::read_to_string(p).expect("ca.pem"))
        .collect::<String>();
    std::fs::write(&roots, both).expect("roots");

    let echo = echo_service(false);
    let (port, metrics) = (free_port(), free_port());
    let mut proxy = proxy(
        &live,
        port,
        echo,
        &[
            "--disable-authentication",
            "--drain-timeout",
            "20",
            "--metrics",
            &format!("127.0.0.1:{metrics}"),
        ],
    );
    let resuming = client_config(&roots, true);
    let mut open: Vec<Client> = (0..50).map(|_| Client::connect(port, &resuming)).collect();
    for (i, c) in open.iter_mut().enumerate() {
        assert_eq!(
            c.echo(&format!("before {i}")).expect("echo"),
            format!("before {i}")
        );
        assert_eq!(c.server_certificate(), der(&old.join("server.pem")));
    }

    // New certificate and key in place (written aside, then renamed over), then SIGHUP.
    for f in ["server.pem", "server.key"] {
        let aside = live.join(format!(".{f}.new"));
        std::fs::copy(new.join(f), &aside).expect("copy");
        std::fs::rename(&aside, live.join(f)).expect("rename");
    }
    let start = Instant::now();
    signal(&mut proxy, "HUP");
    until_metric(
        &dir,
        metrics,
        "pqkit_proxy_reloads_total",
        &[("result", "ok")],
        1.0,
    );
    let reload = start.elapsed();

    let fresh = Client::connect(port, &client_config(&roots, false));
    assert_eq!(
        fresh.server_certificate(),
        der(&new.join("server.pem")),
        "the next full handshake shows the new certificate"
    );
    let resumed = Client::connect(port, &resuming);
    assert_eq!(
        resumed.tls.conn.handshake_kind(),
        Some(rustls::HandshakeKind::Resumed),
        "a ticket issued before the reload still resumes"
    );
    for (i, c) in open.iter_mut().enumerate() {
        assert_eq!(
            c.echo(&format!("after {i}"))
                .expect("a connection open across the reload"),
            format!("after {i}")
        );
    }
    until_metric(&dir, metrics, "pqkit_proxy_connections_open", &[], 52.0);

    // SIGTERM: the listener closes, open connections still work until they close.
    signal(&mut proxy, "TERM");
    let deadline = Instant::now() + Duration::from_secs(5);
    while TcpStream::connect(("127.0.0.1", port)).is_ok() {
        assert!(Instant::now() < deadline, "still accepting after SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        open[0].echo("draining").expect("echo while draining"),
        "draining"
    );
    let stopping = Instant::now();
    drop(open);
    drop(fresh);
    drop(resumed);
    let out = proxy.wait();
    let drained = stopping.elapsed();
    assert!(
        out.status.success(),
        "{:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        drained < Duration::from_secs(10),
        "exit {drained:?} after the last connection closed (drain 20 s)"
    );
    let logs = String::from_utf8_lossy(&out.stderr);
    assert!(logs.contains("reloaded on SIGHUP"), "{logs}");
    assert!(!logs.contains("cut at shutdown"), "{logs}");
    println!(
        "SIGHUP with 50 connections open: reloaded within {reload:?}, none dropped, new \
         certificate on the next handshake, old ticket resumed; SIGTERM: exit {drained:?} after \
         the last connection closed"
    );
}

/// Origination: `--tls-target` to a `pqkit server` that wants a client certificate — SLH-DSA
/// on the target's side, ML-DSA-65 towards the client: the proxy verifies the target against
/// `--target-ca` and presents `--target-cert`; the target's report names the proxy's scheme.
#[test]
fn tls_target_with_a_client_certificate() {
    let dir = scratch("proxy-origination");
    let (front, back) = (dir.join("front"), dir.join("back"));
    pki(&front, "ML-DSA-65");
    pki(&back, "SLH-DSA-SHA2-128f");
    let target_port = free_port();
    let target = support::pqkit_server(&back, target_port, "X25519MLKEM768", 1, true);
    let port = free_port();
    let back_file = |f: &str| back.join(f).to_str().expect("path").to_owned();
    let _proxy = proxy(
        &front,
        port,
        SocketAddr::from(([127, 0, 0, 1], target_port)),
        &[
            "--disable-authentication",
            "--tls-target",
            "--target-ca",
            &back_file("ca.pem"),
            "--target-name",
            "localhost",
            "--target-cert",
            &back_file("client.pem"),
            "--target-key",
            &back_file("client.key"),
        ],
    );
    let out = run_ok(
        pqkit()
            .args(["client", "--json", "--groups", "X25519MLKEM768"])
            .args([
                "--port",
                &port.to_string(),
                "--message",
                "through two TLS hops",
            ])
            .arg("--ca")
            .arg(front.join("ca.pem")),
    );
    let ours = &json_lines(&out.stdout)[0];
    assert_eq!(ours["received"], "through two TLS hops", "{ours}");
    assert_eq!(ours["peer_signature_scheme"], "mldsa65", "{ours}");
    let target = &json_lines(&target.wait().stdout)[0];
    assert_eq!(target["received"], "through two TLS hops", "{target}");
    assert_eq!(
        target["peer_signature_scheme"], "slhdsa_sha2_128f",
        "the target verified the proxy's client certificate: {target}"
    );
}

/// A target that refuses connections: the client's connection ends without close_notify (a
/// failure its TLS stack reports, not an empty answer) and the metrics count it.
#[test]
fn an_unreachable_target_is_a_failure_not_an_empty_answer() {
    let dir = scratch("proxy-unreachable");
    pki(&dir, "ML-DSA-44");
    let closed = TcpListener::bind("127.0.0.1:0").expect("bind");
    let target = closed.local_addr().expect("address");
    drop(closed);
    let (port, metrics) = (free_port(), free_port());
    let _proxy = proxy(
        &dir,
        port,
        target,
        &[
            "--disable-authentication",
            "--metrics",
            &format!("127.0.0.1:{metrics}"),
        ],
    );
    let out = pqkit()
        .args(["client", "--groups", "X25519MLKEM768"])
        .args(["--port", &port.to_string()])
        .arg("--ca")
        .arg(dir.join("ca.pem"))
        .output()
        .expect("pqkit client");
    assert!(
        !out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let samples = parse_metrics(&dir, &scrape(metrics));
    assert_eq!(
        sample(&samples, "pqkit_proxy_upstream_failures_total", &[]),
        1.0
    );
    assert_eq!(sample(&samples, "pqkit_proxy_handshakes_total", &[]), 1.0);
}

/// `--target unix:PATH`: a service on a Unix-domain socket beside the proxy.
#[test]
fn a_unix_socket_target() {
    let dir = scratch("proxy-unix");
    pki(&dir, "ML-DSA-44");
    let socket = dir.join("service.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).expect("bind unix socket");
    std::thread::spawn(move || {
        for mut s in listener.incoming().flatten() {
            let mut buf = [0u8; 1024];
            if let Ok(n) = s.read(&mut buf) {
                let _ = s.write_all(&buf[..n]);
            }
        }
    });
    let port = free_port();
    let mut cmd = pqkit();
    cmd.args(["proxy", "--listen", &format!("127.0.0.1:{port}")])
        .arg("--target")
        .arg(format!("unix:{}", socket.display()))
        .args(["--disable-authentication", "--groups", "X25519MLKEM768"])
        .arg("--cert")
        .arg(dir.join("server.pem"))
        .arg("--key")
        .arg(dir.join("server.key"));
    let mut proxy = Guard::spawn(&mut cmd);
    wait_listening(port, proxy.child());
    let out = run_ok(
        pqkit()
            .args(["client", "--json", "--groups", "X25519MLKEM768"])
            .args([
                "--port",
                &port.to_string(),
                "--message",
                "over a unix socket",
            ])
            .arg("--ca")
            .arg(dir.join("ca.pem")),
    );
    assert_eq!(json_lines(&out.stdout)[0]["received"], "over a unix socket");
    // An empty path is a usage error (exit 2), named.
    let bad = pqkit()
        .args(["proxy", "--target", "unix:", "--disable-authentication"])
        .args(["--cert", "c.pem", "--key", "k.pem"])
        .output()
        .expect("pqkit proxy");
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--target unix:"));
}
