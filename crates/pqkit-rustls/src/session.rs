//! One TLS 1.3 connection over a TCP socket, driven to completion and measured: handshake
//! time on this side (ms), bytes on the wire in each direction counted at the socket (TLS
//! records with their headers, so they match a capture's TCP payload), and the negotiated
//! parameters. The driver of `pqkit server`, `pqkit client` and `pqkit bench`.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::observe::PeerScheme;
use rustls::{
    ClientConfig, ClientConnection, ConnectionCommon, ServerConfig, ServerConnection, SideData,
};
use rustls_pki_types::ServerName;
use serde::Serialize;

/// The bytes of one connection recorded at one endpoint.
#[derive(Clone, Debug, Default)]
pub struct Transcript {
    /// Bytes this endpoint wrote.
    pub sent: Vec<u8>,
    /// Bytes this endpoint read.
    pub received: Vec<u8>,
}

/// A stream that counts the bytes crossing it, and records them when asked.
#[derive(Debug)]
pub struct Counting<S> {
    inner: S,
    /// Bytes read so far.
    pub read: u64,
    /// Bytes written so far.
    pub written: u64,
    transcript: Option<Transcript>,
}

impl<S> Counting<S> {
    /// Counts the bytes of `inner`; `record` keeps a copy of them too.
    pub fn new(inner: S, record: bool) -> Self {
        Self {
            inner,
            read: 0,
            written: 0,
            transcript: record.then(Transcript::default),
        }
    }

    /// The wrapped stream.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The recorded bytes (when recording).
    pub fn take_transcript(&mut self) -> Option<Transcript> {
        self.transcript.take()
    }
}

impl<S> Counting<S> {
    /// Counts (and records) the first `n` bytes of `bufs`, which were written.
    fn count_written(&mut self, bufs: &[io::IoSlice<'_>], n: usize) {
        self.written += n as u64;
        if let Some(t) = &mut self.transcript {
            let mut left = n;
            for buf in bufs {
                let take = left.min(buf.len());
                t.sent.extend_from_slice(&buf[..take]);
                left -= take;
            }
        }
    }
}

impl<S: Read> Read for Counting<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        if let Some(t) = &mut self.transcript {
            t.received.extend_from_slice(&buf[..n]);
        }
        Ok(n)
    }
}

impl<S: Write> Write for Counting<S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.count_written(&[io::IoSlice::new(buf)], n);
        Ok(n)
    }

    /// Forwards the whole vector: rustls's `write_tls` queues one buffer per record and writes
    /// them with one `write_vectored` call — on its error path the only call before the
    /// connection is dropped, so a default implementation (first buffer only) would send the
    /// ServerHello and lose the fatal alert queued after it.
    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        let n = self.inner.write_vectored(bufs)?;
        self.count_written(bufs, n);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

type Socket = Counting<TcpStream>;

/// What one side saw of a finished connection.
#[derive(Clone, Debug, Serialize)]
pub struct SideReport {
    /// "client" or "server".
    pub role: &'static str,
    /// Negotiated protocol version, e.g. "TLSv1.3".
    pub version: String,
    /// Negotiated cipher suite, e.g. "TLS_AES_256_GCM_SHA384".
    pub cipher_suite: String,
    /// "Full", "FullWithHelloRetryRequest" or "Resumed".
    pub handshake_kind: String,
    /// Negotiated named group, IANA spelling.
    pub group: String,
    /// Its code point.
    pub group_code_point: String,
    /// The scheme of the peer's CertificateVerify, if the peer authenticated.
    pub peer_signature_scheme: Option<String>,
    /// Its code point.
    pub peer_signature_code_point: Option<String>,
    /// Handshake time on this side, in milliseconds.
    pub handshake_ms: f64,
    /// Bytes read from the socket, TLS record headers included.
    pub wire_bytes_read: u64,
    /// Bytes written to the socket, TLS record headers included.
    pub wire_bytes_written: u64,
    /// Total DER size of the certificate chain the peer sent, in bytes.
    pub peer_chain_bytes: usize,
    /// Number of certificates in that chain.
    pub peer_chain_len: usize,
    /// The application data received.
    pub received: String,
    /// The negotiated cipher suite, for decrypting a recorded transcript.
    #[serde(skip)]
    pub suite: Option<rustls::CipherSuite>,
    /// The bytes of the connection, when the client recorded them.
    #[serde(skip)]
    pub transcript: Option<Transcript>,
}

