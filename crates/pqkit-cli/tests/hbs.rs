//! `pqkit hbs`: params, keygen/sign/verify/status through the CLI, an HSS CA issuing RFC 9802
//! certificates (`hbs ca`, `hbs issue`, checked by `x509 verify`), and the crash test — a
//! signer signing in a loop is killed with SIGKILL at random moments, at least 200 times;
//! afterwards every signature it left verifies and no one-time key appears twice.

mod support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use pqkit_hbs::public::PublicKey;
use support::{pqkit, run_ok, scratch};

fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

#[test]
fn params_prints_the_manual_presets() {
    let out = run_ok(pqkit().args(["hbs", "params", "--json"]));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let rows = v["lms"].as_array().expect("rows");
    assert_eq!(rows.len(), 10);
    let xmss = v["xmss"].as_array().expect("xmss");
    let sha2_10 = xmss
        .iter()
        .find(|r| r["set"] == "XMSS-SHA2_10_256")
        .expect("set");
    assert_eq!(
        (sha2_10["n"].as_u64(), sha2_10["signature_bytes"].as_u64()),
        (Some(32), Some(2500))
    );
    let mt = xmss
        .iter()
        .find(|r| r["set"] == "XMSSMT-SHA2_60/12_256")
        .expect("set");
    assert_eq!(
        (mt["d"].as_u64(), mt["signature_bytes"].as_u64()),
        (Some(12), Some(27688))
    );
    assert_eq!(rows[0]["preset"], "L1_H15_W2");
    assert_eq!(rows[0]["signature_bytes"], 4784);
    assert_eq!(rows[9]["preset"], "L4_H5_W8");
    assert_eq!(rows[9]["signatures"], 1 << 20);
}

#[test]
fn keygen_sign_verify_status() {
    // An HSS shape, an XMSS^MT set and an XMSS set.
    for (preset, capacity) in [
        ("L2_H5_W8", 1u64 << 10),
        ("XMSSMT-SHA2_20/4_256", 1 << 20),
        ("XMSS-SHA2_10_192", 1 << 10),
    ] {
        let dir = scratch(&format!("hbs-cli-{}", preset.replace('/', "-")));
        let (state, public) = (dir.join("fw.state"), dir.join("fw.pub"));
        let file = dir.join("fw.bin");
        std::fs::write(&file, b"firmware image").expect("write");
        let keygen = |preset: &str| {
            pqkit()
                .args([
                    "hbs",
                    "keygen",
                    "--preset",
                    preset,
                    "--state",
                    path(&state),
                    "--pub",
                    path(&public),
                ])
                .output()
                .expect("run")
        };
        assert!(keygen(preset).status.success(), "{preset}");
        assert!(
            std::fs::read_to_string(&public)
                .expect("pub")
                .starts_with("-----BEGIN PUBLIC KEY-----"),
            "{preset}: PEM SubjectPublicKeyInfo"
        );
        let sig = dir.join("fw.bin.sig");
        run_ok(pqkit().args([
            "hbs",
            "sign",
            "--state",
            path(&state),
            "-o",
            path(&sig),
            path(&file),
        ]));
        let verify = || {
            pqkit()
                .args([
                    "hbs",
                    "verify",
                    "--pub",
                    path(&public),
                    "--signature",
                    path(&sig),
                ])
                .arg(&file)
                .output()
                .expect("run")
        };
        assert!(verify().status.success(), "{preset}");
        std::fs::write(&file, b"firmware imagf").expect("write");
        assert!(
            !verify().status.success(),
            "{preset}: a changed file must not verify"
        );
        let out = run_ok(pqkit().args(["hbs", "status", "--state", path(&state), "--json"]));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        assert_eq!(
            (v["used"].as_u64(), v["capacity"].as_u64()),
            (Some(1), Some(capacity)),
            "{preset}"
        );
        // keygen never overwrites a key.
        assert!(
            !keygen("L1_H5_W8").status.success(),
            "{preset}: overwrote a key"
        );
    }
}

#[test]
fn signing_to_a_fifo_writes_into_it_and_leaves_it_a_fifo() {
    use std::os::unix::fs::FileTypeExt;
    let dir = scratch("hbs-cli-fifo");
    let (state, public) = (dir.join("k.hss"), dir.join("k.pub"));
    run_ok(
        pqkit()
            .args(["hbs", "keygen", "--preset", "L1_H5_W8", "--state"])
            .args([state.as_os_str(), "--pub".as_ref(), public.as_os_str()]),
    );
    let fifo = dir.join("sig.fifo");
    run_ok(std::process::Command::new("mkfifo").arg(&fifo));
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).expect("read fifo"))
    };
    let file = dir.join("m");
    std::fs::write(&file, b"message").expect("write");
    run_ok(
        pqkit()
            .args(["hbs", "sign", "--state"])
            .args([&state, Path::new("-o"), &fifo, &file]),
    );
    // Checked before joining: a reader of a replaced FIFO would wait for ever.
    assert!(
        std::fs::metadata(&fifo)
            .expect("fifo")
            .file_type()
            .is_fifo(),
        "the FIFO was replaced"
    );
    let signature = reader.join().expect("reader");
    let pk = PublicKey::from_pem(&std::fs::read_to_string(&public).expect("pub")).expect("key");
    assert_eq!(pk.verify(b"message", &signature), Ok(()));
}

