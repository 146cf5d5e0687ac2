//! The reservation ledger: how far each stateful key's one-time keys have been handed out,
//! kept where the state file cannot roll it back.
//!
//! Contract:
//! - A ledger holds one **record** per key range: its **high-water mark**, the first counter
//!   value that has never been handed out. Every value below it may have signed. The record's
//!   name is [`RecordId`]: SHA-256 over the key's public key (HSS: L ‖ LMS type ‖ LM-OTS type ‖
//!   I ‖ root, RFC 8554 §6.1; XMSS: OID ‖ root ‖ SEED, RFC 8391 §4.1.7) and the range of
//!   counter values the state file may use (a whole key: 0..capacity; a sector of it:
//!   its own range, see `StatefulKey::split`).
//! - A mark only moves forward. [`Ledger::advance`] is a compare-and-swap: it moves the mark
//!   from the value the caller read to a higher one, or reports that someone else moved it
//!   first ([`Advance::Moved`]). A write that returns `Ok` is durable (SQLite: a WAL commit with
//!   `synchronous=FULL`; etcd: a transaction committed by a quorum of the cluster).
//! - Every ledger has a random 16-byte [`LedgerId`], made when it is created. A state file
//!   records the id of the ledger that holds its record, so a lost or replaced ledger (a new
//!   id) and a wrong `--ledger` are told apart from a missing record.
//! - A ledger that cannot be reached is an error ([`LedgerError::Unreachable`]), never a
//!   reason to sign without it.
//! - **Several signers** ([`Ledger::shared`], etcd): each reservation is a transaction on the
//!   record, so ranges taken by signers on several machines never overlap. Each signer holds a
//!   lease, kept alive in the background; [`Ledger::check_live`] fails once it can no longer
//!   show that the lease is alive (no keep-alive answered within its TTL, by the monotonic and
//!   by the wall clock), and a key stops signing from the ranges it holds. A process or machine
//!   that resumes from a snapshot finds its lease lapsed.
//!
//! Where each ledger lives:
//! - [`LedgerSpec::Sqlite`]: an embedded SQLite database (WAL, `synchronous=FULL`), by default
//!   `$XDG_STATE_HOME/pqkit/hbs-ledger.sqlite3` (`~/.local/state/…`), created 0600 in a 0700
//!   directory. Many processes on one machine share it (SQLite's locking).
//! - [`LedgerSpec::Etcd`]: an etcd v3 cluster, `etcd://host:port[,host:port…][?ttl=S]` (with the
//!   `etcd` feature). Keys under `/pqkit/hbs/v1/`: `ledger-id`, `records/<record>` (the mark,
//!   in decimal) and `signers/<record>/<lease>` (which signer holds which range, bound to its
//!   lease).
//!
//! What a ledger cannot see: a ledger restored together with the state file (a whole-machine
//! snapshot that holds both: keep the SQLite ledger out of restorable snapshots, or use etcd).

mod sqlite;

#[cfg(feature = "etcd")]
mod etcd;

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// Errors of a ledger. Each names the ledger.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// The ledger could not be reached or opened: no reservation was made.
    #[error(
        "{ledger}: the reservation ledger cannot be reached or written ({why}); nothing was \
         signed"
    )]
    Unreachable {
        /// The ledger.
        ledger: String,
        /// What failed.
        why: String,
    },
    /// The ledger is not a ledger, or is damaged.
    #[error("{ledger}: not a usable reservation ledger: {why}")]
    Corrupt {
        /// The ledger.
        ledger: String,
        /// What is wrong.
        why: String,
    },
    /// This signer's lease lapsed: it can no longer show that the cluster knows it is alive,
    /// so it signs no more from the ranges it holds (reopen the key to take new ones).
    #[error(
        "{ledger}: this signer's lease lapsed (no keep-alive answered within {ttl_s} s); it \
         signs no more from the one-time keys it reserved"
    )]
    LeaseLapsed {
        /// The ledger.
        ledger: String,
        /// The lease's time to live, in seconds.
        ttl_s: u64,
    },
    /// A `--ledger` value that names no ledger.
    #[error("{spec}: not a ledger ({why})")]
    BadSpec {
        /// What was given.
        spec: String,
        /// Why it is refused.
        why: &'static str,
    },
    /// No ledger was named and there is no home directory for the default one.
    #[error(
        "no ledger named and no default: neither XDG_STATE_HOME nor HOME names a directory \
         (name the ledger with --ledger or PQKIT_HBS_LEDGER)"
    )]
    NoDefault,
    /// A mark would move backwards (a caller's bug; nothing was written).
    #[error("{ledger}: refusing to move record {record} back from {from} to {to}")]
    Backwards {
        /// The ledger.
        ledger: String,
        /// The record.
        record: String,
        /// Its mark.
        from: u64,
        /// The value asked for.
        to: u64,
    },
}

