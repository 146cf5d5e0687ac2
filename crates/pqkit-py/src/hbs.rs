//! `pqkit.hbs`: stateful hash-based signing keys (LMS/HSS, XMSS, XMSS^MT) through pqkit-hbs's
//! state file and ledger. Python sees no call that takes a one-time key index: every
//! signature goes through `pqkit_hbs::state::StatefulKey::sign`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use pqkit_hbs::ledger::{Ledger, LedgerSpec};
use pqkit_hbs::preset::Shape;
use pqkit_hbs::public::PublicKey;
use pqkit_hbs::state::{NewKey, StateError, StatefulKey as CoreKey};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyType};

use crate::errors::{self, Kind};
use crate::{Input, bytes_out};

/// A stateful hash-based signing key — LMS/HSS (RFC 8554, NIST SP 800-208) or XMSS /
/// XMSS^MT (RFC 8391) — kept in a state file, held open under the file's lock.
///
/// Each one-time key of a stateful key may sign once: a second signature with the same
/// one-time key lets anyone forge signatures. pqkit never hands out an index twice — not
/// after a crash, a full disk, two processes, a `cp` of the state file, or a restored
/// backup — and this class has no call that takes an index.
///
/// Create a key (once):
///
///     key = pqkit.hbs.StatefulKey.generate("signer.state", "L2_H10_W4")
///     open("signer.pub.pem", "w").write(key.public_key().to_pem())
///     key.close()
///
/// The parameters are an HSS shape `L<levels>_H<height>_W<w>` (1 048 576 signatures for
/// L2_H10_W4 with SHA-256) or an XMSS / XMSS^MT set name ("XMSS-SHA2_10_256"). The state file
/// is created 0600 and never overwritten; beside it pqkit keeps `signer.state.cache` (public
/// tree nodes: opening the key computes no trees) and, while the key is open,
/// `signer.state.lock`.
///
/// Sign (any number of times, from any number of processes — one holds the key at a time):
///
///     with pqkit.hbs.StatefulKey.open("signer.state") as key:
///         signature = key.sign(b"firmware image")
///         print(key.remaining, "signatures left")
///
/// sign() reserves the one-time key in the state file — written and synced to disk — and in
/// the ledger before the signature exists: a crash after that loses the one-time key, never
/// reuses it. reserve(n) reserves n in one write, for a batch (the unused rest of a reservation
/// is skipped, never signed with, when the key is closed). When none is left, sign() raises
/// KeyExhausted.
///
/// The ledger (ledger=, else $PQKIT_HBS_LEDGER, else
/// $XDG_STATE_HOME/pqkit/hbs-ledger.sqlite3) records how far each key has reserved. It is
/// what refuses a restored backup or an older copy of the state file ("this state file is
/// older than the key"); the state file records where it lives, which refuses a copy
/// (`cp`), a rename or a second hard link. Those refusals raise StateError, with what to do
/// in the message (`pqkit hbs adopt` when a copy is really the only one left). Give
/// ledger="etcd://host:2379,..." for keys shared by several machines.
///
/// Another process holding the key makes open() raise StateError ("in use by another
/// signer"); the lock goes with the process, so a process that died never blocks the key.
/// Close the key (or leave the with block) to let the next signer in. An open key is not
/// inherited: a process forked from the one that opened it (os.fork, multiprocessing's "fork"
/// start method) gets StateError from every call — it would otherwise sign with the one-time
/// keys its parent reserved. Open the key in the child instead, once the parent has closed
/// it: the child holds a copy of the lock until it exits, so a parent that dies with the key
/// open keeps other signers out until its forked children are gone too.
///
/// remaining counts the one-time keys neither used nor reserved: after reserve(n), the n
/// reserved keys still sign from this object but no longer count, and whatever of them is
/// unsigned when the key is closed is skipped for good.
///
/// Limits: the ledger is the memory of which one-time keys were handed out. A state file and
/// its ledger restored together from one backup both forget the same signatures, and nothing
/// can tell: keep the ledger out of the backups that hold state files (or on another machine:
/// ledger="etcd://..."). The refusals' messages name `pqkit hbs adopt`, the command-line tool's
/// way to take a state file back after a move; Python has no adopt call on purpose.
///
/// The GIL is released while a signature is made; one thread signs at a time per key.
#[pyclass(module = "pqkit.hbs", name = "StatefulKey", frozen)]
pub(crate) struct StatefulKey {
    inner: Mutex<Option<CoreKey>>,
    /// The process that opened the key, as its pid and [`FORKS`]. A forked child shares its
    /// reservation in memory and its lock: it must neither sign nor close (dropping the key
    /// settles the state file and removes the lock file the parent holds). The pid catches a
    /// fork Python does not see; the count one whose pid equals a dead opener's.
    opener: (u32, u64),
}