/// How long one connection may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// The whole handshake, from the connection to the last handshake message: a peer that
    /// sends a byte at a time cannot stretch it.
    pub handshake: Duration,
    /// The rest of the connection after the handshake — the message, the reply and the close
    /// together: a peer that trickles a byte at a time cannot stretch it.
    pub idle: Duration,
}

impl Default for Timeouts {
    /// 10 s for the handshake, 20 s for the rest.
    fn default() -> Self {
        Self {
            handshake: Duration::from_secs(10),
            idle: Duration::from_secs(20),
        }
    }
}

/// Runs the client side: handshake, send `message`, read the reply, close.
///
/// Handshake time runs from building the ClientHello (key generation included) until the
/// client has sent its Finished; the process's random number generators are started before
/// it (their one-time seeding is not the handshake's cost).
///
/// # Errors
/// I/O and TLS errors (the latter as `io::Error` carrying the rustls error); `TimedOut` past
/// a timeout; `UnexpectedEof` when the server closes without replying.
pub fn run_client(
    socket: TcpStream,
    config: Arc<ClientConfig>,
    server_name: ServerName<'static>,
    seen: &Arc<PeerScheme>,
    message: &[u8],
    record: bool,
    timeouts: Timeouts,
) -> io::Result<SideReport> {
    warm_up_rng();
    let mut sock = counting(socket, record, timeouts)?;
    seen.clear();
    let start = Instant::now();
    let mut conn = ClientConnection::new(config, server_name).map_err(io::Error::other)?;
    finish_handshake(&mut conn, &mut sock, start + timeouts.handshake)?;
    let deadline = Instant::now() + timeouts.idle;
    let handshake = start.elapsed();
    conn.writer().write_all(message)?;
    let received = read_message(&mut conn, &mut sock, deadline)?;
    if received.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "server closed without replying",
        ));
    }
    conn.send_close_notify();
    drain(&mut conn, &mut sock, deadline)?;
    let wire = Wire::of(&mut sock);
    let r = report("client", &conn, wire, handshake, seen, received);
    seen.clear();
    Ok(r)
}

/// Runs the server side: handshake, read the first application-data record (at most 16 KiB),
/// answer `reply` (or echo the record when `None`), close.
///
/// Handshake time runs from the arrival of the first ClientHello bytes until the client's
/// Finished has been processed. A client that sends nothing for `timeouts.handshake`, or
/// does not finish the handshake within it, is dropped (`TimedOut`).
///
/// # Errors
/// I/O and TLS errors; `TimedOut`.
pub fn run_server(
    socket: TcpStream,
    config: Arc<ServerConfig>,
    seen: &Arc<PeerScheme>,
    reply: Option<&[u8]>,
    timeouts: Timeouts,
) -> io::Result<SideReport> {
    let mut sock = counting(socket, false, timeouts)?;
    seen.clear();
    let mut conn = ServerConnection::new(config).map_err(io::Error::other)?;
    let deadline = Instant::now() + timeouts.handshake;
    set_deadline(&sock, deadline)?;
    if conn.read_tls(&mut sock)? == 0 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "client sent nothing",
        ));
    }
    let start = Instant::now();
    process(&mut conn, &mut sock)?;
    finish_handshake(&mut conn, &mut sock, deadline)?;
    let deadline = Instant::now() + timeouts.idle;
    let handshake = start.elapsed();
    let received = read_message(&mut conn, &mut sock, deadline)?;
    conn.writer().write_all(reply.unwrap_or(&received))?;
    conn.send_close_notify();
    drain(&mut conn, &mut sock, deadline)?;
    let wire = Wire::of(&mut sock);
    let r = report("server", &conn, wire, handshake, seen, received);
    seen.clear();
    Ok(r)
}