/// A ledger's identity: 16 random bytes made when it was created.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct LedgerId(pub [u8; 16]);

impl LedgerId {
    /// Lower-case hex.
    pub fn to_hex(&self) -> String {
        hex(&self.0)
    }
}

impl std::fmt::Debug for LedgerId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LedgerId({})", self.to_hex())
    }
}

impl std::fmt::Display for LedgerId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_hex())
    }
}

/// The name of one key range's record: SHA-256("pqkit-hbs ledger record v1" ‖ u16 length ‖
/// public key ‖ u64 start ‖ u64 end), 32 bytes (see the module docs).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct RecordId(pub [u8; 32]);

impl RecordId {
    /// The record of the counter values `start..end` of the key whose public key encoding
    /// (RFC 8554 §6.1 / RFC 8391 §4.1.7) is `public_key`.
    pub fn new(public_key: &[u8], start: u64, end: u64) -> Self {
        let len = u16::try_from(public_key.len()).unwrap_or(u16::MAX);
        Self(
            Sha256::new()
                .chain_update(b"pqkit-hbs ledger record v1")
                .chain_update(len.to_be_bytes())
                .chain_update(public_key)
                .chain_update(start.to_be_bytes())
                .chain_update(end.to_be_bytes())
                .finalize()
                .into(),
        )
    }

    /// Lower-case hex (64 characters): the record's name in the ledger.
    pub fn to_hex(&self) -> String {
        hex(&self.0)
    }
}

impl std::fmt::Debug for RecordId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RecordId({})", self.to_hex())
    }
}

impl std::fmt::Display for RecordId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_hex())
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// What [`Ledger::advance`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Advance {
    /// The mark is now the value asked for.
    Done,
    /// The mark was not the value the caller read: another signer moved it (to this value;
    /// `None`: the record is gone). Nothing was written.
    Moved(Option<u64>),
}

/// One record as the ledger lists it ([`Ledger::records`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// The record's name ([`RecordId::to_hex`]).
    pub record: String,
    /// Its mark.
    pub high_water: u64,
    /// Who last moved it, in words.
    pub note: String,
}

/// Where a ledger is: what `--ledger` and `PQKIT_HBS_LEDGER` name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LedgerSpec {
    /// An SQLite database file (created when missing).
    Sqlite(PathBuf),
    /// An etcd v3 cluster: client endpoints (`host:port`) and the lease TTL in seconds.
    Etcd {
        /// `host:port` of each member.
        endpoints: Vec<String>,
        /// The signer's lease time to live, in seconds (default 10).
        ttl_s: u64,
    },
}

/// The default lease TTL of an etcd signer, in seconds.
pub const DEFAULT_TTL_S: u64 = 10;

impl LedgerSpec {
    /// Parses `etcd://host:port[,host:port…][?ttl=S]`, `sqlite:PATH` or a file path.
    ///
    /// # Errors
    /// [`LedgerError::BadSpec`] for an empty value, an etcd URL without endpoints, a TTL
    /// outside 1–3600 s.
    pub fn parse(spec: &str) -> Result<Self, LedgerError> {
        let bad = |why| LedgerError::BadSpec {
            spec: spec.to_owned(),
            why,
        };
        if let Some(rest) = spec.strip_prefix("etcd://") {
            let (hosts, query) = rest.split_once('?').unwrap_or((rest, ""));
            let endpoints: Vec<String> = hosts
                .trim_end_matches('/')
                .split(',')
                .filter(|h| !h.is_empty())
                .map(str::to_owned)
                .collect();
            if endpoints.is_empty() {
                return Err(bad("an etcd ledger needs at least one host:port"));
            }
            if endpoints
                .iter()
                .any(|e| !e.contains(':') || e.contains('/'))
            {
                return Err(bad("each etcd endpoint is host:port"));
            }
            let mut ttl_s = DEFAULT_TTL_S;
            for pair in query.split('&').filter(|p| !p.is_empty()) {
                match pair.split_once('=') {
                    Some(("ttl", v)) => {
                        ttl_s = v
                            .parse()
                            .ok()
                            .filter(|t| (1..=3600).contains(t))
                            .ok_or(bad("ttl is 1 to 3600 seconds"))?;
                    }
                    _ => return Err(bad("the only etcd option is ttl=SECONDS")),
                }
            }
            return Ok(Self::Etcd { endpoints, ttl_s });
        }
        if spec.contains("://") {
            return Err(bad("ledgers are etcd://host:port,… or an SQLite file path"));
        }
        let path = spec.strip_prefix("sqlite:").unwrap_or(spec);
        if path.is_empty() {
            return Err(bad("empty path"));
        }
        Ok(Self::Sqlite(PathBuf::from(path)))
    }

