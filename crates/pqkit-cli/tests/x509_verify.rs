//! `pqkit x509 verify` on x509-limbo cases, and inputs that cannot hurt.
//!
//! A sample of limbo (every case that is not BetterTLS's, and every 50th of BetterTLS's) runs
//! through the CLI as a user would ask it — `--untrusted`, `--name`, `--purpose`, `--at`,
//! `--crl`, `--max-depth`, `--profile` — and must exit 0 where the library validator accepts
//! and 1 where it rejects: no case that cannot be asked, no exit 3. The whole suite runs
//! through the library in pqkit-pki's `limbo` test.
//!
//! Then what a careless or hostile user hands the CLI: a device, a FIFO with no writer, an
//! oversized file, a closed standard output, a thread count no machine has.

mod support;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{pqkit, scratch};

fn limbo() -> Vec<Value> {
    let dir = std::env::var_os("PQKIT_VECTORS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/vectors")
        });
    let path = dir.join("x509-limbo/limbo.json.gz");
    let mut gz = Command::new("gzip")
        .arg("-dc")
        .arg(&path)
        .stdout(Stdio::piped())
        .spawn()
        .expect("gzip");
    let mut text = String::new();
    gz.stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut text)
        .expect("read");
    assert!(
        gz.wait().expect("gzip").success(),
        "vector file {} is missing or unreadable",
        path.display()
    );
    let mut all: Value = serde_json::from_str(&text).expect("limbo JSON");
    match all["testcases"].take() {
        Value::Array(cases) => cases,
        _ => panic!("{}: no testcases", path.display()),
    }
}

fn write_pems(path: &Path, value: &Value) -> bool {
    let texts: Vec<&str> = match value {
        Value::String(s) => vec![s.as_str()],
        Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    std::fs::write(path, texts.concat()).expect("write");
    !texts.is_empty()
}

#[test]
fn limbo_sample_through_the_cli_exits_0_or_1_as_limbo_expects() {
    let dir = scratch("x509-limbo-cli");
    let cases = limbo();
    let mut asked = 0;
    let mut bettertls = 0;
    let mut disagreements = Vec::new();
    for case in &cases {
        let id = case["id"].as_str().unwrap_or_default();
        if id.starts_with("bettertls::") {
            bettertls += 1;
            if bettertls % 50 != 0 {
                continue;
            }
        }
        let (ca, leaf, untrusted) = (
            dir.join("ca.pem"),
            dir.join("leaf.pem"),
            dir.join("ica.pem"),
        );
        write_pems(&ca, &case["trusted_certs"]);
        write_pems(&leaf, &case["peer_certificate"]);
        let mut cmd = pqkit();
        cmd.args(["x509", "verify", "--ca"]).arg(&ca);
        if write_pems(&untrusted, &case["untrusted_intermediates"]) {
            cmd.arg("--untrusted").arg(&untrusted);
        }
        let mut purposes = vec![match case["validation_kind"].as_str() {
            Some("CLIENT") => "clientAuth".to_owned(),
            _ => "serverAuth".to_owned(),
        }];
        for eku in case["extended_key_usage"].as_array().into_iter().flatten() {
            purposes.push(eku.as_str().unwrap_or_default().to_owned());
        }
        cmd.arg("--purpose").arg(purposes.join(","));
        let names = std::iter::once(&case["expected_peer_name"])
            .chain(case["expected_peer_names"].as_array().into_iter().flatten());
        for name in names.filter(|n| !n.is_null()) {
            cmd.arg("--name")
                .arg(name["value"].as_str().unwrap_or_default());
        }
        if let Some(at) = case["validation_time"].as_str() {
            cmd.arg("--at").arg(at);
        }
        for (i, crl) in case["crls"].as_array().into_iter().flatten().enumerate() {
            let path = dir.join(format!("crl{i}.pem"));
            write_pems(&path, crl);
            cmd.arg("--crl").arg(path);
        }
        if let Some(depth) = case["max_chain_depth"].as_u64() {
            cmd.arg("--max-depth").arg(depth.to_string());
        }
        let webpki = id.starts_with("webpki::")
            || case["features"].as_array().into_iter().flatten().any(|f| {
                f.as_str().is_some_and(|f| {
                    f.starts_with("pedantic-webpki") || f == "pedantic-public-suffix-wildcard"
                })
            });
        cmd.args(["--profile", if webpki { "webpki" } else { "rfc5280" }]);
        cmd.arg(&leaf);
        let out = cmd.output().expect("run");
        asked += 1;
        let stderr = String::from_utf8_lossy(&out.stderr);
        let want_ok = case["expected_result"].as_str() == Some("SUCCESS");
        match out.status.code() {
            Some(0) if want_ok => {}
            Some(1) if !want_ok => {
                assert!(
                    stderr.contains("leaf.pem")
                        || stderr.contains("ca.pem")
                        || stderr.contains("crl"),
                    "{id}: the message names no file: {stderr}"
                );
                assert!(!stderr.contains("Error {"), "{id}: a Debug form: {stderr}");
            }
            Some(0 | 1) => disagreements.push(format!("{id}: {stderr}")),
            other => panic!("{id}: exit {other:?}, which is neither accept nor reject: {stderr}"),
        }
    }
    assert!(asked >= 390, "{asked} cases asked");
    // The library's known wrong rejects (pqkit-pki's limbo test lists them) are the only
    // disagreements, and no wrong accept is among them.
    for d in &disagreements {
        println!("disagreement: {d}");
    }
    assert!(
        disagreements.len() <= 13,
        "{} disagreements",
        disagreements.len()
    );
    assert!(
        disagreements
            .iter()
            .all(|d| !d.is_empty() && !d.contains("chain OK")),
        "a wrong accept"
    );
}

/// `x509 show FILE` refuses `file` at once, as a usage error whose message says `why`.
fn refused_at_once(file: &Path, why: &str) {
    let start = Instant::now();
    let out = pqkit()
        .args(["x509", "show"])
        .arg(file)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains(why));
    assert!(start.elapsed() < Duration::from_secs(10));
}

