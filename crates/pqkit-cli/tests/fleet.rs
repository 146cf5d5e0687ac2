//! Several signers of one key on an etcd ledger: a 3-member etcd cluster on 127.0.0.1 started
//! here; one HSS key and one XMSS^MT key, each signed by 3 signer processes at once (each with
//! its own copy of the state file, taking ranges from the ledger), signers killed with SIGKILL
//! at random, one etcd member stopped mid-run and started again; at least 20 000 signatures in
//! all. Every signature verifies and no one-time key appears twice. Then a signer whose lease
//! lapses stops, and with the whole cluster down nothing is signed.

mod support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use pqkit_bench::etcd::Cluster;
use pqkit_hbs::public::PublicKey;
use support::{pqkit, run_ok, scratch};

fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

const SIGNERS: usize = 3;
const FILES_PER_RUN: usize = 200;

/// The signatures a directory of `pqkit hbs sign --out-dir` holds: `<message>.sig`, and the
/// temporary files of outputs a kill interrupted (a signature written, not yet put in place;
/// flagged `true`: a kill during the write leaves it short).
fn signatures(out: &Path) -> Vec<(String, PathBuf, bool)> {
    let Ok(entries) = std::fs::read_dir(out) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let message = name
                .strip_suffix(".sig")
                .filter(|m| !m.starts_with('.'))
                .or_else(|| {
                    name.strip_prefix('.')
                        .and_then(|n| n.split_once(".sig.pqkit-"))
                        .map(|(m, _)| m)
                })?
                .to_owned();
            // An interrupted output may be empty (killed before the write), or the final file's
            // second name (killed between the hard link that placed it and the unlink).
            let meta = e.metadata().ok()?;
            let temporary = name.starts_with('.');
            {
                use std::os::unix::fs::MetadataExt;
                (meta.len() > 0 && !(temporary && meta.nlink() > 1))
                    .then(|| (message, e.path(), temporary))
            }
        })
        .collect()
}

struct Rng(AtomicU64);

impl Rng {
    fn below(&self, n: u64) -> u64 {
        let mut x = self.0.load(Ordering::Relaxed);
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0.store(x, Ordering::Relaxed);
        x % n.max(1)
    }
}

