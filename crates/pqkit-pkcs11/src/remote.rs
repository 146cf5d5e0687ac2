//! A token in another process. `pqkit token serve --socket PATH` holds the token — its
//! stores, logins and keys — and answers [`Call`]s on a Unix socket; a module whose
//! configuration says `"remote": "PATH"` (or `$PQKIT_PKCS11_REMOTE`) forwards every call
//! there. Keys and their plaintext never enter the caller's process: only messages, digests,
//! μ, signatures, ciphertexts and public values cross. This is the process boundary p11-kit's
//! RPC cannot give post-quantum mechanisms (its 0.24–0.26 RPC forwards no mechanism it has no
//! serialiser for).
//!
//! Wire: each message is a u32 big-endian length ‖ bincode (fixed options, below) of a
//! [`Call`] or of `Result<Reply, CK_RV>`, at most [`MAX_FRAME`] bytes. The socket is created
//! 0600; who may connect is whoever may open it. Each connection is one application: the
//! sessions it opened are closed when it goes away. Logins are per slot, as in one process.

use std::io::{self, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::Mutex;

use bincode::Options;
use cryptoki_sys::*;

use crate::call::{Call, Reply, dispatch};
use crate::token::Result;

/// Largest message, in bytes (a 10 MiB message to sign fits; a hostile length does not make
/// the server allocate more).
pub const MAX_FRAME: u64 = 64 << 20;

fn codec() -> impl Options {
    bincode::DefaultOptions::new().with_limit(MAX_FRAME)
}

static CONNECTION: Mutex<Option<UnixStream>> = Mutex::new(None);
static REMOTE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether this module forwards to a remote token.
pub(crate) fn is_remote() -> bool {
    REMOTE.load(std::sync::atomic::Ordering::Acquire)
}

/// C_Initialize of a remote module: connects to the token process.
pub(crate) fn connect(path: &Path) -> Result<()> {
    let mut c = CONNECTION.lock().unwrap_or_else(|p| p.into_inner());
    if c.is_some() {
        return Err(CKR_CRYPTOKI_ALREADY_INITIALIZED);
    }
    *c = Some(UnixStream::connect(path).map_err(|_| CKR_DEVICE_ERROR)?);
    REMOTE.store(true, std::sync::atomic::Ordering::Release);
    Ok(())
}

/// C_Finalize of a remote module.
pub(crate) fn disconnect() -> Result<()> {
    let mut c = CONNECTION.lock().unwrap_or_else(|p| p.into_inner());
    REMOTE.store(false, std::sync::atomic::Ordering::Release);
    c.take().map(|_| ()).ok_or(CKR_CRYPTOKI_NOT_INITIALIZED)
}

fn write_frame(to: &mut impl Write, body: &[u8]) -> io::Result<()> {
    let len = u32::try_from(body.len()).map_err(|_| io::Error::other("message too large"))?;
    to.write_all(&len.to_be_bytes())?;
    to.write_all(body)?;
    to.flush()
}

fn read_frame(from: &mut impl Read) -> io::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    from.read_exact(&mut len)?;
    let len = u32::from_be_bytes(len);
    if u64::from(len) > MAX_FRAME {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "message too large",
        ));
    }
    let mut body = vec![0u8; len as usize];
    from.read_exact(&mut body)?;
    Ok(body)
}

/// Sends `call` to the token process and returns its answer. One call at a time per module.
pub(crate) fn execute(call: Call) -> Result<Reply> {
    let mut c = CONNECTION.lock().unwrap_or_else(|p| p.into_inner());
    let stream = c.as_mut().ok_or(CKR_CRYPTOKI_NOT_INITIALIZED)?;
    let body = codec().serialize(&call).map_err(|_| CKR_ARGUMENTS_BAD)?;
    write_frame(stream, &body).map_err(|_| CKR_DEVICE_REMOVED)?;
    let answer = read_frame(stream).map_err(|_| CKR_DEVICE_REMOVED)?;
    codec()
        .deserialize::<std::result::Result<Reply, u64>>(&answer)
        .map_err(|_| CKR_DEVICE_ERROR)?
}

/// Serves the token of this process's configuration on `listener` until it fails: a thread
/// per connection.
///
/// # Errors
/// The token failing to initialise (its CK_RV), or the listener failing.
pub fn serve(listener: UnixListener) -> io::Result<()> {
    match crate::token::initialize() {
        Ok(()) | Err(CKR_CRYPTOKI_ALREADY_INITIALIZED) => {}
        Err(rv) => {
            return Err(io::Error::other(format!(
                "token initialisation: CK_RV {rv:#x}"
            )));
        }
    }
    for stream in listener.incoming() {
        let stream = stream?;
        std::thread::spawn(move || handle(stream));
    }
    Ok(())
}

/// One application's connection: its calls in order; its sessions closed at the end.
fn handle(mut stream: UnixStream) {
    let mut sessions = Vec::new();
    while let Ok(body) = read_frame(&mut stream) {
        let answer = match codec().deserialize::<Call>(&body) {
            Ok(call) => {
                let closing = match &call {
                    Call::CloseSession { session } => Some(*session),
                    _ => None,
                };
                let opening = matches!(call, Call::OpenSession { .. });
                // A panic in one call answers CKR_GENERAL_ERROR, as across the C interface.
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| dispatch(call)))
                    .unwrap_or(Err(CKR_GENERAL_ERROR));
                match (&r, opening, closing) {
                    (Ok(Reply::Ulong(h)), true, _) => sessions.push(*h),
                    (Ok(_), _, Some(h)) => sessions.retain(|s| *s != h),
                    _ => {}
                }
                r
            }
            Err(_) => Err(CKR_ARGUMENTS_BAD),
        };
        let Ok(reply) = codec().serialize(&answer) else {
            break;
        };
        if write_frame(&mut stream, &reply).is_err() {
            break;
        }
    }
    for session in sessions {
        let _ = dispatch(Call::CloseSession { session });
    }
}
