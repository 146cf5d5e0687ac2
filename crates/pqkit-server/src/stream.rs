//! The TLS side of a connection: the handshake under its deadline, over a TCP stream that
//! counts the bytes crossing it.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::{Instant, timeout_at};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// The server side of a TLS handshake on `socket`, finished before `deadline`. Returns the
/// stream and the handshake time, from the arrival of the first ClientHello bytes to the
/// client's Finished (a client that connects and waits is not timed).
///
/// # Errors
/// [`io::ErrorKind::TimedOut`] at the deadline; [`io::ErrorKind::UnexpectedEof`] when the
/// client closes before sending anything; else the handshake's error (a rustls error inside
/// an [`io::ErrorKind::InvalidData`]).
pub(crate) async fn handshake(
    socket: TcpStream,
    acceptor: &TlsAcceptor,
    deadline: Instant,
) -> io::Result<(TlsStream<Counted>, Duration)> {
    socket.set_nodelay(true)?;
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
    let accepted = timeout_at(
        deadline,
        acceptor.accept(Counted::new(socket)).into_fallible(),
    )
    .await
    .map_err(|_| timed_out("the handshake took longer than the timeout"))?;
    match accepted {
        Ok(tls) => Ok((tls, start.elapsed())),
        Err((e, counted)) => {
            linger_apart(counted.inner, deadline);
            Err(e)
        }
    }
}

/// [`linger`] in a task of its own, so that the failed connection's place under the
/// connection limit is free at once (a client that fails its handshakes must not hold places
/// longer for it); at most [`LINGERING`] sockets linger at once, the rest are closed at once.
fn linger_apart(socket: TcpStream, deadline: Instant) {
    static PLACES: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(LINGERING);
    if let Ok(place) = PLACES.try_acquire() {
        tokio::spawn(async move {
            let _place = place;
            linger(socket, deadline).await;
        });
    }
}

/// Sockets lingering at once, process-wide.
const LINGERING: usize = 256;

/// The end of a connection whose handshake failed, after tokio-rustls wrote its alert: our
/// side is shut (FIN), then what the client still sends is read and dropped until it closes
/// too, for at most [`LINGER`] (and `deadline`) and [`LINGER_BYTES`]. Closing at once with
/// unread bytes would send a reset, and a reset can destroy the alert in the client's
/// receive buffer before the client reads it: a TLS 1.3 client writes its first data right
/// after its Finished, before the server has judged its certificate, so it would see
/// "connection reset" instead of access_denied.
async fn linger(mut socket: TcpStream, deadline: Instant) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    if socket.shutdown().await.is_err() {
        return;
    }
    let until = deadline.min(Instant::now() + LINGER);
    let _ = timeout_at(until, async {
        let mut sink = [0u8; 4096];
        let mut left = LINGER_BYTES;
        while left > 0 {
            match socket.read(&mut sink).await {
                Ok(0) | Err(_) => break,
                Ok(n) => left = left.saturating_sub(n),
            }
        }
    })
    .await;
}

/// How long a failed handshake's connection waits for the client to close.
const LINGER: Duration = Duration::from_millis(500);

/// How many bytes it reads from the client meanwhile.
const LINGER_BYTES: usize = 64 * 1024;

/// An [`io::ErrorKind::TimedOut`] error saying `what`.
pub(crate) fn timed_out(what: &'static str) -> io::Error {
    io::Error::new(io::ErrorKind::TimedOut, what)
}

/// A TCP stream that counts the bytes crossing it (TLS records with their headers).
pub(crate) struct Counted {
    inner: TcpStream,
    pub(crate) read: u64,
    pub(crate) written: u64,
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