/// Signs with `key`'s public key `pk` from `SIGNERS` processes at once until `target`
/// signatures exist, killing runs at random; stops and restarts etcd member 1 on the way.
/// Checks every signature and every one-time key. Returns the signatures made.
fn fleet(dir: &Path, preset: &str, spec: &str, target: usize, cluster: &Mutex<Cluster>) -> usize {
    let (state, public) = (dir.join("k.state"), dir.join("k.pub"));
    run_ok(pqkit().args([
        "hbs",
        "keygen",
        "--preset",
        preset,
        "--state",
        path(&state),
        "--pub",
        path(&public),
        "--ledger",
        spec,
    ]));
    let pk = PublicKey::from_pem(&std::fs::read_to_string(&public).expect("pub")).expect("pub");
    let messages = dir.join("messages");
    std::fs::create_dir_all(&messages).expect("dir");
    let files: Vec<PathBuf> = (0..FILES_PER_RUN)
        .map(|i| {
            let f = messages.join(format!("m{i}"));
            std::fs::write(&f, format!("{preset} message {i}")).expect("write");
            f
        })
        .collect();
    // Each signer its own copy of the state file (and of the tree cache).
    let copies: Vec<PathBuf> = (0..SIGNERS)
        .map(|i| {
            let d = dir.join(format!("signer-{i}"));
            std::fs::create_dir_all(&d).expect("dir");
            let copy = d.join("k.state");
            std::fs::copy(&state, &copy).expect("cp state");
            let _ = std::fs::copy(dir.join("k.state.cache"), d.join("k.state.cache"));
            copy
        })
        .collect();
    let made = AtomicUsize::new(0);
    let runs = AtomicUsize::new(0);
    let kills = AtomicUsize::new(0);
    let rng = Rng(AtomicU64::new(
        (u64::from(std::process::id()) << 20) | (target as u64) | 1,
    ));
    let start = Instant::now();
    let deadline = Duration::from_secs(600);
    std::thread::scope(|s| {
        for copy in &copies {
            let (made, runs, kills, rng, files) = (&made, &runs, &kills, &rng, &files);
            s.spawn(move || {
                while made.load(Ordering::Relaxed) < target {
                    assert!(start.elapsed() < deadline, "{preset}: not done in 600 s");
                    let run = runs.fetch_add(1, Ordering::Relaxed);
                    let out = dir.join(format!("run-{run}"));
                    std::fs::create_dir_all(&out).expect("dir");
                    let mut child = pqkit()
                        .args(["hbs", "sign", "--threads", "1", "--reserve", "16"])
                        .args(["--ledger", spec, "--state", path(copy)])
                        .args(["--out-dir", path(&out)])
                        .args(files.iter().map(|f| path(f)))
                        .stdin(Stdio::null())
                        .stdout(Stdio::null())
                        .stderr(Stdio::piped())
                        .spawn()
                        .expect("spawn signer");
                    if rng.below(4) == 0 {
                        std::thread::sleep(Duration::from_millis(rng.below(400)));
                        if child.try_wait().expect("wait").is_none() {
                            let _ = child.kill();
                            kills.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    let output = child.wait_with_output().expect("wait");
                    let n = signatures(&out).len();
                    if !output.status.success() && n < FILES_PER_RUN {
                        let stderr = String::from_utf8_lossy(&output.stderr);
                        // Killed, or refused while a member is down: no one-time key lost
                        // twice either way. Anything else is a failure of the test.
                        assert!(
                            output.status.code().is_none() || stderr.contains("ledger"),
                            "{preset}: a signer failed: {stderr}"
                        );
                    }
                    made.fetch_add(n, Ordering::Relaxed);
                }
            });
        }
        // One member stopped a third of the way, started again two thirds of the way.
        s.spawn(|| {
            while made.load(Ordering::Relaxed) < target / 3 {
                std::thread::sleep(Duration::from_millis(50));
            }
            cluster.lock().expect("cluster").stop(1);
            while made.load(Ordering::Relaxed) < target * 2 / 3 {
                std::thread::sleep(Duration::from_millis(50));
            }
            cluster
                .lock()
                .expect("cluster")
                .restart(1)
                .expect("restart member 1");
        });
    });
    assert!(
        kills.load(Ordering::Relaxed) > 0,
        "{preset}: no signer was killed"
    );
    // Every signature verifies; no one-time key twice. A temporary file shorter than a
    // signature is a write the kill cut short (at a page boundary): not a signature.
    let all: Vec<_> = (0..runs.load(Ordering::Relaxed))
        .flat_map(|run| signatures(&dir.join(format!("run-{run}"))))
        .collect();
    let full = all
        .iter()
        .filter(|(_, _, temporary)| !temporary)
        .map(|(_, p, _)| std::fs::metadata(p).expect("signature").len())
        .max()
        .expect("a signature put in place");
    let mut used: HashMap<u64, PathBuf> = HashMap::new();
    let (mut total, mut torn) = (0, 0);
    for (message, sig_path, temporary) in all {
        let sig = std::fs::read(&sig_path).expect("signature");
        if temporary && (sig.len() as u64) < full {
            torn += 1;
            continue;
        }
        let msg = std::fs::read(messages.join(&message)).expect("message");
        let verified = pk.verify(&msg, &sig);
        assert_eq!(
            verified,
            Ok(()),
            "{} ({} bytes, one-time key {:?}) does not verify",
            sig_path.display(),
            sig.len(),
            pk.counter(&sig)
        );
        let q = pk.counter(&sig).expect("counter");
        if let Some(other) = used.insert(q, sig_path.clone()) {
            panic!(
                "{preset}: one-time key {q} used twice: {} and {}",
                other.display(),
                sig_path.display()
            );
        }
        total += 1;
    }
    eprintln!(
        "{preset}: {total} signatures ({torn} more cut short) from {} runs of {SIGNERS} \
         signers ({} killed) in {:.1} s",
        runs.load(Ordering::Relaxed),
        kills.load(Ordering::Relaxed),
        start.elapsed().as_secs_f64()
    );
    total
}

#[test]
fn three_signers_share_one_key_through_etcd() {
    assert!(
        pqkit_bench::etcd::binary().is_some(),
        "no etcd binary: install Debian's etcd-server (or set PQKIT_ETCD)"
    );
    let dir = scratch("hbs-fleet");
    let cluster = Cluster::start(3).expect("start a 3-member etcd cluster");
    let spec = cluster.spec();
    let cluster = Mutex::new(cluster);
    let hss = dir.join("hss");
    let xmss = dir.join("xmssmt");
    std::fs::create_dir_all(&hss).expect("dir");
    std::fs::create_dir_all(&xmss).expect("dir");
    let total = fleet(&hss, "L2_H10_W4", &spec, 14_000, &cluster)
        + fleet(&xmss, "XMSSMT-SHA2_20/4_256", &spec, 6_000, &cluster);
    assert!(total >= 20_000, "{total} signatures");
    // The signatures are many: keep the disk.
    let _ = std::fs::remove_dir_all(&hss);
    let _ = std::fs::remove_dir_all(&xmss);

    // A signer whose lease lapses signs no more, even from values it reserved.
    let state = dir.join("lease.state");
    run_ok(pqkit().args([
        "hbs",
        "keygen",
        "--preset",
        "L1_H5_W4",
        "--state",
        path(&state),
        "--pub",
        path(&dir.join("lease.pub")),
        "--ledger",
        &spec,
    ]));
    let short = pqkit_hbs::ledger::LedgerSpec::parse(&format!("{spec}?ttl=2")).expect("spec");
    let ledger = pqkit_hbs::ledger::Ledger::open(&short).expect("ledger");
    let mut key = pqkit_hbs::state::StatefulKey::open(&state, ledger, 1).expect("open");
    key.set_batch(8);
    key.sign(b"while alive").expect("sign");
    {
        let mut c = cluster.lock().expect("cluster");
        for i in 0..c.len() {
            c.stop(i);
        }
    }
    std::thread::sleep(Duration::from_secs(3));
    match key.sign(b"after the lease") {
        Err(pqkit_hbs::state::StateError::Ledger(
            pqkit_hbs::ledger::LedgerError::LeaseLapsed { .. },
        )) => {}
        other => panic!("expected LeaseLapsed, got {other:?}"),
    }
    drop(key);

    // The whole cluster down: nothing is signed.
    let message = dir.join("m");
    std::fs::write(&message, b"m").expect("write");
    let sig = dir.join("m.sig");
    let started = Instant::now();
    let out = pqkit()
        .args([
            "hbs",
            "sign",
            "--ledger",
            &spec,
            "--state",
            path(&state),
            "-o",
        ])
        .args([path(&sig), path(&message)])
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("cannot be reached"), "{stderr}");
    assert!(!sig.exists(), "no signature was made");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "refusing took {:?}",
        started.elapsed()
    );
}
