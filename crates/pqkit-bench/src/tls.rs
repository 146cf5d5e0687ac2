//! `bench tls` (wolfSSL tls_bench style): per (signature algorithm × named group), for a set
//! time, how many connections a client/server pair completes per second and their average
//! connect time, then the bulk rate of application data each way over
//! TLS_AES_256_GCM_SHA384 (RFC 8446 §B.4), in MB/s (10^6 plaintext bytes per second).
//!
//! Each connection is the one `bench handshake` measures — a full handshake (no resumption),
//! the 12-byte request, the 22-byte reply and close_notify both ways — on 127.0.0.1. The bulk
//! phase runs on one connection per pair: the client sends rounds of [`BULK_ROUND`] bytes,
//! each acknowledged by the server once it has read them all (transmit), then asks for rounds
//! of the same size (receive). With several pairs (one per core, say) the pairs run at once
//! and their rates are summed.
//!
//! The connection phase is interleaved: [`ROUNDS`] rounds, each giving every combination its
//! share of the time in turn, so that a drift of the machine's speed during the run (other
//! load, clock frequency) reaches every combination alike and their ratios hold. Before the
//! first round each combination makes [`WARM_UP`] of untimed connections: without them the
//! first combination of a run paid for cold caches, the allocator's first growth and the keys'
//! one-time preparation, and came out slower than the same combination measured later.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use pqkit_pki::Pki;
use rustls::{ClientConnection, ServerConnection, StreamOwned};
use rustls_pki_types::ServerName;
use serde::Serialize;

use crate::handshake::{CLIENT_MESSAGE, SERVER_REPLY, Setup};
use pqkit_rustls::session;

use crate::Progress;

/// The untimed connections before each combination's timed ones.
pub const WARM_UP: Duration = Duration::from_millis(200);

/// The rounds the connection phase is split into (every combination in each).
pub const ROUNDS: u32 = 5;

/// Default signature algorithms.
pub const DEFAULT_SIGNATURES: [&str; 4] = ["ML-DSA-44", "ML-DSA-65", "Falcon-512", "ECDSA-P256"];

/// Default named groups.
pub const DEFAULT_GROUPS: [&str; 4] = ["X25519MLKEM768", "SecP256r1MLKEM768", "MLKEM768", "X25519"];

/// The one cipher suite of every measured connection.
pub const BULK_SUITE: rustls::CipherSuite = rustls::CipherSuite::TLS13_AES_256_GCM_SHA384;

/// Plaintext bytes per bulk round (4 MiB): one request, then the data, then one answer.
pub const BULK_ROUND: usize = 4 << 20;

/// Plaintext bytes per write or read call (one full TLS record), in bytes.
const CHUNK: usize = 16 * 1024;

/// What to measure.
#[derive(Clone, Debug)]
pub struct Options {
    /// Signature algorithm names.
    pub signatures: Vec<String>,
    /// Named-group names.
    pub groups: Vec<String>,
    /// Time for the connection phase, and again for the bulk phase (half each way).
    pub duration: Duration,
    /// Client/server pairs running at once (each pair is two threads).
    pub pairs: usize,
    /// Client authentication.
    pub mutual: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            signatures: DEFAULT_SIGNATURES.iter().map(|s| (*s).to_owned()).collect(),
            groups: DEFAULT_GROUPS.iter().map(|s| (*s).to_owned()).collect(),
            duration: Duration::from_secs(1),
            pairs: 1,
            mutual: false,
        }
    }
}

/// One combination's results.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Signature algorithm of every certificate and CertificateVerify.
    pub signature: &'static str,
    /// Where the server's key is: "file (in process)" or the PKCS#11 token it signs in.
    pub server_key: String,
    /// Named group, IANA spelling.
    pub group: String,
    /// Client authentication.
    pub mutual: bool,
    /// Negotiated cipher suite, IANA spelling.
    pub cipher_suite: String,
    /// Pairs that ran at once.
    pub pairs: usize,
    /// Connections completed by all pairs.
    pub connections: u64,
    /// Wall time of the connection phase, in seconds.
    pub connection_seconds: f64,
    /// Connections per second, all pairs together.
    pub connections_per_sec: f64,
    /// Mean client handshake time, in ms (ClientHello built → client Finished sent).
    pub mean_connect_ms: f64,
    /// Plaintext bytes the clients sent in the bulk phase.
    pub tx_bytes: u64,
    /// Client → server rate, in MB/s (10^6 plaintext bytes per second), pairs summed.
    pub tx_mb_per_sec: f64,
    /// Plaintext bytes the clients received in the bulk phase.
    pub rx_bytes: u64,
    /// Server → client rate, in MB/s, pairs summed.
    pub rx_mb_per_sec: f64,
}

