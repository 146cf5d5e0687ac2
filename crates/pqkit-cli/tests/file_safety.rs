//! Careless and hostile use of the commands that write files: every secret is created 0600,
//! nothing is overwritten without `--force`, no output may be one of the inputs, a stateful key
//! spends no one-time key when an input or output is wrong, a copied state file refuses to
//! sign until adopted, and the exit status says what kind of failure it was (1 verification,
//! 2 usage, 3 other). Inputs are read as PEM at any line width, as DER, and from `-`.

mod support;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use support::{SmallDisk, pqkit, run_ok, scratch};

fn run(cmd: &mut Command) -> Output {
    cmd.stdin(Stdio::null()).output().expect("run")
}

/// One `pqkit:` line on stderr containing `needle`, exit status `code`, no panic.
fn fails(out: &Output, code: i32, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "stderr: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains(needle), "stderr lacks {needle:?}: {err}");
    assert!(!err.contains(" { "), "a Debug dump: {err}");
}

#[cfg(unix)]
fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).expect("stat").permissions().mode() & 0o777
}

#[cfg(unix)]
#[test]
fn secrets_are_private_and_never_overwritten_without_force() {
    let dir = scratch("safety-keys");
    let key = dir.join("k.pem");
    run_ok(
        pqkit()
            .args(["keygen", "--alg", "ML-DSA-44", "-o"])
            .arg(&key),
    );
    assert_eq!(mode(&key), 0o600);
    let before = std::fs::read(&key).expect("key");
    // keygen over an existing key: refused, the key untouched.
    let out = run(pqkit()
        .args(["keygen", "--alg", "ML-DSA-44", "-o"])
        .arg(&key));
    fails(&out, 3, "refusing to overwrite");
    assert_eq!(std::fs::read(&key).expect("key"), before);
    // sign -o onto its own key: refused even with --force.
    std::fs::write(dir.join("doc"), b"doc").expect("write");
    let out = run(pqkit()
        .args(["sign", "--force", "--key"])
        .arg(&key)
        .arg("-o")
        .arg(&key)
        .arg(dir.join("doc")));
    fails(&out, 2, "refusing to overwrite an input");
    assert_eq!(std::fs::read(&key).expect("key"), before);
    // With --force a key is replaced, still 0600.
    std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o644))
        .expect("chmod");
    run_ok(
        pqkit()
            .args(["keygen", "--force", "--alg", "ML-DSA-44", "-o"])
            .arg(&key),
    );
    assert_eq!(mode(&key), 0o600);
    assert_ne!(std::fs::read(&key).expect("key"), before);
    // KEM shared secrets are secrets too.
    let (kem, kem_pub) = (dir.join("kem.pem"), dir.join("kem.pub"));
    run_ok(
        pqkit()
            .args(["keygen", "--alg", "ML-KEM-768", "-o"])
            .arg(&kem)
            .arg("--pub")
            .arg(&kem_pub),
    );
    let ss = dir.join("ss.hex");
    run_ok(
        pqkit()
            .args(["kem", "encapsulate", "--pub"])
            .arg(&kem_pub)
            .arg("-o")
            .arg(dir.join("ct"))
            .arg("--secret")
            .arg(&ss),
    );
    assert_eq!(mode(&ss), 0o600);
    let out = run(pqkit()
        .args(["kem", "decapsulate", "--key"])
        .arg(&kem)
        .arg("--ciphertext")
        .arg(dir.join("ct"))
        .arg("--secret")
        .arg(&ss));
    fails(&out, 3, "refusing to overwrite");
    // A symbolic link where the key would go is not followed.
    let victim = dir.join("victim");
    std::fs::write(&victim, b"keep").expect("write");
    let link = dir.join("link.pem");
    std::os::unix::fs::symlink(&victim, &link).expect("symlink");
    let out = run(pqkit()
        .args(["keygen", "--alg", "Ed25519", "-o"])
        .arg(&link));
    fails(&out, 3, "refusing to overwrite");
    assert_eq!(std::fs::read(&victim).expect("victim"), b"keep");
}

