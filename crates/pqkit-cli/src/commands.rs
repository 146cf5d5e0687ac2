//! The subcommands. Each parses its options, calls the libraries and prints.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use pqkit_core::catalogue;
use pqkit_core::sig::SignatureAlgorithm;
use pqkit_pki::{Pki, pem};
use rustls::crypto::{CryptoProvider, SupportedKxGroup};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use serde::Serialize;

use pqkit_bench::handshake;
use pqkit_bench::heap::HeapUse;
use pqkit_bench::wire::Part;
use pqkit_pki::output::Overwrite;
use pqkit_rustls::session::{self, SideReport, Timeouts};

use crate::failure::{Context, Failure};

use crate::failure::Result;

/// `pqkit demo`: one mutually authenticated connection in one process, measured like a row
/// of `pqkit bench handshake`.
pub(crate) fn demo(group: &str, sig: &str, dir: Option<&Path>, json: bool) -> Result<()> {
    let kx = find_group(group)?;
    let pki = match dir {
        Some(d) => Pki::read(d)?,
        None => Pki::generate(find_signature(sig)?)?,
    };
    let setup = handshake::Setup::new(&pki, kx, true).map_err(Failure::other)?;
    let address = std::sync::Mutex::new(String::new());
    let connect = |addr: std::net::SocketAddr| {
        if let Ok(mut a) = address.lock() {
            *a = addr.to_string();
        }
        TcpStream::connect(addr)
    };
    let m = handshake::connection(&setup, true, &connect).map_err(Failure::other)?;
    let report = DemoReport {
        address: address.into_inner().unwrap_or_default(),
        certificate_algorithm: pki.server_key.algorithm().name,
        server_chain_bytes: m.client.peer_chain_bytes,
        client_chain_bytes: m.server.peer_chain_bytes,
        client_to_server_bytes: m.client.wire_bytes_written,
        server_to_client_bytes: m.server.wire_bytes_written,
        client_heap: m.client_heap,
        server_heap: m.server_heap,
        client_stack_bytes: m.client_stack,
        server_stack_bytes: m.server_stack,
        breakdown: m.breakdown.unwrap_or_default(),
        client: m.client,
        server: m.server,
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_demo(&report);
    }
    Ok(())
}

/// Options of `pqkit server`.
pub(crate) struct ServerOptions {
    pub(crate) cert: PathBuf,
    pub(crate) key: PathBuf,
    pub(crate) ca: Option<PathBuf>,
    pub(crate) mutual: bool,
    pub(crate) groups: Vec<String>,
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) count: u64,
    pub(crate) reply: Option<String>,
    pub(crate) json: bool,
    pub(crate) max_connections: usize,
    pub(crate) timeouts: Timeouts,
    pub(crate) workers: usize,
    pub(crate) drain: Duration,
    pub(crate) resumption: bool,
}

