//! `bench crypto`: every catalogue algorithm and operation, wolfCrypt-benchmark style —
//! operations, total time, mean and median µs/op, ops/s and TSC cycles/op.
//!
//! Signatures: keygen, sign, verify over a [`MESSAGE_SIZE`]-byte message with an empty
//! context; signing is hedged (fresh randomness, FIPS 204 §3.4 / FIPS 205 §9.2) unless
//! `deterministic` is set. KEMs: keygen, encapsulate, decapsulate. Key-exchange groups: the
//! client's keygen (key share), the server's encapsulate (its share and the secret), the
//! client's decapsulate (complete).

use pqkit_core::catalogue;
use pqkit_core::hybrid::KeyExchangeGroup;
use pqkit_core::kem::{KemAlgorithm, KemFamily};
use pqkit_core::sig::{Family, SignatureAlgorithm, SigningRandomness};
use pqkit_hash::dispatch::{Isa, with_isa};

use crate::Progress;
use crate::stateful::{self, Scheme};
use crate::timing::{Budget, measure, measure_with};

pub use crate::row::{MESSAGE_SIZE, Row};

/// Sets [`Row::ratio_to_fastest_peer`] on every pqkit row that has peers (not on a
/// prepared-key row: no peer does the same work).
fn ratios(rows: &mut [Row]) {
    let fastest: Vec<Option<f64>> = rows
        .iter()
        .map(|r| {
            rows.iter()
                .filter(|p| {
                    !p.is_pqkit() && p.algorithm == r.algorithm && p.operation == r.operation
                })
                .map(|p| p.timing.mean_ns)
                .min_by(f64::total_cmp)
        })
        .collect();
    for (r, peer) in rows.iter_mut().zip(fastest) {
        if r.is_pqkit() && !r.implementation.ends_with(PREPARED_KEY) {
            r.ratio_to_fastest_peer = peer.filter(|p| *p > 0.0).map(|p| r.timing.mean_ns / p);
        }
    }
}

/// What to measure.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Algorithm or group names (any alias, case-insensitive); empty for all.
    pub algorithms: Vec<String>,
    /// Time budget per operation.
    pub budget: Budget,
    /// Deterministic instead of hedged signing.
    pub deterministic: bool,
    /// The `pqkit-hash` paths hash-based schemes (SLH-DSA, LMS/HSS, XMSS) run on, one set of
    /// rows each; empty for the dispatched path ([`pqkit_hash::dispatch::process`]).
    pub hash_paths: Vec<Isa>,
    /// Threads per SLH-DSA signature for an extra "sign (N threads)" row (the single-thread
    /// rows are always measured); 0 or 1 for none.
    pub threads: usize,
    /// Rounds each algorithm's rows (pqkit's and its peers') are measured in, the budget
    /// split between them and each row's calls merged (see [`in_rounds`]); 0 or 1 for one.
    pub rounds: usize,
}

/// Measures one algorithm's rows (`block`: pqkit's and its peers') in `options.rounds` rounds,
/// each with its share of the budget, and merges each row's timings across the rounds
/// ([`Timing::merge`]): every implementation's calls are spread over the whole time the
/// algorithm takes, so a slow stretch of a shared machine (which can last seconds and slow
/// one implementation's run while the next is untouched) falls on pqkit and its peers alike
/// instead of on whoever ran then.
fn in_rounds(
    options: &Options,
    mut block: impl FnMut(&Options) -> Result<Vec<Row>, String>,
) -> Result<Vec<Row>, String> {
    let rounds = options.rounds.max(1);
    let share = u32::try_from(rounds).unwrap_or(u32::MAX);
    let per_round = Options {
        budget: Budget {
            min_time: options.budget.min_time / share,
            min_iterations: options.budget.min_iterations.div_ceil(rounds),
        },
        ..options.clone()
    };
    let mut rows: Vec<Row> = Vec::new();
    for _ in 0..rounds {
        for r in block(&per_round)? {
            let same = |x: &&mut Row| {
                (x.algorithm, x.operation, x.signing, x.hash_path)
                    == (r.algorithm, r.operation, r.signing, r.hash_path)
                    && x.implementation == r.implementation
            };
            match rows.iter_mut().find(same) {
                Some(x) => x.timing.merge(&r.timing),
                None => rows.push(r),
            }
        }
    }
    Ok(rows)
}

/// Whether an algorithm's operations run on the `pqkit-hash` engine.
fn hash_based(alg: &SignatureAlgorithm) -> bool {
    alg.family == Family::SlhDsa
}

