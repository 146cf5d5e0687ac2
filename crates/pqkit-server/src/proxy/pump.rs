//! The bytes of one proxied connection, both ways, with an idle deadline and live counts.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use prometheus_client::metrics::counter::Counter;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Instant;

use super::metrics::{Direction, Metrics};
use crate::stream::timed_out;

/// Bytes read at once each way: a TLS record's plaintext at most.
const BUF: usize = 16 * 1024;

/// Copies `client` → `upstream` and back until both are done, or until no byte was read from
/// either side for `idle`. `early` holds what was read from the client but not yet written to
/// the upstream ([`ready_now`]; it goes first). An end of stream on one side shuts down the other's
/// write side (close_notify for TLS) — except a raw upstream (`upstream_is_raw`) whose own
/// end of stream came first: its socket closes at once, which ends it the same way, one system
/// call fewer. Returns the bytes copied each way (from the client, from the upstream).
///
/// # Errors
/// The first I/O error of either side; [`io::ErrorKind::TimedOut`] when idle.
pub(crate) async fn pump<A, B>(
    client: A,
    upstream: B,
    early: Early,
    upstream_is_raw: bool,
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
    // Read before the pump (some maybe written already), counted with what it reads.
    client.counter.inc_by(early.read);
    let mut up = Flow::with(early);
    let mut down = Flow::with(Early::default());
    let copy = std::future::poll_fn(|cx| {
        // The upstream's end of stream already passed on: its socket's close ends it.
        let shut_upstream = !(upstream_is_raw && down.finished);
        let up_done = match up.poll(cx, &mut client, &mut upstream, shut_upstream) {
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            Poll::Ready(Ok(())) => true,
            Poll::Pending => false,
        };
        let down_done = match down.poll(cx, &mut upstream, &mut client, true) {
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            Poll::Ready(Ok(())) => true,
            Poll::Pending => false,
        };
        if up_done && down_done {
            Poll::Ready(Ok((up.copied, down.copied)))
        } else {
            Poll::Pending
        }
    });
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

/// One direction of a [`pump`]: read into `buf`, write `buf[pos..end]` out, and at the end
/// of the reader's stream shut the writer down.
struct Flow {
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    /// The reader's stream ended.
    eof: bool,
    /// Written bytes not yet flushed.
    unflushed: bool,
    /// Done: all written, the writer shut down (or left to its close).
    finished: bool,
    copied: u64,
}

impl Flow {
    /// A flow that has read `early` already: its bytes not yet written go first, then the
    /// end of the stream if it came.
    fn with(early: Early) -> Self {
        Self {
            pos: 0,
            end: early.bytes.len(),
            buf: early.bytes,
            eof: early.eof,
            unflushed: false,
            finished: false,
            copied: early.read,
        }
    }

    /// Moves bytes until the reader's stream has ended and all is written, then flushes the
    /// writer and, when `shut_down`, shuts it down. Ready(Ok) once finished.
    fn poll<R, W>(
        &mut self,
        cx: &mut Context<'_>,
        reader: &mut R,
        writer: &mut W,
        shut_down: bool,
    ) -> Poll<io::Result<()>>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        if self.finished {
            return Poll::Ready(Ok(()));
        }
        loop {
            while self.pos < self.end {
                let n =
                    ready!(Pin::new(&mut *writer).poll_write(cx, &self.buf[self.pos..self.end]))?;
                if n == 0 {
                    return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
                }
                self.pos += n;
                self.unflushed = true;
            }
            if self.eof {
                break;
            }
            if self.buf.len() < BUF {
                self.buf.resize(BUF, 0);
            }
            let mut read = ReadBuf::new(&mut self.buf);
            match Pin::new(&mut *reader).poll_read(cx, &mut read) {
                Poll::Ready(Ok(())) => {
                    let n = read.filled().len();
                    self.pos = 0;
                    self.end = n;
                    self.copied += n as u64;
                    self.eof = n == 0;
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => {
                    if self.unflushed {
                        ready!(Pin::new(&mut *writer).poll_flush(cx))?;
                        self.unflushed = false;
                    }
                    return Poll::Pending;
                }
            }
        }
        ready!(Pin::new(&mut *writer).poll_flush(cx))?;
        self.unflushed = false;
        if shut_down {
            ready!(Pin::new(&mut *writer).poll_shutdown(cx))?;
        }
        self.finished = true;
        Poll::Ready(Ok(()))
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

/// The client's first bytes, read before the upstream connection exists.
#[derive(Default)]
pub(crate) struct Early {
    /// Not yet written.
    bytes: Vec<u8>,
    /// How many were read.
    read: u64,
    /// The client's stream ended right after them.
    eof: bool,
}

/// Lengths only: the bytes are the client's plaintext.
impl std::fmt::Debug for Early {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Early")
            .field("unwritten", &self.bytes.len())
            .field("read", &self.read)
            .field("eof", &self.eof)
            .finish()
    }
}

impl Early {
    /// Writes what it can of the bytes to `socket` (non-blocking) now, keeping the rest;
    /// returns whether any byte went out.
    ///
    /// # Errors
    /// The socket's, but not `WouldBlock` nor `ENOTCONN` (a connection still being made: BSD
    /// and macOS answer so where Linux answers `EAGAIN`).
    pub(crate) fn write_now(&mut self, mut socket: impl io::Write) -> io::Result<bool> {
        if self.bytes.is_empty() {
            return Ok(false);
        }
        match socket.write(&self.bytes) {
            Ok(n) => {
                self.bytes.drain(..n);
                Ok(n > 0)
            }
            Err(e)
                if e.kind() == io::ErrorKind::WouldBlock
                    || e.raw_os_error() == Some(libc::ENOTCONN) =>
            {
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }
}

/// What `client` has to read without waiting: plaintext rustls already holds or the socket
/// already has (polled once, with a waker that does nothing — the pump polls again with its
/// own).
///
/// # Errors
/// The client's read error.
pub(crate) fn ready_now<A: AsyncRead + Unpin>(client: &mut A) -> io::Result<Early> {
    let mut bytes = vec![0u8; BUF];
    let mut read = ReadBuf::new(&mut bytes);
    let mut cx = Context::from_waker(std::task::Waker::noop());
    match Pin::new(client).poll_read(&mut cx, &mut read) {
        Poll::Ready(Ok(())) => {
            let n = read.filled().len();
            bytes.truncate(n);
            Ok(Early {
                eof: n == 0,
                bytes,
                read: n as u64,
            })
        }
        Poll::Ready(Err(e)) => Err(e),
        Poll::Pending => Ok(Early::default()),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream, duplex};

    use super::*;

    fn metrics() -> Metrics {
        Metrics::new(Arc::default())
    }

    fn counted(metrics: &Metrics, direction: Direction) -> u64 {
        metrics.bytes(direction).get()
    }

    /// [`pump`] from a raw upstream, idle after 5 s.
    fn relay<'a>(
        client: DuplexStream,
        upstream: DuplexStream,
        early: Early,
        metrics: &'a Metrics,
    ) -> impl Future<Output = io::Result<(u64, u64)>> + 'a {
        pump(
            client,
            upstream,
            early,
            true,
            Duration::from_secs(5),
            metrics,
        )
    }

    /// Reads until the end of stream.
    async fn rest(mut s: impl AsyncRead + Unpin) -> Vec<u8> {
        let mut all = Vec::new();
        s.read_to_end(&mut all).await.expect("read");
        all
    }

    #[tokio::test]
    async fn each_end_of_stream_is_passed_on_and_the_other_way_goes_on() {
        let (client, mut client_peer) = duplex(64);
        let (upstream, mut upstream_peer) = duplex(64);
        let m = metrics();
        let pump = relay(client, upstream, Early::default(), &m);
        let peers = async {
            // The client sends more than a buffer's worth through 64-byte pipes, then ends;
            // the upstream sees all of it, then the end.
            let request = vec![7u8; 3 * BUF + 5];
            let send = async {
                client_peer.write_all(&request).await.expect("write");
                client_peer.shutdown().await.expect("shutdown");
            };
            let ((), got) = tokio::join!(send, rest(&mut upstream_peer));
            assert_eq!(got, request);
            // It answers after that (half-close).
            upstream_peer.write_all(b"answer").await.expect("write");
            upstream_peer.shutdown().await.expect("shutdown");
            assert_eq!(rest(&mut client_peer).await, b"answer");
        };
        let (copied, ()) = tokio::join!(pump, peers);
        assert_eq!(copied.expect("pump"), (3 * BUF as u64 + 5, 6));
        assert_eq!(counted(&m, Direction::FromClient), 3 * BUF as u64 + 5);
        assert_eq!(counted(&m, Direction::FromUpstream), 6);
    }

    #[tokio::test]
    async fn an_upstream_that_ends_first_still_gets_the_clients_last_bytes() {
        let (client, mut client_peer) = duplex(64);
        let (upstream, mut upstream_peer) = duplex(64);
        let m = metrics();
        let pump = relay(client, upstream, Early::default(), &m);
        let peers = async {
            // The upstream answers and ends first; the client sees the answer and the end...
            upstream_peer.write_all(b"bye").await.expect("write");
            upstream_peer.shutdown().await.expect("shutdown");
            assert_eq!(rest(&mut client_peer).await, b"bye");
            // ...then still sends, and ends: the upstream, half-closed, reads it all.
            client_peer.write_all(b"last words").await.expect("write");
            client_peer.shutdown().await.expect("shutdown");
            rest(&mut upstream_peer).await
        };
        let (copied, got) = tokio::join!(pump, peers);
        assert_eq!(copied.expect("pump"), (10, 3));
        assert_eq!(got, b"last words");
    }

    #[tokio::test]
    async fn early_bytes_go_first_and_are_counted_once() {
        let (client, mut client_peer) = duplex(64);
        let (upstream, mut upstream_peer) = duplex(64);
        let m = metrics();
        // Ten bytes read before the upstream existed, "0123" written already.
        let mut early = Early {
            bytes: b"0123456789".to_vec(),
            read: 10,
            eof: false,
        };
        let mut four = [0u8; 4];
        assert!(early.write_now(&mut four[..]).expect("write"));
        assert_eq!(&four, b"0123");
        let pump = pump(client, upstream, early, true, Duration::from_secs(5), &m);
        let peers = async {
            client_peer.write_all(b"abc").await.expect("write");
            client_peer.shutdown().await.expect("shutdown");
            assert_eq!(rest(&mut upstream_peer).await, b"456789abc");
            upstream_peer.shutdown().await.expect("shutdown");
            assert_eq!(rest(&mut client_peer).await, b"");
        };
        let (copied, ()) = tokio::join!(pump, peers);
        assert_eq!(copied.expect("pump"), (13, 0));
        assert_eq!(counted(&m, Direction::FromClient), 13);
    }

    #[tokio::test]
    async fn an_end_of_stream_read_early_ends_the_upstream_side() {
        let (client, _client_peer) = duplex(64);
        let (upstream, mut upstream_peer) = duplex(64);
        let m = metrics();
        let early = Early {
            bytes: b"last".to_vec(),
            read: 4,
            eof: true,
        };
        let pump = pump(client, upstream, early, false, Duration::from_secs(5), &m);
        let peers = async {
            assert_eq!(rest(&mut upstream_peer).await, b"last");
            upstream_peer.shutdown().await.expect("shutdown");
        };
        let (copied, ()) = tokio::join!(pump, peers);
        assert_eq!(copied.expect("pump"), (4, 0));
    }

    #[test]
    fn writing_early_bytes_now_keeps_what_would_block() {
        struct Full;
        impl io::Write for Full {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::ErrorKind::WouldBlock.into())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let mut early = Early {
            bytes: b"kept".to_vec(),
            read: 4,
            eof: false,
        };
        assert!(!early.write_now(Full).expect("not an error"));
        assert_eq!(early.bytes, b"kept");
        assert!(!Early::default().write_now(Full).expect("nothing to write"));
    }

    #[tokio::test(start_paused = true)]
    async fn nothing_crossing_for_the_idle_time_ends_it() {
        let (client, _client_peer) = duplex(64);
        let (upstream, _upstream_peer) = duplex(64);
        let m = metrics();
        let e = pump(
            client,
            upstream,
            Early::default(),
            true,
            Duration::from_secs(3),
            &m,
        )
        .await
        .expect_err("idle");
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
    }

    #[tokio::test]
    async fn a_peer_gone_is_an_error_not_an_end() {
        let (client, client_peer) = duplex(64);
        let (upstream, mut upstream_peer) = duplex(64);
        let m = metrics();
        drop(client_peer);
        let pump = relay(client, upstream, Early::default(), &m);
        let peers = async {
            // The client's end arrives as an end of stream; the upstream's answer then has
            // nowhere to go.
            assert_eq!(rest(&mut upstream_peer).await, b"");
            upstream_peer.write_all(b"late").await.expect("write");
        };
        let (copied, ()) = tokio::join!(pump, peers);
        assert_eq!(copied.expect_err("gone").kind(), io::ErrorKind::BrokenPipe);
    }
}
