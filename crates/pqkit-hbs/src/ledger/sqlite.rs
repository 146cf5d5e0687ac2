//! The embedded ledger: one SQLite database (rusqlite, SQLite compiled in), WAL journal,
//! `synchronous=FULL` so that a committed reservation survives a power cut.
//!
//! Schema (`PRAGMA user_version` 1): `ledger(name TEXT PRIMARY KEY, value BLOB)` holds `id`
//! (16 random bytes); `records(record TEXT PRIMARY KEY, high_water TEXT, note TEXT,
//! updated_unix_s INTEGER)` holds one row per key range, the mark as a decimal string (u64
//! values beyond SQLite's signed integers stay exact). Every change is one `BEGIN IMMEDIATE`
//! transaction: the mark is read, compared and written under SQLite's write lock.

use std::fs::{DirBuilder, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::{Advance, Backend, LedgerError, LedgerId, Record, RecordId};

/// How long a write waits for another process's transaction.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);
const SCHEMA_VERSION: i64 = 1;

pub(crate) struct Sqlite {
    conn: Connection,
    path: PathBuf,
    id: LedgerId,
}

impl Sqlite {
    pub(crate) fn open(path: &Path) -> Result<Self, LedgerError> {
        let name = path.display().to_string();
        let unreachable = |why: String| LedgerError::Unreachable {
            ledger: name.clone(),
            why,
        };
        let corrupt = |why: String| LedgerError::Corrupt {
            ledger: name.clone(),
            why,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
            && !dir.exists()
        {
            DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(|e| unreachable(format!("cannot create its directory: {e}")))?;
        }
        match std::fs::metadata(path) {
            Ok(m) if !m.is_file() => {
                return Err(unreachable(
                    "not a regular file (a FIFO, device or directory is no ledger)".to_owned(),
                ));
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // Created 0600 before SQLite opens it: its journal files take the same mode.
                match OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .open(path)
                {
                    Ok(_) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(unreachable(format!("cannot create it: {e}"))),
                }
            }
            Err(e) => return Err(unreachable(e.to_string())),
        }
        let conn = Connection::open(path).map_err(|e| unreachable(e.to_string()))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| unreachable(e.to_string()))?;
        // Making a new ledger takes locks that SQLite may refuse at once (not through the busy
        // handler) while another process makes it too: those steps are retried.
        let start = std::time::Instant::now();
        let id = loop {
            match Self::prepare(&conn) {
                Ok(id) => break id,
                Err(e) if is_busy(&e) && start.elapsed() < BUSY_TIMEOUT => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(e) => return Err(Self::err_of(path, &e)),
            }
        };
        let id = match id {
            Ok(id) => id,
            Err(why) => return Err(corrupt(why)),
        };
        Ok(Self {
            conn,
            path: path.to_path_buf(),
            id,
        })
    }

    /// Sets WAL and `synchronous=FULL`, makes the schema and the id when the ledger is new,
    /// and reads the id (`Err` inside: the file is no ledger of this pqkit's).
    fn prepare(conn: &Connection) -> rusqlite::Result<Result<LedgerId, String>> {
        let mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Ok(Err(format!("journal mode is {mode}, not WAL")));
        }
        conn.execute_batch("PRAGMA synchronous=FULL;")?;
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if version > SCHEMA_VERSION {
            return Ok(Err(format!(
                "schema version {version} is newer than this pqkit's ({SCHEMA_VERSION})"
            )));
        }
        if version < SCHEMA_VERSION {
            // A new ledger (or one being made by another process: the statements are
            // idempotent, and the second waits for the first's write lock).
            let mut fresh = [0u8; 16];
            rand_core::RngCore::fill_bytes(&mut rand_core::OsRng, &mut fresh);
            let made = conn
                .execute_batch(
                    "BEGIN IMMEDIATE;
                     CREATE TABLE IF NOT EXISTS ledger(name TEXT PRIMARY KEY, value BLOB NOT NULL);
                     CREATE TABLE IF NOT EXISTS records(
                         record TEXT PRIMARY KEY,
                         high_water TEXT NOT NULL,
                         note TEXT NOT NULL,
                         updated_unix_s INTEGER NOT NULL);
                     PRAGMA user_version=1;",
                )
                .and_then(|()| {
                    conn.execute(
                        "INSERT OR IGNORE INTO ledger(name, value) VALUES('id', ?1)",
                        params![&fresh[..]],
                    )
                })
                .and_then(|_| conn.execute_batch("COMMIT;"));
            if let Err(e) = made {
                let _ = conn.execute_batch("ROLLBACK;");
                return Err(e);
            }
        }
        let id: Vec<u8> =
            conn.query_row("SELECT value FROM ledger WHERE name='id'", [], |r| r.get(0))?;
        Ok(id
            .try_into()
            .map(LedgerId)
            .map_err(|_| "its id is not 16 bytes".to_owned()))
    }

    fn read(conn: &Connection, record: &RecordId) -> rusqlite::Result<Option<String>> {
        conn.prepare_cached("SELECT high_water FROM records WHERE record = ?1")?
            .query_row(params![record.to_hex()], |r| r.get(0))
            .optional()
    }

    fn mark(path: &Path, text: Option<String>) -> Result<Option<u64>, LedgerError> {
        text.map(|t| {
            t.parse().map_err(|_| LedgerError::Corrupt {
                ledger: path.display().to_string(),
                why: format!("a mark that is not a number: {t:?}"),
            })
        })
        .transpose()
    }

    /// Runs `f` in one `BEGIN IMMEDIATE` transaction, committed when it returns
    /// [`Advance::Done`].
    fn exclusive(
        &mut self,
        record: &RecordId,
        expect: Option<u64>,
        change: impl FnOnce(&Connection) -> rusqlite::Result<()>,
    ) -> Result<Advance, LedgerError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| Self::err_of(&self.path, &e))?;
        let now = Self::read(&tx, record).map_err(|e| Self::err_of(&self.path, &e))?;
        let now = Self::mark(&self.path, now)?;
        if now != expect {
            return Ok(Advance::Moved(now));
        }
        change(&tx).map_err(|e| Self::err_of(&self.path, &e))?;
        tx.commit().map_err(|e| Self::err_of(&self.path, &e))?;
        Ok(Advance::Done)
    }

    fn err_of(path: &Path, e: &rusqlite::Error) -> LedgerError {
        let ledger = path.display().to_string();
        match e {
            rusqlite::Error::SqliteFailure(f, _)
                if f.code != rusqlite::ErrorCode::DatabaseCorrupt
                    && f.code != rusqlite::ErrorCode::NotADatabase =>
            {
                LedgerError::Unreachable {
                    ledger,
                    why: e.to_string(),
                }
            }
            _ => LedgerError::Corrupt {
                ledger,
                why: e.to_string(),
            },
        }
    }
}

