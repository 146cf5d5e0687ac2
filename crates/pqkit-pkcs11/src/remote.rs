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
//! 0600; who may connect is whoever may open it (the same user). Each connection is one
//! application: it may act only in the sessions it opened, which are closed when it goes away;
//! at most [`MAX_CONNECTIONS`] are served at once, and a message's memory grows with the bytes
//! that arrive. Logins are per connection: an application logged in opens nothing to another
//! connected to the same token (each must log in with the PIN itself); within one connection
//! they are per slot, as in one process (PKCS#11 3.2 §5.6.9).

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
    // Nothing listening (`pqkit token serve` not running, a stale socket): the token is absent,
    // not broken.
    *c = Some(UnixStream::connect(path).map_err(|_| CKR_TOKEN_NOT_PRESENT)?);
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
    let len = u64::from(u32::from_be_bytes(len));
    if len > MAX_FRAME {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "message too large",
        ));
    }
    // Memory grows with the bytes that arrive, not with the length announced.
    let mut body = Vec::new();
    from.take(len).read_to_end(&mut body)?;
    if body.len() as u64 != len {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "message cut short",
        ));
    }
    Ok(body)
}

/// Runs `call` where the token is: here, or in the remote token process.
pub(crate) fn execute(call: Call) -> Result<Reply> {
    if is_remote() {
        send(call)
    } else {
        dispatch(call)
    }
}

/// Sends `call` to the token process and returns its answer. One call at a time per module.
fn send(call: Call) -> Result<Reply> {
    let mut c = CONNECTION.lock().unwrap_or_else(|p| p.into_inner());
    let stream = c.as_mut().ok_or(CKR_CRYPTOKI_NOT_INITIALIZED)?;
    let body = codec().serialize(&call).map_err(|_| CKR_ARGUMENTS_BAD)?;
    write_frame(stream, &body).map_err(|_| CKR_DEVICE_REMOVED)?;
    let answer = read_frame(stream).map_err(|_| CKR_DEVICE_REMOVED)?;
    match codec().deserialize::<std::result::Result<Reply, u64>>(&answer) {
        Ok(Ok(reply)) => Ok(reply),
        // An error that is CKR_OK would read as success with nothing written.
        Ok(Err(CKR_OK)) | Err(_) => Err(CKR_DEVICE_ERROR),
        Ok(Err(rv)) => Err(rv),
    }
}

/// Applications served at once.
pub const MAX_CONNECTIONS: usize = 64;

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
    let open = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    for stream in listener.incoming() {
        let stream = stream?;
        // At most MAX_CONNECTIONS applications at once; the next one is turned away.
        if open.fetch_add(1, std::sync::atomic::Ordering::AcqRel) >= MAX_CONNECTIONS {
            open.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
            continue;
        }
        let open = open.clone();
        std::thread::spawn(move || {
            handle(stream);
            open.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
        });
    }
    Ok(())
}

