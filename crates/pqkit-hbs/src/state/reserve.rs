//! Reservations: what the state file and the ledger need to hand out a range of counter
//! values, in two parts — the file's and the ledger's — so that a [`Worker`] can write the
//! state file for one reservation while the ledger records the one before (see
//! `StatefulKey::set_ahead`). Each reservation's order is kept: its state file is durable
//! before its ledger record is written, and its values are handed out after both.

use std::ops::Range;
use std::path::PathBuf;
use std::sync::mpsc;

use zeroize::Zeroizing;

use super::StateError;
use super::file::{Binding, SlotWriter};
use crate::ledger::{Advance, Ledger, RecordId};

/// How many times a reservation on a shared ledger is retried when other signers move the
/// mark between its read and its write.
const SHARED_RETRIES: usize = 1000;

/// The state file's part of a reservation (a ledger of one signer).
pub(super) struct FilePart {
    pub(super) path: PathBuf,
    /// The state file's bytes before its binding (sealed when the file is).
    pub(super) key: Zeroizing<Vec<u8>>,
    pub(super) binding: Binding,
    /// The `next` on disk: every value below it is reserved.
    pub(super) disk_next: u64,
    /// The file's counter slots (`None` for a shared ledger: copies write no counter).
    pub(super) writer: Option<SlotWriter>,
}

impl FilePart {
    /// Writes the state file's counter moved `count` values on (at least one; fewer at the
    /// end of the range): the values reserved, not yet recorded in the ledger.
    fn advance(&mut self, count: u64) -> Result<Range<u64>, StateError> {
        if self.disk_next >= self.binding.end {
            return Err(crate::Error::Exhausted.into());
        }
        let start = self.disk_next;
        let end = start.saturating_add(count.max(1)).min(self.binding.end);
        self.writer
            .as_mut()
            .ok_or_else(|| {
                StateError::Io(
                    self.path.clone(),
                    std::io::Error::other("the state file is not open for writing"),
                )
            })?
            .write(end)?;
        self.disk_next = end;
        Ok(start..end)
    }
}

/// The ledger's part of a reservation.
pub(super) struct LedgerPart {
    pub(super) path: PathBuf,
    pub(super) first: u64,
    pub(super) end: u64,
    pub(super) record: RecordId,
    pub(super) ledger: Ledger,
    /// The mark as this signer last set or saw it: the next reservation compares against it
    /// without reading it first (one round trip), and reads it only when that fails.
    pub(super) seen_mark: Option<u64>,
    /// Who reserves, for the ledger's notes (made once).
    note: String,
}

impl LedgerPart {
    /// The ledger's mark for the key, read.
    ///
    /// # Errors
    /// [`StateError::NotInLedger`] when it has no record; ledger errors.
    pub(super) fn mark(&mut self) -> Result<u64, StateError> {
        self.ledger
            .high_water(&self.record)?
            .ok_or_else(|| self.not_in_ledger())
    }

    /// The mark last seen, or read.
    fn known_mark(&mut self) -> Result<u64, StateError> {
        match self.seen_mark.take() {
            Some(m) => Ok(m),
            None => self.mark(),
        }
    }

    fn not_in_ledger(&self) -> StateError {
        StateError::NotInLedger {
            path: self.path.clone(),
            ledger: self.ledger.name().to_owned(),
        }
    }

    pub(super) fn conflict(&self) -> StateError {
        StateError::Conflict {
            path: self.path.clone(),
            ledger: self.ledger.name().to_owned(),
        }
    }

    /// Records `range`, which the state file now holds, by moving the mark from where it was
    /// (at most `range.start`) to `range.end`.
    fn record_range(&mut self, range: Range<u64>) -> Result<Range<u64>, StateError> {
        let high_water = self.known_mark()?;
        if high_water > range.start {
            return Err(self.behind(range.start, high_water));
        }
        match self
            .ledger
            .advance(&self.record, Some(high_water), range.end, &self.note)?
        {
            Advance::Done => {
                self.seen_mark = Some(range.end);
                Ok(range)
            }
            Advance::Moved(Some(now)) if now > range.start => Err(self.behind(range.start, now)),
            Advance::Moved(_) => Err(self.conflict()),
        }
    }

    fn behind(&self, next: u64, high_water: u64) -> StateError {
        StateError::BehindLedger {
            path: self.path.clone(),
            next,
            high_water,
            ledger: self.ledger.name().to_owned(),
        }
    }

