//! The service's promises on 127.0.0.1, with pqkit's own client: each connection reported,
//! the second resumed from a ticket; a full server closes the next connection at once and
//! serves again when a place frees; a stop finishes what is in flight and cuts what is still
//! open at the drain deadline, a second stop at once; with client authentication on two
//! workers, each connection's report names its own client's signature scheme; idle,
//! byte-by-byte and garbage-sending clients do not delay a good one by more than 100 ms.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pqkit_rustls::session::{SideReport, Timeouts};
use pqkit_server::{Counters, Options, Summary, enable_resumption, serve};
use rustls::{ClientConfig, ServerConfig};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};

type Reports = Arc<Mutex<Vec<Result<SideReport, String>>>>;

struct Setup {
    server: Arc<ServerConfig>,
    seen: Arc<pqkit_rustls::observe::PeerScheme>,
    client: Arc<ClientConfig>,
}

fn setup() -> Setup {
    let pki = pqkit_pki::Pki::generate(&pqkit_core::ml_dsa::ML_DSA_44).expect("PKI");
    let provider = Arc::new(pqkit_rustls::provider());
    let key =
        pqkit_pki::key::signing_key_to_pkcs8(&pki.server_key, pqkit_pki::key::KeyFormat::Seed)
            .expect("PKCS#8");
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.to_vec()));
    let chain = vec![CertificateDer::from(pki.server_cert.clone())];
    let (mut server, seen) =
        pqkit_rustls::server_config(provider.clone(), chain, key, None).expect("server config");
    enable_resumption(&mut server).expect("tickets");
    let roots = [CertificateDer::from(pki.ca_cert.clone())];
    let (client, _) = pqkit_rustls::client_config(provider, &roots, None).expect("client config");
    Setup {
        server: Arc::new(server),
        seen,
        client: Arc::new(client),
    }
}

fn options(max_connections: usize, count: u64, handshake: Duration, drain: Duration) -> Options {
    Options {
        counters: Arc::default(),
        max_connections,
        timeouts: Timeouts {
            handshake,
            idle: Duration::from_secs(10),
        },
        count,
        drain,
    }
}

/// Starts `serve` on a free port; returns the address, the reports, the stop counter and the
/// task that returns the summary.
async fn start(
    s: &Setup,
    options: Options,
) -> (
    SocketAddr,
    Reports,
    tokio::sync::watch::Sender<u32>,
    tokio::task::JoinHandle<Summary>,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
    let reports: Reports = Arc::default();
    let (stop, stopped) = tokio::sync::watch::channel(0u32);
    let kept = reports.clone();
    let task = tokio::spawn(serve(
        listener,
        s.server.clone(),
        s.seen.clone(),
        options,
        None,
        stopped,
        move |_, result, _| {
            kept.lock()
                .expect("reports")
                .push(result.map_err(|e| e.to_string()));
        },
    ));
    (address, reports, stop, task)
}

/// Waits (at most 10 s) until `done` holds.
async fn until(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "not within 10 s: {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn served(counters: &Counters) -> u64 {
    counters.served.load(std::sync::atomic::Ordering::Relaxed)
}