/// `pqkit server`: serves connections on a tokio runtime of `workers` threads
/// ([`pqkit_server::serve`]): at most `max_connections` at once (one more is closed at once),
/// each within the handshake and idle deadlines, each first message echoed (or answered);
/// SIGTERM or SIGINT stops accepting, lets connections in flight finish for `drain`, then cuts
/// the rest (a second signal cuts them at once). Session resumption with rotating ticket keys
/// unless `resumption` is off.
pub(crate) fn server(o: &ServerOptions) -> Result<()> {
    if o.max_connections == 0 {
        return Err(Failure::usage("--max-connections must be at least 1"));
    }
    if o.workers == 0 {
        return Err(Failure::usage("--workers must be at least 1"));
    }
    let roots = match (&o.ca, o.mutual) {
        (Some(ca), true) => Some(ca.clone()),
        (None, true) => return Err(Failure::usage("--mutual needs --ca with the client CA")),
        (_, false) => None,
    };
    let (config, seen, _) = server_tls(&ServerTls {
        cert: o.cert.clone(),
        key: o.key.clone(),
        client_ca: roots,
        policy: None,
        groups: o.groups.clone(),
        resumption: o.resumption,
    })?;
    let config = Arc::new(config);
    let runtime = service_runtime(o.workers)?;
    let address = format!("{}:{}", o.host, o.port);
    let served = runtime.block_on(async {
        // Handlers before the ready line (a SIGTERM right after it must drain, not kill).
        let stop = pqkit_server::stop_on_signals()?;
        let listener = tokio::net::TcpListener::bind((o.host.as_str(), o.port))
            .await
            .about(&address)?;
        eprintln!(
            "pqkit server listening on {} (groups {}, client auth {}, at most {} connections, {} \
             workers)",
            listener.local_addr()?,
            o.groups.join(","),
            if o.mutual { "required" } else { "off" },
            o.max_connections,
            o.workers
        );
        let options = pqkit_server::Options {
            max_connections: o.max_connections,
            timeouts: o.timeouts,
            count: o.count,
            drain: o.drain,
            counters: Arc::default(),
        };
        let json = o.json;
        let summary = pqkit_server::serve(
            listener,
            config.clone(),
            seen,
            options,
            o.reply.as_deref().map(|r| Arc::from(r.as_bytes())),
            stop,
            move |peer, result, seen| report_connection(peer, result, seen, json),
        )
        .await;
        summary.log();
        Ok(())
    });
    // The worker threads end before the configuration, whose key may live in a PKCS#11
    // module: unloaded first, it would leave the workers' thread-local destructors pointing
    // into nothing (a SIGSEGV at exit).
    drop(runtime);
    drop(config);
    served
}

/// The multi-threaded tokio runtime of `pqkit server` and `pqkit proxy`: `workers` threads.
pub(crate) fn service_runtime(workers: usize) -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .thread_name("pqkit-worker")
        .enable_all()
        .build()?)
}

/// The files and choices a TLS server configuration is built from (`pqkit server`,
/// `pqkit proxy`, and the proxy again at each SIGHUP).
#[derive(Clone)]
pub(crate) struct ServerTls {
    pub(crate) cert: PathBuf,
    /// A PKCS#8 PEM file or a `pkcs11:` URI.
    pub(crate) key: PathBuf,
    /// The CA certificates of client certificates: client authentication required.
    pub(crate) client_ca: Option<PathBuf>,
    /// Which clients with a valid chain are admitted (all when `None`).
    pub(crate) policy: Option<Arc<dyn pqkit_rustls::verify::ClientPolicy>>,
    pub(crate) groups: Vec<String>,
    pub(crate) resumption: bool,
}

/// Reads `tls`'s files (each named in the error when it fails) and builds the configuration,
/// with the record of the client's CertificateVerify scheme and the end-entity certificate
/// it serves (DER).
pub(crate) fn server_tls(
    tls: &ServerTls,
) -> Result<(
    rustls::ServerConfig,
    Arc<pqkit_rustls::observe::PeerScheme>,
    CertificateDer<'static>,
)> {
    let provider = provider_for(&tls.groups)?;
    let chain = read_chain(&tls.cert)?;
    let leaf = chain
        .first()
        .cloned()
        .ok_or_else(|| Failure::other(format!("{}: no certificate", tls.cert.display())))?;
    let key = read_key(&tls.key)?;
    let roots = tls.client_ca.as_deref().map(read_roots).transpose()?;
    // A `pkcs11:` URI may carry its PIN (pin-value): never shown.
    let about = format!(
        "{} with {}",
        tls.cert.display(),
        pqkit_pkcs11::client::redacted(&tls.key.to_string_lossy())
    );
    let (mut config, seen) = pqkit_rustls::server_config_with_policy(
        provider,
        chain,
        key,
        roots.as_deref(),
        tls.policy.clone(),
    )
    .about(&about)?;
    if tls.resumption {
        pqkit_server::enable_resumption(&mut config).about(&about)?;
    } else {
        pqkit_server::disable_resumption(&mut config);
    }
    Ok((config, seen, leaf))
}

