//! `pqkit proxy`: post-quantum TLS in front of a TCP service (termination), and towards it
//! when the service speaks TLS itself (origination).
//!
//! Each client connection, as a task of the shared accept loop (limits, stop, drain: the crate
//! docs):
//! 1. the TLS handshake under [`Timeouts::handshake`], with the [`Termination`]'s current
//!    certificate, key and client policy — client certificates validated against the CA and
//!    then checked against an [`AllowList`] (access_denied otherwise);
//! 2. a connection to the [`Upstream`] (TCP or a Unix-domain socket, then TLS when
//!    [`Upstream::tls`] is set), only now that the client is authenticated, within the same
//!    timeout, counted in the metrics when it fails (the client's connection is then closed
//!    without close_notify: a truncation, not an empty answer). The client's bytes that came
//!    with its Finished go out on a raw connection as soon as it exists, before the proxy
//!    waits on it: on loopback the connection is usually complete when `connect` returns, and
//!    the service then wakes once for its new connection and its first bytes, not twice;
//! 3. the bytes both ways until both sides have closed — an end of stream on one side is passed
//!    on as close_notify or a TCP FIN on the other — or until nothing crossed either way for
//!    [`Timeouts::idle`] (each byte read either way starts that time again: a peer that keeps
//!    sending keeps its connection).
//!
//! Reload: [`Termination::replace`] puts a new configuration in place for the next handshakes;
//! connections already open keep theirs, and session tickets stay valid (the ticket keys and
//! session cache carry over). With client authentication, turn resumption off
//! ([`crate::disable_resumption`]): rustls does not check a resumed session's client again, so
//! a ticket would outlive a reload that removed its client — the proxy closes any resumed
//! connection that carries a client certificate (counted as a failure, reason
//! `resumption_refused`).

pub mod allow;
pub mod metrics;
mod pump;

use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, RwLock};

use pqkit_rustls::observe::PeerScheme;
use pqkit_rustls::session::Timeouts;
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ServerConfig};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream, UnixStream};
use tokio::time::{Instant, timeout_at};
use tokio_rustls::{TlsAcceptor, TlsConnector};

pub use allow::AllowList;
pub use metrics::Metrics;

use crate::{Options, Stop, Summary, listen, stream};

/// The TLS configuration clients meet, replaceable while serving.
#[derive(Debug)]
pub struct Termination {
    current: RwLock<Arc<Current>>,
}

/// One configuration of a [`Termination`].
struct Current {
    acceptor: TlsAcceptor,
    config: Arc<ServerConfig>,
    seen: Arc<PeerScheme>,
    scheme: String,
}

impl std::fmt::Debug for Current {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Current")
            .field("scheme", &self.scheme)
            .finish_non_exhaustive()
    }
}

impl Termination {
    /// Serves with `config`; `seen` is its client verifier's record
    /// ([`pqkit_rustls::server_config`]), `scheme` the name of the signature scheme of its key
    /// (the metrics' `scheme` label).
    pub fn new(config: ServerConfig, seen: Arc<PeerScheme>, scheme: String) -> Self {
        Self {
            current: RwLock::new(Arc::new(Current::new(config, seen, scheme))),
        }
    }

    /// Serves the next handshakes with `config` (as [`Termination::new`]), keeping the ticket
    /// keys and the session cache of the configuration it replaces, so that clients holding
    /// tickets still resume. Connections already open are not touched.
    pub fn replace(&self, mut config: ServerConfig, seen: Arc<PeerScheme>, scheme: String) {
        let old = self.current();
        config.ticketer = old.config.ticketer.clone();
        config.session_storage = old.config.session_storage.clone();
        let new = Arc::new(Current::new(config, seen, scheme));
        match self.current.write() {
            Ok(mut c) => *c = new,
            Err(poisoned) => *poisoned.into_inner() = new,
        }
    }