/// One application's connection: its calls in order; its sessions closed at the end. A call
/// may act only in a session this connection opened (another application's handle is
/// CKR_SESSION_HANDLE_INVALID), and C_CloseAllSessions closes only this connection's.
fn handle(mut stream: UnixStream) {
    // Each connection an application of its own: its logins open nothing to another's.
    static APPS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    crate::token::set_app(APPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    // (session, slot) of the sessions this connection opened.
    let mut sessions: Vec<(u64, u64)> = Vec::new();
    while let Ok(body) = read_frame(&mut stream) {
        let answer = match codec().deserialize::<Call>(&body) {
            Ok(Call::CloseAllSessions { slot }) => {
                for (session, _) in sessions.iter().filter(|(_, s)| *s == slot) {
                    let _ = dispatch(Call::CloseSession { session: *session });
                }
                sessions.retain(|(_, s)| *s != slot);
                Ok(Reply::Unit)
            }
            Ok(call)
                if call
                    .session()
                    .is_some_and(|h| !sessions.iter().any(|(s, _)| *s == h)) =>
            {
                Err(CKR_SESSION_HANDLE_INVALID)
            }
            Ok(call) => {
                let closing = match &call {
                    Call::CloseSession { session } => Some(*session),
                    _ => None,
                };
                let opening = match &call {
                    Call::OpenSession { slot, .. } => Some(*slot),
                    _ => None,
                };
                // A panic in one call answers CKR_GENERAL_ERROR, as across the C interface.
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| dispatch(call)))
                    .unwrap_or(Err(CKR_GENERAL_ERROR));
                match (&r, opening, closing) {
                    (Ok(Reply::Ulong(h)), Some(slot), _) => sessions.push((*h, slot)),
                    (Ok(_), _, Some(h)) => sessions.retain(|(s, _)| *s != h),
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
    for (session, _) in sessions {
        let _ = dispatch(Call::CloseSession { session });
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn call(stream: &mut UnixStream, call: &Call) -> std::result::Result<Reply, u64> {
        write_frame(stream, &codec().serialize(call).unwrap()).unwrap();
        codec().deserialize(&read_frame(stream).unwrap()).unwrap()
    }

    /// Two applications on one token server: the second cannot act in the first's session,
    /// and a frame that announces 64 MiB but sends nothing costs nothing.
    #[test]
    #[allow(unsafe_code)]
    fn a_connection_acts_only_in_its_own_sessions() {
        let dir = std::env::temp_dir().join(format!("pqkit-remote-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let options = crate::store::InitOptions {
            kdf: crate::store::Kdf {
                memory_kib: 1024,
                passes: 1,
                lanes: 1,
            },
            max_pin_attempts: 3,
            ledger: None,
            min_pin_len: 4,
        };
        crate::store::Store::init(&dir.join("t"), "t", b"so-pin-1", Some(b"1234"), &options)
            .unwrap();
        let conf = dir.join("pkcs11.json");
        crate::config::Config {
            slots: vec![crate::config::SlotConfig { dir: dir.join("t") }],
            remote: None,
        }
        .save_to(&conf)
        .unwrap();
        // SAFETY: the only test of this binary that reads the variable.
        unsafe { std::env::set_var("PQKIT_PKCS11_CONF", &conf) };
        match crate::token::initialize() {
            Ok(()) | Err(CKR_CRYPTOKI_ALREADY_INITIALIZED) => {}
            Err(rv) => panic!("{rv:#x}"),
        }
        let connect = || {
            let (client, server) = UnixStream::pair().unwrap();
            std::thread::spawn(move || handle(server));
            client
        };
        let (mut a, mut b) = (connect(), connect());
        let flags = CKF_SERIAL_SESSION | CKF_RW_SESSION;
        let Ok(Reply::Ulong(session)) = call(&mut a, &Call::OpenSession { slot: 0, flags }) else {
            panic!("open")
        };
        assert!(call(&mut a, &Call::SessionInfo { session }).is_ok());
        assert_eq!(
            call(&mut b, &Call::SessionInfo { session }).err(),
            Some(CKR_SESSION_HANDLE_INVALID)
        );
        assert_eq!(
            call(&mut b, &Call::CloseSession { session }).err(),
            Some(CKR_SESSION_HANDLE_INVALID)
        );
        assert!(call(&mut b, &Call::CloseAllSessions { slot: 0 }).is_ok());
        assert!(
            call(&mut a, &Call::SessionInfo { session }).is_ok(),
            "b closed a's session"
        );
        // a logs in; b's sessions on the same token stay public, and b must log in itself.
        let state = |c: &mut UnixStream, session| match call(c, &Call::SessionInfo { session }) {
            Ok(Reply::SessionInfo { state, .. }) => state,
            other => panic!("{other:?}"),
        };
        assert!(
            call(
                &mut a,
                &Call::Login {
                    session,
                    user: CKU_USER,
                    pin: b"1234".to_vec()
                }
            )
            .is_ok()
        );
        assert_eq!(state(&mut a, session), CKS_RW_USER_FUNCTIONS);
        let Ok(Reply::Ulong(theirs)) = call(&mut b, &Call::OpenSession { slot: 0, flags }) else {
            panic!("open")
        };
        assert_eq!(
            state(&mut b, theirs),
            CKS_RW_PUBLIC_SESSION,
            "a's login opened b's session"
        );
        assert!(
            call(
                &mut b,
                &Call::Login {
                    session: theirs,
                    user: CKU_USER,
                    pin: b"1234".to_vec()
                }
            )
            .is_ok()
        );
        assert_eq!(state(&mut b, theirs), CKS_RW_USER_FUNCTIONS);
        assert!(call(&mut b, &Call::Logout { session: theirs }).is_ok());
        assert_eq!(
            state(&mut a, session),
            CKS_RW_USER_FUNCTIONS,
            "b logged a out"
        );
        // A header announcing 64 MiB, then nothing: the server waits for bytes, allocating none
        // beyond what arrives, and lets go when the connection closes.
        let mut c = connect();
        c.write_all(&u32::try_from(MAX_FRAME).unwrap().to_be_bytes())
            .unwrap();
        drop(c);
        assert!(call(&mut a, &Call::CloseSession { session }).is_ok());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
