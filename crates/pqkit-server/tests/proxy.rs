//! The proxy's library promise the command line cannot reach (it turns resumption off with
//! client certificates): given a configuration that authenticates clients *and* issues
//! tickets, a resumed session — whose client chain rustls restores from the ticket without
//! asking the verifier or the allow-list again — is closed before a byte reaches the target,
//! and counted.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use pqkit_rustls::session::Timeouts;
use pqkit_server::proxy::{AllowList, Metrics, Termination, Upstream};
use pqkit_server::{Counters, Options};
use rustls::{ClientConfig, ClientConnection, StreamOwned};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};

fn pkcs8(key: &pqkit_core::sig::SigningKey) -> PrivateKeyDer<'static> {
    let der =
        pqkit_pki::key::signing_key_to_pkcs8(key, pqkit_pki::key::KeyFormat::Seed).expect("PKCS#8");
    PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(der.to_vec()))
}

/// An echo service on a blocking thread: each connection's bytes back until it closes.
fn echo() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = listener.local_addr().expect("address");
    std::thread::spawn(move || {
        for socket in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut socket = socket;
                let mut buf = [0u8; 1024];
                while let Ok(n) = socket.read(&mut buf) {
                    if n == 0 || socket.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
            });
        }
    });
    address
}

/// A proxy on a free port of 127.0.0.1 in front of `target`, with `server` as its TLS
/// configuration: where it listens, its metrics, its stop, and its task.
struct Running {
    address: SocketAddr,
    metrics: Arc<Metrics>,
    stop: tokio::sync::watch::Sender<u32>,
    task: tokio::task::JoinHandle<pqkit_server::Summary>,
}

async fn start_proxy(
    server: rustls::ServerConfig,
    seen: Arc<pqkit_rustls::observe::PeerScheme>,
    target: String,
) -> Running {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
    let counters = Arc::new(Counters::default());
    let metrics = Arc::new(Metrics::new(counters.clone()));
    let (stop, stopped) = tokio::sync::watch::channel(0u32);
    let task = tokio::spawn(pqkit_server::proxy(
        listener,
        Arc::new(Termination::new(server, seen, "mldsa44".to_owned())),
        Arc::new(Upstream {
            address: target,
            tls: None,
        }),
        Options {
            max_connections: 8,
            timeouts: Timeouts::default(),
            count: 0,
            drain: Duration::from_secs(1),
            counters,
        },
        metrics.clone(),
        stopped,
    ));
    Running {
        address,
        metrics,
        stop,
        task,
    }
}