    /// The reservations waiting on a shared ledger (`counts`, in order), taken in one
    /// transaction — one round trip to the cluster — and handed out as consecutive ranges of
    /// their own sizes. What a signer holds stays bounded by how many it asks for ahead.
    fn take_shared_many(&mut self, counts: &[u64]) -> Vec<Result<Range<u64>, StateError>> {
        if counts.len() < 2 {
            return counts.iter().map(|&c| self.take_shared(c)).collect();
        }
        let total = counts.iter().fold(0u64, |t, &c| t.saturating_add(c.max(1)));
        match self.take_shared(total) {
            Ok(whole) => {
                let mut start = whole.start;
                counts
                    .iter()
                    .map(|&c| {
                        if start >= whole.end {
                            return Err(crate::Error::Exhausted.into());
                        }
                        let end = start.saturating_add(c.max(1)).min(whole.end);
                        let range = start..end;
                        start = end;
                        Ok(range)
                    })
                    .collect()
            }
            Err(e) => std::iter::once(Err(e))
                .chain(counts[1..].iter().map(|&c| self.take_shared(c)))
                .collect(),
        }
    }

    /// The next `count` values after the ledger's mark (a shared ledger), taken by
    /// compare-and-swap against the mark last seen, retried with the mark that won while other
    /// signers move it first.
    fn take_shared(&mut self, count: u64) -> Result<Range<u64>, StateError> {
        let mut high_water = self.known_mark()?;
        for _ in 0..SHARED_RETRIES {
            self.ledger.check_live()?;
            let start = high_water.max(self.first);
            if start >= self.end {
                self.seen_mark = Some(high_water);
                return Err(crate::Error::Exhausted.into());
            }
            let end = start.saturating_add(count.max(1)).min(self.end);
            match self
                .ledger
                .advance(&self.record, Some(high_water), end, &self.note)?
            {
                Advance::Done => {
                    self.seen_mark = Some(end);
                    return Ok(start..end);
                }
                Advance::Moved(Some(now)) => high_water = now,
                Advance::Moved(None) => return Err(self.not_in_ledger()),
            }
        }
        Err(self.conflict())
    }
}

/// Both parts of a key's reservations.
pub(super) struct Reserver {
    pub(super) file: FilePart,
    pub(super) book: LedgerPart,
}

impl Reserver {
    pub(super) fn new(
        path: PathBuf,
        key: Zeroizing<Vec<u8>>,
        binding: Binding,
        ledger: Ledger,
        disk_next: u64,
        seen_mark: Option<u64>,
        writer: Option<SlotWriter>,
    ) -> Self {
        let note = format!(
            "{} on {} (pid {})",
            path.display(),
            hostname(),
            std::process::id()
        );
        Self {
            book: LedgerPart {
                path: path.clone(),
                first: binding.first,
                end: binding.end,
                record: binding.record(),
                ledger,
                seen_mark,
                note,
            },
            file: FilePart {
                path,
                key,
                binding,
                disk_next,
                writer,
            },
        }
    }

    /// Reserves the next `count` values (at least one; fewer at the end of the range): after
    /// the file's `next` with a ledger of one signer — the state file first, then the ledger —
    /// after the ledger's mark with a shared one.
    ///
    /// # Errors
    /// [`crate::Error::Exhausted`]; [`StateError::BehindLedger`], [`StateError::NotInLedger`],
    /// [`StateError::Conflict`]; ledger and I/O errors (nothing reserved).
    pub(super) fn take(&mut self, count: u64) -> Result<Range<u64>, StateError> {
        if self.file.binding.shared {
            return self.book.take_shared(count);
        }
        if self.file.disk_next < self.file.binding.end {
            // Refused before the state file is written when the ledger is known to be ahead.
            let high_water = self.book.known_mark()?;
            self.book.seen_mark = Some(high_water);
            if high_water > self.file.disk_next {
                return Err(self.book.behind(self.file.disk_next, high_water));
            }
        }
        let range = self.file.advance(count)?;
        self.book.record_range(range)
    }
}

/// Threads that own a key's [`Reserver`] and take ranges ahead of need, one request after
/// another, in order: with a ledger of one signer, one thread writes the state file for a
/// reservation while the other records the one before in the ledger (each range is recorded
/// after its state file is durable, and handed out after it is recorded). Threads that live
/// as long as the worker: a new thread per reservation can wait a millisecond for a processor
/// on a busy machine, longer than signing a batch takes.
pub(super) struct Worker {
    requests: Option<mpsc::Sender<u64>>,
    results: mpsc::Receiver<Result<Range<u64>, StateError>>,
    files: Option<std::thread::JoinHandle<Option<FilePart>>>,
    books: Option<std::thread::JoinHandle<Option<LedgerPart>>>,
    /// A file part that no thread took (a shared ledger writes no state file).
    idle_file: Option<FilePart>,
    /// Requests sent whose results have not been received.
    pub(super) outstanding: usize,
}

/// A thread that receives its part first, so that nothing is lost when the spawn fails (the
/// caller still holds the part) or when its sender is dropped unsent (it ends with `None`).
type Spawned<P> = (mpsc::Sender<P>, std::thread::JoinHandle<Option<P>>);