fn err(what: &str) -> impl Fn(io::Error) -> String + '_ {
    move |e| format!("{what}: {e}")
}

fn server_name() -> Result<ServerName<'static>, String> {
    ServerName::try_from("localhost").map_err(|e| e.to_string())
}

/// Connections of one pair until `until`: the client's handshake times, in ms (at least one).
fn connections(setup: &Setup, until: Instant) -> Result<Vec<f64>, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(err("bind"))?;
    let addr = listener.local_addr().map_err(err("bind"))?;
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let server = s.spawn(|| -> Result<(), String> {
            // The listener lives here: when the server fails, new connections are refused.
            let listener = listener;
            for socket in listener.incoming() {
                if stop.load(Ordering::Acquire) {
                    break;
                }
                let socket = socket.map_err(err("accept"))?;
                session::run_server(
                    socket,
                    setup.server.clone(),
                    &setup.server_seen,
                    Some(SERVER_REPLY.as_bytes()),
                    session::Timeouts::default(),
                )
                .map_err(err("server"))?;
            }
            Ok(())
        });
        let client = || -> Result<Vec<f64>, String> {
            let mut times = Vec::new();
            loop {
                let socket = TcpStream::connect(addr).map_err(err("connect"))?;
                let report = session::run_client(
                    socket,
                    setup.client.clone(),
                    server_name()?,
                    &setup.client_seen,
                    CLIENT_MESSAGE.as_bytes(),
                    false,
                    session::Timeouts::default(),
                )
                .map_err(err("client"))?;
                times.push(report.handshake_ms);
                if Instant::now() >= until {
                    return Ok(times);
                }
            }
        };
        let times = client();
        stop.store(true, Ordering::Release);
        // Wake the server from accept(); it may already have gone.
        let _ = TcpStream::connect(addr);
        let served = server
            .join()
            .unwrap_or_else(|_| Err("the server thread panicked".to_owned()));
        let times = times?;
        served?;
        Ok(times)
    })
}

/// The bulk phase's request: upload `n` bytes (answered by one byte once read), download `n`
/// bytes, or quit.
#[derive(Clone, Copy)]
enum Request {
    Upload(u64),
    Download(u64),
    Quit,
}

impl Request {
    fn encode(self) -> [u8; 9] {
        let (op, n) = match self {
            Self::Upload(n) => (b'U', n),
            Self::Download(n) => (b'D', n),
            Self::Quit => (b'Q', 0),
        };
        let mut out = [0u8; 9];
        out[0] = op;
        out[1..].copy_from_slice(&n.to_be_bytes());
        out
    }

    fn read(from: &mut impl Read) -> io::Result<Self> {
        let mut buf = [0u8; 9];
        from.read_exact(&mut buf)?;
        let mut n = [0u8; 8];
        n.copy_from_slice(&buf[1..]);
        let n = u64::from_be_bytes(n);
        match buf[0] {
            b'U' => Ok(Self::Upload(n)),
            b'D' => Ok(Self::Download(n)),
            b'Q' => Ok(Self::Quit),
            _ => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "unknown request",
            )),
        }
    }
}

fn discard(from: &mut impl Read, mut n: u64, buf: &mut [u8]) -> io::Result<()> {
    while n > 0 {
        let want = usize::try_from(n).map_or(buf.len(), |n| n.min(buf.len()));
        from.read_exact(&mut buf[..want])?;
        n -= want as u64;
    }
    Ok(())
}

fn send(to: &mut impl Write, mut n: u64, buf: &[u8]) -> io::Result<()> {
    while n > 0 {
        let want = usize::try_from(n).map_or(buf.len(), |n| n.min(buf.len()));
        to.write_all(&buf[..want])?;
        n -= want as u64;
    }
    to.flush()
}

fn socket(s: TcpStream) -> io::Result<TcpStream> {
    s.set_read_timeout(Some(session::Timeouts::default().idle))?;
    s.set_write_timeout(Some(session::Timeouts::default().idle))?;
    s.set_nodelay(true)?;
    Ok(s)
}