/// One full connection by pqkit's blocking client, on a blocking thread.
async fn client(config: Arc<ClientConfig>, address: SocketAddr) -> SideReport {
    tokio::task::spawn_blocking(move || {
        let socket = TcpStream::connect(address).expect("connect");
        let seen = Arc::default();
        pqkit_rustls::session::run_client(
            socket,
            config,
            ServerName::try_from("localhost").expect("name"),
            &seen,
            b"hello",
            false,
            Timeouts::default(),
        )
        .expect("client connection")
    })
    .await
    .expect("client thread")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_are_reported_and_the_second_resumes() {
    let s = setup();
    let (address, reports, _stop, task) = start(
        &s,
        options(8, 2, Duration::from_secs(10), Duration::from_secs(10)),
    )
    .await;
    let first = client(s.client.clone(), address).await;
    let second = client(s.client.clone(), address).await;
    assert_eq!(first.received, "hello");
    assert_eq!(second.received, "hello");
    assert_eq!(first.handshake_kind, "Full");
    assert_eq!(second.handshake_kind, "Resumed");
    // `count` reached: the loop ends and the second connection is drained, not cut.
    let summary = task.await.expect("serve");
    assert_eq!(
        summary,
        Summary {
            served: 2,
            refused: 0,
            cut: 0
        }
    );
    let reports = reports.lock().expect("reports");
    let mut kinds: Vec<_> = reports
        .iter()
        .map(|r| r.as_ref().expect("served").handshake_kind.clone())
        .collect();
    kinds.sort();
    assert_eq!(kinds, ["Full", "Resumed"]);
    let server = reports
        .iter()
        .map(|r| r.as_ref().expect("served"))
        .find(|r| r.handshake_kind == "Full")
        .expect("the full handshake");
    assert_eq!(server.received, "hello");
    assert!(server.wire_bytes_read > 0 && server.wire_bytes_written > 0);
    assert_eq!(server.group, first.group);
}

/// Without resumption no ticket is sent: the second connection is a full handshake too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_resumption_every_handshake_is_full() {
    let mut s = setup();
    let mut config = (*s.server).clone();
    pqkit_server::disable_resumption(&mut config);
    s.server = Arc::new(config);
    let (address, _reports, _stop, task) = start(
        &s,
        options(8, 2, Duration::from_secs(10), Duration::from_secs(10)),
    )
    .await;
    let first = client(s.client.clone(), address).await;
    let second = client(s.client.clone(), address).await;
    assert_eq!(
        (
            first.handshake_kind.as_str(),
            second.handshake_kind.as_str()
        ),
        ("Full", "Full")
    );
    task.await.expect("serve");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_server_closes_the_next_connection_at_once() {
    let s = setup();
    let (address, reports, stop, task) = start(
        &s,
        options(1, 0, Duration::from_secs(30), Duration::from_secs(5)),
    )
    .await;
    // One idle client takes the only place.
    let idle = TcpStream::connect(address).expect("connect");
    tokio::time::sleep(Duration::from_millis(200)).await;
    // The next is closed at once, not left waiting in the listen queue.
    let started = Instant::now();
    let refused = tokio::task::spawn_blocking(move || {
        let mut next = TcpStream::connect(address).expect("connect");
        next.set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        let _ = next.write_all(b"\x16\x03\x01");
        let mut buf = [0u8; 16];
        next.read(&mut buf)
    })
    .await
    .expect("thread");
    assert!(
        matches!(&refused, Ok(0))
            || refused
                .as_ref()
                .is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionReset),
        "the connection over the limit was not closed: {refused:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "closed after {:?}",
        started.elapsed()
    );
    // The idle client leaves (its connection is reported: "client sent nothing"); its place
    // serves a real client.
    drop(idle);
    until("the idle client is reported", || {
        reports.lock().expect("reports").len() == 1
    })
    .await;
    let answered = client(s.client.clone(), address).await;
    assert_eq!(answered.received, "hello");
    stop.send(1).expect("stop");
    let summary = task.await.expect("serve");
    assert_eq!((summary.served, summary.refused, summary.cut), (2, 1, 0));
    let reports = reports.lock().expect("reports");
    assert_eq!(reports.len(), 2);
    assert_eq!(
        reports[0].as_ref().err().map(String::as_str),
        Some("client sent nothing")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_stops_accepting_and_cuts_at_the_drain_deadline() {
    let s = setup();
    let drain = Duration::from_millis(300);
    let o = options(8, 0, Duration::from_secs(30), drain);
    let counters = o.counters.clone();
    let (address, reports, stop, task) = start(&s, o).await;
    let idle = TcpStream::connect(address).expect("connect");
    until("the idle client is accepted", || served(&counters) == 1).await;
    let started = Instant::now();
    stop.send(1).expect("stop");
    let summary = task.await.expect("serve");
    let took = started.elapsed();
    assert!(
        took >= drain && took < drain + Duration::from_secs(2),
        "{took:?}"
    );
    assert_eq!((summary.served, summary.cut), (1, 1));
    // A cut connection is not reported; the listener is closed.
    assert!(reports.lock().expect("reports").is_empty());
    assert!(TcpStream::connect(address).is_err());
    drop(idle);
}

/// A second stop cuts at once what the first left to drain.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_stop_cuts_at_once() {
    let s = setup();
    let o = options(8, 0, Duration::from_secs(30), Duration::from_secs(60));
    let counters = o.counters.clone();
    let (address, _reports, stop, task) = start(&s, o).await;
    let idle = TcpStream::connect(address).expect("connect");
    until("the idle client is accepted", || served(&counters) == 1).await;
    stop.send(1).expect("stop");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!task.is_finished(), "drained before the second stop");
    let started = Instant::now();
    stop.send(2).expect("stop");
    let summary = task.await.expect("serve");
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(summary.cut, 1);
    drop(idle);
}