#[test]
fn an_hss_ca_issues_firmware_and_client_certificates() {
    let dir = scratch("hbs-cli-ca");
    let p = |name: &str| dir.join(name);
    let keygen = |preset: &str, state: &str, public: &str| {
        run_ok(
            pqkit()
                .args(["hbs", "keygen", "--preset", preset, "--state"])
                .args([p(state), "--pub".into(), p(public)]),
        )
    };
    let root = |state: &str, out: &str| {
        run_ok(
            pqkit()
                .args([
                    "hbs",
                    "ca",
                    "--subject",
                    "CN=Firmware Root,O=pqkit",
                    "--state",
                ])
                .args([p(state), "-o".into(), p(out)]),
        )
    };
    keygen("L2_H5_W8", "ca.hss", "ca.pub");
    root("ca.hss", "ca.pem");
    // A firmware-signing certificate for an XMSS^MT key (no CSR: that would spend one of its
    // one-time keys) and a client certificate for an ML-DSA-65 key's CSR.
    keygen("XMSSMT-SHA2_20/4_256", "fw.state", "fw.pub");
    let issue = |extra: &[&str], out: &str| {
        run_ok(
            pqkit()
                .args(["hbs", "issue", "--state"])
                .args([p("ca.hss"), "--ca".into(), p("ca.pem"), "-o".into(), p(out)])
                .args(extra),
        )
    };
    issue(
        &[
            "--pub",
            path(&p("fw.pub")),
            "--subject",
            "CN=firmware signing",
        ],
        "fw.pem",
    );
    run_ok(pqkit().args(["keygen", "--alg", "ML-DSA-65", "-o", path(&p("dev.key"))]));
    run_ok(
        pqkit()
            .args(["csr", "create", "--subject", "CN=device 7", "--key"])
            .args([p("dev.key"), "-o".into(), p("dev.csr")]),
    );
    issue(
        &["--csr", path(&p("dev.csr")), "--profile", "client"],
        "dev.pem",
    );

    for (leaf, algorithm, purpose, wrong) in [
        (
            "fw.pem",
            "XMSSMT-SHA2_20/4_256",
            "codeSigning",
            "serverAuth",
        ),
        ("dev.pem", "ML-DSA-65", "clientAuth", "codeSigning"),
    ] {
        let chain = std::fs::read_to_string(p(leaf)).expect("leaf")
            + &std::fs::read_to_string(p("ca.pem")).expect("root");
        std::fs::write(p("chain.pem"), chain).expect("chain");
        // The RFC 9802 chain validates for the leaf's purpose (the same validator as TLS), and
        // not for another.
        let out = run_ok(
            pqkit()
                .args(["x509", "verify", "--purpose", purpose, "--ca"])
                .args([p("ca.pem"), p("chain.pem")]),
        );
        let refused = pqkit()
            .args(["x509", "verify", "--purpose", wrong, "--ca"])
            .args([p("ca.pem"), p("chain.pem")])
            .output()
            .expect("run");
        assert_eq!(refused.status.code(), Some(1), "{leaf} for {wrong}");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("chain OK"),
            "{leaf}"
        );
        let out = run_ok(pqkit().args(["x509", "show", "--json"]).arg(p("chain.pem")));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        assert_eq!(v[0]["public_key_algorithm"], algorithm, "{leaf}");
        assert!(
            v[0]["signature_algorithm"]
                .as_str()
                .is_some_and(|a| a.starts_with("HSS L=2")),
            "{leaf}: {}",
            v[0]["signature_algorithm"]
        );
    }
    // Each certificate spent one one-time key of the CA.
    let out = run_ok(
        pqkit()
            .args(["hbs", "status", "--json", "--state"])
            .arg(p("ca.hss")),
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["used"], 3);
    // A certificate signed by another HSS key does not verify under this root.
    keygen("L2_H5_W8", "other.hss", "other.pub");
    root("other.hss", "other.pem");
    let chain = std::fs::read_to_string(p("fw.pem")).expect("leaf");
    std::fs::write(p("chain.pem"), chain).expect("chain");
    let out = pqkit()
        .args(["x509", "verify", "--ca"])
        .args([p("other.pem"), p("chain.pem")])
        .output()
        .expect("run");
    assert!(!out.status.success(), "verified under the wrong root");
}