/// One line per connection: its parameters, or why it failed (the peer's certificate named
/// when it was refused).
fn report_connection(
    peer: std::net::SocketAddr,
    result: std::io::Result<SideReport>,
    seen: &pqkit_rustls::observe::PeerScheme,
    json: bool,
) {
    match result {
        Ok(r) if json => match serde_json::to_string(&r) {
            Ok(line) => println!("{line}"),
            Err(e) => eprintln!("{peer}: {e}"),
        },
        Ok(r) => println!(
            "{peer}: {} {} group={} client-sig={} handshake={:.2} ms read={} B written={} B received={:?}",
            r.version,
            r.cipher_suite,
            r.group,
            r.peer_signature_scheme.as_deref().unwrap_or("-"),
            r.handshake_ms,
            r.wire_bytes_read,
            r.wire_bytes_written,
            r.received
        ),
        Err(e) => {
            let why = connection_error(&e, seen);
            if json {
                println!(
                    "{}",
                    serde_json::json!({"role": "server", "peer": peer.to_string(), "error": why})
                );
            } else {
                eprintln!("{peer}: connection failed: {why}");
            }
        }
    }
}

/// A connection's failure in words: the refused certificate and its rule when the verifier
/// recorded one, the TLS or I/O error otherwise.
fn connection_error(e: &std::io::Error, seen: &pqkit_rustls::observe::PeerScheme) -> String {
    if let Some(why) = seen.rejection() {
        return format!("peer certificate refused: {why}");
    }
    match e.kind() {
        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => {
            format!("timed out ({e})")
        }
        _ => e.to_string(),
    }
}

/// Options of `pqkit client`.
pub(crate) struct ClientOptions {
    pub(crate) ca: PathBuf,
    pub(crate) auth: Option<(PathBuf, PathBuf)>,
    pub(crate) groups: Vec<String>,
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) server_name: String,
    pub(crate) message: String,
    pub(crate) expect_group: Option<String>,
    pub(crate) json: bool,
    pub(crate) timeout: Duration,
    pub(crate) connections: u32,
}

/// `pqkit client`: `connections` connections one after another; prints each reply and what was
/// negotiated. Connecting, the handshake and each wait for the server are bounded by `timeout`.
pub(crate) fn client(o: &ClientOptions) -> Result<()> {
    let provider = provider_for(&o.groups)?;
    let roots = read_roots(&o.ca)?;
    let auth = match &o.auth {
        Some((cert, key)) => Some((read_chain(cert)?, read_key(key)?)),
        None => None,
    };
    let (mut config, seen) = pqkit_rustls::client_config(provider, &roots, auth)?;
    if o.connections > 1 {
        // Each connection a full handshake, as the first.
        config.resumption = rustls::client::Resumption::disabled();
    }
    let config = Arc::new(config);
    let address = format!("{}:{}", o.host, o.port);
    let name = server_name(&o.server_name)
        .map_err(|e| Failure::usage(format!("--server-name {:?}: {e}", o.server_name)))?;
    for _ in 0..o.connections {
        one_connection(o, &config, &seen, &name, &address)?;
    }
    Ok(())
}

/// One connection of `pqkit client`: its report printed, the group checked.
fn one_connection(
    o: &ClientOptions,
    config: &Arc<rustls::ClientConfig>,
    seen: &Arc<pqkit_rustls::observe::PeerScheme>,
    name: &ServerName<'static>,
    address: &str,
) -> Result<()> {
    let socket = connect(&o.host, o.port, o.timeout).about(address)?;
    let timeouts = Timeouts {
        handshake: o.timeout,
        idle: o.timeout,
    };
    let result = session::run_client(
        socket,
        config.clone(),
        name.clone(),
        seen,
        o.message.as_bytes(),
        false,
        timeouts,
    );
    let r = match result {
        Ok(r) => r,
        Err(e) => {
            let why = connection_error(&e, seen);
            let failure = if seen.rejection().is_some() {
                Failure::verification(why)
            } else {
                Failure::other(why)
            };
            return Err(failure.about(address));
        }
    };
    if o.json {
        println!("{}", serde_json::to_string(&r)?);
    } else {
        println!("reply: {}", r.received.trim_end());
        println!(
            "{} {} group={} ({}) server-sig={} handshake={:.2} ms written={} B read={} B server chain={} B",
            r.version,
            r.cipher_suite,
            r.group,
            r.group_code_point,
            r.peer_signature_scheme.as_deref().unwrap_or("-"),
            r.handshake_ms,
            r.wire_bytes_written,
            r.wire_bytes_read,
            r.peer_chain_bytes
        );
    }
    if let Some(want) = &o.expect_group {
        let want = find_group(want)?;
        let want = pqkit_rustls::group_name(want);
        if want != r.group {
            return Err(Failure::other(format!(
                "{address}: negotiated {} but --expect-group {want}",
                r.group
            )));
        }
    }
    Ok(())
}