    fn current(&self) -> Arc<Current> {
        match self.current.read() {
            Ok(c) => c.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }
}

impl Current {
    fn new(config: ServerConfig, seen: Arc<PeerScheme>, scheme: String) -> Self {
        let config = Arc::new(config);
        Self {
            acceptor: TlsAcceptor::from(config.clone()),
            config,
            seen,
            scheme,
        }
    }
}

/// Where the proxy sends each client's bytes.
#[derive(Clone, Debug)]
pub struct Upstream {
    /// `host:port`, resolved at each connection, or `unix:PATH`, a Unix-domain stream socket
    /// (a service beside the proxy: no second TCP connection per client).
    pub address: String,
    /// Speak TLS to it with this client configuration and server name (origination).
    pub tls: Option<(Arc<ClientConfig>, ServerName<'static>)>,
}

/// Relays TLS connections from `listener` to `upstream` until the first [`Stop`] or
/// [`Options::count`] connections, then drains (the crate docs). Handshakes, failures,
/// bytes and connections are counted in `metrics`; each connection is logged through
/// `tracing` (debug: its parameters; info: failed handshakes and relays; warn: an unreachable
/// target, a resumed session with a client certificate).
pub async fn proxy(
    listener: TcpListener,
    termination: Arc<Termination>,
    upstream: Arc<Upstream>,
    options: Options,
    metrics: Arc<Metrics>,
    stop: Stop,
) -> Summary {
    let timeouts = options.timeouts;
    listen::run(listener, options, stop, move |socket, peer| {
        let current = termination.current();
        let (upstream, metrics) = (upstream.clone(), metrics.clone());
        async move {
            current.seen.clear();
            relay(socket, peer, &current, &upstream, timeouts, &metrics).await;
            current.seen.clear();
        }
    })
    .await
}

/// One client connection (the module docs).
async fn relay(
    socket: TcpStream,
    peer: SocketAddr,
    current: &Current,
    upstream: &Upstream,
    timeouts: Timeouts,
    metrics: &Metrics,
) {
    let deadline = Instant::now() + timeouts.handshake;
    let (mut client, took) = match stream::handshake(socket, &current.acceptor, deadline).await {
        Ok(c) => c,
        Err(e) => {
            let (reason, alert) = metrics.handshake_failed(&e);
            let refusal = current.seen.rejection();
            tracing::info!(
                %peer,
                reason,
                alert,
                error = %e,
                refusal = refusal.as_deref().unwrap_or(""),
                "handshake failed"
            );
            return;
        }
    };
    let conn = client.get_ref().1;
    if conn.handshake_kind() == Some(rustls::HandshakeKind::Resumed)
        && conn.peer_certificates().is_some()
    {
        // rustls restores a resumed session's client chain from the ticket without asking
        // the verifier again: a client a reload removed (CA or allow-list) would get back in.
        let e = io::Error::new(
            io::ErrorKind::PermissionDenied,
            "a resumed session with a client certificate (not checked again): closed",
        );
        metrics.handshake_failed(&e);
        tracing::warn!(%peer, "closed: resumed a session with a client certificate");
        return;
    }
    metrics.handshake(conn, &current.scheme, current.seen.get(), took);
    tracing::debug!(
        %peer,
        group = ?conn.negotiated_key_exchange_group().map(pqkit_rustls::group_name),
        handshake_ms = took.as_secs_f64() * 1e3,
        "handshake"
    );
    // The client's first bytes, when they came with its Finished: a raw upstream gets them
    // in its connection's first moment (one wake-up of the service, not two).
    let early = match pump::ready_now(&mut client) {
        Ok(early) => early,
        Err(e) => {
            tracing::info!(%peer, error = %e, "connection ended");
            return;
        }
    };
    let deadline = Instant::now() + timeouts.handshake;
    let relayed = match connect(upstream, deadline, early).await {
        Ok((target, early)) => {
            let raw = upstream.tls.is_none();
            pump::pump(client, target, early, raw, timeouts.idle, metrics).await
        }
        Err(e) => {
            metrics.upstream_failed();
            tracing::warn!(%peer, target = %upstream.address, error = %e, "target unreachable");
            // Closed without close_notify: the client sees a truncated connection, not an
            // empty answer.
            drop(client);
            return;
        }
    };
    match relayed {
        Ok((up, down)) => tracing::debug!(%peer, from_client = up, from_upstream = down, "closed"),
        Err(e) => tracing::info!(%peer, error = %e, "connection ended"),
    }
}

/// A connection to the upstream: TCP or a Unix-domain socket, under TLS or not.
trait Target: AsyncRead + AsyncWrite + Unpin + Send {}

impl<T: AsyncRead + AsyncWrite + Unpin + Send> Target for T {}

/// Connects to `upstream` (and completes its TLS handshake) before `deadline`. `early` (the
/// client's first bytes) is written at once to a raw Unix-domain upstream; returns what is
/// left of it to write.
async fn connect(
    upstream: &Upstream,
    deadline: Instant,
    mut early: pump::Early,
) -> io::Result<(Box<dyn Target>, pump::Early)> {
    let late = || stream::timed_out("connecting took longer than the handshake timeout");
    let raw: Box<dyn Target> = match (upstream.address.strip_prefix("unix:"), &upstream.tls) {
        (Some(path), None) => {
            let socket = connect_unix(path)?;
            let _ = early.write_now(&socket)?;
            Box::new(UnixStream::from_std(socket)?)
        }
        (Some(path), Some(_)) => Box::new(
            timeout_at(deadline, UnixStream::connect(path))
                .await
                .map_err(|_| late())??,
        ),
        (None, tls) => {
            let early = if tls.is_none() {
                Some(&mut early)
            } else {
                None
            };
            let tcp = timeout_at(deadline, connect_tcp(&upstream.address, early))
                .await
                .map_err(|_| late())??;
            Box::new(tcp)
        }
    };
    let Some((config, name)) = &upstream.tls else {
        return Ok((raw, early));
    };
    let tls = timeout_at(
        deadline,
        TlsConnector::from(config.clone()).connect(name.clone(), raw),
    )
    .await
    .map_err(|_| stream::timed_out("the target's handshake took longer than the timeout"))??;
    Ok((Box::new(tls), early))
}

/// A TCP connection to `address` (`host:port`; each of its addresses in turn), with
/// TCP_NODELAY. With `early`, its bytes are written as soon as the connection is up: on
/// loopback the TCP handshake has usually completed within `connect` itself, and then the
/// connection is not waited for at all.
async fn connect_tcp(address: &str, mut early: Option<&mut pump::Early>) -> io::Result<TcpStream> {
    let mut last = None;
    for address in tokio::net::lookup_host(address).await? {
        match connect_tcp_to(address, early.as_deref_mut()).await {
            Ok(tcp) => return Ok(tcp),
            Err(e) => last = Some(e),
        }
    }
    Err(last
        .unwrap_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the name has no address")))
}

/// [`connect_tcp`] to one address.
async fn connect_tcp_to(
    address: SocketAddr,
    early: Option<&mut pump::Early>,
) -> io::Result<TcpStream> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(
        Domain::for_address(address),
        Type::STREAM.nonblocking(),
        Some(Protocol::TCP),
    )?;
    socket.set_tcp_nodelay(true)?;
    match socket.connect(&address.into()) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
        Err(e) => return Err(e),
    }
    let socket = std::net::TcpStream::from(socket);
    if let Some(early) = early
        && early.write_now(&socket)?
    {
        // Bytes went out: connected.
        return TcpStream::from_std(socket);
    }
    let tcp = TcpStream::from_std(socket)?;
    tcp.writable().await?;
    match tcp.take_error()? {
        Some(e) => Err(e),
        None => Ok(tcp),
    }
}

/// A non-blocking connection to the Unix-domain stream socket at `path`, without waiting:
/// a listening socket accepts at once, or refuses (`WouldBlock` when its backlog is full).
fn connect_unix(path: &str) -> io::Result<std::os::unix::net::UnixStream> {
    use socket2::{Domain, SockAddr, Socket, Type};
    // socket2 sets close-on-exec.
    let socket = Socket::new(Domain::UNIX, Type::STREAM.nonblocking(), None)?;
    socket.connect(&SockAddr::unix(path)?)?;
    Ok(socket.into())
}
