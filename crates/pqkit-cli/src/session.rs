//! One TLS 1.3 connection over a TCP socket, driven to completion and measured: handshake
//! time on this side (ms), bytes on the wire in each direction counted at the socket (TLS
//! records with their headers, so they match a capture's TCP payload), and the negotiated
//! parameters.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pqkit_rustls::observe::PeerScheme;
use rustls::{ClientConnection, ConnectionCommon, ServerConnection, SideData};
use serde::Serialize;

/// What one side saw of a finished connection.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct SideReport {
    /// "client" or "server".
    pub(crate) role: &'static str,
    /// Negotiated protocol version, e.g. "TLSv1.3".
    pub(crate) version: String,
    /// Negotiated cipher suite, e.g. "TLS_AES_256_GCM_SHA384".
    pub(crate) cipher_suite: String,
    /// Negotiated named group, IANA spelling.
    pub(crate) group: String,
    /// Its code point.
    pub(crate) group_code_point: String,
    /// The scheme of the peer's CertificateVerify, if the peer authenticated.
    pub(crate) peer_signature_scheme: Option<String>,
    /// Its code point.
    pub(crate) peer_signature_code_point: Option<String>,
    /// Handshake time on this side, in milliseconds.
    pub(crate) handshake_ms: f64,
    /// Bytes read from the socket, TLS record headers included.
    pub(crate) wire_bytes_read: u64,
    /// Bytes written to the socket, TLS record headers included.
    pub(crate) wire_bytes_written: u64,
    /// Total DER size of the certificate chain the peer sent, in bytes.
    pub(crate) peer_chain_bytes: usize,
    /// Number of certificates in that chain.
    pub(crate) peer_chain_len: usize,
    /// The application data received.
    pub(crate) received: String,
}

/// A socket that counts the bytes crossing it.
struct Counting {
    inner: TcpStream,
    read: u64,
    written: u64,
}

impl Read for Counting {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

impl Write for Counting {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Per-connection I/O deadline.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(20);

/// Runs the client side: handshake, send `message`, read one reply, close.
///
/// # Errors
/// I/O and TLS errors (the latter as `io::Error` carrying the rustls error text).
pub(crate) fn run_client(
    socket: TcpStream,
    mut conn: ClientConnection,
    seen: &Arc<PeerScheme>,
    message: &[u8],
) -> io::Result<SideReport> {
    let mut sock = counting(socket)?;
    let handshake = handshake(&mut conn, &mut sock)?;
    conn.writer().write_all(message)?;
    let received = read_message(&mut conn, &mut sock)?;
    conn.send_close_notify();
    drain(&mut conn, &mut sock)?;
    Ok(report("client", &conn, &sock, handshake, seen, received))
}

/// Runs the server side: handshake, read one message, answer `reply` (or echo it when `None`),
/// close.
///
/// # Errors
/// I/O and TLS errors.
pub(crate) fn run_server(
    socket: TcpStream,
    mut conn: ServerConnection,
    seen: &Arc<PeerScheme>,
    reply: Option<&[u8]>,
) -> io::Result<SideReport> {
    let mut sock = counting(socket)?;
    let handshake = handshake(&mut conn, &mut sock)?;
    let received = read_message(&mut conn, &mut sock)?;
    conn.writer().write_all(reply.unwrap_or(&received))?;
    conn.send_close_notify();
    drain(&mut conn, &mut sock)?;
    Ok(report("server", &conn, &sock, handshake, seen, received))
}

fn counting(socket: TcpStream) -> io::Result<Counting> {
    socket.set_read_timeout(Some(TIMEOUT))?;
    socket.set_write_timeout(Some(TIMEOUT))?;
    socket.set_nodelay(true)?;
    Ok(Counting {
        inner: socket,
        read: 0,
        written: 0,
    })
}

fn handshake<D: SideData>(
    conn: &mut ConnectionCommon<D>,
    sock: &mut Counting,
) -> io::Result<Duration> {
    let start = Instant::now();
    while conn.is_handshaking() {
        conn.complete_io(sock)?;
    }
    Ok(start.elapsed())
}

/// Reads until at least one byte of application data arrived (or the peer closed).
fn read_message<D: SideData>(
    conn: &mut ConnectionCommon<D>,
    sock: &mut Counting,
) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        while conn.wants_write() {
            conn.write_tls(sock)?;
        }
        let mut buf = [0u8; 16 * 1024];
        match conn.reader().read(&mut buf) {
            Ok(0) => return Ok(out),
            Ok(n) => {
                out.extend_from_slice(&buf[..n]);
                return Ok(out);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
        if conn.read_tls(sock)? == 0 {
            return Ok(out);
        }
        conn.process_new_packets().map_err(io::Error::other)?;
    }
}

/// Flushes what is queued, then reads until the peer closes (close_notify or TCP EOF).
fn drain<D: SideData>(conn: &mut ConnectionCommon<D>, sock: &mut Counting) -> io::Result<()> {
    while conn.wants_write() {
        conn.write_tls(sock)?;
    }
    loop {
        match conn.read_tls(sock) {
            Ok(0) => return Ok(()),
            Ok(_) => {
                let state = conn.process_new_packets().map_err(io::Error::other)?;
                if state.peer_has_closed() {
                    return Ok(());
                }
            }
            Err(e) if e.kind() == io::ErrorKind::ConnectionReset => return Ok(()),
            Err(e) => return Err(e),
        }
    }
}

fn report<D: SideData>(
    role: &'static str,
    conn: &ConnectionCommon<D>,
    sock: &Counting,
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
        group: group.map_or_else(String::new, pqkit_rustls::group_name),
        group_code_point: group
            .map_or_else(String::new, |g| format!("0x{:04x}", u16::from(g.name()))),
        peer_signature_scheme: scheme.map(pqkit_rustls::scheme::name),
        peer_signature_code_point: scheme.map(|s| format!("0x{:04x}", u16::from(s))),
        handshake_ms: handshake.as_secs_f64() * 1e3,
        wire_bytes_read: sock.read,
        wire_bytes_written: sock.written,
        peer_chain_bytes: chain.iter().map(|c| c.len()).sum(),
        peer_chain_len: chain.len(),
        received: String::from_utf8_lossy(&received).into_owned(),
    }
}

/// rustls names TLS 1.3 suites "TLS13_AES_256_GCM_SHA384"; the IANA name is
/// "TLS_AES_256_GCM_SHA384".
fn strip_tls13(suite: rustls::CipherSuite) -> String {
    let name = format!("{suite:?}");
    name.strip_prefix("TLS13_")
        .map_or(name.clone(), str::to_owned)
}