    /// The default ledger: `$XDG_STATE_HOME/pqkit/hbs-ledger.sqlite3`, or
    /// `$HOME/.local/state/pqkit/hbs-ledger.sqlite3` (XDG Base Directory Specification).
    ///
    /// # Errors
    /// [`LedgerError::NoDefault`] when neither variable names an absolute directory (a ledger
    /// in whatever directory a command runs in would be a different ledger each time).
    pub fn default_local() -> Result<Self, LedgerError> {
        let absolute = |v: Option<std::ffi::OsString>| {
            v.filter(|p| !p.is_empty() && Path::new(p).is_absolute())
                .map(PathBuf::from)
        };
        let state_home = absolute(std::env::var_os("XDG_STATE_HOME"))
            .or_else(|| absolute(std::env::var_os("HOME")).map(|h| h.join(".local").join("state")))
            .ok_or(LedgerError::NoDefault)?;
        Ok(Self::Sqlite(
            state_home.join("pqkit").join("hbs-ledger.sqlite3"),
        ))
    }

    /// `given` when set, else `$PQKIT_HBS_LEDGER` when set, else [`LedgerSpec::default_local`].
    ///
    /// # Errors
    /// As [`LedgerSpec::parse`].
    pub fn resolve(given: Option<&str>) -> Result<Self, LedgerError> {
        if let Some(s) = given {
            return Self::parse(s);
        }
        match std::env::var("PQKIT_HBS_LEDGER") {
            Ok(s) if !s.is_empty() => Self::parse(&s),
            _ => Self::default_local(),
        }
    }
}

impl std::fmt::Display for LedgerSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Sqlite(p) => write!(f, "{}", p.display()),
            Self::Etcd { endpoints, .. } => write!(f, "etcd://{}", endpoints.join(",")),
        }
    }
}

/// One ledger's operations (see the module docs); [`Ledger`] is the public face.
pub(crate) trait Backend: Send {
    fn id(&self) -> LedgerId;
    /// The mark of `record`, or `None` when the ledger has no record of it.
    fn high_water(&mut self, record: &RecordId) -> Result<Option<u64>, LedgerError>;
    /// Compare-and-swap from `from` (`None`: no record) to `to`, with a note on who holds the
    /// range `from..to` (a signer's lease in etcd).
    fn advance(
        &mut self,
        record: &RecordId,
        from: Option<u64>,
        to: u64,
        note: &str,
    ) -> Result<Advance, LedgerError>;
    /// Removes a record whose mark is still `expect` (a key removed before it ever signed).
    fn forget(&mut self, record: &RecordId, expect: u64) -> Result<Advance, LedgerError>;
    /// Every record, by name.
    fn records(&mut self) -> Result<Vec<Record>, LedgerError>;
    /// Whether this signer may still sign from ranges it reserved, as a check that does not
    /// need the backend (a signer checks it while a reservation runs in the background);
    /// `None`: always.
    fn live_check(&self) -> Option<LiveCheck> {
        None
    }
}

/// [`Ledger::check_live`] as a value of its own: see [`Ledger::live_check`].
pub type LiveCheck = std::sync::Arc<dyn Fn() -> Result<(), LedgerError> + Send + Sync>;

/// An open reservation ledger (see the module docs).
pub struct Ledger {
    backend: Box<dyn Backend>,
    name: String,
    shared: bool,
    id: LedgerId,
    live: Option<LiveCheck>,
}

