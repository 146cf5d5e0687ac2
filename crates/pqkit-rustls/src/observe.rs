//! What pqkit's verifiers saw of the peer: the signature scheme of its CertificateVerify, so a
//! report can say which scheme each side actually signed with, and why its certificate was
//! refused, in words naming the certificate (the TLS error itself carries only the variant
//! that decides the alert).
//!
//! One configuration serves many connections at once (`pqkit server`), and rustls drives a
//! connection — its verifier included — on the thread that calls it: so what is seen is kept
//! per connection — the connection [`scope`] names, else the calling thread — and
//! [`PeerScheme::clear`] forgets the current connection's record. An asynchronous server, whose
//! connections move between threads, runs each step of a connection inside [`scope`].

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::Mutex;
use std::thread::ThreadId;

use rustls::SignatureScheme;

/// Whose record: a connection named by [`scope`], or the calling thread's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Key {
    Connection(u64),
    Thread(ThreadId),
}

thread_local! {
    static CURRENT: Cell<Option<u64>> = const { Cell::new(None) };
}

/// Runs `f` as a step of connection `id` (from [`next_connection_id`]): what a verifier
/// records meanwhile, and what [`PeerScheme`] answers, are that connection's, whichever thread
/// runs the step. Work that `f` hands to another thread or task is outside the scope.
pub fn scope<R>(id: u64, f: impl FnOnce() -> R) -> R {
    let outer = CURRENT.with(|c| c.replace(Some(id)));
    // Restored however `f` ends (a panic unwinding through a poll included).
    struct Restore(Option<u64>);
    impl Drop for Restore {
        fn drop(&mut self) {
            CURRENT.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(outer);
    f()
}

/// A connection id no other connection of this process has, for [`scope`].
pub fn next_connection_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

fn key() -> Key {
    CURRENT
        .with(Cell::get)
        .map_or_else(|| Key::Thread(std::thread::current().id()), Key::Connection)
}

/// The scheme of the last CertificateVerify a verifier checked, and the last refusal, per
/// connection.
#[derive(Debug, Default)]
pub struct PeerScheme(Mutex<HashMap<Key, Seen>>);

#[derive(Debug, Default)]
struct Seen {
    scheme: Option<SignatureScheme>,
    rejected: Option<String>,
}

impl PeerScheme {
    /// The recorded scheme, if the peer of the current connection sent a CertificateVerify
    /// that verified.
    pub fn get(&self) -> Option<SignatureScheme> {
        self.with(|s| s.scheme)
    }

    /// Why the peer's certificate chain was refused (the certificate and the rule), if it was.
    pub fn rejection(&self) -> Option<String> {
        self.with(|s| s.rejected.clone())
    }

    /// Forgets the current connection's record (call before each connection, and after its
    /// report).
    pub fn clear(&self) {
        if let Ok(mut m) = self.0.lock() {
            m.remove(&key());
        }
    }

    pub(crate) fn set(&self, scheme: SignatureScheme) {
        self.update(|s| s.scheme = Some(scheme));
    }

    pub(crate) fn set_rejection(&self, why: String) {
        self.update(|s| s.rejected = Some(why));
    }

    fn with<T: Default>(&self, f: impl FnOnce(&Seen) -> T) -> T {
        self.0
            .lock()
            .ok()
            .and_then(|m| m.get(&key()).map(f))
            .unwrap_or_default()
    }

    fn update(&self, f: impl FnOnce(&mut Seen)) {
        if let Ok(mut m) = self.0.lock() {
            f(m.entry(key()).or_default());
        }
    }
}