/// A TCP connection to `host:port` within `timeout` (each address the name resolves to).
fn connect(host: &str, port: u16, timeout: Duration) -> std::io::Result<TcpStream> {
    use std::net::ToSocketAddrs;
    let mut last = std::io::Error::new(std::io::ErrorKind::NotFound, "no address");
    for addr in (host, port).to_socket_addrs()? {
        match TcpStream::connect_timeout(&addr, timeout) {
            Ok(s) => return Ok(s),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// `pqkit pki init`.
pub(crate) fn pki_init(sig: &str, dir: &Path, overwrite: Overwrite) -> Result<()> {
    let alg = find_signature(sig)?;
    let paths = Pki::generate(alg)?.write(dir, overwrite)?;
    println!("{} PKI written to {}:", alg.name, dir.display());
    for (what, path) in [
        ("root CA certificate", &paths.ca_cert),
        ("root CA key (PKCS#8)", &paths.ca_key),
        ("server certificate", &paths.server_cert),
        ("server key (PKCS#8)", &paths.server_key),
        ("client certificate", &paths.client_cert),
        ("client key (PKCS#8)", &paths.client_key),
    ] {
        println!("  {what:<22} {}", path.display());
    }
    Ok(())
}

#[derive(Serialize)]
struct DemoReport {
    address: String,
    certificate_algorithm: &'static str,
    server_chain_bytes: usize,
    client_chain_bytes: usize,
    client_to_server_bytes: u64,
    server_to_client_bytes: u64,
    client_heap: HeapUse,
    server_heap: HeapUse,
    client_stack_bytes: Option<usize>,
    server_stack_bytes: Option<usize>,
    breakdown: Vec<Part>,
    client: SideReport,
    server: SideReport,
}

fn print_demo(r: &DemoReport) {
    let (c, s) = (&r.client, &r.server);
    println!(
        "pqkit demo: mutually authenticated TLS 1.3 on {}\n",
        r.address
    );
    let rows: Vec<(&str, String, String)> = vec![
        ("TLS version", c.version.clone(), s.version.clone()),
        (
            "cipher suite",
            c.cipher_suite.clone(),
            s.cipher_suite.clone(),
        ),
        (
            "named group",
            format!("{} ({})", c.group, c.group_code_point),
            format!("{} ({})", s.group, s.group_code_point),
        ),
        // Each side's own CertificateVerify is what the other side verified.
        ("CertificateVerify signed with", scheme(s), scheme(c)),
        (
            "handshake time (ms)",
            format!("{:.2}", c.handshake_ms),
            format!("{:.2}", s.handshake_ms),
        ),
        (
            "bytes written at socket",
            c.wire_bytes_written.to_string(),
            s.wire_bytes_written.to_string(),
        ),
        (
            "bytes read at socket",
            c.wire_bytes_read.to_string(),
            s.wire_bytes_read.to_string(),
        ),
        (
            "certificate chain sent (bytes)",
            format!("{} ({} cert)", r.client_chain_bytes, s.peer_chain_len),
            format!("{} ({} cert)", r.server_chain_bytes, c.peer_chain_len),
        ),
        (
            "received",
            format!("{:?}", c.received),
            format!("{:?}", s.received),
        ),
        (
            "heap peak / total (bytes)",
            format!(
                "{} / {}",
                r.client_heap.peak_bytes, r.client_heap.total_bytes
            ),
            format!(
                "{} / {}",
                r.server_heap.peak_bytes, r.server_heap.total_bytes
            ),
        ),
        (
            "stack high-water (bytes)",
            r.client_stack_bytes
                .map_or_else(|| "-".to_owned(), |b| b.to_string()),
            r.server_stack_bytes
                .map_or_else(|| "-".to_owned(), |b| b.to_string()),
        ),
    ];
    let w = rows.iter().map(|(_, c, _)| c.len()).max().unwrap_or(0) + 2;
    println!("{:<32}{:<w$}server", "", "client");
    for (name, client, server) in rows {
        println!("{name:<32}{client:<w$}{server}");
    }
    println!(
        "\nbytes on the wire: client -> server {} B, server -> client {} B, total {} B \
         (TLS records incl. headers, counted at the socket)",
        r.client_to_server_bytes,
        r.server_to_client_bytes,
        r.client_to_server_bytes + r.server_to_client_bytes
    );
    println!(
        "certificates: {} (root CA -> leaf)",
        r.certificate_algorithm
    );
}

fn scheme(peer_side: &SideReport) -> String {
    match (
        &peer_side.peer_signature_scheme,
        &peer_side.peer_signature_code_point,
    ) {
        (Some(n), Some(cp)) => format!("{n} ({cp})"),
        _ => "-".to_owned(),
    }
}

fn find_group(name: &str) -> Result<&'static dyn SupportedKxGroup> {
    if let Some(note) = catalogue::round3_note(name) {
        eprintln!("{note}");
    }
    pqkit_rustls::find_group(name).map_err(|e| {
        let known: Vec<&str> = catalogue::groups().iter().map(|g| g.name).collect();
        Failure::usage(format!(
            "{e}; named groups: {}, X25519, secp256r1, secp384r1 (or code points such as 0x11ec)",
            known.join(", ")
        ))
    })
}

fn find_signature(name: &str) -> Result<&'static SignatureAlgorithm> {
    catalogue::signature(name).map_err(|e| {
        let known: Vec<&str> = catalogue::signatures().iter().map(|a| a.name).collect();
        Failure::usage(format!(
            "{e}; signature algorithms: {} (or OIDs and TLS code points, see `pqkit list`)",
            known.join(", ")
        ))
    })
}

pub(crate) fn provider_for(groups: &[String]) -> Result<Arc<CryptoProvider>> {
    let groups = groups
        .iter()
        .map(|g| find_group(g.trim()))
        .collect::<Result<Vec<_>>>()?;
    Ok(Arc::new(pqkit_rustls::provider_with_groups(groups)))
}

pub(crate) fn read_chain(path: &Path) -> Result<Vec<CertificateDer<'static>>> {
    Ok(pem::read_certificates(path)?
        .into_iter()
        .map(CertificateDer::from)
        .collect())
}