impl std::fmt::Debug for Ledger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ledger")
            .field("name", &self.name)
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl Ledger {
    /// Opens (an SQLite file: creates) the ledger `spec` names.
    ///
    /// # Errors
    /// [`LedgerError::Unreachable`] (an etcd cluster with no quorum in reach, an SQLite file
    /// that cannot be created or is not a regular file); [`LedgerError::Corrupt`]; an etcd
    /// spec in a build without the `etcd` feature is [`LedgerError::BadSpec`].
    pub fn open(spec: &LedgerSpec) -> Result<Self, LedgerError> {
        match spec {
            LedgerSpec::Sqlite(path) => Self::sqlite(path),
            #[cfg(feature = "etcd")]
            LedgerSpec::Etcd { endpoints, ttl_s } => Ok(Self::new(
                Box::new(etcd::Etcd::connect(endpoints, *ttl_s)?),
                spec.to_string(),
                true,
            )),
            #[cfg(not(feature = "etcd"))]
            LedgerSpec::Etcd { .. } => Err(LedgerError::BadSpec {
                spec: spec.to_string(),
                why: "this build of pqkit-hbs has no etcd support (feature `etcd`)",
            }),
        }
    }

    /// Opens the ledger `spec` names, as [`Ledger::open`], but never creates one: an SQLite
    /// file that is not there is [`LedgerError::Unreachable`] (for reading what a ledger
    /// records: a mistyped path must not become a new, empty ledger).
    ///
    /// # Errors
    /// As [`Ledger::open`].
    pub fn open_existing(spec: &LedgerSpec) -> Result<Self, LedgerError> {
        if let LedgerSpec::Sqlite(path) = spec
            && std::fs::symlink_metadata(path).is_err()
        {
            return Err(LedgerError::Unreachable {
                ledger: path.display().to_string(),
                why: "there is no ledger there".to_owned(),
            });
        }
        Self::open(spec)
    }

    /// Opens the SQLite ledger at `path`, creating it (0600, its directory 0700) when missing.
    ///
    /// # Errors
    /// As [`Ledger::open`].
    pub fn sqlite(path: &Path) -> Result<Self, LedgerError> {
        Ok(Self::new(
            Box::new(sqlite::Sqlite::open(path)?),
            path.display().to_string(),
            false,
        ))
    }

    fn new(backend: Box<dyn Backend>, name: String, shared: bool) -> Self {
        Self {
            id: backend.id(),
            live: backend.live_check(),
            backend,
            name,
            shared,
        }
    }

    /// The ledger's identity.
    pub fn id(&self) -> LedgerId {
        self.id
    }

    /// The ledger's name in messages: the SQLite path or the etcd URL.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether several copies of one state file may sign through this ledger (etcd: each
    /// takes ranges from the record by transaction).
    pub fn shared(&self) -> bool {
        self.shared
    }

    /// The mark of `record`; `None` when the ledger has no record of it.
    ///
    /// # Errors
    /// [`LedgerError::Unreachable`], [`LedgerError::Corrupt`].
    pub fn high_water(&mut self, record: &RecordId) -> Result<Option<u64>, LedgerError> {
        self.backend.high_water(record)
    }

    /// Moves the mark of `record` from `from` (what the caller read; `None`: no record yet)
    /// to `to`, durably, unless someone else moved it first. `note` says who holds the range
    /// (for people reading the ledger).
    ///
    /// # Errors
    /// [`LedgerError::Backwards`] when `to` is below `from`; [`LedgerError::Unreachable`],
    /// [`LedgerError::Corrupt`]: nothing is known to be written.
    pub fn advance(
        &mut self,
        record: &RecordId,
        from: Option<u64>,
        to: u64,
        note: &str,
    ) -> Result<Advance, LedgerError> {
        if let Some(from) = from
            && to < from
        {
            return Err(LedgerError::Backwards {
                ledger: self.name.clone(),
                record: record.to_hex(),
                from,
                to,
            });
        }
        self.backend.advance(record, from, to, note)
    }

    /// Removes the record of a key range that never signed: only while its mark is `expect`.
    ///
    /// # Errors
    /// As [`Ledger::advance`].
    pub fn forget(&mut self, record: &RecordId, expect: u64) -> Result<Advance, LedgerError> {
        self.backend.forget(record, expect)
    }

    /// Every record, in the order of their names.
    ///
    /// # Errors
    /// [`LedgerError::Unreachable`], [`LedgerError::Corrupt`].
    pub fn records(&mut self) -> Result<Vec<Record>, LedgerError> {
        self.backend.records()
    }

    /// Whether this signer may still sign from the ranges it reserved: always for SQLite; for
    /// etcd, while its lease is known to be alive.
    ///
    /// # Errors
    /// [`LedgerError::LeaseLapsed`].
    pub fn check_live(&self) -> Result<(), LedgerError> {
        self.live.as_ref().map_or(Ok(()), |check| check())
    }

    /// [`Ledger::check_live`] as a value that outlives a borrow of the ledger (`None`: the
    /// ledger's signers are always live).
    pub fn live_check(&self) -> Option<LiveCheck> {
        self.live.clone()
    }
}

