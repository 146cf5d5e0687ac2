//! The fleet ledger: an etcd v3 cluster (etcd-client on a one-worker tokio runtime owned by
//! the ledger, so callers stay synchronous).
//!
//! - `/pqkit/hbs/v1/ledger-id`: the cluster's ledger id, 32 hex digits, created once by a
//!   transaction that succeeds only while the key does not exist.
//! - `/pqkit/hbs/v1/records/<record>`: a key range's mark, in decimal, zero-padded to 20
//!   digits (so that etcd's byte-wise comparison of values is the numeric one). A reservation
//!   is one transaction: if the record's mod revision is still the one read (or, for a new
//!   record, its create revision is 0), put the new mark and `signers/<record>/<lease>` (who
//!   holds the range, attached to this signer's lease); otherwise read the mark that won. A
//!   quorum has committed it when the call returns.
//! - Each ledger holds one lease (its TTL from `?ttl=`, default 10 s), kept alive every third of
//!   its TTL in the background. A keep-alive answered at time t with TTL s proves the lease
//!   alive until t + s; [`Backend::live_check`] compares both the monotonic and the wall clock
//!   with that, so a process frozen or resumed from a snapshot past it
//!   stops signing. A lease
//!   the cluster reports expired stays lapsed: the key must be opened again.
//! - Calls are retried (a member stopped, a leader election) for up to 10 s, each attempt
//!   bounded to 3 s; requests need a leader (`require_leader`), so a member cut off from the
//!   quorum answers nothing stale. A retried reservation cannot reserve twice: its comparison
//!   fails once the first attempt committed, and the range is skipped.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use etcd_client::{
    Client, Compare, CompareOp, ConnectOptions, GetOptions, PutOptions, Txn, TxnOp, TxnOpResponse,
};

use super::{Advance, Backend, LedgerError, LedgerId, LiveCheck, Record, RecordId};

const PREFIX: &str = "/pqkit/hbs/v1/";
/// Each attempt of a call.
const ATTEMPT: Duration = Duration::from_secs(3);
/// All attempts of a call.
const PATIENCE: Duration = Duration::from_secs(10);

/// Until when the lease is known to be alive, by both clocks.
#[derive(Clone, Copy)]
struct Alive {
    monotonic: Instant,
    wall: SystemTime,
    /// The cluster reported the lease gone: it never comes back.
    expired: bool,
}

pub(crate) struct Etcd {
    runtime: tokio::runtime::Runtime,
    client: Client,
    name: String,
    id: LedgerId,
    lease: i64,
    ttl_s: u64,
    alive: Arc<Mutex<Alive>>,
    keeper: tokio::task::JoinHandle<()>,
    /// The mark and mod revision of each record as last read or written here.
    revisions: HashMap<RecordId, (u64, i64)>,
}

/// An etcd client error in words: a gRPC status's code and message, or the innermost cause
/// of a transport error ("Connection refused (os error 111)"), never a Debug dump.
fn describe(e: &etcd_client::Error) -> String {
    match e {
        etcd_client::Error::GRpcStatus(status) => {
            format!("{:?}: {}", status.code(), status.message())
        }
        etcd_client::Error::TransportError(t) => {
            let mut cause: &dyn std::error::Error = t;
            while let Some(inner) = cause.source() {
                cause = inner;
            }
            format!("transport: {cause}")
        }
        other => other.to_string(),
    }
}

fn record_key(record: &RecordId) -> String {
    format!("{PREFIX}records/{}", record.to_hex())
}

/// A mark as stored: 20 decimal digits, so that byte order is numeric order.
fn mark_text(mark: u64) -> String {
    format!("{mark:020}")
}