/// Client authentication on two workers, many connections at once from clients of two
/// signature algorithms: each report names the scheme its own client signed with (the
/// verifier's record is kept per connection, not per thread).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_report_names_its_own_clients_scheme() {
    let pkis = [
        pqkit_pki::Pki::generate(&pqkit_core::ml_dsa::ML_DSA_44).expect("PKI"),
        pqkit_pki::Pki::generate(&pqkit_core::classical::ECDSA_P256_SHA256).expect("PKI"),
    ];
    let provider = Arc::new(pqkit_rustls::provider());
    let pkcs8 = |key: &pqkit_core::sig::SigningKey| {
        let der = pqkit_pki::key::signing_key_to_pkcs8(key, pqkit_pki::key::KeyFormat::Seed)
            .expect("PKCS#8");
        PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(der.to_vec()))
    };
    let roots: Vec<_> = pkis
        .iter()
        .map(|p| CertificateDer::from(p.ca_cert.clone()))
        .collect();
    let (server, seen) = pqkit_rustls::server_config(
        provider.clone(),
        vec![CertificateDer::from(pkis[0].server_cert.clone())],
        pkcs8(&pkis[0].server_key),
        Some(&roots),
    )
    .expect("server config");
    let clients: Vec<Arc<ClientConfig>> = pkis
        .iter()
        .map(|p| {
            let auth = (
                vec![CertificateDer::from(p.client_cert.clone())],
                pkcs8(&p.client_key).into(),
            );
            let (mut c, _) = pqkit_rustls::client_config(provider.clone(), &roots[..1], Some(auth))
                .expect("client config");
            // Full handshakes only: a resumed one has no client CertificateVerify to report.
            c.resumption = rustls::client::Resumption::disabled();
            Arc::new(c)
        })
        .collect();
    let s = Setup {
        server: Arc::new(server),
        seen,
        client: clients[0].clone(),
    };
    const EACH: usize = 12;
    let o = options(64, 0, Duration::from_secs(10), Duration::from_secs(10));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
    // (client port, the client signature scheme the server's report names).
    type Seen = Vec<(u16, Option<String>)>;
    let by_port: Arc<Mutex<Seen>> = Arc::default();
    let kept = by_port.clone();
    let (stop, stopped) = tokio::sync::watch::channel(0u32);
    let task = tokio::spawn(serve(
        listener,
        s.server.clone(),
        s.seen.clone(),
        o,
        None,
        stopped,
        move |peer, result, _| {
            let r = result.expect("served");
            kept.lock()
                .expect("reports")
                .push((peer.port(), r.peer_signature_scheme));
        },
    ));
    let mut expected = Vec::new();
    let mut running = Vec::new();
    for i in 0..2 * EACH {
        let config = clients[i % 2].clone();
        let socket = TcpStream::connect(address).expect("connect");
        let port = socket.local_addr().expect("local").port();
        expected.push((
            port,
            if i % 2 == 0 {
                "mldsa44"
            } else {
                "ecdsa_secp256r1_sha256"
            },
        ));
        running.push(tokio::task::spawn_blocking(move || {
            pqkit_rustls::session::run_client(
                socket,
                config,
                ServerName::try_from("localhost").expect("name"),
                &Arc::default(),
                b"who",
                false,
                Timeouts::default(),
            )
            .expect("client connection")
        }));
    }
    for r in running {
        r.await.expect("client");
    }
    until("every connection is reported", || {
        by_port.lock().expect("reports").len() == 2 * EACH
    })
    .await;
    stop.send(1).expect("stop");
    task.await.expect("serve");
    let got = by_port.lock().expect("reports").clone();
    for (port, scheme) in expected {
        let (_, seen) = got
            .iter()
            .find(|(p, _)| *p == port)
            .expect("a report for each client");
        assert_eq!(seen.as_deref(), Some(scheme), "client port {port}");
    }
}