/// Trusted CA certificates for TLS, checked when read (each decodes as a trust anchor), so a
/// bad file is named here.
pub(crate) fn read_roots(path: &Path) -> Result<Vec<CertificateDer<'static>>> {
    let roots = read_chain(path)?;
    let ders: Vec<Vec<u8>> = roots.iter().map(|c| c.to_vec()).collect();
    pqkit_pki::path::TrustAnchors::new(&ders).about(path.display())?;
    Ok(roots)
}

/// A PKCS#8 key file for TLS, checked when read: decoded and validated against its public
/// part (pqkit-pki), so a damaged key is refused here with the file's name, not at the first
/// handshake.
pub(crate) fn read_key(path: &Path) -> Result<pqkit_rustls::TlsKey> {
    if crate::files::is_token_uri(path) {
        // The key stays in its token: each CertificateVerify is signed there.
        let key = crate::files::load_signing_key(path)?;
        let shown = pqkit_pkcs11::client::redacted(&path.to_string_lossy());
        return pqkit_rustls::TlsKey::signing(key).about(shown);
    }
    let der = pem::read_private_key(path)?;
    if matches!(
        pqkit_pki::key::pkcs8_algorithm(&der).about(path.display())?,
        pqkit_pki::key::Algorithm::Signature(_)
    ) {
        pqkit_pki::key::signing_key_from_pkcs8(&der).about(path.display())?;
    }
    Ok(PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(der.to_vec())).into())
}

pub(crate) fn server_name(name: &str) -> std::io::Result<ServerName<'static>> {
    ServerName::try_from(name.to_owned()).map_err(std::io::Error::other)
}
