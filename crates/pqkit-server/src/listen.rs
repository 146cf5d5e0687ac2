//! The accept loop [`crate::serve`] and [`crate::proxy::proxy`] share: the connection limit
//! that never stalls it, the stop requests, the drain, and a task per connection that runs as
//! that connection for pqkit-rustls's verifier ([`Scoped`]).

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};
use std::time::Duration;

use pqkit_rustls::observe;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::{Options, Stop, Summary, stopped};

/// Accepts connections from `listener` until the first stop or [`Options::count`] served
/// connections, handing each to `handle` as a task of its own; then drains (see the crate
/// docs). A connection over [`Options::max_connections`] is closed at once.
///
/// The loop itself runs as a task on the runtime's workers, not on the caller's thread (which
/// may be `block_on`'s): a task spawned from a worker starts on that worker, where one spawned
/// from outside must wake a parked worker through the injection queue — a futex wake-up and a
/// context switch per connection.
pub(crate) async fn run<H, F>(
    listener: TcpListener,
    options: Options,
    stop: Stop,
    handle: H,
) -> Summary
where
    H: FnMut(TcpStream, SocketAddr) -> F + Send + 'static,
    F: Future<Output = ()> + Send + 'static,
{
    match tokio::spawn(accept_loop(listener, options, stop, handle)).await {
        Ok(summary) => summary,
        Err(e) => {
            tracing::error!(error = %e, "the accept loop ended abnormally");
            Summary::default()
        }
    }
}

async fn accept_loop<H, F>(
    listener: TcpListener,
    options: Options,
    mut stop: Stop,
    mut handle: H,
) -> Summary
where
    H: FnMut(TcpStream, SocketAddr) -> F,
    F: Future<Output = ()> + Send + 'static,
{
    let limit = options.max_connections.clamp(1, Semaphore::MAX_PERMITS);
    let permits = Arc::new(Semaphore::new(limit));
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
                let connection = handle(socket, peer);
                let in_flight = InFlight(counters.clone());
                tasks.spawn(Scoped::new(observe::next_connection_id(), async move {
                    let _permit = permit;
                    let _in_flight = in_flight;
                    connection.await;
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
    }
    summary
}

/// One connection counted in [`crate::Counters::in_flight`] until dropped — when its task
/// ends, panics or is cut.
struct InFlight(Arc<crate::Counters>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
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
