//! pqkit's TLS service on tokio and tokio-rustls: the accept loop of `pqkit server` ([`serve`])
//! and of `pqkit proxy` ([`proxy`]), with the promises a service in front of real clients must
//! keep.
//!
//! - **Workers**: the caller's multi-threaded tokio runtime (`pqkit server --workers`, one per
//!   core by default); a connection is a task, not a thread.
//! - **Deadlines**: a client has [`Timeouts::handshake`] from its connection to its Finished —
//!   a peer that sends a byte at a time cannot stretch it; then, in [`serve`],
//!   [`Timeouts::idle`] for the message, the reply and the close together, and in [`proxy`]
//!   [`Timeouts::idle`] without a byte crossing either way (each byte starts it again).
//! - **A connection limit that never stalls the accept loop**: at most
//!   [`Options::max_connections`] connections are served at once; one more is accepted and
//!   closed at once (counted in [`Counters::refused`], logged at most once a second), so a
//!   full server answers new clients at once instead of leaving them in the listen queue.
//! - **Graceful shutdown**: the first [`Stop`] (SIGTERM or SIGINT: [`stop_on_signals`])
//!   closes the listener; connections in flight finish, and those still open after
//!   [`Options::drain`] — or at the second [`Stop`] — are cut ([`Summary::cut`]). Reaching
//!   [`Options::count`] closes the listener too, but connections in flight then finish under
//!   their own deadlines.
//! - **Session resumption** with stateless tickets under keys that rotate
//!   ([`enable_resumption`], RFC 8446 §4.6.1).
//! - **Logging** through `tracing`, outside the handshake path: limit refusals, accept
//!   failures, shutdown and draining. Each connection's report goes to the caller's callback.
//!
//! [`serve`] handles each connection as [`pqkit_rustls::session::run_server`] does over a blocking
//! socket — handshake, one message of at most 16 KiB, the reply (or an echo), close — and
//! reported in the same [`SideReport`]. Differences: a failed handshake's alert goes out in
//! tokio-rustls's one last write (the blocking driver writes until the queue is empty); a
//! resumed connection with client authentication reports no client signature scheme (the
//! client signs nothing on resumption).

pub mod proxy;

mod listen;
mod stream;

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use pqkit_rustls::observe::PeerScheme;
use pqkit_rustls::session::{SideReport, Timeouts, Wire};
use rustls::ServerConfig;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{Instant, timeout_at};
use tokio_rustls::TlsAcceptor;

pub use proxy::proxy;

/// How [`serve`] and [`proxy`] serve.
#[derive(Clone, Debug)]
pub struct Options {
    /// Connections served at once (at least 1); one more is closed at once.
    pub max_connections: usize,
    /// The handshake and idle deadlines of each connection.
    pub timeouts: Timeouts,
    /// Stop accepting after this many connections were served — refused ones not counted
    /// (0: until stopped).
    pub count: u64,
    /// How long connections in flight may take to finish after the first [`Stop`].
    pub drain: Duration,
    /// Live counts, for the caller to read while serving.
    pub counters: Arc<Counters>,
}

/// Live counts of a [`serve`] or [`proxy`] call.
#[derive(Debug, Default)]
pub struct Counters {
    /// Connections accepted and being served now.
    pub in_flight: AtomicU64,
    /// Connections accepted and served (or being served).
    pub served: AtomicU64,
    /// Connections closed at once because [`Options::max_connections`] were in flight.
    pub refused: AtomicU64,
}

/// A request to stop, counted: the first stops accepting, the second cuts what is in flight.
pub type Stop = tokio::sync::watch::Receiver<u32>;

/// What [`serve`] or [`proxy`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Connections accepted and served.
    pub served: u64,
    /// Connections closed at once because [`Options::max_connections`] were in flight.
    pub refused: u64,
    /// Connections still open at the drain deadline or the second [`Stop`], cut (and not
    /// reported).
    pub cut: usize,
}

impl Summary {
    /// Logs the summary (level info, message "stopped"), as the commands do at exit.
    pub fn log(&self) {
        tracing::info!(
            served = self.served,
            refused = self.refused,
            cut = self.cut,
            "stopped"
        );
    }
}

/// Turns on session resumption with stateless tickets (RFC 8446 §4.6.1), encrypted under
/// AWS-LC keys that rotate (a new key every 6 hours, the previous one still accepted).
///
/// # Errors
/// The rustls error when no ticket key can be made.
pub fn enable_resumption(config: &mut ServerConfig) -> Result<(), rustls::Error> {
    config.ticketer = rustls::crypto::aws_lc_rs::Ticketer::new()?;
    Ok(())
}

