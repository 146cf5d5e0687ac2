//! `bench handshake`: the (signature algorithm × named group) matrix, with mutual
//! authentication on and off. Per combination: client and server handshake time (median of N
//! connections, ms), bytes on the wire per direction counted at the socket — the two
//! application messages of the reference manual included — and their breakdown by message
//! type, heap (peak, total, allocations) and stack high-water mark per side.
//!
//! Times and the rest are measured apart. The handshake times are medians of connections
//! run as `pqkit server` and `pqkit client` run them — the server's thread already waiting in
//! `accept`, each side straight into its driver, nothing metered ([`timed`]). Bytes, heap and
//! stack come from one more connection, untimed, on which each side runs on its own thread
//! with a painted stack ([`crate::stack`]) inside its own heap group ([`crate::heap`])
//! ([`connection`]): painting 4 MiB of the server's stack after `accept` used to fall inside the
//! client's handshake time (about 1 ms of it). One unmeasured connection warms up each
//! combination. Every connection is a full handshake (the client does not resume). Work a
//! backend moves to a thread of its own (SLH-DSA signing runs on a 32 MiB-stack thread in
//! pqkit-core) is not in the stack figure.

use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;

use pqkit_core::sig::SignatureAlgorithm;
use pqkit_pki::Pki;
use pqkit_rustls::observe::PeerScheme;
use rustls::crypto::{CryptoProvider, SupportedKxGroup};
use rustls::{ClientConfig, ServerConfig};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use serde::Serialize;

use crate::heap::{HeapUse, Meter};
use crate::timing::median_of;
use crate::wire::{self, Part, Secrets};
use crate::{Progress, stack};
use pqkit_rustls::session::{self, SideReport};

/// The client's message and the server's answer in the reference manual's measurement.
pub const CLIENT_MESSAGE: &str = "hello pqkit!";
/// The server's answer.
pub const SERVER_REPLY: &str = "I hear you fa shizzle!";

/// The default signature algorithms: both references' (ML-DSA, Falcon, SLH-DSA-128s/f,
/// ECDSA P-256, RSA-2048).
pub const DEFAULT_SIGNATURES: [&str; 9] = [
    "ML-DSA-44",
    "ML-DSA-65",
    "ML-DSA-87",
    "Falcon-512",
    "Falcon-1024",
    "SLH-DSA-SHA2-128s",
    "SLH-DSA-SHA2-128f",
    "ECDSA-P256",
    "RSA-PSS-2048",
];

/// The default named groups: ML-KEM alone, the hybrids of both namings, X25519 and P-256.
pub const DEFAULT_GROUPS: [&str; 11] = [
    "MLKEM512",
    "MLKEM768",
    "MLKEM1024",
    "X25519MLKEM768",
    "SecP256r1MLKEM768",
    "SecP384r1MLKEM1024",
    "p256_mlkem512",
    "p384_mlkem768",
    "p521_mlkem1024",
    "X25519",
    "secp256r1",
];

/// A PKI and the configurations for one (signature, group, mutual) combination.
pub struct Setup {
    pub(crate) server: Arc<ServerConfig>,
    pub(crate) server_seen: Arc<PeerScheme>,
    pub(crate) client: Arc<ClientConfig>,
    pub(crate) client_seen: Arc<PeerScheme>,
}

fn key_der(key: &pqkit_core::sig::SigningKey) -> Result<PrivateKeyDer<'static>, String> {
    // Seed form for ML-DSA; every other family has one form and ignores the choice.
    let der = pqkit_pki::key::signing_key_to_pkcs8(key, pqkit_pki::key::KeyFormat::Seed)
        .map_err(|e| e.to_string())?;
    Ok(PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(der.to_vec())))
}

impl Setup {
    /// Configurations for `pki`'s certificates, `group` only, client authentication when
    /// `mutual`.
    ///
    /// # Errors
    /// rustls refusing the configuration — among others a chain whose flight exceeds rustls's
    /// 64 KiB handshake buffer.
    pub fn new(
        pki: &Pki,
        group: &'static dyn SupportedKxGroup,
        mutual: bool,
    ) -> Result<Self, String> {
        Self::with_provider(pki, pqkit_rustls::provider_with_groups(vec![group]), mutual)
    }

    /// As [`Setup::new`], with the caller's provider (e.g. one restricted to one cipher
    /// suite).
    ///
    /// # Errors
    /// As [`Setup::new`].
    pub fn with_provider(
        pki: &Pki,
        provider: CryptoProvider,
        mutual: bool,
    ) -> Result<Self, String> {
        Self::with_server(pki, provider, mutual, None)
    }