fn spawn<P: Send + 'static>(
    name: &str,
    run: impl FnOnce(P) -> P + Send + 'static,
) -> Option<Spawned<P>> {
    let (give, take) = mpsc::channel::<P>();
    let handle = std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || Some(run(take.recv().ok()?)))
        .ok()?;
    Some((give, handle))
}

impl Worker {
    /// Starts the threads with `reserver`; gives the reserver back when they cannot be made.
    pub(super) fn start(reserver: Reserver) -> Result<Self, Box<Reserver>> {
        let shared = reserver.file.binding.shared;
        let (requests, incoming) = mpsc::channel::<u64>();
        let (outgoing, results) = mpsc::channel();
        let (to_book, book_jobs) = mpsc::channel::<Result<Range<u64>, StateError>>();
        let (book_requests, file_requests) = if shared {
            (Some(incoming), None)
        } else {
            (None, Some(incoming))
        };
        let Some((give_book, books)) = spawn("pqkit-hbs-ledger", move |mut book: LedgerPart| {
            if let Some(incoming) = book_requests {
                // The requests waiting are reserved together: one round trip for them all.
                while let Ok(first) = incoming.recv() {
                    let mut counts = vec![first];
                    counts.extend(incoming.try_iter());
                    for result in book.take_shared_many(&counts) {
                        if outgoing.send(result).is_err() {
                            return book;
                        }
                    }
                }
                return book;
            }
            // After a failure nothing more is recorded: the ranges after it stay unused.
            let mut failed = false;
            for job in book_jobs {
                let result = match job {
                    _ if failed => Err(book.conflict()),
                    Ok(range) => book.record_range(range),
                    Err(e) => Err(e),
                };
                failed |= matches!(&result, Err(e) if !matches!(e, StateError::Hbs(_)));
                if outgoing.send(result).is_err() {
                    break;
                }
            }
            book
        }) else {
            return Err(Box::new(reserver));
        };
        let files = match file_requests {
            None => None,
            Some(incoming) => {
                let spawned = spawn("pqkit-hbs-state", move |mut file: FilePart| {
                    for count in incoming {
                        if to_book.send(file.advance(count)).is_err() {
                            break;
                        }
                    }
                    file
                });
                match spawned {
                    Some(s) => Some(s),
                    // The ledger's thread ends unfed (its part was never sent).
                    None => return Err(Box::new(reserver)),
                }
            }
        };
        let Reserver { file, book } = reserver;
        // Both threads wait for their parts: these sends cannot fail.
        let _ = give_book.send(book);
        let (idle_file, files) = match files {
            Some((give_file, handle)) => {
                let _ = give_file.send(file);
                (None, Some(handle))
            }
            None => (Some(file), None),
        };
        Ok(Self {
            requests: Some(requests),
            results,
            files,
            books: Some(books),
            idle_file,
            outstanding: 0,
        })
    }

    /// Asks for the next `count` values.
    pub(super) fn request(&mut self, count: u64) {
        if let Some(r) = &self.requests
            && r.send(count).is_ok()
        {
            self.outstanding += 1;
        }
    }

    /// The oldest request's result, waiting for it; `None` when none is outstanding.
    pub(super) fn next(&mut self) -> Option<Result<Range<u64>, StateError>> {
        if self.outstanding == 0 {
            return None;
        }
        self.outstanding -= 1;
        Some(self.results.recv().unwrap_or_else(|_| {
            Err(StateError::Io(
                PathBuf::new(),
                std::io::Error::other("the reservation threads stopped"),
            ))
        }))
    }

    /// Lets the outstanding requests finish and stops the threads: the reserver back (`None`
    /// if a thread died) and the results not yet received, in order.
    pub(super) fn stop(mut self) -> (Option<Reserver>, Vec<Result<Range<u64>, StateError>>) {
        self.requests = None;
        let file = match self.files.take() {
            Some(h) => h.join().ok().flatten(),
            None => self.idle_file.take(),
        };
        let book = self.books.take().and_then(|h| h.join().ok().flatten());
        let left = self.results.try_iter().collect();
        self.outstanding = 0;
        let reserver = file.zip(book).map(|(file, book)| Reserver { file, book });
        (reserver, left)
    }
}

impl Drop for Worker {
    /// Waits for the threads: they write the state file, under its key's lock.
    fn drop(&mut self) {
        self.requests = None;
        if let Some(h) = self.files.take() {
            let _ = h.join();
        }
        if let Some(h) = self.books.take() {
            let _ = h.join();
        }
    }
}

/// This machine's name, for ledger notes.
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_owned())
        .unwrap_or_else(|_| "this host".to_owned())
}