/// Slow and hostile clients beside a well-behaved one: 40 idle sockets, 8 clients sending a
/// ClientHello a byte every 20 ms, and 8 threads sending garbage and reconnecting, on a server
/// of 64 places and 2 workers. None of them delays the well-behaved client's connection by
/// more than 100 ms over its median alone (bounded counts and time, 127.0.0.1).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_clients_do_not_delay_a_good_one() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let s = setup();
    let (address, _reports, stop, task) = start(
        &s,
        options(64, 0, Duration::from_secs(5), Duration::from_secs(1)),
    )
    .await;
    let timed = |n: usize| {
        let (config, address) = (s.client.clone(), address);
        tokio::task::spawn_blocking(move || {
            let mut times: Vec<Duration> = (0..n)
                .map(|_| {
                    let started = Instant::now();
                    let socket = TcpStream::connect(address).expect("connect");
                    pqkit_rustls::session::run_client(
                        socket,
                        config.clone(),
                        ServerName::try_from("localhost").expect("name"),
                        &Arc::default(),
                        b"hello",
                        false,
                        Timeouts::default(),
                    )
                    .expect("the good client is served");
                    started.elapsed()
                })
                .collect();
            times.sort();
            times
        })
    };
    timed(3).await.expect("warm-up");
    let alone = timed(15).await.expect("alone");
    let median = alone[alone.len() / 2];

    let done = Arc::new(AtomicBool::new(false));
    let idle: Vec<TcpStream> = (0..40)
        .map(|_| TcpStream::connect(address).expect("idle"))
        .collect();
    // A ClientHello-sized record header and body, a byte at a time.
    let mut hostile = Vec::new();
    for _ in 0..8 {
        let done = done.clone();
        hostile.push(std::thread::spawn(move || {
            let mut sock = TcpStream::connect(address).expect("connect");
            let mut hello = vec![
                0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03,
            ];
            hello.resize(517, 0x41);
            for byte in hello {
                if done.load(Ordering::Relaxed) || sock.write_all(&[byte]).is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }));
    }
    for i in 0..8u8 {
        let done = done.clone();
        hostile.push(std::thread::spawn(move || {
            let garbage: Vec<u8> = (0..=255u8)
                .cycle()
                .take(600)
                .map(|b| b.wrapping_mul(31) ^ i)
                .collect();
            while !done.load(Ordering::Relaxed) {
                if let Ok(mut sock) = TcpStream::connect(address) {
                    let _ = sock.write_all(&garbage);
                    let _ = sock.set_read_timeout(Some(Duration::from_millis(200)));
                    let _ = sock.read(&mut [0u8; 64]);
                }
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let crowded = timed(15).await.expect("crowded");
    done.store(true, Ordering::Relaxed);
    for h in hostile {
        h.join().expect("hostile client");
    }
    drop(idle);
    stop.send(1).expect("stop");
    task.await.expect("serve");
    let worst = *crowded.last().expect("times");
    println!(
        "hostile: alone median {median:?}; beside 40 idle, 8 byte-by-byte and 8 garbage \
         clients median {:?}, worst {worst:?}",
        crowded[crowded.len() / 2]
    );
    assert!(
        worst <= median + Duration::from_millis(100),
        "a connection took {worst:?} beside hostile clients (alone: median {median:?})"
    );
}