#[test]
fn pki_directories_are_never_clobbered() {
    let dir = scratch("safety-pki");
    let pki = dir.join("pki");
    run_ok(
        pqkit()
            .args(["pki", "init", "--sig", "ECDSA-P256", "--dir"])
            .arg(&pki),
    );
    let ca_key = std::fs::read(pki.join("ca.key")).expect("ca key");
    let out = run(pqkit()
        .args([
            "pki",
            "issue",
            "--root",
            "ECDSA-P256",
            "--intermediate",
            "ECDSA-P256",
        ])
        .args(["--leaf", "ECDSA-P256", "--dir"])
        .arg(&pki));
    fails(&out, 3, "ca.pem: exists");
    assert_eq!(std::fs::read(pki.join("ca.key")).expect("ca key"), ca_key);
    assert!(
        !pki.join("intermediate.pem").exists(),
        "nothing of the refused run is left"
    );
    let leftovers: Vec<_> = std::fs::read_dir(&pki)
        .expect("ls")
        .filter_map(|e| {
            let name = e.ok()?.file_name().to_string_lossy().into_owned();
            name.contains(".tmp").then_some(name)
        })
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn a_ca_that_could_not_issue_is_refused() {
    let dir = scratch("safety-ca");
    let pki = dir.join("pki");
    run_ok(
        pqkit()
            .args(["pki", "init", "--sig", "ML-DSA-44", "--dir"])
            .arg(&pki),
    );
    let key = dir.join("device.key");
    run_ok(
        pqkit()
            .args(["keygen", "--alg", "ML-DSA-44", "-o"])
            .arg(&key),
    );
    let csr = dir.join("device.csr");
    run_ok(
        pqkit()
            .args(["csr", "create", "--subject", "CN=device", "--key"])
            .arg(&key)
            .arg("-o")
            .arg(&csr),
    );
    // The server certificate is an end entity: it may not issue.
    let out = run(pqkit()
        .args(["csr", "sign", "--ca"])
        .arg(pki.join("server.pem"))
        .arg("--ca-key")
        .arg(pki.join("server.key"))
        .arg(&csr)
        .arg("-o")
        .arg(dir.join("device.pem")));
    fails(&out, 3, "is not a CA");
    assert!(!dir.join("device.pem").exists());
    // A leaf issued by that end entity anyway (by the library's lower layer) is refused by
    // x509 verify: see pqkit-pki's path_validation tests; here the CLI's exit status.
    let out = run(pqkit()
        .args(["x509", "verify", "--purpose", "clientAuth", "--ca"])
        .arg(pki.join("ca.pem"))
        .arg(pki.join("server.pem")));
    fails(&out, 1, "clientAuth");
}

#[test]
fn exit_statuses_tell_usage_from_verification_from_other_failures() {
    let dir = scratch("safety-exit");
    // Usage: an unknown algorithm, an unknown option.
    fails(
        &run(pqkit().args(["keygen", "--alg", "ML-DSA-99", "-o", "x"])),
        2,
        "unknown algorithm",
    );
    assert_eq!(
        run(pqkit().args(["keygen", "--frobnicate"])).status.code(),
        Some(2)
    );
    // Other: a missing file, named.
    fails(
        &run(pqkit()
            .args(["sign", "--key", "/nonexistent/k.pem", "-o"])
            .arg(dir.join("s"))
            .arg("x")),
        3,
        "/nonexistent/k.pem",
    );
    // Verification: a signature that does not verify.
    let (key, public, doc, sig) = (dir.join("k"), dir.join("p"), dir.join("d"), dir.join("s"));
    std::fs::write(&doc, b"document").expect("write");
    run_ok(
        pqkit()
            .args(["keygen", "--alg", "Falcon-512", "-o"])
            .arg(&key)
            .arg("--pub")
            .arg(&public),
    );
    run_ok(
        pqkit()
            .args(["sign", "--key"])
            .arg(&key)
            .arg("-o")
            .arg(&sig)
            .arg(&doc),
    );
    std::fs::write(&doc, b"documenT").expect("write");
    fails(
        &run(pqkit()
            .args(["verify", "--pub"])
            .arg(&public)
            .arg("--signature")
            .arg(&sig)
            .arg(&doc)),
        1,
        "verification failed",
    );
    // Two outputs that are one file, standard input for two inputs, a zero timeout, a
    // validity of no days: usage errors, before anything is written.
    fails(
        &run(pqkit()
            .args(["keygen", "--force", "--alg", "Ed25519", "-o"])
            .arg(dir.join("n.key"))
            .arg("--pub")
            .arg(dir.join("n.key"))),
        2,
        "named as two outputs",
    );
    assert!(!dir.join("n.key").exists());
    fails(
        &run(pqkit()
            .args(["sign", "--key", "-", "-o"])
            .arg(dir.join("x"))
            .arg("-")),
        2,
        "more than one input",
    );
    fails(
        &run(pqkit().args(["client", "--timeout", "0", "--ca", "x"])),
        2,
        "more than 0",
    );
    fails(
        &run(pqkit().args(["client", "--timeout", "1e20", "--ca", "x"])),
        2,
        "not a number of seconds",
    );
    fails(
        &run(pqkit().args(["client", "--timeout", "1e6", "--ca", "x"])),
        2,
        "at most a day",
    );
    assert_eq!(
        run(pqkit().args([
            "csr", "sign", "--days", "0", "--ca", "a", "--ca-key", "b", "c", "-o", "d"
        ]))
        .status
        .code(),
        Some(2)
    );
    let help = run_ok(pqkit().arg("--help"));
    assert!(String::from_utf8_lossy(&help.stdout).contains("Exit status:"));
}

#[test]
fn names_oids_code_points_pem_widths_der_and_stdin() {
    let dir = scratch("safety-inputs");
    // An OID and a TLS code point name ML-DSA-65 as `pqkit list` shows them.
    for (name, out) in [
        ("2.16.840.1.101.3.4.3.18", "a.pem"),
        ("0x0905", "b.pem"),
        ("mldsa65", "c.pem"),
    ] {
        let out = run_ok(
            pqkit()
                .args(["keygen", "--alg", name, "-o"])
                .arg(dir.join(out)),
        );
        assert!(String::from_utf8_lossy(&out.stderr).contains("ML-DSA-65"));
    }
    let key = dir.join("a.pem");
    let text = std::fs::read_to_string(&key).expect("key");
    // Re-wrapped at 76 columns, and on one line: OpenSSL reads both; so does pqkit.
    let body: String = text.lines().filter(|l| !l.starts_with("-----")).collect();
    let wrap = |width: usize| -> String {
        let lines: Vec<String> = body
            .as_bytes()
            .chunks(width)
            .map(|c| String::from_utf8_lossy(c).into_owned())
            .collect();
        format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            lines.join("\n")
        )
    };
    let reference = run_ok(pqkit().arg("pubkey").arg(&key)).stdout;
    for (file, content) in [("w76.pem", wrap(76)), ("w1.pem", wrap(body.len()))] {
        std::fs::write(dir.join(file), content).expect("write");
        assert_eq!(
            run_ok(pqkit().arg("pubkey").arg(dir.join(file))).stdout,
            reference
        );
    }
    // DER: the key and a certificate.
    let der = <base64ct::Base64 as base64ct::Encoding>::decode_vec(&body).expect("base64");
    std::fs::write(dir.join("k.der"), &der).expect("write");
    assert_eq!(
        run_ok(pqkit().arg("pubkey").arg(dir.join("k.der"))).stdout,
        reference
    );
    // `-`: the document to sign from standard input.
    let sig = dir.join("s");
    let mut child = pqkit()
        .args(["sign", "--key"])
        .arg(&key)
        .arg("-o")
        .arg(&sig)
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"piped document")
        .expect("write");
    assert!(child.wait_with_output().expect("wait").status.success());
    std::fs::write(dir.join("doc"), b"piped document").expect("write");
    run_ok(
        pqkit()
            .args(["verify", "--pub"])
            .arg(&key)
            .arg("--signature")
            .arg(&sig)
            .arg(dir.join("doc")),
    );
}