/// Whether a signature algorithm runs on the `pqkit-hash` engine's paths: SLH-DSA (all of it
/// hashing) and pqkit-lattice's ML-DSA (its Keccak lanes and its AVX2 or portable arithmetic
/// follow the hash path).
fn sig_on_paths(alg: &SignatureAlgorithm) -> bool {
    matches!(alg.family, Family::SlhDsa | Family::MlDsa)
}

/// Whether a KEM runs on the `pqkit-hash` engine's paths (pqkit-lattice's ML-KEM: its Keccak
/// lanes and its AVX-512, AVX2 or portable arithmetic follow the hash path).
fn kem_on_paths(kem: &KemAlgorithm) -> bool {
    kem.family == KemFamily::MlKem
}

/// Runs `rows` with `path` forced, marks the rows it returns with the path, and measures the
/// engine on it (the limits are set at the end of the run, from the best measurement:
/// [`set_limits`]).
fn on_path(isa: Isa, rows: impl FnOnce() -> Result<Vec<Row>, String>) -> Result<Vec<Row>, String> {
    let mut out = with_isa(isa, rows).map_err(|e| e.to_string())??;
    crate::engine::measure(isa);
    for r in &mut out {
        r.hash_path = Some(isa.name());
    }
    Ok(out)
}

/// `rows` once on each of `paths` ([`on_path`]) when the algorithm runs on the engine, else
/// once.
fn on_paths(
    engine: bool,
    paths: &[Isa],
    rows: impl Fn() -> Result<Vec<Row>, String>,
) -> Result<Vec<Row>, String> {
    if !engine {
        return rows();
    }
    let mut out = Vec::new();
    for &isa in paths {
        out.extend(on_path(isa, &rows)?);
    }
    Ok(out)
}

/// Each engine row's limit: its counted work × the engine's best cost on its path in this run.
fn set_limits(rows: &mut [Row]) {
    for r in rows {
        let isa = r.hash_path.and_then(Isa::from_name);
        if let (Some(isa), Some(work)) = (isa, r.timing.hashes) {
            r.limit_ns = Some(crate::engine::cost(isa).limit_ns(&work));
        }
    }
}

/// What `bench crypto` runs.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// Signature algorithms.
    pub signatures: Vec<&'static SignatureAlgorithm>,
    /// KEMs.
    pub kems: Vec<&'static KemAlgorithm>,
    /// Key-exchange groups.
    pub groups: Vec<&'static KeyExchangeGroup>,
    /// Stateful hash-based schemes (pqkit-hbs).
    pub stateful: Vec<Scheme>,
}

/// The catalogue entries and stateful schemes `names` select; all catalogue entries and
/// [`stateful::DEFAULT`] when empty.
///
/// # Errors
/// A name that is no catalogue algorithm, group, HSS preset or XMSS set.
pub fn select(names: &[String]) -> Result<Selection, String> {
    if names.is_empty() {
        return Ok(Selection {
            signatures: catalogue::signatures().to_vec(),
            kems: catalogue::kems().to_vec(),
            groups: catalogue::groups().to_vec(),
            stateful: stateful::DEFAULT
                .iter()
                .filter_map(|n| Scheme::parse(n))
                .collect(),
        });
    }
    let mut out = Selection::default();
    for name in names {
        let name = name.trim();
        if let Ok(a) = catalogue::signature(name) {
            out.signatures.push(a);
        } else if let Ok(k) = catalogue::kem(name) {
            out.kems.push(k);
        } else if let Ok(g) = catalogue::group(name) {
            out.groups.push(g);
        } else if let Some(s) = Scheme::parse(name) {
            out.stateful.push(s);
        } else {
            return Err(format!(
                "unknown algorithm {name:?} (see `pqkit list` and `pqkit hbs params` for every name)"
            ));
        }
    }
    Ok(out)
}

/// The peers' rows for one algorithm, as one progress step.
#[cfg(feature = "peers")]
fn peers(
    progress: &Progress,
    algorithm: &'static str,
    kind: &'static str,
    options: &Options,
    message: &[u8],
) -> Result<Vec<Row>, String> {
    progress.step(&format!("{algorithm} peers"));
    crate::peers::rows(
        algorithm,
        kind,
        options.budget,
        message,
        options.deterministic,
    )
}

