//! tlsfuzzer, an independent TLS test suite, against `pqkit server`: its TLS 1.3 scripts with
//! RSA-PSS, ECDSA, Ed25519 and ML-DSA certificates and the ML-KEM groups, driven by
//! `tests/tlsfuzzer/run.py`. Every failure that remains is listed in
//! `tests/tlsfuzzer/expected.toml` with its category and reason (a feature pqkit does not
//! offer, an expectation of the script, or rustls behaviour with its upstream issue); the test
//! fails on a failure not listed, on a listed one that no longer fails, and on a listed one
//! that fails differently. Needs Python 3.11 and `pip install tlslite-ng==0.9.0b2 ecdsa kyber-py
//! dilithium-py`; the tlsfuzzer copy is `../shared/peers/tlsfuzzer` (or `PQKIT_PEERS`).

mod support;

use std::path::Path;
use std::process::Command;

#[test]
fn tlsfuzzer_scripts_fail_only_as_expected() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tlsfuzzer");
    let tlsfuzzer = support::peers_dir().join("tlsfuzzer");
    assert!(
        tlsfuzzer.join("tlsfuzzer").is_dir(),
        "{}: the tlsfuzzer copy is missing",
        tlsfuzzer.display()
    );
    let out = Command::new("python3")
        .arg(here.join("run.py"))
        .arg("--pqkit")
        .arg(env!("CARGO_BIN_EXE_pqkit"))
        .arg("--tlsfuzzer")
        .arg(&tlsfuzzer)
        .arg("--expect")
        .arg(here.join("expected.toml"))
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let summary: Vec<&str> = stdout.lines().rev().take(2).collect();
    assert!(
        out.status.success(),
        "tlsfuzzer against pqkit server: {}\n{stdout}\n{stderr}",
        out.status
    );
    println!("{}", summary.join("\n"));
}