    /// As [`Setup::with_provider`], with the server's chain and key given (a key in a PKCS#11
    /// token, its chain from [`Pki::server_chain_for`]) instead of the PKI's own.
    ///
    /// # Errors
    /// As [`Setup::new`].
    pub fn with_server(
        pki: &Pki,
        provider: CryptoProvider,
        mutual: bool,
        server: Option<(Vec<Vec<u8>>, pqkit_core::sig::SigningKey)>,
    ) -> Result<Self, String> {
        let provider = Arc::new(provider);
        let ca = vec![CertificateDer::from(pki.ca_cert.clone())];
        let chain = |c: Vec<Vec<u8>>| c.into_iter().map(CertificateDer::from).collect();
        let (server_chain, server_key) = match server {
            Some((c, key)) => (
                chain(c),
                pqkit_rustls::TlsKey::signing(key).map_err(|e| e.to_string())?,
            ),
            None => (chain(pki.server_chain()), key_der(&pki.server_key)?.into()),
        };
        let (server, server_seen) = pqkit_rustls::server_config(
            provider.clone(),
            server_chain,
            server_key,
            mutual.then_some(&ca[..]),
        )
        .map_err(|e| e.to_string())?;
        let auth = if mutual {
            Some((chain(pki.client_chain()), key_der(&pki.client_key)?.into()))
        } else {
            None
        };
        let (mut client, client_seen) =
            pqkit_rustls::client_config(provider, &ca, auth).map_err(|e| e.to_string())?;
        // Every measured connection is a full handshake: no resumption from an earlier one's
        // ticket (the server still sends its NewSessionTicket messages; they are counted).
        client.resumption = rustls::client::Resumption::disabled();
        Ok(Self {
            server: Arc::new(server),
            server_seen,
            client: Arc::new(client),
            client_seen,
        })
    }
}

/// One measured connection.
pub struct Measured {
    /// The client's view.
    pub client: SideReport,
    /// The server's view.
    pub server: SideReport,
    /// Client heap use.
    pub client_heap: HeapUse,
    /// Server heap use.
    pub server_heap: HeapUse,
    /// Client stack high-water mark, in bytes.
    pub client_stack: Option<usize>,
    /// Server stack high-water mark, in bytes.
    pub server_stack: Option<usize>,
    /// Every byte by message type (when recorded).
    pub breakdown: Option<Vec<Part>>,
}

/// Runs one connection on 127.0.0.1; the client reaches the server through `connect` (given
/// the server's address), so a test can put a recording proxy in between. `record` keeps the
/// client's transcript and traffic secrets and breaks the bytes down by message type.
///
/// # Errors
/// I/O or TLS errors of either side, as text.
pub fn connection(
    setup: &Setup,
    record: bool,
    connect: &(dyn Fn(SocketAddr) -> io::Result<TcpStream> + Sync),
) -> Result<Measured, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let secrets = Arc::new(Secrets::default());
    let client_config = if record {
        let mut c = (*setup.client).clone();
        c.key_log = secrets.clone();
        Arc::new(c)
    } else {
        setup.client.clone()
    };
    let mut server_meter = Meter::new();
    let mut client_meter = Meter::new();
    let (server, client) = std::thread::scope(|s| {
        let server = s.spawn(|| {
            let socket = listener.accept().map_err(|e| e.to_string())?.0;
            stack::measure(|| metered(&mut server_meter, || server_side(setup, socket)))
        });
        let client = stack::measure(|| {
            let run = || client_side(setup, client_config.clone(), connect(addr)?, record);
            metered(&mut client_meter, run)
        });
        if client.as_ref().map_or(true, |(r, _)| r.is_err()) {
            // Unblock a server still waiting for its connection.
            let _ = TcpStream::connect(addr);
        }
        let server = server
            .join()
            .unwrap_or_else(|_| Err("the server thread panicked".to_owned()));
        (server, client)
    });
    let (client, client_stack) = client?;
    let (server, server_stack) = server?;
    let client = client.map_err(|e| format!("client: {e}"))?;
    let server = server.map_err(|e| format!("server: {e}"))?;
    let breakdown = match (&client.transcript, client.suite) {
        (Some(t), Some(suite)) if record => Some(wire::breakdown(t, suite, &secrets)?),
        _ => None,
    };
    Ok(Measured {
        client_heap: client_meter.as_ref().map(Meter::usage).unwrap_or_default(),
        server_heap: server_meter.as_ref().map(Meter::usage).unwrap_or_default(),
        client,
        server,
        client_stack,
        server_stack,
        breakdown,
    })
}