impl Etcd {
    pub(crate) fn connect(endpoints: &[String], ttl_s: u64) -> Result<Self, LedgerError> {
        let name = format!("etcd://{}", endpoints.join(","));
        let unreachable = |why: String| LedgerError::Unreachable {
            ledger: name.clone(),
            why,
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("pqkit-hbs-etcd")
            .enable_all()
            .build()
            .map_err(|e| unreachable(e.to_string()))?;
        let urls: Vec<String> = endpoints.iter().map(|e| format!("http://{e}")).collect();
        let options = ConnectOptions::new()
            .with_connect_timeout(ATTEMPT)
            .with_timeout(ATTEMPT)
            .with_require_leader(true);
        let client = runtime
            .block_on(async {
                tokio::time::timeout(PATIENCE, Client::connect(urls, Some(options))).await
            })
            .map_err(|_| unreachable("no member answered".to_owned()))?
            .map_err(|e| unreachable(describe(&e)))?;
        let mut me = Self {
            keeper: runtime.spawn(async {}),
            runtime,
            client,
            name,
            id: LedgerId([0; 16]),
            lease: 0,
            ttl_s,
            alive: Arc::new(Mutex::new(Alive {
                monotonic: Instant::now(),
                wall: SystemTime::now(),
                expired: false,
            })),
            revisions: HashMap::new(),
        };
        me.id = me.ledger_id()?;
        let (sent, wall) = (Instant::now(), SystemTime::now());
        let ttl = i64::try_from(ttl_s).unwrap_or(i64::MAX);
        let grant = me.call(|mut c| async move { c.lease_grant(ttl, None).await })?;
        me.lease = grant.id();
        let lasts = Duration::from_secs(u64::try_from(grant.ttl()).unwrap_or(0));
        *me.alive.lock().unwrap_or_else(|p| p.into_inner()) = Alive {
            monotonic: sent + lasts,
            wall: wall + lasts,
            expired: false,
        };
        me.keeper = me.runtime.spawn(keep_alive(
            me.client.clone(),
            me.lease,
            Duration::from_secs(ttl_s),
            me.alive.clone(),
        ));
        Ok(me)
    }

    /// Runs `f` against the cluster, retrying failures for [`PATIENCE`].
    fn call<T, F, Fut>(&self, f: F) -> Result<T, LedgerError>
    where
        F: Fn(Client) -> Fut,
        Fut: Future<Output = Result<T, etcd_client::Error>>,
    {
        let start = Instant::now();
        loop {
            let attempt = self
                .runtime
                .block_on(async { tokio::time::timeout(ATTEMPT, f(self.client.clone())).await });
            let why = match attempt {
                Ok(Ok(v)) => return Ok(v),
                Ok(Err(e)) => describe(&e),
                Err(_) => format!("no answer within {} s", ATTEMPT.as_secs()),
            };
            if start.elapsed() >= PATIENCE {
                return Err(LedgerError::Unreachable {
                    ledger: self.name.clone(),
                    why,
                });
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The cluster's ledger id, made by the first ledger that finds none.
    fn ledger_id(&self) -> Result<LedgerId, LedgerError> {
        let key = format!("{PREFIX}ledger-id");
        let mut fresh = [0u8; 16];
        rand_core::RngCore::fill_bytes(&mut rand_core::OsRng, &mut fresh);
        let fresh = LedgerId(fresh).to_hex();
        let txn = Txn::new()
            .when([Compare::create_revision(key.clone(), CompareOp::Equal, 0)])
            .and_then([TxnOp::put(key.clone(), fresh, None)])
            .or_else([TxnOp::get(key.clone(), None)]);
        self.call(|mut c| {
            let txn = txn.clone();
            async move { c.txn(txn).await }
        })?;
        let got = self.call(|mut c| {
            let key = key.clone();
            async move { c.get(key, None).await }
        })?;
        let text = got
            .kvs()
            .first()
            .and_then(|kv| kv.value_str().ok())
            .unwrap_or("");
        parse_id(text).ok_or_else(|| LedgerError::Corrupt {
            ledger: self.name.clone(),
            why: format!("its ledger id {text:?} is not 32 hex digits"),
        })
    }

    fn mark(&self, text: &[u8]) -> Result<u64, LedgerError> {
        std::str::from_utf8(text)
            .ok()
            .and_then(|t| t.parse().ok())
            .ok_or_else(|| LedgerError::Corrupt {
                ledger: self.name.clone(),
                why: format!(
                    "a mark that is not a number: {:?}",
                    String::from_utf8_lossy(text)
                ),
            })
    }

    /// A transaction on `record`: `change` when its comparison holds; else the mark that won.
    fn transact(
        &mut self,
        record: &RecordId,
        expect: Option<u64>,
        change: Vec<TxnOp>,
        after: Option<u64>,
    ) -> Result<Advance, LedgerError> {
        let key = record_key(record);
        let compare = match (expect, self.revisions.get(record)) {
            (None, _) => Compare::create_revision(key.clone(), CompareOp::Equal, 0),
            (Some(v), Some(&(seen, rev))) if seen == v => {
                Compare::mod_revision(key.clone(), CompareOp::Equal, rev)
            }
            (Some(v), _) => Compare::value(key.clone(), CompareOp::Equal, mark_text(v)),
        };
        let txn = Txn::new()
            .when([compare])
            .and_then(change)
            .or_else([TxnOp::get(key, None)]);
        let response = self.call(|mut c| {
            let txn = txn.clone();
            async move { c.txn(txn).await }
        })?;
        if response.succeeded() {
            let revision = response.header().map_or(0, |h| h.revision());
            match after {
                Some(v) => self.revisions.insert(*record, (v, revision)),
                None => self.revisions.remove(record),
            };
            return Ok(Advance::Done);
        }
        self.revisions.remove(record);
        let now = response
            .op_responses()
            .into_iter()
            .find_map(|r| match r {
                TxnOpResponse::Get(g) => Some(g),
                _ => None,
            })
            .and_then(|g| g.kvs().first().map(|kv| kv.value().to_vec()));
        Ok(Advance::Moved(match now {
            Some(text) => Some(self.mark(&text)?),
            None => None,
        }))
    }
}

fn parse_id(text: &str) -> Option<LedgerId> {
    if text.len() != 32 {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(LedgerId(out))
}

/// Keeps `lease` alive every third of its TTL, recording in `alive` until when each answer
/// proves it alive; reconnects the stream after errors; stops for good when the cluster says
/// the lease is gone.
async fn keep_alive(client: Client, lease: i64, ttl: Duration, alive: Arc<Mutex<Alive>>) {
    let every = (ttl / 3).max(Duration::from_millis(200));
    loop {
        let mut c = client.clone();
        let Ok(Ok((mut keeper, mut stream))) =
            tokio::time::timeout(ATTEMPT, c.lease_keep_alive(lease)).await
        else {
            tokio::time::sleep(Duration::from_millis(300)).await;
            continue;
        };
        loop {
            let (sent, wall) = (Instant::now(), SystemTime::now());
            if keeper.keep_alive().await.is_err() {
                break;
            }
            match tokio::time::timeout(every, stream.message()).await {
                Ok(Ok(Some(answer))) if answer.ttl() > 0 => {
                    let lasts = Duration::from_secs(u64::try_from(answer.ttl()).unwrap_or(0));
                    let mut a = alive.lock().unwrap_or_else(|p| p.into_inner());
                    *a = Alive {
                        monotonic: sent + lasts,
                        wall: wall + lasts,
                        expired: false,
                    };
                }
                Ok(Ok(Some(_))) => {
                    alive.lock().unwrap_or_else(|p| p.into_inner()).expired = true;
                    return;
                }
                _ => break,
            }
            tokio::time::sleep(every).await;
        }
    }
}

impl Backend for Etcd {
    fn id(&self) -> LedgerId {
        self.id
    }

    fn high_water(&mut self, record: &RecordId) -> Result<Option<u64>, LedgerError> {
        let key = record_key(record);
        let got = self.call(|mut c| {
            let key = key.clone();
            async move { c.get(key, None).await }
        })?;
        match got.kvs().first() {
            Some(kv) => {
                let mark = self.mark(kv.value())?;
                self.revisions.insert(*record, (mark, kv.mod_revision()));
                Ok(Some(mark))
            }
            None => {
                self.revisions.remove(record);
                Ok(None)
            }
        }
    }

    fn advance(
        &mut self,
        record: &RecordId,
        from: Option<u64>,
        to: u64,
        note: &str,
    ) -> Result<Advance, LedgerError> {
        let holder = format!(
            "{PREFIX}signers/{}/{:x}",
            record.to_hex(),
            self.lease.cast_unsigned()
        );
        let change = vec![
            TxnOp::put(record_key(record), mark_text(to), None),
            TxnOp::put(
                holder,
                format!("{note}: {}..{to}", from.unwrap_or(0)),
                Some(PutOptions::new().with_lease(self.lease)),
            ),
        ];
        self.transact(record, from, change, Some(to))
    }

    fn records(&mut self) -> Result<Vec<Record>, LedgerError> {
        let prefix = format!("{PREFIX}records/");
        let got = self.call(|mut c| {
            let prefix = prefix.clone();
            async move { c.get(prefix, Some(GetOptions::new().with_prefix())).await }
        })?;
        let mut out = Vec::new();
        for kv in got.kvs() {
            let name = String::from_utf8_lossy(kv.key());
            out.push(Record {
                record: name.trim_start_matches(prefix.as_str()).to_owned(),
                high_water: self.mark(kv.value())?,
                note: String::new(),
            });
        }
        Ok(out)
    }

    fn forget(&mut self, record: &RecordId, expect: u64) -> Result<Advance, LedgerError> {
        let change = vec![TxnOp::delete(record_key(record), None)];
        self.transact(record, Some(expect), change, None)
    }

    fn live_check(&self) -> Option<LiveCheck> {
        let (alive, ledger, ttl_s) = (self.alive.clone(), self.name.clone(), self.ttl_s);
        Some(Arc::new(move || {
            let a = *alive.lock().unwrap_or_else(|p| p.into_inner());
            if !a.expired && Instant::now() < a.monotonic && SystemTime::now() < a.wall {
                return Ok(());
            }
            Err(LedgerError::LeaseLapsed {
                ledger: ledger.clone(),
                ttl_s,
            })
        }))
    }
}

impl Drop for Etcd {
    /// Stops the keep-alive and revokes the lease (its `signers/` entries go with it).
    fn drop(&mut self) {
        self.keeper.abort();
        let lease = self.lease;
        let mut c = self.client.clone();
        let _ = self.runtime.block_on(async {
            tokio::time::timeout(Duration::from_secs(1), c.lease_revoke(lease)).await
        });
    }
}