/// Connects, sends `message`, returns whether the handshake resumed and what came back.
fn exchange(
    address: SocketAddr,
    config: &Arc<ClientConfig>,
    message: &[u8],
) -> (bool, std::io::Result<Vec<u8>>) {
    let socket = TcpStream::connect(address).expect("connect");
    socket
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    let conn = ClientConnection::new(
        config.clone(),
        ServerName::try_from("localhost").expect("n"),
    )
    .expect("client");
    let mut tls = StreamOwned::new(conn, socket);
    while tls.conn.is_handshaking() {
        tls.conn.complete_io(&mut tls.sock).expect("handshake");
    }
    let resumed = tls.conn.handshake_kind() == Some(rustls::HandshakeKind::Resumed);
    let answer = tls.write_all(message).and_then(|()| {
        let mut got = vec![0u8; message.len()];
        tls.read_exact(&mut got).map(|()| got)
    });
    (resumed, answer)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_with_a_client_certificate_is_closed() {
    let pki = pqkit_pki::Pki::generate(&pqkit_core::ml_dsa::ML_DSA_44).expect("PKI");
    let provider = Arc::new(pqkit_rustls::provider());
    let roots = [CertificateDer::from(pki.ca_cert.clone())];
    let policy = Arc::new(AllowList {
        any: true,
        ..AllowList::default()
    });
    let (mut server, seen) = pqkit_rustls::server_config_with_policy(
        provider.clone(),
        vec![CertificateDer::from(pki.server_cert.clone())],
        pkcs8(&pki.server_key),
        Some(&roots),
        Some(policy),
    )
    .expect("server config");
    // What `pqkit proxy` never does with --ca: tickets on.
    pqkit_server::enable_resumption(&mut server).expect("tickets");
    let chain = pki
        .client_chain()
        .into_iter()
        .map(CertificateDer::from)
        .collect();
    let (client, _) = pqkit_rustls::client_config(
        provider,
        &roots,
        Some((chain, pkcs8(&pki.client_key).into())),
    )
    .expect("client config");
    let client = Arc::new(client);

    let Running {
        address,
        metrics,
        stop,
        task,
    } = start_proxy(server, seen, echo().to_string()).await;

    let (first, second) = tokio::task::spawn_blocking(move || {
        let first = exchange(address, &client, b"full handshake");
        let second = exchange(address, &client, b"resumed");
        (first, second)
    })
    .await
    .expect("client thread");
    assert!(!first.0, "the first handshake is full");
    assert_eq!(first.1.expect("echoed"), b"full handshake");
    assert!(second.0, "the client resumed from its ticket");
    assert!(
        second.1.is_err(),
        "a resumed session with a client certificate must not reach the target"
    );
    let text = metrics.encode();
    assert!(
        text.contains(
            "pqkit_proxy_handshake_failures_total{reason=\"resumption_refused\",alert=\"none\"} 1"
        ),
        "{text}"
    );
    stop.send(1).expect("stop");
    let summary = task.await.expect("proxy");
    assert_eq!(summary.served, 2);
}

/// A service that speaks first (a banner, as SMTP or SSH servers do) is heard before the
/// client sends anything: the proxy does not wait for client bytes to connect, over TCP and
/// over a Unix-domain socket; then the client's bytes come back echoed, and the service's end
/// of stream reaches the client as close_notify.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_that_speaks_first_is_heard_before_the_client_speaks() {
    fn banner_then_echo<S: Read + Write>(mut socket: S) {
        if socket.write_all(b"220 ready\n").is_err() {
            return;
        }
        let mut buf = [0u8; 64];
        if let Ok(n) = socket.read(&mut buf) {
            let _ = socket.write_all(&buf[..n]);
        }
    }
    let tcp = TcpListener::bind("127.0.0.1:0").expect("bind");
    let tcp_address = tcp.local_addr().expect("address").to_string();
    std::thread::spawn(move || tcp.incoming().flatten().for_each(banner_then_echo));
    let dir = std::env::temp_dir().join(format!("pqkit-proxy-banner-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir(&dir).expect("dir");
    let path = dir.join("banner.sock");
    let unix = std::os::unix::net::UnixListener::bind(&path).expect("bind");
    std::thread::spawn(move || unix.incoming().flatten().for_each(banner_then_echo));

    let pki = pqkit_pki::Pki::generate(&pqkit_core::ml_dsa::ML_DSA_44).expect("PKI");
    let provider = Arc::new(pqkit_rustls::provider());
    let roots = [CertificateDer::from(pki.ca_cert.clone())];
    let (client, _) =
        pqkit_rustls::client_config(provider.clone(), &roots, None).expect("client config");
    let client = Arc::new(client);
    for target in [tcp_address, format!("unix:{}", path.display())] {
        let (server, seen) = pqkit_rustls::server_config_with_policy(
            provider.clone(),
            vec![CertificateDer::from(pki.server_cert.clone())],
            pkcs8(&pki.server_key),
            None,
            None,
        )
        .expect("server config");
        let Running {
            address,
            metrics,
            stop,
            task,
        } = start_proxy(server, seen, target.clone()).await;
        let client = client.clone();
        let heard = tokio::task::spawn_blocking(move || {
            let socket = TcpStream::connect(address).expect("connect");
            socket
                .set_read_timeout(Some(Duration::from_secs(5)))
                .expect("timeout");
            let conn = ClientConnection::new(client, ServerName::try_from("localhost").expect("n"))
                .expect("client");
            let mut tls = StreamOwned::new(conn, socket);
            let mut banner = [0u8; 10];
            tls.read_exact(&mut banner).expect("the banner, unasked");
            tls.write_all(b"EHLO").expect("write");
            let mut rest = Vec::new();
            // The echo, then close_notify: a clean end, not a truncation.
            tls.read_to_end(&mut rest).expect("a clean end");
            (banner, rest)
        })
        .await
        .expect("client thread");
        assert_eq!(&heard.0, b"220 ready\n", "{target}");
        assert_eq!(heard.1, b"EHLO", "{target}");
        let text = metrics.encode();
        assert!(
            text.contains("pqkit_proxy_bytes_total{direction=\"from_upstream\"} 14")
                && text.contains("pqkit_proxy_bytes_total{direction=\"from_client\"} 4"),
            "{target}: {text}"
        );
        stop.send(1).expect("stop");
        task.await.expect("proxy");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