/// `n` unmetered connections on 127.0.0.1, one after another, for their handshake times: one
/// server thread, waiting in `accept` before each connection, as a running server waits (a
/// thread started per connection added its start-up to every client time), and each side
/// running its driver directly (no painted stack, no heap group). Returns (client, server)
/// reports, in order.
///
/// # Errors
/// I/O or TLS errors of either side, as text.
pub fn timed(setup: &Setup, n: usize) -> Result<Vec<(SideReport, SideReport)>, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    std::thread::scope(|s| {
        // The listener goes with the thread: a server that fails closes it, so the client's
        // next connection is refused instead of waiting for an accept that never comes.
        let server = s.spawn(move || {
            let mut reports = Vec::with_capacity(n);
            for _ in 0..n {
                let socket = listener.accept().map_err(|e| e.to_string())?.0;
                reports.push(server_side(setup, socket).map_err(|e| format!("server: {e}"))?);
            }
            Ok::<_, String>(reports)
        });
        let mut clients = Vec::with_capacity(n);
        for _ in 0..n {
            match TcpStream::connect(addr)
                .and_then(|socket| client_side(setup, setup.client.clone(), socket, false))
            {
                Ok(report) => clients.push(report),
                Err(e) => {
                    // Unblock a server still waiting for its connection.
                    let _ = TcpStream::connect(addr);
                    let _ = server.join();
                    return Err(format!("client: {e}"));
                }
            }
        }
        let servers = server
            .join()
            .unwrap_or_else(|_| Err("the server thread panicked".to_owned()))?;
        Ok(clients.into_iter().zip(servers).collect())
    })
}

/// The server's side of one connection: [`SERVER_REPLY`] to the client's message.
fn server_side(setup: &Setup, socket: TcpStream) -> io::Result<SideReport> {
    session::run_server(
        socket,
        setup.server.clone(),
        &setup.server_seen,
        Some(SERVER_REPLY.as_bytes()),
        session::Timeouts::default(),
    )
}

/// The client's side of one connection over `socket`: [`CLIENT_MESSAGE`], the reply, close.
fn client_side(
    setup: &Setup,
    config: Arc<ClientConfig>,
    socket: TcpStream,
    record: bool,
) -> io::Result<SideReport> {
    let name = ServerName::try_from("localhost").map_err(io::Error::other)?;
    session::run_client(
        socket,
        config,
        name,
        &setup.client_seen,
        CLIENT_MESSAGE.as_bytes(),
        record,
        session::Timeouts::default(),
    )
}

/// What to measure.
#[derive(Clone, Debug)]
pub struct Options {
    /// Signature algorithm names.
    pub signatures: Vec<String>,
    /// Named-group names.
    pub groups: Vec<String>,
    /// Mutual authentication settings to run (off, on, or both).
    pub mutual: Vec<bool>,
    /// Timed connections per combination (after one warm-up; the metered one is apart).
    pub repetitions: usize,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            signatures: DEFAULT_SIGNATURES.iter().map(|s| (*s).to_owned()).collect(),
            groups: DEFAULT_GROUPS.iter().map(|s| (*s).to_owned()).collect(),
            mutual: vec![false, true],
            repetitions: 5,
        }
    }
}

/// One combination's results.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Signature algorithm of every certificate and CertificateVerify.
    pub signature: &'static str,
    /// Named group, IANA spelling.
    pub group: String,
    /// Whether the client authenticated too.
    pub mutual: bool,
    /// Timed connections.
    pub repetitions: usize,
    /// Median client handshake time, in ms (ClientHello built → client Finished sent), of
    /// unmetered connections.
    pub client_handshake_ms: f64,
    /// Median server handshake time, in ms (ClientHello bytes arrived → client Finished
    /// processed).
    pub server_handshake_ms: f64,
    /// Bytes the client wrote, in bytes (TLS records with headers).
    pub client_to_server_bytes: u64,
    /// Bytes the server wrote, in bytes.
    pub server_to_client_bytes: u64,
    /// Their sum, in bytes.
    pub total_bytes: u64,
    /// Every byte by direction and message type.
    pub breakdown: Vec<Part>,
    /// Client heap use.
    pub client_heap: HeapUse,
    /// Server heap use.
    pub server_heap: HeapUse,
    /// Client stack high-water mark, in bytes.
    pub client_stack_bytes: Option<usize>,
    /// Server stack high-water mark, in bytes.
    pub server_stack_bytes: Option<usize>,
}