/// Ledgers that keep nothing across processes: for measurements and tests, never for keys
/// that matter.
pub mod hazmat {
    use std::collections::HashMap;

    use super::{Advance, Backend, Ledger, LedgerError, LedgerId, Record, RecordId};

    struct InMemory {
        id: LedgerId,
        records: HashMap<RecordId, u64>,
    }

    impl Backend for InMemory {
        fn id(&self) -> LedgerId {
            self.id
        }

        fn high_water(&mut self, record: &RecordId) -> Result<Option<u64>, LedgerError> {
            Ok(self.records.get(record).copied())
        }

        fn advance(
            &mut self,
            record: &RecordId,
            from: Option<u64>,
            to: u64,
            _note: &str,
        ) -> Result<Advance, LedgerError> {
            let now = self.records.get(record).copied();
            if now != from {
                return Ok(Advance::Moved(now));
            }
            self.records.insert(*record, to);
            Ok(Advance::Done)
        }

        fn forget(&mut self, record: &RecordId, expect: u64) -> Result<Advance, LedgerError> {
            let now = self.records.get(record).copied();
            if now != Some(expect) {
                return Ok(Advance::Moved(now));
            }
            self.records.remove(record);
            Ok(Advance::Done)
        }

        fn records(&mut self) -> Result<Vec<Record>, LedgerError> {
            let mut out: Vec<Record> = self
                .records
                .iter()
                .map(|(r, &high_water)| Record {
                    record: r.to_hex(),
                    high_water,
                    note: String::new(),
                })
                .collect();
            out.sort_by(|a, b| a.record.cmp(&b.record));
            Ok(out)
        }
    }

    /// A ledger in this process's memory, gone when it is dropped: a key whose reservations
    /// are recorded only here is protected by its state file alone. For benchmarks (the cost
    /// of a ledger is measured against it) and tests.
    pub fn in_memory() -> Ledger {
        let mut id = [0u8; 16];
        rand_core::RngCore::fill_bytes(&mut rand_core::OsRng, &mut id);
        Ledger::new(
            Box::new(InMemory {
                id: LedgerId(id),
                records: HashMap::new(),
            }),
            "in-memory ledger".to_owned(),
            false,
        )
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse() {
        assert_eq!(
            LedgerSpec::parse("etcd://127.0.0.1:2379,127.0.0.1:22379?ttl=3").unwrap(),
            LedgerSpec::Etcd {
                endpoints: vec!["127.0.0.1:2379".into(), "127.0.0.1:22379".into()],
                ttl_s: 3
            }
        );
        assert_eq!(
            LedgerSpec::parse("sqlite:/x/l.db").unwrap(),
            LedgerSpec::Sqlite("/x/l.db".into())
        );
        assert_eq!(
            LedgerSpec::parse("l.db").unwrap(),
            LedgerSpec::Sqlite("l.db".into())
        );
        for bad in [
            "",
            "etcd://",
            "etcd://host",
            "etcd://h:1?ttl=0",
            "etcd://h:1?x=1",
            "http://h:1",
        ] {
            assert!(LedgerSpec::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn record_ids_differ_by_range() {
        let pk = [7u8; 60];
        assert_ne!(RecordId::new(&pk, 0, 10), RecordId::new(&pk, 0, 11));
        assert_ne!(RecordId::new(&pk, 0, 10), RecordId::new(&[8u8; 60], 0, 10));
        assert_eq!(RecordId::new(&pk, 0, 10), RecordId::new(&pk, 0, 10));
    }

    #[test]
    fn the_in_memory_ledger_compares_and_swaps() {
        let mut l = hazmat::in_memory();
        let r = RecordId::new(b"k", 0, 8);
        assert_eq!(l.high_water(&r).unwrap(), None);
        assert_eq!(l.advance(&r, None, 0, "").unwrap(), Advance::Done);
        assert_eq!(l.advance(&r, None, 3, "").unwrap(), Advance::Moved(Some(0)));
        assert_eq!(l.advance(&r, Some(0), 3, "").unwrap(), Advance::Done);
        assert!(l.advance(&r, Some(3), 2, "").is_err());
        assert_eq!(l.forget(&r, 0).unwrap(), Advance::Moved(Some(3)));
    }
}