/// Forks seen by Python in this process's line (`os.register_at_fork` in `pqkit/hbs.py`
/// calls [`_after_fork_in_child`]; a child starts with its parent's count plus one).
static FORKS: AtomicU64 = AtomicU64::new(0);

/// This process, as a key records its opener.
fn this_process() -> (u32, u64) {
    (std::process::id(), FORKS.load(Ordering::SeqCst))
}

/// Counts a fork, in the child (registered by `pqkit/hbs.py` with `os.register_at_fork`).
#[pyfunction]
fn _after_fork_in_child() {
    FORKS.fetch_add(1, Ordering::SeqCst);
}

impl Drop for StatefulKey {
    fn drop(&mut self) {
        if this_process() != self.opener {
            let inner = self.inner.get_mut().unwrap_or_else(|e| e.into_inner());
            if let Some(key) = inner.take() {
                std::mem::forget(key);
            }
        }
    }
}

/// An HSS, XMSS or XMSS^MT public key.
#[pyclass(module = "pqkit.hbs", name = "StatefulPublicKey", frozen)]
pub(crate) struct StatefulPublicKey(pub(crate) PublicKey);

/// Threads for tree computation: 0 means one per CPU; at most 1024.
fn threads(requested: i64) -> PyResult<usize> {
    match usize::try_from(requested) {
        Ok(0) => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
        Ok(n) if n <= 1024 => Ok(n),
        _ => Err(errors::raise(
            Kind::Input,
            format!("threads: {requested}; expected 0 (one per CPU) to 1024"),
        )),
    }
}

/// The ledger `given`, `$PQKIT_HBS_LEDGER` or the default one, opened without the GIL (an
/// SQLite ledger busy elsewhere is waited for; etcd is a network round trip).
fn ledger(py: Python<'_>, given: Option<&str>) -> PyResult<Ledger> {
    let spec = LedgerSpec::resolve(given).map_err(|e| errors::raise(Kind::Input, e))?;
    py.detach(|| Ledger::open(&spec))
        .map_err(|e| errors::raise(Kind::State, e))
}

/// Each key's path; a `str` or an `os.PathLike`.
fn path_of(path: &Bound<'_, PyAny>) -> PyResult<PathBuf> {
    path.extract::<PathBuf>()
}

/// Why an operation on a key failed, kept apart from Python until the GIL is held again.
pub(crate) enum Failure {
    Closed,
    Forked,
    State(StateError),
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> Self {
        match f {
            Failure::Closed => errors::raise(Kind::State, "the key is closed"),
            Failure::Forked => errors::raise(
                Kind::State,
                "the key was opened by another process (this one was forked from it): a child \
                 must not sign with its parent's reserved one-time keys; open the key here",
            ),
            Failure::State(e) => errors::state(e),
        }
    }
}

impl StatefulKey {
    fn wrap(key: CoreKey) -> Self {
        Self {
            inner: Mutex::new(Some(key)),
            opener: this_process(),
        }
    }

    /// `f` on the open key. Blocks on the key's mutex: call it without the GIL
    /// (`Python::detach`) — a thread holding the GIL while waiting for a signer that needs the
    /// GIL back would deadlock — and take nothing of Python's inside.
    pub(crate) fn run<T>(
        &self,
        f: impl FnOnce(&mut CoreKey) -> Result<T, StateError>,
    ) -> Result<T, Failure> {
        match self.lock()?.as_mut() {
            Some(key) => f(key).map_err(Failure::State),
            None => Err(Failure::Closed),
        }
    }