#[test]
fn devices_fifos_and_oversized_inputs_are_refused_unread() {
    let dir = scratch("hostile-inputs");
    // A device: refused at once, not read for ever.
    let start = Instant::now();
    let out = pqkit()
        .args(["sign", "--key", "/dev/zero", "-o"])
        .arg(dir.join("x.sig"))
        .arg("/etc/hostname")
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("/dev/zero: not a regular file"));
    assert!(start.elapsed() < Duration::from_secs(10));
    // A FIFO with no writer: refused, no hang.
    let fifo = dir.join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    refused_at_once(&fifo, "not a regular file");
    // A sparse file past the bound: refused by its size, unread.
    let big = dir.join("big.pem");
    let f = std::fs::File::create(&big).expect("create");
    f.set_len(4 << 30).expect("sparse 4 GiB");
    refused_at_once(&big, "longer than");
    // Standard input is read up to the bound.
    let mut child = pqkit()
        .args(["x509", "show", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        let chunk = vec![b'A'; 1 << 20];
        for _ in 0..80 {
            if std::io::Write::write_all(&mut stdin, &chunk).is_err() {
                break;
            }
        }
    });
    let out = child.wait_with_output().expect("wait");
    writer.join().expect("writer");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("standard input: longer than"));
}

#[test]
fn a_closed_standard_output_ends_quietly() {
    for args in [&["list"][..], &["sizes"], &["hbs", "params"]] {
        let mut child = pqkit()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        // Read one byte, then close the pipe, as `head -c1` does.
        let mut stdout = child.stdout.take().expect("stdout");
        let mut one = [0u8; 1];
        stdout.read_exact(&mut one).expect("first byte");
        drop(stdout);
        let out = child.wait_with_output().expect("wait");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "pqkit {args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "pqkit {args:?}: {stderr}");
    }
}

#[test]
fn thread_counts_beyond_the_machine_are_usage_errors() {
    let out = pqkit()
        .args(["sign", "--threads", "1000000", "--key", "k", "-o", "s", "m"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("number of threads"));
}

#[test]
fn names_are_checked_by_syntax() {
    let out = pqkit()
        .args([
            "x509",
            "verify",
            "--ca",
            "ca.pem",
            "--name",
            "bad name!",
            "leaf.pem",
        ])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("RFC 1034"));
}

