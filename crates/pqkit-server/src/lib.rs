//! pqkit's TLS service on tokio and tokio-rustls: the accept loop of `pqkit server` (and of the
//! proxy to come), with the promises a service in front of real clients must keep.
//!
//! - **Workers**: the caller's multi-threaded tokio runtime (`pqkit server --workers`, one per
//!   core by default); a connection is a task, not a thread.
//! - **Deadlines**: a client has [`Timeouts::handshake`] from its connection to its Finished,
//!   then [`Timeouts::idle`] for the message, the reply and the close together — a peer that
//!   sends a byte at a time cannot stretch either.
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
//! Each connection is handled as [`pqkit_rustls::session::run_server`] does over a blocking
//! socket — handshake, one message of at most 16 KiB, the reply (or an echo), close — and
//! reported in the same [`SideReport`]. Differences: a failed handshake's alert goes out in
//! tokio-rustls's one last write (the blocking driver writes until the queue is empty); a
//! resumed connection with client authentication reports no client signature scheme (the
//! client signs nothing on resumption).

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use pqkit_rustls::observe::{self, PeerScheme};
use pqkit_rustls::session::{SideReport, Timeouts, Wire};
use rustls::ServerConfig;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio::time::{Instant, timeout_at};
use tokio_rustls::TlsAcceptor;

/// How [`serve`] serves.
#[derive(Clone, Debug)]
pub struct Options {
    /// Connections served at once (at least 1); one more is closed at once.
    pub max_connections: usize,
    /// The handshake and idle deadlines of each connection.
    pub timeouts: Timeouts,
    /// The answer to each client's message; `None` echoes it.
    pub reply: Option<Arc<[u8]>>,
    /// Stop accepting after this many connections were served — refused ones not counted
    /// (0: until stopped).
    pub count: u64,
    /// How long connections in flight may take to finish after the first [`Stop`].
    pub drain: Duration,
    /// Live counts, for the caller to read while serving.
    pub counters: Arc<Counters>,
}

/// Live counts of a [`serve`] call.
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