    /// `f` on the open key, waiting for the key without the GIL.
    fn with<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut CoreKey) -> T + Send,
    ) -> PyResult<T> {
        Ok(py.detach(|| self.run(|key| Ok(f(key))))?)
    }

    /// The key's mutex, in the process that opened it. Without the GIL (see [`Self::run`]).
    pub(crate) fn lock(&self) -> Result<MutexGuard<'_, Option<CoreKey>>, Failure> {
        if this_process() != self.opener {
            return Err(Failure::Forked);
        }
        // A panic while signing leaves nothing half-written here: the state file is the truth.
        Ok(self.inner.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

#[pymethods]
impl StatefulKey {
    /// A new key in a new state file at path (never overwritten), recorded in the ledger:
    /// parameters an HSS shape ("L2_H10_W4": levels, tree height, Winternitz w; SHA-256) or an
    /// XMSS / XMSS^MT set name ("XMSS-SHA2_10_256", "XMSSMT-SHA2_20/2_256"). Key generation
    /// computes the first tree of each level on `threads` threads (0: one per CPU). Returns the
    /// key, open.
    ///
    /// Raises StateError (the file exists, the ledger cannot be opened), InvalidInput
    /// (unknown parameters).
    #[classmethod]
    #[pyo3(signature = (path, parameters, *, ledger = None, threads = 0))]
    fn generate(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        path: &Bound<'_, PyAny>,
        parameters: &str,
        ledger: Option<&str>,
        threads: i64,
    ) -> PyResult<Self> {
        let path = path_of(path)?;
        let threads = self::threads(threads)?;
        let ledger = self::ledger(py, ledger)?;
        let bad = |e: pqkit_hbs::Error| errors::raise(Kind::Input, e);
        let new = if parameters.to_ascii_uppercase().starts_with("XMSS") {
            let p = pqkit_hbs::xmss::by_name(parameters).map_err(bad)?;
            py.detach(|| NewKey::xmss(&path, p, threads))
        } else {
            let levels = Shape::parse(parameters).map_err(bad)?.levels();
            py.detach(|| NewKey::hss(&path, &levels, threads))
        }
        .map_err(errors::state)?;
        py.detach(|| new.commit(ledger))
            .map(Self::wrap)
            .map_err(errors::state)
    }

    /// Opens a key's state file, taking its lock, and checks it against its ledger: a copy, a
    /// restored backup, a moved or hard-linked file is refused. `threads`: for trees the cache
    /// file lacks (0: one per CPU).
    ///
    /// Raises StateError.
    #[classmethod]
    #[pyo3(signature = (path, *, ledger = None, threads = 0))]
    fn open(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        path: &Bound<'_, PyAny>,
        ledger: Option<&str>,
        threads: i64,
    ) -> PyResult<Self> {
        let path = path_of(path)?;
        let threads = self::threads(threads)?;
        let ledger = self::ledger(py, ledger)?;
        py.detach(|| CoreKey::open(&path, ledger, threads))
            .map(Self::wrap)
            .map_err(errors::state)
    }

    fn __enter__(slf: Bound<'_, Self>) -> PyResult<Bound<'_, Self>> {
        slf.get().with(slf.py(), |_| ())?;
        Ok(slf)
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    /// Signs data with the next one-time key, reserved on disk and in the ledger before the
    /// signature is made (RFC 8554 §6.2 / RFC 8391 §4.1.9). Returns signature_size bytes.
    ///
    /// Raises KeyExhausted when no one-time key is left, StateError when the reservation
    /// cannot be written (nothing is signed then).
    fn sign<'py>(&self, py: Python<'py>, data: Input<'_>) -> PyResult<Bound<'py, PyBytes>> {
        let signature = py.detach(|| self.run(|key| key.sign(&data)))?;
        Ok(bytes_out(py, &signature))
    }

    /// Reserves count more one-time keys in one write of the state file and the ledger (fewer
    /// at the end of the key), so that the next count signatures write nothing.
    ///
    /// Raises KeyExhausted, StateError.
    fn reserve(&self, py: Python<'_>, count: i64) -> PyResult<()> {
        let count = u64::try_from(count)
            .ok()
            .filter(|&c| c > 0)
            .ok_or_else(|| errors::raise(Kind::Input, format!("count: {count}; at least 1")))?;
        Ok(py.detach(|| self.run(|key| key.reserve(count)))?)
    }

    /// The public key.
    fn public_key(&self, py: Python<'_>) -> PyResult<StatefulPublicKey> {
        self.with(py, |key| StatefulPublicKey(key.public_key()))
    }

    /// Releases the lock and saves the tree cache. Reserved, unused one-time keys stay
    /// spent. Closing twice does nothing.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.lock().map(|mut k| drop(k.take())))?;
        Ok(())
    }

    /// One-time keys neither used nor reserved.
    #[getter]
    fn remaining(&self, py: Python<'_>) -> PyResult<u64> {
        self.with(py, |key| key.status().remaining)
    }

    /// One-time keys used, reserved or skipped.
    #[getter]
    fn used(&self, py: Python<'_>) -> PyResult<u64> {
        self.with(py, |key| key.status().used)
    }

    /// All one-time keys of the key (of its range, for a key split across machines).
    #[getter]
    fn capacity(&self, py: Python<'_>) -> PyResult<u64> {
        self.with(py, |key| key.status().capacity)
    }

    /// Bytes of each signature (RFC 8554 §6.4 / RFC 8391 §4.1.8).
    #[getter]
    fn signature_size(&self, py: Python<'_>) -> PyResult<usize> {
        self.with(py, |key| key.status().signature_len)
    }

    /// The state file.
    #[getter]
    fn path(&self, py: Python<'_>) -> PyResult<String> {
        self.with(py, |key| key.path().display().to_string())
    }

    /// The ledger that records the key.
    #[getter]
    fn ledger(&self, py: Python<'_>) -> PyResult<String> {
        self.with(py, |key| key.ledger_name().to_owned())
    }

    fn __repr__(&self) -> String {
        match self.inner.try_lock().as_deref() {
            Ok(Some(key)) => format!("<pqkit.hbs.StatefulKey {}>", key.path().display()),
            Ok(None) => "<pqkit.hbs.StatefulKey closed>".to_owned(),
            Err(_) => "<pqkit.hbs.StatefulKey in use>".to_owned(),
        }
    }
}

#[pymethods]
impl StatefulPublicKey {
    /// The scheme and its parameters, e.g. "HSS L=2 (LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W4 on
    /// top)" or "XMSS-SHA2_10_256".
    #[getter]
    fn name(&self) -> String {
        self.0.name()
    }

    /// Returns None when the signature verifies (RFC 8554 §6.3, RFC 8391 §4.1.10).
    ///
    /// Raises InvalidSignature.
    fn verify(&self, py: Python<'_>, signature: Input<'_>, data: Input<'_>) -> PyResult<()> {
        py.detach(|| self.0.verify(&data, &signature))
            .map_err(|e| errors::raise(Kind::InvalidSignature, e))
    }

    /// The one-time key a signature names (HSS: the levels' leaf indices joined, the signer's
    /// counter; XMSS: idx). Does not verify.
    ///
    /// Raises InvalidSignature for a signature that does not decode.
    fn index(&self, signature: Input<'_>) -> PyResult<u64> {
        self.0
            .counter(&signature)
            .map_err(|e| errors::raise(Kind::InvalidSignature, e))
    }

    /// The encoding of RFC 8554 §5.3 / RFC 8391 §4.1.7.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        bytes_out(py, &self.0.to_bytes())
    }

    /// SubjectPublicKeyInfo DER (RFC 9708 for HSS, RFC 9802 for XMSS).
    fn to_der<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let der = self
            .0
            .to_spki_der()
            .map_err(|e| errors::raise(Kind::InvalidKey, e))?;
        Ok(bytes_out(py, &der))
    }

    /// SubjectPublicKeyInfo PEM ("PUBLIC KEY").
    fn to_pem(&self) -> PyResult<String> {
        self.0
            .to_pem()
            .map_err(|e| errors::raise(Kind::InvalidKey, e))
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<Self>().is_ok_and(|o| o.get().0 == self.0)
    }

    fn __hash__(&self) -> u64 {
        crate::encoding::hash_of(self.0.to_bytes())
    }

    fn __repr__(&self) -> String {
        format!("<pqkit.hbs.StatefulPublicKey {}>", self.0.name())
    }
}

/// An HSS / XMSS / XMSS^MT public key from SubjectPublicKeyInfo PEM or DER.
///
/// Raises InvalidKey.
#[pyfunction]
fn hbs_load_public_key(data: &Bound<'_, PyAny>) -> PyResult<StatefulPublicKey> {
    let bad = |e: pqkit_hbs::Error| errors::raise(Kind::InvalidKey, e);
    if let Ok(text) = data.extract::<String>() {
        return PublicKey::from_pem(&text)
            .map(StatefulPublicKey)
            .map_err(bad);
    }
    let bytes: Input<'_> = data.extract()?;
    match std::str::from_utf8(&bytes) {
        Ok(text) if text.contains("-----BEGIN") => PublicKey::from_pem(text),
        _ => PublicKey::from_spki_der(&bytes),
    }
    .map(StatefulPublicKey)
    .map_err(bad)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<StatefulKey>()?;
    m.add_class::<StatefulPublicKey>()?;
    m.add_function(wrap_pyfunction!(hbs_load_public_key, m)?)?;
    m.add_function(wrap_pyfunction!(_after_fork_in_child, m)?)?;
    Ok(())
}