/// Turns session resumption off: no session cache and no NewSessionTicket (rustls's default
/// configuration keeps 256 sessions and sends 2 tickets).
pub fn disable_resumption(config: &mut ServerConfig) {
    config.session_storage = Arc::new(rustls::server::NoServerSessionStorage {});
    config.send_tls13_tickets = 0;
}

/// A [`Stop`] that counts SIGTERMs and SIGINTs (logged with their names), from a task on the
/// current runtime.
///
/// # Errors
/// When the signal handlers cannot be installed.
pub fn stop_on_signals() -> io::Result<Stop> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    let (send, stop) = tokio::sync::watch::channel(0u32);
    tokio::spawn(async move {
        loop {
            let name = tokio::select! {
                _ = term.recv() => "SIGTERM",
                _ = int.recv() => "SIGINT",
            };
            let n = *send.borrow() + 1;
            tracing::info!(signal = name, count = n, "stop requested");
            if send.send(n).is_err() {
                return;
            }
        }
    });
    Ok(stop)
}

/// Waits until `stop` has counted at least `n` requests (forever once its sender is gone
/// without them).
pub(crate) async fn stopped(stop: &mut Stop, n: u32) {
    if stop.wait_for(|count| *count >= n).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Serves TLS connections from `listener` with `config` until the first [`Stop`] or
/// [`Options::count`] served connections, then drains (see the crate docs). Each connection's
/// first message is answered with `reply`, or echoed when `reply` is `None`. `report` is called
/// once for each connection that ends — not for those cut — inside that connection's
/// [`pqkit_rustls::observe::scope`] (so `seen` answers for it), with its report or the error
/// that ended it.
pub async fn serve<R>(
    listener: TcpListener,
    config: Arc<ServerConfig>,
    seen: Arc<PeerScheme>,
    options: Options,
    reply: Option<Arc<[u8]>>,
    stop: Stop,
    report: R,
) -> Summary
where
    R: Fn(SocketAddr, io::Result<SideReport>, &PeerScheme) + Send + Sync + 'static,
{
    let acceptor = TlsAcceptor::from(config);
    let report = Arc::new(report);
    let timeouts = options.timeouts;
    listen::run(listener, options, stop, move |socket, peer| {
        let (acceptor, seen, report, reply) = (
            acceptor.clone(),
            seen.clone(),
            report.clone(),
            reply.clone(),
        );
        async move {
            seen.clear();
            let result = connection(socket, &acceptor, &seen, reply.as_deref(), timeouts).await;
            report(peer, result, &seen);
            seen.clear();
        }
    })
    .await
}

/// One connection: handshake, one message, the reply, close (see
/// [`pqkit_rustls::session::run_server`], whose report this gives). The handshake time runs
/// from the arrival of the first ClientHello bytes to the client's Finished.
async fn connection(
    socket: TcpStream,
    acceptor: &TlsAcceptor,
    seen: &PeerScheme,
    reply: Option<&[u8]>,
    timeouts: Timeouts,
) -> io::Result<SideReport> {
    let deadline = Instant::now() + timeouts.handshake;
    let (mut tls, handshake) = stream::handshake(socket, acceptor, deadline).await?;
    let deadline = Instant::now() + timeouts.idle;
    let received = timeout_at(deadline, async {
        let mut buf = vec![0u8; 16 * 1024];
        let n = tls.read(&mut buf).await?;
        buf.truncate(n);
        tls.write_all(reply.unwrap_or(&buf)).await?;
        // close_notify, then the end of our side of the TCP connection.
        tls.shutdown().await?;
        Ok::<_, io::Error>(buf)
    })
    .await
    .map_err(|_| stream::timed_out("the client took longer than the idle timeout"))??;
    // Until the client closes too, or the deadline: the exchange itself is complete.
    let _ = timeout_at(deadline, async {
        let mut sink = [0u8; 4096];
        while matches!(tls.read(&mut sink).await, Ok(n) if n > 0) {}
    })
    .await;
    let (counted, conn) = tls.get_ref();
    let wire = Wire {
        read: counted.read,
        written: counted.written,
        transcript: None,
    };
    Ok(pqkit_rustls::session::report(
        "server", conn, wire, handshake, seen, received,
    ))
}