/// Whether SQLite refused for a lock another connection holds.
fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _)
        if matches!(f.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked))
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

impl Backend for Sqlite {
    fn id(&self) -> LedgerId {
        self.id
    }

    fn high_water(&mut self, record: &RecordId) -> Result<Option<u64>, LedgerError> {
        let text = Self::read(&self.conn, record).map_err(|e| Self::err_of(&self.path, &e))?;
        Self::mark(&self.path, text)
    }

    fn advance(
        &mut self,
        record: &RecordId,
        from: Option<u64>,
        to: u64,
        note: &str,
    ) -> Result<Advance, LedgerError> {
        self.exclusive(record, from, |tx| {
            tx.prepare_cached(
                "INSERT INTO records(record, high_water, note, updated_unix_s)
                 VALUES(?1, ?2, ?3, ?4)
                 ON CONFLICT(record) DO UPDATE SET high_water = excluded.high_water,
                     note = excluded.note, updated_unix_s = excluded.updated_unix_s",
            )?
            .execute(params![record.to_hex(), to.to_string(), note, unix_now()])
            .map(|_| ())
        })
    }

    fn records(&mut self) -> Result<Vec<Record>, LedgerError> {
        let path = self.path.clone();
        let mut statement = self
            .conn
            .prepare("SELECT record, high_water, note FROM records ORDER BY record")
            .map_err(|e| Self::err_of(&path, &e))?;
        let rows = statement
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                ))
            })
            .map_err(|e| Self::err_of(&path, &e))?;
        let mut out = Vec::new();
        for row in rows {
            let (record, mark, note) = row.map_err(|e| Self::err_of(&path, &e))?;
            let high_water = Self::mark(&path, Some(mark))?.unwrap_or(0);
            out.push(Record {
                record,
                high_water,
                note,
            });
        }
        Ok(out)
    }

    fn forget(&mut self, record: &RecordId, expect: u64) -> Result<Advance, LedgerError> {
        self.exclusive(record, Some(expect), |tx| {
            tx.execute(
                "DELETE FROM records WHERE record = ?1",
                params![record.to_hex()],
            )
            .map(|_| ())
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn records_persist_move_forward_and_keep_their_id() {
        let dir = std::env::temp_dir().join(format!("pqkit-ledger-sqlite-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("sub").join("ledger.sqlite3");
        let r = RecordId::new(b"key", 0, 1 << 40);
        let id = {
            let mut l = Sqlite::open(&path).unwrap();
            assert_eq!(l.high_water(&r).unwrap(), None);
            assert_eq!(l.advance(&r, None, 0, "keygen").unwrap(), Advance::Done);
            assert_eq!(
                l.advance(&r, Some(0), u64::MAX, "x").unwrap(),
                Advance::Done
            );
            assert_eq!(
                l.advance(&r, Some(0), 5, "stale").unwrap(),
                Advance::Moved(Some(u64::MAX))
            );
            l.id()
        };
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let dmode = std::fs::metadata(path.parent().unwrap())
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(dmode, 0o700);
        let mut again = Sqlite::open(&path).unwrap();
        assert_eq!(again.id(), id);
        assert_eq!(again.high_water(&r).unwrap(), Some(u64::MAX));
        assert_eq!(again.forget(&r, 3).unwrap(), Advance::Moved(Some(u64::MAX)));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn many_openers_of_a_new_ledger_agree_on_its_id() {
        let dir = std::env::temp_dir().join(format!("pqkit-ledger-race-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("ledger.sqlite3");
        let ids: Vec<LedgerId> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| s.spawn(|| Sqlite::open(&path).map(|l| l.id())))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap().unwrap())
                .collect()
        });
        assert!(ids.windows(2).all(|w| w[0] == w[1]), "{ids:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_fifo_or_a_garbage_file_is_no_ledger() {
        let dir = std::env::temp_dir().join(format!("pqkit-ledger-bad-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        assert!(matches!(
            Sqlite::open(&fifo),
            Err(LedgerError::Unreachable { .. })
        ));
        let junk = dir.join("junk");
        std::fs::write(&junk, vec![0x55u8; 4096]).unwrap();
        assert!(Sqlite::open(&junk).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