/// What [`serve`] did.
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
async fn stopped(stop: &mut Stop, n: u32) {
    if stop.wait_for(|count| *count >= n).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Serves TLS connections from `listener` with `config` until the first [`Stop`] or
/// [`Options::count`] served connections, then drains (see the crate docs). `report` is called
/// once for each connection that ends — not for those cut — inside that connection's
/// [`observe::scope`] (so `seen` answers for it), with its report or the error that ended it.
pub async fn serve<R>(
    listener: TcpListener,
    config: Arc<ServerConfig>,
    seen: Arc<PeerScheme>,
    options: Options,
    mut stop: Stop,
    report: R,
) -> Summary
where
    R: Fn(SocketAddr, io::Result<SideReport>, &PeerScheme) + Send + Sync + 'static,
{
    let acceptor = TlsAcceptor::from(config);
    let limit = options.max_connections.clamp(1, Semaphore::MAX_PERMITS);
    let permits = Arc::new(Semaphore::new(limit));
    let report = Arc::new(report);
    let counters = options.counters.clone();
    let mut tasks = JoinSet::new();
    let mut summary = Summary::default();
    let mut refusals = RefusalLog::default();
    let mut signalled = false;
    while options.count == 0 || summary.served < options.count {
        tokio::select! {
            () = stopped(&mut stop, 1) => {
                tracing::info!(in_flight = tasks.len(), "stopping: no new connections");
                signalled = true;
                break;
            }
            accepted = listener.accept() => {
                let (socket, peer) = match accepted {
                    Ok(c) => c,
                    Err(e) => {
                        // Out of file descriptors, say: wait a moment instead of spinning.
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                };
                let Ok(permit) = permits.clone().try_acquire_owned() else {
                    summary.refused += 1;
                    counters.refused.fetch_add(1, Ordering::Relaxed);
                    refusals.refused(peer, limit);
                    drop(socket);
                    continue;
                };
                summary.served += 1;
                counters.served.fetch_add(1, Ordering::Relaxed);
                counters.in_flight.fetch_add(1, Ordering::Relaxed);
                let id = observe::next_connection_id();
                let (acceptor, seen, report) = (acceptor.clone(), seen.clone(), report.clone());
                let (reply, timeouts, counters) =
                    (options.reply.clone(), options.timeouts, counters.clone());
                tasks.spawn(Scoped::new(id, async move {
                    let _permit = permit;
                    let result =
                        connection(socket, acceptor, &seen, reply.as_deref(), timeouts).await;
                    report(peer, result, &seen);
                    seen.clear();
                    counters.in_flight.fetch_sub(1, Ordering::Relaxed);
                }));
            }
            Some(joined) = tasks.join_next(), if !tasks.is_empty() => log_panic(joined),
        }
    }
    drop(listener);
    // After a stop, in flight connections get the drain time (a second stop cuts them at
    // once); after `count`, their own deadlines bound them.
    let drain = async {
        while let Some(joined) = tasks.join_next().await {
            log_panic(joined);
        }
    };
    let drained = if signalled {
        tokio::select! {
            r = tokio::time::timeout(options.drain, drain) => r.is_ok(),
            () = stopped(&mut stop, 2) => false,
        }
    } else {
        drain.await;
        true
    };
    if !drained {
        summary.cut = tasks.len();
        tracing::warn!(cut = summary.cut, drain = ?options.drain, "connections cut at shutdown");
        tasks.shutdown().await;
        counters.in_flight.store(0, Ordering::Relaxed);
    }
    summary
}

/// A connection task that panicked is logged (its permit went back as it unwound).
fn log_panic(joined: Result<(), tokio::task::JoinError>) {
    if let Err(e) = joined
        && e.is_panic()
    {
        tracing::error!(error = %e, "a connection task panicked");
    }
}

/// Refusals at the limit, logged at most once a second (a flood of connections must not
/// become a flood of log lines written from the accept loop).
#[derive(Default)]
struct RefusalLog {
    last: Option<Instant>,
    unlogged: u64,
}

impl RefusalLog {
    fn refused(&mut self, peer: SocketAddr, limit: usize) {
        self.unlogged += 1;
        let now = Instant::now();
        if self
            .last
            .is_none_or(|t| now.duration_since(t) >= Duration::from_secs(1))
        {
            tracing::warn!(
                %peer,
                limit,
                refused = self.unlogged,
                "closed: the connection limit is reached"
            );
            self.last = Some(now);
            self.unlogged = 0;
        }
    }
}

/// One connection: handshake, one message, the reply, close (see
/// [`pqkit_rustls::session::run_server`], whose report this gives). The handshake time runs
/// from the arrival of the first ClientHello bytes to the client's Finished.
async fn connection(
    socket: TcpStream,
    acceptor: TlsAcceptor,
    seen: &PeerScheme,
    reply: Option<&[u8]>,
    timeouts: Timeouts,
) -> io::Result<SideReport> {
    socket.set_nodelay(true)?;
    seen.clear();
    let deadline = Instant::now() + timeouts.handshake;
    let mut first = [0u8; 1];
    let n = timeout_at(deadline, socket.peek(&mut first))
        .await
        .map_err(|_| timed_out("the client sent nothing"))??;
    if n == 0 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "client sent nothing",
        ));
    }
    let start = std::time::Instant::now();
    let mut tls = timeout_at(deadline, acceptor.accept(Counted::new(socket)))
        .await
        .map_err(|_| timed_out("the handshake took longer than the timeout"))??;
    let handshake = start.elapsed();
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
    .map_err(|_| timed_out("the client took longer than the idle timeout"))??;
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

fn timed_out(what: &'static str) -> io::Error {
    io::Error::new(io::ErrorKind::TimedOut, what)
}

/// A future whose every step runs as connection `id` ([`observe::scope`]): what the verifier
/// records while tokio runs the step, on whichever worker thread, is that connection's.
struct Scoped<F> {
    id: u64,
    inner: Pin<Box<F>>,
}

impl<F> Scoped<F> {
    fn new(id: u64, inner: F) -> Self {
        Self {
            id,
            inner: Box::pin(inner),
        }
    }
}

impl<F: Future> Future for Scoped<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.get_mut();
        let inner = this.inner.as_mut();
        observe::scope(this.id, || inner.poll(cx))
    }
}

/// A TCP stream that counts the bytes crossing it (TLS records with their headers).
struct Counted {
    inner: TcpStream,
    read: u64,
    written: u64,
}

impl Counted {
    fn new(inner: TcpStream) -> Self {
        Self {
            inner,
            read: 0,
            written: 0,
        }
    }
}

impl AsyncRead for Counted {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            this.read += (buf.filled().len() - before) as u64;
        }
        polled
    }
}

impl AsyncWrite for Counted {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = polled {
            this.written += n as u64;
        }
        polled
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        if let Poll::Ready(Ok(n)) = polled {
            this.written += n as u64;
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}