fn bulk_server(setup: &Setup, listener: &TcpListener) -> io::Result<()> {
    let sock = socket(listener.accept()?.0)?;
    let conn = ServerConnection::new(setup.server.clone()).map_err(io::Error::other)?;
    let mut tls = StreamOwned::new(conn, sock);
    let mut buf = vec![0u8; CHUNK];
    loop {
        match Request::read(&mut tls)? {
            Request::Upload(n) => {
                discard(&mut tls, n, &mut buf)?;
                tls.write_all(b"k")?;
                tls.flush()?;
            }
            Request::Download(n) => send(&mut tls, n, &buf)?,
            Request::Quit => break,
        }
    }
    tls.conn.send_close_notify();
    tls.flush()
}

/// One pair's bulk phase, seen from the client.
struct Bulk {
    tx_bytes: u64,
    tx_secs: f64,
    rx_bytes: u64,
    rx_secs: f64,
    suite: String,
}

fn bulk_client(setup: &Setup, addr: SocketAddr, each_way: Duration) -> Result<Bulk, String> {
    let sock = socket(TcpStream::connect(addr).map_err(err("connect"))?).map_err(err("socket"))?;
    let conn = ClientConnection::new(setup.client.clone(), server_name()?)
        .map_err(|e| format!("client: {e}"))?;
    let mut tls = StreamOwned::new(conn, sock);
    while tls.conn.is_handshaking() {
        tls.conn
            .complete_io(&mut tls.sock)
            .map_err(err("handshake"))?;
    }
    let suite = tls
        .conn
        .negotiated_cipher_suite()
        .map(|s| s.suite())
        .ok_or("no cipher suite negotiated")?;
    let round = BULK_ROUND as u64;
    let data = vec![0x5au8; CHUNK];
    let mut buf = vec![0u8; CHUNK];
    let run = |tls: &mut StreamOwned<ClientConnection, TcpStream>,
               buf: &mut [u8],
               request: Request|
     -> io::Result<Duration> {
        let start = Instant::now();
        tls.write_all(&request.encode())?;
        match request {
            Request::Upload(n) => {
                send(tls, n, &data)?;
                let mut ack = [0u8; 1];
                tls.read_exact(&mut ack)?;
            }
            Request::Download(n) => {
                tls.flush()?;
                discard(tls, n, buf)?;
            }
            Request::Quit => tls.flush()?,
        }
        Ok(start.elapsed())
    };
    let mut phase = |request: Request| -> Result<(u64, f64), String> {
        let (mut bytes, mut time) = (0u64, Duration::ZERO);
        while time < each_way || bytes == 0 {
            time += run(&mut tls, &mut buf, request).map_err(err("bulk"))?;
            bytes += round;
        }
        Ok((bytes, time.as_secs_f64()))
    };
    let (tx_bytes, tx_secs) = phase(Request::Upload(round))?;
    let (rx_bytes, rx_secs) = phase(Request::Download(round))?;
    run(&mut tls, &mut buf, Request::Quit).map_err(err("quit"))?;
    tls.conn.send_close_notify();
    let _ = tls.flush();
    Ok(Bulk {
        tx_bytes,
        tx_secs,
        rx_bytes,
        rx_secs,
        suite: format!("{suite:?}").replace("TLS13_", "TLS_"),
    })
}

/// One pair's bulk phase.
fn bulk(setup: &Setup, each_way: Duration) -> Result<Bulk, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(err("bind"))?;
    let addr = listener.local_addr().map_err(err("bind"))?;
    std::thread::scope(|s| {
        let server = s.spawn(move || bulk_server(setup, &listener).map_err(err("bulk server")));
        let client = bulk_client(setup, addr, each_way);
        let server = server
            .join()
            .unwrap_or_else(|_| Err("the server thread panicked".to_owned()));
        let client = client?;
        server?;
        Ok(client)
    })
}

/// Runs `f` once per pair, all at once; the results in pair order.
fn on_pairs<T: Send>(
    pairs: usize,
    f: impl Fn() -> Result<T, String> + Sync,
) -> Result<Vec<T>, String> {
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..pairs.max(1)).map(|_| s.spawn(&f)).collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a pair's thread panicked".to_owned()))
            })
            .collect()
    })
}

/// A server's certificate chain (DER, leaf first) and its key.
type ServerKey = (Vec<Vec<u8>>, pqkit_core::sig::SigningKey);

/// The server key of the rows whose key is the PKI's own (a PKCS#8 key in the process).
pub const FILE_KEY: &str = "file (in process)";

/// Runs every combination with the PKI's own keys.
///
/// # Errors
/// An unknown name, a configuration rustls refuses, or a failed connection (as text).
pub fn run(options: &Options) -> Result<Vec<Row>, String> {
    run_with(options, None)
}