#[test]
fn rsa_pkcs1_when_asked() {
    let dir = scratch("safety-rsa");
    let (key, doc) = (dir.join("k.pem"), dir.join("doc"));
    std::fs::write(&doc, b"document").expect("write");
    run_ok(
        pqkit()
            .args(["keygen", "--alg", "RSA-2048", "-o"])
            .arg(&key),
    );
    for padding in ["pkcs1", "pss"] {
        let sig = dir.join(format!("{padding}.sig"));
        run_ok(
            pqkit()
                .args(["sign", "--padding", padding, "--key"])
                .arg(&key)
                .arg("-o")
                .arg(&sig)
                .arg(&doc),
        );
        run_ok(
            pqkit()
                .args(["verify", "--padding", padding, "--pub"])
                .arg(&key)
                .arg("--signature")
                .arg(&sig)
                .arg(&doc),
        );
        let other = if padding == "pss" { "pkcs1" } else { "pss" };
        let out = run(pqkit()
            .args(["verify", "--padding", other, "--pub"])
            .arg(&key)
            .arg("--signature")
            .arg(&sig)
            .arg(&doc));
        fails(&out, 1, "verification failed");
    }
    let ed = dir.join("ed.pem");
    run_ok(pqkit().args(["keygen", "--alg", "Ed25519", "-o"]).arg(&ed));
    let out = run(pqkit()
        .args(["sign", "--padding", "pkcs1", "--key"])
        .arg(&ed)
        .arg("-o")
        .arg(dir.join("x"))
        .arg(&doc));
    fails(&out, 2, "--padding is for RSA keys");
}