fn counting(socket: TcpStream, record: bool, timeouts: Timeouts) -> io::Result<Socket> {
    socket.set_read_timeout(Some(timeouts.handshake))?;
    socket.set_write_timeout(Some(timeouts.idle))?;
    socket.set_nodelay(true)?;
    Ok(Counting::new(socket, record))
}

/// The next read or write waits at most until `deadline`; past it, `TimedOut`.
fn set_deadline(sock: &Socket, deadline: Instant) -> io::Result<()> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the peer took longer than the timeout",
        ));
    }
    sock.get_ref().set_read_timeout(Some(left))?;
    sock.get_ref().set_write_timeout(Some(left))
}

/// Reads what the peer sent (by `deadline`) and processes it; `UnexpectedEof` naming `when`
/// if the peer closed the TCP connection.
fn read_and_process<D: SideData>(
    conn: &mut ConnectionCommon<D>,
    sock: &mut Socket,
    deadline: Instant,
    when: &str,
) -> io::Result<()> {
    set_deadline(sock, deadline)?;
    if conn.read_tls(sock)? == 0 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("peer closed the TCP connection {when}"),
        ));
    }
    process(conn, sock).map(|_| ())
}

/// Writes every queued record, by `deadline`.
fn flush<D: SideData>(
    conn: &mut ConnectionCommon<D>,
    sock: &mut Socket,
    deadline: Instant,
) -> io::Result<()> {
    while conn.wants_write() {
        set_deadline(sock, deadline)?;
        conn.write_tls(sock)?;
    }
    Ok(())
}

/// Draws once from every random number generator a handshake uses, so that their one-time
/// start (seeding from the OS) is not counted in the first handshake's time.
fn warm_up_rng() {
    static DONE: std::sync::Once = std::sync::Once::new();
    DONE.call_once(|| {
        // Every pqkit and rustls draw goes through AWS-LC's generator: the first one also
        // runs AWS-LC's library initialisation and seeds its DRBG from the OS.
        let mut buf = [0u8; 32];
        let _ = aws_lc_rs::rand::fill(&mut buf);
    });
}

/// Drives the handshake to completion; a fatal alert is sent before an error is returned.
///
/// Not `complete_io`: on a TLS error it writes once and returns, which is the whole queue only
/// if the socket takes it in one call; [`process`] flushes every queued record (e.g. the
/// ServerHello and the alert after it) before giving up.
fn finish_handshake<D: SideData>(
    conn: &mut ConnectionCommon<D>,
    sock: &mut Socket,
    deadline: Instant,
) -> io::Result<()> {
    while conn.is_handshaking() {
        flush(conn, sock, deadline)?;
        if !conn.is_handshaking() {
            break;
        }
        read_and_process(conn, sock, deadline, "during the handshake")?;
    }
    flush(conn, sock, deadline)
}

/// Processes received records; on a TLS error, sends the queued alert before returning it.
fn process<D: SideData>(
    conn: &mut ConnectionCommon<D>,
    sock: &mut Socket,
) -> io::Result<rustls::IoState> {
    conn.process_new_packets().map_err(|e| {
        while conn.wants_write() {
            if conn.write_tls(sock).is_err() {
                break;
            }
        }
        io::Error::new(io::ErrorKind::InvalidData, e)
    })
}

