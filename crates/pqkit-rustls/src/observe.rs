//! What pqkit's verifiers saw of the peer: the signature scheme of its CertificateVerify, so a
//! report can say which scheme each side actually signed with, and why its certificate was
//! refused, in words naming the certificate (the TLS error itself carries only the variant
//! that decides the alert).
//!
//! One configuration serves many connections at once (`pqkit server`), and rustls drives a
//! connection — its verifier included — on the thread that calls it: so what is seen is kept
//! per thread, and [`PeerScheme::clear`] forgets the calling thread's record.

use std::collections::HashMap;
use std::sync::Mutex;
use std::thread::ThreadId;

use rustls::SignatureScheme;

/// The scheme of the last CertificateVerify a verifier checked, and the last refusal, per
/// thread.
#[derive(Debug, Default)]
pub struct PeerScheme(Mutex<HashMap<ThreadId, Seen>>);

#[derive(Debug, Default)]
struct Seen {
    scheme: Option<SignatureScheme>,
    rejected: Option<String>,
}

impl PeerScheme {
    /// The recorded scheme, if the peer of this thread's connection sent a CertificateVerify
    /// that verified.
    pub fn get(&self) -> Option<SignatureScheme> {
        self.with(|s| s.scheme)
    }

    /// Why the peer's certificate chain was refused (the certificate and the rule), if it was.
    pub fn rejection(&self) -> Option<String> {
        self.with(|s| s.rejected.clone())
    }

    /// Forgets this thread's record (call before each connection, and after its report).
    pub fn clear(&self) {
        if let Ok(mut m) = self.0.lock() {
            m.remove(&std::thread::current().id());
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
            .and_then(|m| m.get(&std::thread::current().id()).map(f))
            .unwrap_or_default()
    }

    fn update(&self, f: impl FnOnce(&mut Seen)) {
        if let Ok(mut m) = self.0.lock() {
            f(m.entry(std::thread::current().id()).or_default());
        }
    }
}