/// `hbs sign` checks its inputs and outputs before it reserves a one-time key, never reserves
/// more than it has files, and refuses to sign more files than the key has left.
#[test]
fn hbs_sign_spends_no_one_time_key_on_a_mistake() {
    let dir = scratch("safety-hbs");
    let (state, public) = (dir.join("k.hss"), dir.join("k.pub"));
    run_ok(
        pqkit()
            .args(["hbs", "keygen", "--preset", "L1_H5_W8", "--state"])
            .arg(&state)
            .arg("--pub")
            .arg(&public),
    );
    #[cfg(unix)]
    assert_eq!(mode(&state), 0o600, "a state file is a secret key");
    let used = || -> u64 {
        let out = run_ok(
            pqkit()
                .args(["hbs", "status", "--json", "--state"])
                .arg(&state),
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        v["used"].as_u64().expect("used")
    };
    let files: Vec<_> = (0..3)
        .map(|i| {
            let f = dir.join(format!("f{i}"));
            std::fs::write(&f, [i]).expect("write");
            f
        })
        .collect();
    // A missing output directory: nothing reserved.
    let out = run(pqkit()
        .args(["hbs", "sign", "--reserve", "64", "--state"])
        .arg(&state)
        .arg("--out-dir")
        .arg(dir.join("missing"))
        .args(&files));
    fails(&out, 3, "missing");
    assert_eq!(used(), 0);
    // A missing input: nothing reserved.
    let out = run(pqkit()
        .args(["hbs", "sign", "--state"])
        .arg(&state)
        .arg("-o")
        .arg(dir.join("x.sig"))
        .arg(dir.join("no-such-file")));
    fails(&out, 3, "no-such-file");
    assert_eq!(used(), 0);
    // --reserve 100 on a 32-signature key with three files reserves three.
    let sigs = dir.join("sigs");
    std::fs::create_dir(&sigs).expect("mkdir");
    run_ok(
        pqkit()
            .args(["hbs", "sign", "--reserve", "100", "--state"])
            .arg(&state)
            .arg("--out-dir")
            .arg(&sigs)
            .args(&files),
    );
    assert_eq!(used(), 3);
    // The same outputs again: refused before anything is reserved.
    let out = run(pqkit()
        .args(["hbs", "sign", "--state"])
        .arg(&state)
        .arg("--out-dir")
        .arg(&sigs)
        .args(&files));
    fails(&out, 3, "refusing to overwrite");
    assert_eq!(used(), 3);
    // More files than one-time keys left: refused up front.
    let many: Vec<_> = (0..30)
        .map(|i| {
            let f = dir.join(format!("m{i}"));
            std::fs::write(&f, [i]).expect("write");
            f
        })
        .collect();
    let more = dir.join("more");
    std::fs::create_dir(&more).expect("mkdir");
    let out = run(pqkit()
        .args(["hbs", "sign", "--state"])
        .arg(&state)
        .arg("--out-dir")
        .arg(&more)
        .args(&many));
    fails(&out, 3, "only 29 one-time keys remain");
    assert_eq!(used(), 3);
    // A copy of the state file refuses to sign; adopt makes it the key (with the warning).
    let copy = dir.join("copy.hss");
    std::fs::copy(&state, &copy).expect("cp");
    let out = run(pqkit()
        .args(["hbs", "sign", "--state"])
        .arg(&copy)
        .arg("-o")
        .arg(dir.join("c.sig"))
        .arg(&files[0]));
    fails(&out, 3, "hbs adopt");
    // Without --yes: the warning, and nothing changes. With it, while the original is still
    // there and the same key: refused. Once the original is gone: adopted, past its counter.
    let out = run(pqkit()
        .args(["hbs", "adopt", "--skip", "2", "--state"])
        .arg(&copy));
    fails(&out, 2, "--yes");
    assert!(String::from_utf8_lossy(&out.stderr).contains("must never sign twice"));
    let out = run(pqkit()
        .args(["hbs", "adopt", "--yes", "--state"])
        .arg(&copy));
    fails(&out, 3, "still exists and is the same key");
    std::fs::rename(&state, dir.join("retired.hss")).expect("mv");
    run_ok(
        pqkit()
            .args(["hbs", "adopt", "--yes", "--skip", "2", "--state"])
            .arg(&copy),
    );
    run_ok(
        pqkit()
            .args(["hbs", "sign", "--state"])
            .arg(&copy)
            .arg("-o")
            .arg(dir.join("c.sig"))
            .arg(&files[0]),
    );
    assert!(
        !dir.join("copy.hss.lock").exists(),
        "the lock is gone with the signer"
    );
    // The key's own files are never outputs: a signature named <state>.lock spends nothing;
    // a public key named like the state's cache writes nothing.
    let out = run(pqkit()
        .args(["hbs", "sign", "--force", "--state"])
        .arg(&copy)
        .arg("-o")
        .arg(dir.join("copy.hss.lock"))
        .arg(&files[0]));
    fails(&out, 2, "refusing to overwrite an input");
    let before = std::fs::read(&copy).expect("state");
    let out = run(pqkit()
        .args(["hbs", "keygen", "--preset", "L1_H5_W8", "--state"])
        .arg(dir.join("new.hss"))
        .arg("--pub")
        .arg(dir.join("new.hss.cache")));
    fails(&out, 2, "refusing to overwrite an input");
    assert!(!dir.join("new.hss").exists());
    assert_eq!(std::fs::read(&copy).expect("state"), before);
    // A symbolic link to a state file neither signs nor is adopted.
    #[cfg(unix)]
    {
        let link = dir.join("link.hss");
        std::os::unix::fs::symlink(&copy, &link).expect("ln -s");
        let out = run(pqkit()
            .args(["hbs", "adopt", "--yes", "--state"])
            .arg(&link));
        fails(&out, 3, "symbolic link");
        assert!(
            std::fs::symlink_metadata(&link)
                .expect("stat")
                .file_type()
                .is_symlink()
        );
    }
    // A skip past the end of the key is a typo, not an adoption.
    let out = run(pqkit()
        .args(["hbs", "adopt", "--yes", "--skip", "1000", "--state"])
        .arg(&copy));
    fails(&out, 2, "more than the");
    // hbs keygen never replaces a state file, --force or not.
    let out = run(pqkit()
        .args([
            "hbs", "keygen", "--force", "--preset", "L1_H5_W8", "--state",
        ])
        .arg(&copy)
        .arg("--pub")
        .arg(dir.join("other.pub")));
    fails(&out, 3, "refusing to overwrite a key");
}

/// `pki init` and `keygen` on a disk too small for all their files write none of them: no
/// CA certificate without its key, no private key without its public key.
#[test]
fn multi_file_outputs_appear_together_or_not_at_all() {
    let dir = scratch("all-or-nothing");
    let full = dir.join("small");
    let Some(_disk) = SmallDisk::mount(&full, "16k") else {
        return;
    };
    let out = pqkit()
        .args(["pki", "init", "--sig", "ML-DSA-65", "--dir"])
        .arg(full.join("pki"))
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let left: Vec<_> = std::fs::read_dir(full.join("pki"))
        .map(|d| d.filter_map(Result::ok).map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "pki init left {left:?}");
    // A key pair whose public half does not fit: neither file is left.
    // One 4 KiB page left: room for the private key's PEM (about 200 bytes for ML-DSA-87's
    // seed), not for the public key's 3.5 KB beside it.
    let filler = full.join("filler");
    std::fs::write(&filler, vec![0u8; 12 * 1024]).expect("fill");
    let out = pqkit()
        .args(["keygen", "--alg", "ML-DSA-87", "-o"])
        .arg(full.join("k.pem"))
        .arg("--pub")
        .arg(full.join("k.pub"))
        .output()
        .expect("run");
    assert!(
        !out.status.success(),
        "the public key (3.5 KB of PEM) did not fit"
    );
    assert!(
        !full.join("k.pem").exists(),
        "a private key without its public key"
    );
    assert!(!full.join("k.pub").exists());
}