/// Reads until one record of application data arrived. Returns it, or nothing when the peer
/// sent close_notify first.
///
/// # Errors
/// `UnexpectedEof` when the TCP connection ends without close_notify; I/O and TLS errors.
fn read_message<D: SideData>(
    conn: &mut ConnectionCommon<D>,
    sock: &mut Socket,
    deadline: Instant,
) -> io::Result<Vec<u8>> {
    loop {
        flush(conn, sock, deadline)?;
        let mut buf = [0u8; 16 * 1024];
        match conn.reader().read(&mut buf) {
            Ok(n) => return Ok(buf[..n].to_vec()),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
        read_and_process(conn, sock, deadline, "without close_notify")?;
    }
}

/// Flushes what is queued, then reads until the peer closes (close_notify, TCP EOF, reset, or
/// the deadline: the exchange itself is complete by then).
fn drain<D: SideData>(
    conn: &mut ConnectionCommon<D>,
    sock: &mut Socket,
    deadline: Instant,
) -> io::Result<()> {
    flush(conn, sock, deadline)?;
    loop {
        if set_deadline(sock, deadline).is_err() {
            return Ok(());
        }
        match conn.read_tls(sock) {
            Ok(0) => return Ok(()),
            Ok(_) => {
                if process(conn, sock)?.peer_has_closed() {
                    return Ok(());
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::ConnectionReset
                        | io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                ) =>
            {
                return Ok(());
            }
            Err(e) => return Err(e),
        }
    }
}

/// What crossed one connection's socket: bytes read and written (TLS records with their
/// headers), and the bytes themselves when recorded.
#[derive(Debug, Default)]
pub struct Wire {
    /// Bytes read from the peer.
    pub read: u64,
    /// Bytes written to the peer.
    pub written: u64,
    /// The recorded bytes, when recording.
    pub transcript: Option<Transcript>,
}

impl Wire {
    fn of<S>(sock: &mut Counting<S>) -> Self {
        Self {
            read: sock.read,
            written: sock.written,
            transcript: sock.take_transcript(),
        }
    }
}

/// The report of a finished connection: what `conn` negotiated, `wire`'s counts, the
/// handshake time measured by the caller, the peer's signature scheme as `seen` recorded it
/// and the application data received. Shared by this module's blocking driver and
/// pqkit-server's asynchronous one, so that both report alike.
pub fn report<D: SideData>(
    role: &'static str,
    conn: &ConnectionCommon<D>,
    wire: Wire,
    handshake: Duration,
    seen: &PeerScheme,
    received: Vec<u8>,
) -> SideReport {
    let group = conn.negotiated_key_exchange_group();
    let scheme = seen.get();
    let chain = conn.peer_certificates().unwrap_or_default();
    SideReport {
        role,
        version: conn
            .protocol_version()
            .map_or_else(String::new, |v| match v {
                rustls::ProtocolVersion::TLSv1_3 => "TLSv1.3".to_owned(),
                other => format!("{other:?}"),
            }),
        cipher_suite: conn
            .negotiated_cipher_suite()
            .map_or_else(String::new, |s| format!("TLS_{}", strip_tls13(s.suite()))),
        handshake_kind: conn
            .handshake_kind()
            .map_or_else(String::new, |k| format!("{k:?}")),
        group: group.map_or_else(String::new, crate::group_name),
        group_code_point: group
            .map_or_else(String::new, |g| format!("0x{:04x}", u16::from(g.name()))),
        peer_signature_scheme: scheme.map(crate::scheme::name),
        peer_signature_code_point: scheme.map(|s| format!("0x{:04x}", u16::from(s))),
        handshake_ms: handshake.as_secs_f64() * 1e3,
        wire_bytes_read: wire.read,
        wire_bytes_written: wire.written,
        peer_chain_bytes: chain.iter().map(|c| c.len()).sum(),
        peer_chain_len: chain.len(),
        received: String::from_utf8_lossy(&received).into_owned(),
        suite: conn.negotiated_cipher_suite().map(|s| s.suite()),
        transcript: wire.transcript,
    }
}

/// rustls names TLS 1.3 suites "TLS13_AES_256_GCM_SHA384"; the IANA name is
/// "TLS_AES_256_GCM_SHA384".
fn strip_tls13(suite: rustls::CipherSuite) -> String {
    let name = format!("{suite:?}");
    name.strip_prefix("TLS13_")
        .map_or(name.clone(), str::to_owned)
}