/// Each exit status of `pqkit --help`'s table, by a case of its own.
#[test]
fn exit_statuses_are_what_help_says() {
    let help = pqkit().arg("--help").output().expect("help");
    let help = String::from_utf8_lossy(&help.stdout);
    for line in [
        "  0  success",
        "  1  verification failed",
        "  2  usage error",
        "  3  any other",
    ] {
        assert!(help.contains(line), "--help lacks {line:?}");
    }
    let dir = scratch("exit-statuses");
    let doc = dir.join("doc.txt");
    std::fs::write(&doc, "a document").expect("write");
    let keygen = |alg: &str, name: &str| {
        let key = dir.join(name);
        let out = pqkit()
            .args(["keygen", "--alg", alg, "-o"])
            .arg(&key)
            .output()
            .expect("keygen");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        key
    };
    let falcon = keygen("Falcon-512", "falcon.pem");
    let ecdsa = keygen("ECDSA-P256", "ecdsa.pem");
    let sign = |key: &Path, extra: &[&str]| {
        let out = pqkit()
            .arg("sign")
            .args(extra)
            .arg("--key")
            .arg(key)
            .arg("-o")
            .arg(dir.join("never.sig"))
            .arg(&doc)
            .output()
            .expect("sign");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    for (key, extra, word) in [
        (&falcon, &["--external-mu"][..], "--external-mu"),
        (&ecdsa, &["--context", "ctx"], "--context"),
        (&ecdsa, &["--prehash", "SHA-512"], "--prehash"),
        (&ecdsa, &["--deterministic"], "--deterministic"),
    ] {
        let (code, stderr) = sign(key, extra);
        assert_eq!(code, Some(2), "{extra:?}: {stderr}");
        assert!(stderr.contains(word), "{stderr}");
        assert!(!dir.join("never.sig").exists());
    }
    let out = pqkit()
        .args(["keygen", "--alg", "ML-DSA-44", "--seed", "00ff", "-o"])
        .arg(dir.join("short-seed.pem"))
        .output()
        .expect("keygen");
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // 3: a key file that is not there; the message names it, without an errno.
    let (code, stderr) = sign(&dir.join("missing.pem"), &[]);
    assert_eq!(code, Some(3), "{stderr}");
    assert!(
        stderr.contains("missing.pem") && !stderr.contains("os error"),
        "{stderr}"
    );
    // 0 and 1: the same chain, with a name it has and one it lacks.
    let out = pqkit()
        .args(["pki", "init", "--sig", "ECDSA-P256", "--dir"])
        .arg(dir.join("pki"))
        .output()
        .expect("pki init");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let verify = |name: &str| {
        pqkit()
            .args(["x509", "verify", "--ca"])
            .arg(dir.join("pki/ca.pem"))
            .args(["--purpose", "serverAuth", "--name", name])
            .arg(dir.join("pki/server.pem"))
            .output()
            .expect("verify")
            .status
            .code()
    };
    assert_eq!(verify("localhost"), Some(0));
    assert_eq!(verify("example.com"), Some(1));
}

/// `--crl` as a careless user and an attacker use it: an older CRL listed before the one that
/// revokes, a CRL not yet valid, a CRL file that holds no CRL, and CRLs that leave a
/// certificate of the path without a status. (Fixtures: `tests/data/crl/README.md`.)
#[test]
fn crls_cannot_be_outvoted_or_skipped() {
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/crl");
    let verify = |crls: &[&str]| {
        let mut cmd = pqkit();
        cmd.args(["x509", "verify", "--ca"])
            .arg(data.join("root.pem"))
            .args(["--at", "2026-11-30T00:00:00Z", "--purpose", "serverAuth"]);
        for crl in crls {
            cmd.arg("--crl").arg(data.join(crl));
        }
        let out = cmd.arg(data.join("chain.pem")).output().expect("run");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, stderr) = verify(&["crl_root_empty.pem", "crl_inter_empty.pem"]);
    assert_eq!(code, Some(0), "{stderr}");
    for order in [
        ["crl_old_n1.pem", "crl_revleaf_n2.pem"],
        ["crl_revleaf_n2.pem", "crl_old_n1.pem"],
        ["crl_inter_empty.pem", "crl_revleaf.pem"],
    ] {
        let (code, stderr) = verify(&["crl_root_empty.pem", order[0], order[1]]);
        assert_eq!(code, Some(1), "{order:?}: {stderr}");
        assert!(stderr.contains("revoked"), "{order:?}: {stderr}");
    }
    let (code, stderr) = verify(&["crl_root_empty.pem", "crl_future.pem"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("crl_future.pem") && stderr.contains("not valid yet"),
        "{stderr}"
    );
    // No CRL for the intermediate: its status is unknown, which is not a pass.
    let (code, stderr) = verify(&["crl_inter_empty.pem"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("none of the CRLs"), "{stderr}");
    // A certificate file named as a CRL.
    let (code, stderr) = verify(&["root.pem"]);
    assert_eq!(code, Some(3), "{stderr}");
    assert!(
        stderr.contains("no PEM block labelled X509 CRL"),
        "{stderr}"
    );
}

/// A message file that is a FIFO is refused before a one-time key is reserved, not waited on;
/// a full standard output is a failed output (exit 3), not a panic.
#[test]
fn hbs_sign_refuses_a_fifo_and_a_full_stdout_is_exit_3() {
    let dir = scratch("hbs-fifo");
    let (state, public) = (dir.join("k.hss"), dir.join("k.pub"));
    let out = pqkit()
        .args(["hbs", "keygen", "--preset", "L1_H5_W4", "--state"])
        .arg(&state)
        .arg("--pub")
        .arg(&public)
        .output()
        .expect("keygen");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let fifo = dir.join("fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo")
            .success()
    );
    let start = Instant::now();
    let out = pqkit()
        .args(["hbs", "sign", "--state"])
        .arg(&state)
        .arg("-o")
        .arg(dir.join("o.sig"))
        .arg(&fifo)
        .output()
        .expect("sign");
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(start.elapsed() < Duration::from_secs(10));
    let status = pqkit()
        .args(["hbs", "status", "--json", "--state"])
        .arg(&state)
        .output()
        .expect("status");
    assert!(
        String::from_utf8_lossy(&status.stdout).contains("\"used\": 0"),
        "a one-time key was reserved: {}",
        String::from_utf8_lossy(&status.stdout)
    );
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let out = pqkit().arg("list").stdout(full).output().expect("list");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("standard output") && !stderr.contains("panicked"),
        "{stderr}"
    );
}
