//! The bytes of one proxied connection, both ways, with an idle deadline and live counts.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use prometheus_client::metrics::counter::Counter;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Instant;

use super::metrics::{Direction, Metrics};
use crate::stream::timed_out;

/// Copies `client` → `upstream` and back (tokio's `copy_bidirectional`: an end of stream on
/// one side shuts down the other's write side — close_notify for TLS) until both are done, or
/// until no byte was read from either side for `idle`. Returns the bytes copied each way
/// (from the client, from the upstream).
///
/// # Errors
/// The first I/O error of either side; [`io::ErrorKind::TimedOut`] when idle.
pub(crate) async fn pump<A, B>(
    client: A,
    upstream: B,
    idle: Duration,
    metrics: &Metrics,
) -> io::Result<(u64, u64)>
where
    A: AsyncRead + AsyncWrite + Unpin,
    B: AsyncRead + AsyncWrite + Unpin,
{
    let start = Instant::now();
    let last = AtomicU64::new(0);
    let mut client = Active {
        inner: client,
        start,
        last: &last,
        counter: metrics.bytes(Direction::FromClient),
    };
    let mut upstream = Active {
        inner: upstream,
        start,
        last: &last,
        counter: metrics.bytes(Direction::FromUpstream),
    };
    let copy = tokio::io::copy_bidirectional(&mut client, &mut upstream);
    tokio::pin!(copy);
    loop {
        let quiet_until = start + Duration::from_millis(last.load(Ordering::Relaxed)) + idle;
        tokio::select! {
            copied = &mut copy => return copied,
            () = tokio::time::sleep_until(quiet_until) => {
                let now = Instant::now();
                let last_read = start + Duration::from_millis(last.load(Ordering::Relaxed));
                if now.duration_since(last_read) >= idle {
                    return Err(timed_out("nothing crossed for the idle timeout"));
                }
            }
        }
    }
}

/// A stream whose reads stamp `last` (milliseconds since `start`) and count into `counter`.
struct Active<'a, S> {
    inner: S,
    start: Instant,
    last: &'a AtomicU64,
    counter: Counter,
}

impl<S: AsyncRead + Unpin> AsyncRead for Active<'_, S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            let n = (buf.filled().len() - before) as u64;
            if n > 0 {
                this.counter.inc_by(n);
                let millis = u64::try_from(this.start.elapsed().as_millis()).unwrap_or(u64::MAX);
                this.last.store(millis, Ordering::Relaxed);
            }
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Active<'_, S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}