/// Runs every combination; with `server` (name, key source) the server's key for each
/// signature algorithm comes from there instead — a PKCS#11 token that signs every
/// CertificateVerify — with a certificate from the same CA.
///
/// # Errors
/// As [`run`]; a source that offers no key for an algorithm.
pub fn run_with(
    options: &Options,
    mut server: Option<(&str, &mut crate::boundary::KeySource<'_>)>,
) -> Result<Vec<Row>, String> {
    let sigs = options
        .signatures
        .iter()
        .map(|n| pqkit_core::catalogue::signature(n.trim()).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    let groups = options
        .groups
        .iter()
        .map(|n| pqkit_rustls::find_group(n.trim()).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    let combinations = (sigs.len() * groups.len()) as u64;
    let progress = Progress::new("bench tls", combinations * u64::from(ROUNDS + 2));
    // Every combination's setup first, then its warm-up connections.
    let mut setups = Vec::new();
    for sig in sigs {
        let pki = Pki::generate(sig).map_err(|e| e.to_string())?;
        let server_name = server.as_ref().map_or(FILE_KEY, |(n, _)| *n).to_owned();
        let mut server_key = || -> Result<Option<ServerKey>, String> {
            let Some((_, source)) = server.as_mut() else {
                return Ok(None);
            };
            let Some(key) = source(sig)? else {
                return Err(format!("{server_name} offers no {}", sig.name));
            };
            let chain = pki
                .server_chain_for(&key.verifying_key())
                .map_err(|e| e.to_string())?;
            Ok(Some((chain, key)))
        };
        for &group in &groups {
            let group_name = pqkit_rustls::group_name(group);
            progress.step(&format!("{} × {group_name}: warm-up", sig.name));
            let mut provider = pqkit_rustls::provider_with_groups(vec![group]);
            provider.cipher_suites.retain(|s| s.suite() == BULK_SUITE);
            let setup = Setup::with_server(&pki, provider, options.mutual, server_key()?)
                .map_err(|e| format!("{} × {group_name}: {e}", sig.name))?;
            let warm_until = Instant::now() + WARM_UP.min(options.duration);
            on_pairs(options.pairs, || connections(&setup, warm_until))?;
            setups.push((sig, group_name, server_name.clone(), setup));
        }
    }
    // The timed connections, interleaved: (handshake times, seconds) per combination.
    let mut measured: Vec<(Vec<f64>, f64)> = vec![(Vec::new(), 0.0); setups.len()];
    let share = options.duration / ROUNDS;
    for round in 1..=ROUNDS {
        for ((sig, group_name, _, setup), (times, seconds)) in setups.iter().zip(&mut measured) {
            progress.step(&format!(
                "{} × {group_name}: round {round}/{ROUNDS}",
                sig.name
            ));
            let start = Instant::now();
            let until = start + share;
            times.extend(
                on_pairs(options.pairs, || connections(setup, until))?
                    .into_iter()
                    .flatten(),
            );
            *seconds += start.elapsed().as_secs_f64();
        }
    }
    let mut rows = Vec::new();
    for ((sig, group_name, server_name, setup), (times, seconds)) in setups.iter().zip(measured) {
        progress.step(&format!("{} × {group_name}: bulk", sig.name));
        let each_way = options.duration / 2;
        let bulks = on_pairs(options.pairs, || bulk(setup, each_way))?;
        let rate = |bytes: u64, secs: f64| {
            if secs > 0.0 {
                bytes as f64 / secs / 1e6
            } else {
                0.0
            }
        };
        let connections = times.len() as u64;
        rows.push(Row {
            signature: sig.name,
            server_key: server_name.clone(),
            group: group_name.clone(),
            mutual: options.mutual,
            cipher_suite: bulks.first().map(|b| b.suite.clone()).unwrap_or_default(),
            pairs: options.pairs.max(1),
            connections,
            connection_seconds: seconds,
            connections_per_sec: connections as f64 / seconds,
            mean_connect_ms: times.iter().sum::<f64>() / times.len().max(1) as f64,
            tx_bytes: bulks.iter().map(|b| b.tx_bytes).sum(),
            tx_mb_per_sec: bulks.iter().map(|b| rate(b.tx_bytes, b.tx_secs)).sum(),
            rx_bytes: bulks.iter().map(|b| b.rx_bytes).sum(),
            rx_mb_per_sec: bulks.iter().map(|b| rate(b.rx_bytes, b.rx_secs)).sum(),
        });
    }
    progress.finish();
    Ok(rows)
}