/// A combination that could not run, and why.
#[derive(Clone, Debug, Serialize)]
pub struct Skipped {
    /// Signature algorithm.
    pub signature: &'static str,
    /// Named group.
    pub group: String,
    /// Mutual authentication.
    pub mutual: bool,
    /// Why.
    pub reason: String,
}

fn connect_direct(addr: SocketAddr) -> io::Result<TcpStream> {
    TcpStream::connect(addr)
}

/// Runs `f` inside `meter`'s heap group, or unmetered when heap metering is unavailable.
fn metered<R>(meter: &mut Option<Meter>, f: impl FnOnce() -> R) -> R {
    match meter {
        Some(m) => m.run(f),
        None => f(),
    }
}

/// Runs the matrix.
///
/// # Errors
/// An unknown name, or a connection that failed (as text). A combination rustls cannot carry
/// (the 64 KiB flight limit) is listed in the second vector instead.
pub fn run(options: &Options) -> Result<(Vec<Row>, Vec<Skipped>), String> {
    let pairs: Vec<(String, String)> = options
        .signatures
        .iter()
        .flat_map(|s| options.groups.iter().map(move |g| (s.clone(), g.clone())))
        .collect();
    run_pairs(&pairs, &options.mutual, options.repetitions)
}

/// Runs the given (signature, group) pairs, in order, each with every `mutual` setting; one
/// PKI per signature algorithm.
///
/// # Errors
/// As [`run`].
pub fn run_pairs(
    pairs: &[(String, String)],
    mutual_settings: &[bool],
    repetitions: usize,
) -> Result<(Vec<Row>, Vec<Skipped>), String> {
    let resolved: Vec<(&'static SignatureAlgorithm, &'static dyn SupportedKxGroup)> = pairs
        .iter()
        .map(|(s, g)| {
            let sig = pqkit_core::catalogue::signature(s.trim()).map_err(|e| e.to_string())?;
            let group = pqkit_rustls::find_group(g.trim()).map_err(|e| e.to_string())?;
            Ok((sig, group))
        })
        .collect::<Result<_, String>>()?;
    let total = resolved.len() * mutual_settings.len();
    let progress = Progress::new("bench handshake", total as u64);
    let (mut rows, mut skipped) = (Vec::new(), Vec::new());
    let mut pkis: Vec<(&'static str, Pki)> = Vec::new();
    for (sig, group) in resolved {
        if !pkis.iter().any(|(n, _)| *n == sig.name) {
            pkis.push((sig.name, Pki::generate(sig).map_err(|e| e.to_string())?));
        }
        let pki = &pkis
            .iter()
            .find(|(n, _)| *n == sig.name)
            .expect("just added")
            .1;
        let group_name = pqkit_rustls::group_name(group);
        for &mutual in mutual_settings {
            progress.step(&format!("{} × {group_name} mutual={mutual}", sig.name));
            let setup = match Setup::new(pki, group, mutual) {
                Ok(s) => s,
                Err(reason) => {
                    skipped.push(Skipped {
                        signature: sig.name,
                        group: group_name.clone(),
                        mutual,
                        reason,
                    });
                    continue;
                }
            };
            timed(&setup, 1)?;
            // Bytes, heap and stack: one metered connection, whose times are not used.
            let first = connection(&setup, true, &connect_direct)?;
            let (client_ms, server_ms): (Vec<f64>, Vec<f64>) = timed(&setup, repetitions.max(1))?
                .into_iter()
                .map(|(client, server)| (client.handshake_ms, server.handshake_ms))
                .unzip();
            rows.push(Row {
                signature: sig.name,
                group: group_name.clone(),
                mutual,
                repetitions: client_ms.len(),
                client_handshake_ms: median_of(client_ms),
                server_handshake_ms: median_of(server_ms),
                client_to_server_bytes: first.client.wire_bytes_written,
                server_to_client_bytes: first.server.wire_bytes_written,
                total_bytes: first.client.wire_bytes_written + first.server.wire_bytes_written,
                breakdown: first.breakdown.unwrap_or_default(),
                client_heap: first.client_heap,
                server_heap: first.server_heap,
                client_stack_bytes: first.client_stack,
                server_stack_bytes: first.server_stack,
            });
        }
    }
    progress.finish();
    Ok((rows, skipped))
}
