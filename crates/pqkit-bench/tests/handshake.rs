//! The wire-byte counter against an independent count (a recording TCP proxy on 127.0.0.1),
//! the per-message breakdown against both, and heap and stack figures present per side.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use pqkit_bench::handshake::{self, Setup};
use pqkit_bench::wire::Direction;
use pqkit_core::ml_dsa::ML_DSA_44;
use pqkit_pki::Pki;

// The heap figures need the counting allocator in the program (the library installs none).
#[global_allocator]
static GLOBAL: pqkit_bench::heap::TrackingAllocator =
    pqkit_bench::heap::TrackingAllocator::system();

/// Copies `from` to `to` until EOF, counting; then half-closes `to`.
fn pump(mut from: TcpStream, mut to: TcpStream, count: Arc<AtomicU64>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        loop {
            match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    count.fetch_add(n as u64, Ordering::SeqCst);
                    if to.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    })
}

#[derive(Default)]
struct Proxy {
    client_to_server: Arc<AtomicU64>,
    server_to_client: Arc<AtomicU64>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl Proxy {
    /// Listens on 127.0.0.1, connects the accepted client to `server`, returns the client's
    /// stream to the proxy.
    fn connect(&self, server: SocketAddr) -> io::Result<TcpStream> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let client = TcpStream::connect(listener.local_addr()?)?;
        let (inbound, _) = listener.accept()?;
        let outbound = TcpStream::connect(server)?;
        for s in [&inbound, &outbound] {
            s.set_read_timeout(Some(Duration::from_secs(30)))?;
        }
        let mut threads = self.threads.lock().map_err(|_| io::Error::other("lock"))?;
        threads.push(pump(
            inbound.try_clone()?,
            outbound.try_clone()?,
            self.client_to_server.clone(),
        ));
        threads.push(pump(outbound, inbound, self.server_to_client.clone()));
        Ok(client)
    }
}

#[test]
fn wire_bytes_match_a_recording_proxy_and_the_breakdown_adds_up() {
    let pki = Pki::generate(&ML_DSA_44).expect("pki");
    let group = pqkit_rustls::find_group("X25519MLKEM768").expect("group");
    let setup = Setup::new(&pki, group, true).expect("setup");
    let proxy = Proxy::default();
    let connect = |addr| proxy.connect(addr);
    let m = handshake::connection(&setup, true, &connect).expect("connection");
    for t in proxy.threads.lock().expect("lock").drain(..) {
        t.join().expect("proxy thread");
    }
    let c2s = proxy.client_to_server.load(Ordering::SeqCst);
    let s2c = proxy.server_to_client.load(Ordering::SeqCst);
    assert_eq!(m.client.wire_bytes_written, c2s);
    assert_eq!(m.server.wire_bytes_read, c2s);
    assert_eq!(m.server.wire_bytes_written, s2c);
    assert_eq!(m.client.wire_bytes_read, s2c);

    let parts = m.breakdown.expect("breakdown");
    let sum = |d: Direction| -> u64 {
        parts
            .iter()
            .filter(|p| p.direction == d)
            .map(|p| p.bytes)
            .sum()
    };
    assert_eq!(sum(Direction::ClientToServer), c2s);
    assert_eq!(sum(Direction::ServerToClient), s2c);
    let find = |d: Direction, kind: &str| {
        parts
            .iter()
            .find(|p| p.direction == d && p.kind == kind)
            .unwrap_or_else(|| panic!("{kind} missing: {parts:?}"))
            .clone()
    };
    // The application messages of the reference measurement, to the byte.
    assert_eq!(
        find(Direction::ClientToServer, "application_data").bytes,
        handshake::CLIENT_MESSAGE.len() as u64
    );
    assert_eq!(
        find(Direction::ServerToClient, "application_data").bytes,
        handshake::SERVER_REPLY.len() as u64
    );
    // Mutual authentication: a Certificate and CertificateVerify each way; the server's
    // Certificate message carries its chain (DER lengths plus TLS framing).
    for d in [Direction::ClientToServer, Direction::ServerToClient] {
        assert_eq!(find(d, "certificate").count, 1);
        assert_eq!(find(d, "certificate_verify").count, 1);
        assert_eq!(find(d, "finished").count, 1);
    }
    let chain: u64 = pki.server_chain().iter().map(|c| c.len() as u64).sum();
    let cert = find(Direction::ServerToClient, "certificate").bytes;
    assert!(cert > chain && cert < chain + 64, "{cert} vs chain {chain}");
    // ML-DSA-44 signature (2420) plus the 8 bytes of CertificateVerify framing.
    assert_eq!(
        find(Direction::ServerToClient, "certificate_verify").bytes,
        4 + 2 + 2 + 2420
    );
    assert_eq!(find(Direction::ClientToServer, "client_hello").count, 1);

    // Heap and stack seen on both sides.
    for heap in [m.client_heap, m.server_heap] {
        assert!(
            heap.allocations > 10 && heap.total_bytes >= heap.peak_bytes,
            "{heap:?}"
        );
        assert!(heap.peak_bytes > 4096, "{heap:?}");
    }
    for stack in [m.client_stack, m.server_stack] {
        let s = stack.expect("stack measured");
        assert!((4096..4 << 20).contains(&s), "{s}");
    }
}