/// pqkit's keygen, sign and verify rows of one signature algorithm.
fn signature_rows(
    alg: &'static SignatureAlgorithm,
    options: &Options,
    progress: &Progress,
) -> Result<Vec<Row>, String> {
    let mut rows = Vec::new();
    let e = |e: pqkit_core::Error| e.to_string();
    let implementation = format!("pqkit ({})", alg.backend_name());
    let row = |operation, signing, timing| Row {
        algorithm: alg.name,
        kind: "signature",
        operation,
        implementation: implementation.clone(),
        signing,
        timing,
        hash_path: None,
        limit_ns: None,
        ratio_to_fastest_peer: None,
    };
    progress.step(&format!("{} keygen", alg.name));
    rows.push(row(
        "keygen",
        None,
        measure(options.budget, || alg.generate().map(drop)).map_err(e)?,
    ));
    let key = alg.generate().map_err(e)?;
    let message = [0x5au8; MESSAGE_SIZE];
    let randomness = if options.deterministic {
        SigningRandomness::Deterministic
    } else {
        SigningRandomness::Hedged
    };
    progress.step(&format!("{} sign", alg.name));
    let sign = measure(options.budget, || {
        key.sign_with(&message, &[], randomness).map(drop)
    })
    .map_err(e)?;
    rows.push(row(
        "sign",
        Some(if options.deterministic {
            "deterministic"
        } else {
            "hedged"
        }),
        sign,
    ));
    if hash_based(alg) && options.threads > 1 {
        progress.step(&format!("{} sign ({} threads)", alg.name, options.threads));
        pqkit_core::slh_dsa::set_signing_threads(options.threads);
        let threaded = measure(options.budget, || {
            key.sign_with(&message, &[], randomness).map(drop)
        });
        pqkit_core::slh_dsa::set_signing_threads(1);
        let mut r = row("sign", rows[1].signing, threaded.map_err(e)?);
        r.implementation = format!(
            "pqkit ({}, {} threads)",
            alg.backend_name(),
            options.threads
        );
        rows.push(r);
    }
    let signature = key.sign_with(&message, &[], randomness).map_err(e)?;
    let vk = key.verifying_key();
    progress.step(&format!("{} verify", alg.name));
    rows.push(row(
        "verify",
        None,
        measure(options.budget, || vk.verify(&message, &[], &signature)).map_err(e)?,
    ));
    // A verifier that keeps its keys prepared (a TLS client's CAs; pqkit-pki's paths): the
    // key-only work (ML-DSA: ExpandA and tr) is outside the timing. No peer has this row.
    let prepared = vk.prepared();
    if prepared.is_prepared() {
        progress.step(&format!("{} verify (prepared key)", alg.name));
        let mut r = row(
            "verify",
            None,
            measure(options.budget, || {
                prepared.verify(&message, &[], &signature)
            })
            .map_err(e)?,
        );
        r.implementation = format!("pqkit ({}, {PREPARED_KEY}", alg.backend_name());
        rows.push(r);
    }
    Ok(rows)
}

/// pqkit's keygen, encapsulate and decapsulate rows of one KEM.
fn kem_rows(
    kem: &'static KemAlgorithm,
    options: &Options,
    progress: &Progress,
) -> Result<Vec<Row>, String> {
    let e = |e: pqkit_core::Error| e.to_string();
    let mut rows = Vec::new();
    let implementation = format!("pqkit ({})", kem.backend_name());
    let row = |operation, timing| Row {
        algorithm: kem.name,
        kind: "KEM",
        operation,
        implementation: implementation.clone(),
        signing: None,
        timing,
        hash_path: None,
        limit_ns: None,
        ratio_to_fastest_peer: None,
    };
    progress.step(&format!("{} keygen", kem.name));
    rows.push(row(
        "keygen",
        measure(options.budget, || kem.generate().map(drop)).map_err(e)?,
    ));
    let dk = kem.generate().map_err(e)?;
    let ek = dk.encapsulation_key().clone();
    progress.step(&format!("{} encapsulate", kem.name));
    rows.push(row(
        "encapsulate",
        measure(options.budget, || ek.encapsulate().map(drop)).map_err(e)?,
    ));
    let (ciphertext, _) = ek.encapsulate().map_err(e)?;
    progress.step(&format!("{} decapsulate", kem.name));
    rows.push(row(
        "decapsulate",
        measure(options.budget, || dk.decapsulate(&ciphertext).map(drop)).map_err(e)?,
    ));
    Ok(rows)
}