/// A small xorshift generator: random kill moments without a dependency.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

#[test]
fn sigkill_at_random_moments_never_reuses_a_one_time_key() {
    const KILLS: usize = 200;
    const FILES_PER_RUN: usize = 40;
    let dir = scratch("hbs-crash");
    let (state, public) = (dir.join("k.hss"), dir.join("k.pub"));
    // L3_H5_W8: 32768 signatures, three trees to regenerate at each start; each run reserves
    // one value per signature (the default), so a kill wastes at most the value being signed.
    run_ok(pqkit().args([
        "hbs",
        "keygen",
        "--preset",
        "L3_H5_W8",
        "--state",
        path(&state),
        "--pub",
        path(&public),
    ]));
    let pk = PublicKey::from_pem(&std::fs::read_to_string(&public).expect("pub")).expect("pub");
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.subsec_nanos().into())
        | 1;
    let mut rng = Rng(seed);
    let deadline = Instant::now() + Duration::from_secs(240);
    let mut kills = 0;
    let mut runs: Vec<PathBuf> = Vec::new();
    // The first run goes to the end: its length is the window the kills fall in, so they land
    // in start-up, between signatures, in the middle of a state write, in a signature write.
    let mut window_us = None;
    while kills < KILLS {
        assert!(Instant::now() < deadline, "only {kills} kills in 240 s");
        let run = dir.join(format!("run-{}", runs.len()));
        std::fs::create_dir_all(&run).expect("run dir");
        let files: Vec<PathBuf> = (0..FILES_PER_RUN)
            .map(|i| {
                let f = run.join(format!("m{i}"));
                std::fs::write(&f, format!("run {} message {i}", runs.len())).expect("write");
                f
            })
            .collect();
        let out = run.join("sigs");
        std::fs::create_dir_all(&out).expect("sig dir");
        let mut child = pqkit()
            .args([
                "hbs",
                "sign",
                "--threads",
                "1",
                "--state",
                path(&state),
                "--out-dir",
                path(&out),
            ])
            .args(files.iter().map(|f| path(f)))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn signer");
        let started = Instant::now();
        match window_us {
            None => {
                assert!(
                    child.wait().expect("wait").success(),
                    "the uninterrupted run failed"
                );
                let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
                window_us = Some(micros.max(1));
            }
            Some(window) => {
                std::thread::sleep(Duration::from_micros(rng.below(window)));
                if child.try_wait().expect("wait").is_none() {
                    child.kill().expect("SIGKILL");
                    kills += 1;
                }
                child.wait().expect("reap");
            }
        }
        runs.push(run);
    }
    // A last run to completion: the key still works after all that.
    let last = dir.join("last");
    std::fs::create_dir_all(&last).expect("dir");
    std::fs::write(last.join("final"), b"final").expect("write");
    run_ok(pqkit().args([
        "hbs",
        "sign",
        "--state",
        path(&state),
        "--out-dir",
        path(&last),
        path(&last.join("final")),
    ]));
    runs.push(last.clone());

    let mut used: HashMap<u64, PathBuf> = HashMap::new();
    let mut signatures = 0usize;
    for run in &runs {
        let sig_dir = if run == &last {
            run.clone()
        } else {
            run.join("sigs")
        };
        for entry in std::fs::read_dir(&sig_dir).expect("sig dir") {
            let sig_path = entry.expect("entry").path();
            let name = sig_path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default()
                .to_owned();
            let Some(stem) = name.strip_suffix(".sig") else {
                // A temporary file left by a kill mid-write: never a signature.
                continue;
            };
            let message = std::fs::read(run.join(stem)).expect("message");
            let sig = std::fs::read(&sig_path).expect("signature");
            assert_eq!(
                pk.verify(&message, &sig),
                Ok(()),
                "{} does not verify",
                sig_path.display()
            );
            let leaves = pk.counter(&sig).expect("counter");
            if let Some(other) = used.insert(leaves, sig_path.clone()) {
                panic!(
                    "one-time key {leaves:?} used twice: {} and {}",
                    other.display(),
                    sig_path.display()
                );
            }
            signatures += 1;
        }
    }
    let out = run_ok(pqkit().args(["hbs", "status", "--state", path(&state), "--json"]));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let used_on_disk = v["used"].as_u64().expect("used");
    println!(
        "{kills} kills in a window of {} µs, {signatures} signatures kept, {used_on_disk} one-time keys spent",
        window_us.unwrap_or(0)
    );
    // Beyond the uninterrupted run's 40 and the final one, killed runs must have signed too.
    assert!(
        signatures > FILES_PER_RUN + 1 + KILLS / 4,
        "only {signatures} signatures: the kills did not fall inside the signing loop"
    );
    assert!(
        used_on_disk >= signatures as u64,
        "the state file lags behind the signatures made"
    );
}