/// pqkit's keygen (key share), encapsulate and decapsulate rows of one key-exchange group.
fn group_rows(
    group: &'static KeyExchangeGroup,
    options: &Options,
    progress: &Progress,
) -> Result<Vec<Row>, String> {
    let e = |e: pqkit_core::Error| e.to_string();
    let mut rows = Vec::new();
    let row = |operation, timing| Row {
        algorithm: group.name,
        kind: "group",
        operation,
        implementation: format!("pqkit ({} + aws-lc-rs)", group.kem.backend_name()),
        signing: None,
        timing,
        hash_path: None,
        limit_ns: None,
        ratio_to_fastest_peer: None,
    };
    progress.step(&format!("{} keygen", group.name));
    rows.push(row(
        "keygen",
        measure(options.budget, || group.start().map(drop)).map_err(e)?,
    ));
    let client_share = group.start().map_err(e)?.share().to_vec();
    progress.step(&format!("{} encapsulate", group.name));
    rows.push(row(
        "encapsulate",
        measure(options.budget, || {
            group.encapsulate(&client_share).map(drop)
        })
        .map_err(e)?,
    ));
    // `complete` consumes the client's state: each call gets a fresh one, made (with the
    // server's share) outside the timed part.
    progress.step(&format!("{} decapsulate", group.name));
    let decapsulate = measure_with(
        options.budget,
        || {
            let client = group.start()?;
            let (server_share, _) = group.encapsulate(client.share())?;
            Ok((client, server_share))
        },
        |(client, server_share)| client.complete(&server_share).map(drop),
    )
    .map_err(e)?;
    rows.push(row("decapsulate", decapsulate));
    Ok(rows)
}

/// Runs the benchmark.
///
/// # Errors
/// An unknown name, or an operation that failed (the algorithm's error as text).
pub fn run(options: &Options) -> Result<Vec<Row>, String> {
    let Selection {
        signatures: sigs,
        kems,
        groups,
        stateful: schemes,
    } = select(&options.algorithms)?;
    // keygen and two operations each, and one step for the peers of signatures and KEMs.
    let peer_steps = if cfg!(feature = "peers") { 1 } else { 0 };
    let paths = if options.hash_paths.is_empty() {
        vec![pqkit_hash::dispatch::process()]
    } else {
        options.hash_paths.clone()
    };
    let steps = |engine: bool| 3 * if engine { paths.len() } else { 1 } + peer_steps;
    // ML-DSA's verification with a prepared key is one more step on each path.
    let prepared = |a: &SignatureAlgorithm| usize::from(a.family == Family::MlDsa) * paths.len();
    let sig_steps: usize = sigs
        .iter()
        .map(|a| steps(sig_on_paths(a)) + prepared(a))
        .sum();
    let kem_steps: usize = kems.iter().map(|k| steps(kem_on_paths(k))).sum();
    let rounds = options.rounds.max(1);
    let progress = Progress::new(
        "bench crypto",
        (rounds * (sig_steps + kem_steps + 3 * groups.len() + paths.len() * schemes.len())) as u64,
    );
    let mut rows = Vec::new();
    for alg in sigs {
        rows.extend(in_rounds(options, |options| {
            #[cfg_attr(not(feature = "peers"), allow(unused_mut))]
            let mut rows = on_paths(sig_on_paths(alg), &paths, || {
                signature_rows(alg, options, &progress)
            })?;
            #[cfg(feature = "peers")]
            rows.extend(peers(
                &progress,
                alg.name,
                "signature",
                options,
                &[0x5au8; MESSAGE_SIZE],
            )?);
            Ok(rows)
        })?);
    }
    for kem in kems {
        rows.extend(in_rounds(options, |options| {
            #[cfg_attr(not(feature = "peers"), allow(unused_mut))]
            let mut rows = on_paths(kem_on_paths(kem), &paths, || {
                kem_rows(kem, options, &progress)
            })?;
            #[cfg(feature = "peers")]
            rows.extend(peers(&progress, kem.name, "KEM", options, &[])?);
            Ok(rows)
        })?);
    }
    for group in groups {
        rows.extend(in_rounds(options, |options| {
            group_rows(group, options, &progress)
        })?);
    }
    for scheme in &schemes {
        // The signatures pqkit and the peer both verify (LMS), made once.
        #[cfg(feature = "peers")]
        let one_tree = stateful::OneTree::of(scheme, &[0x5au8; MESSAGE_SIZE]);
        rows.extend(in_rounds(options, |options| {
            let mut rows = Vec::new();
            for &isa in &paths {
                progress.step(&format!("{} keygen/sign/verify ({isa})", scheme.name()));
                rows.extend(on_path(isa, || stateful::rows(scheme, options.budget))?);
                #[cfg(feature = "peers")]
                if let Some(one) = &one_tree {
                    rows.extend(on_path(isa, || {
                        stateful::one_tree_rows(one, options.budget, &[0x5au8; MESSAGE_SIZE])
                    })?);
                }
            }
            #[cfg(feature = "peers")]
            rows.extend(crate::peers::stateful_rows(
                scheme.name(),
                options.budget,
                &[0x5au8; MESSAGE_SIZE],
                one_tree.as_ref(),
            )?);
            Ok(rows)
        })?);
    }
    progress.finish();
    set_limits(&mut rows);
    ratios(&mut rows);
    Ok(rows)
}

/// What the implementation of a verify row with the key prepared ends in: no peer keeps keys
/// prepared, so the row has no ratio.
const PREPARED_KEY: &str = "prepared key)";
