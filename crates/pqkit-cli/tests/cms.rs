//! `pqkit cms` as a user runs it: sign and verify with a key file and with an HSS state file,
//! a post-quantum and a classical signer under `--require`, and the refusals with their exit
//! status — a changed file (1), a detached SignedData without its content (2), a FIFO as the
//! content (2), an output that exists (3), a signer certificate that is not the key's (3).

mod support;

use std::path::Path;
use std::process::Output;

use support::{code_signer, hss_code_signer, pqkit, pqkit_cms_sign, run_ok, scratch};

fn status(out: &Output) -> i32 {
    out.status.code().expect("exit status")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn sign_verify_and_refusals() {
    let dir = scratch("cli-cms");
    for (name, sig) in [("pq", "ML-DSA-65"), ("ec", "ECDSA-P256")] {
        run_ok(
            pqkit()
                .args(["pki", "init", "--sig", sig, "--dir"])
                .arg(dir.join(name)),
        );
    }
    let (pq_cert, pq_key) = code_signer(&dir, "ML-DSA-44", &dir.join("pq"));
    let (ec_cert, ec_key) = code_signer(&dir, "ECDSA-P256", &dir.join("ec"));
    let file = dir.join("fw.bin");
    std::fs::write(&file, vec![7u8; 300_000]).expect("content");
    let signed = dir.join("fw.p7s");
    run_ok(
        pqkit()
            .args(["cms", "sign", "--detached", "--signer"])
            .arg(&pq_cert)
            .arg("--key")
            .arg(&pq_key)
            .arg("--signer")
            .arg(&ec_cert)
            .arg("--key")
            .arg(&ec_key)
            .arg("-o")
            .arg(&signed)
            .arg(&file),
    );
    let verify = |ca: &str, extra: &[&str], content: &Path| {
        pqkit()
            .args(["cms", "verify", "--ca"])
            .arg(dir.join(ca).join("ca.pem"))
            .args(extra)
            .arg("--content")
            .arg(content)
            .arg(&signed)
            .output()
            .expect("run")
    };
    // Both CAs trusted (two --ca files are not taken: one file with both).
    let both = dir.join("both.pem");
    let mut pems = std::fs::read(dir.join("pq/ca.pem")).expect("ca");
    pems.extend(std::fs::read(dir.join("ec/ca.pem")).expect("ca"));
    std::fs::write(&both, pems).expect("both");
    let out = run_ok(
        pqkit()
            .args(["cms", "verify", "--ca"])
            .arg(&both)
            .arg("--content")
            .arg(&file)
            .arg(&signed),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches(": OK").count(), 2, "{text}");
    // Only the post-quantum CA: `all` fails naming the ECDSA signer (exit 1), `any` passes.
    let out = verify("pq", &[], &file);
    assert_eq!(status(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("CN=ECDSA-P256 signer"),
        "{}",
        stderr(&out)
    );
    let out = verify("pq", &["--require", "any"], &file);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    // A changed file: exit 1, the reason named.
    let changed = dir.join("fw-changed.bin");
    let mut bytes = std::fs::read(&file).expect("read");
    bytes[123_456] ^= 1;
    std::fs::write(&changed, bytes).expect("write");
    let out = verify("pq", &["--require", "any"], &changed);
    assert_eq!(status(&out), 1, "{}", stderr(&out));
    assert!(stderr(&out).contains("messageDigest"), "{}", stderr(&out));
    // Detached without its content: a usage error.
    let out = pqkit()
        .args(["cms", "verify", "--ca"])
        .arg(dir.join("pq/ca.pem"))
        .arg(&signed)
        .output()
        .expect("run");
    assert_eq!(status(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("detached"), "{}", stderr(&out));
    // A FIFO as the content is refused, not waited on.
    let fifo = dir.join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let out = verify("pq", &[], &fifo);
    assert_eq!(status(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not a regular file"),
        "{}",
        stderr(&out)
    );
    // The output exists: refused without --force, before any key is used.
    let out = pqkit()
        .args(["cms", "sign", "--signer"])
        .arg(&pq_cert)
        .arg("--key")
        .arg(&pq_key)
        .arg("-o")
        .arg(&signed)
        .arg(&file)
        .output()
        .expect("run");
    assert_eq!(status(&out), 3, "{}", stderr(&out));
    assert!(stderr(&out).contains("--force"), "{}", stderr(&out));
    // A certificate that is not the key's.
    let out = pqkit()
        .args(["cms", "sign", "--signer"])
        .arg(&ec_cert)
        .arg("--key")
        .arg(&pq_key)
        .arg("-o")
        .arg(dir.join("mismatch.p7m"))
        .arg(&file)
        .output()
        .expect("run");
    assert_eq!(status(&out), 3, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not the signing key"),
        "{}",
        stderr(&out)
    );
    // Attached, shown, and its content written back.
    let attached = dir.join("fw.p7m");
    run_ok(
        pqkit()
            .args(["cms", "sign", "--pem", "--signer"])
            .arg(&pq_cert)
            .arg("--key")
            .arg(&pq_key)
            .arg("-o")
            .arg(&attached)
            .arg(&file),
    );
    let shown = run_ok(pqkit().args(["cms", "show", "--json"]).arg(&attached));
    let json: serde_json::Value = serde_json::from_slice(&shown.stdout).expect("JSON");
    assert_eq!(json["attached_bytes"], 300_000);
    assert_eq!(json["signers"][0]["signature_algorithm"], "ML-DSA-44");
    let back = dir.join("fw.back");
    run_ok(
        pqkit()
            .args(["cms", "verify", "--ca"])
            .arg(dir.join("pq/ca.pem"))
            .arg("--out")
            .arg(&back)
            .arg(&attached),
    );
    assert_eq!(
        std::fs::read(&back).expect("back"),
        std::fs::read(&file).expect("file")
    );
}

/// An HSS state file signs through `pqkit cms sign`: each SignedData spends one one-time key,
/// recorded in the state file before the output is written.
#[test]
fn an_hss_state_file_signs() {
    let dir = scratch("cli-cms-hss");
    let (ca, fw_cert, fw_state) = hss_code_signer(&dir, "L3_H5_W8");
    let file = dir.join("fw.bin");
    std::fs::write(&file, b"firmware").expect("content");
    for i in 0..2 {
        let signed = dir.join(format!("fw-{i}.p7m"));
        pqkit_cms_sign(&fw_cert, &fw_state, &[], &signed, &file);
        let out = run_ok(
            pqkit()
                .args(["cms", "verify", "--ca"])
                .arg(&ca)
                .arg(&signed),
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("HSS/LMS, SHA-256"));
    }
    let status = run_ok(
        pqkit()
            .args(["hbs", "status", "--json", "--state"])
            .arg(&fw_state),
    );
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(
        text.contains("\"used\": 2") || text.contains("\"used\":2"),
        "{text}"
    );
}

/// A signer whose key is in pqkit's PKCS#11 token (`pkcs11:` URI): with signed attributes only
/// their DER enters the token; the SignedData verifies like any other.
#[test]
fn a_token_key_signs() {
    let dir = scratch("cli-cms-token");
    let pki = dir.join("pki");
    run_ok(
        pqkit()
            .args(["pki", "init", "--sig", "ML-DSA-65", "--dir"])
            .arg(&pki),
    );
    let with_token = |cmd: &mut std::process::Command| {
        cmd.env("PQKIT_PKCS11_CONF", dir.join("pkcs11.json"))
            .env("PQKIT_PKCS11_PIN", "12345678")
            .env_remove("PQKIT_PKCS11_MODULE");
    };
    let mut init = support::token_init("fw", &dir.join("token"));
    with_token(&mut init);
    run_ok(&mut init);
    let mut keygen = pqkit();
    keygen.args([
        "token",
        "keygen",
        "--token",
        "fw",
        "--alg",
        "ML-DSA-87",
        "--label",
        "signer",
    ]);
    with_token(&mut keygen);
    let uri = String::from_utf8(run_ok(&mut keygen).stdout)
        .expect("utf-8")
        .trim()
        .to_owned();
    let (csr, cert) = (dir.join("signer.csr"), dir.join("signer.pem"));
    let mut create = pqkit();
    create
        .args([
            "csr",
            "create",
            "--subject",
            "CN=token signer",
            "--key",
            &uri,
            "-o",
        ])
        .arg(&csr);
    with_token(&mut create);
    run_ok(&mut create);
    run_ok(
        pqkit()
            .args(["csr", "sign", "--profile", "code-signing", "--ca"])
            .arg(pki.join("ca.pem"))
            .arg("--ca-key")
            .arg(pki.join("ca.key"))
            .arg("-o")
            .arg(&cert)
            .arg(&csr),
    );
    let file = dir.join("fw.bin");
    std::fs::write(&file, vec![1u8; 2 << 20]).expect("content");
    let signed = dir.join("fw.p7s");
    let mut sign = pqkit();
    sign.args(["cms", "sign", "--detached", "--signer"])
        .arg(&cert)
        .args(["--key", &uri, "-o"])
        .arg(&signed)
        .arg(&file);
    with_token(&mut sign);
    run_ok(&mut sign);
    let out = run_ok(
        pqkit()
            .args(["cms", "verify", "--ca"])
            .arg(pki.join("ca.pem"))
            .arg("--content")
            .arg(&file)
            .arg(&signed),
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("ML-DSA-87, SHA-512, signed attributes: OK")
    );
}

/// Composite ML-DSA from the command line: a composite CA (`pqkit pki init`), a composite code
/// signer, a detached SignedData without signed attributes verified under that CA; `sign`
/// with a context string; `--deterministic` repeatable with an Ed25519 half and refused (exit
/// 2) with an RSA-PSS half, whose salt is fresh every time.
#[test]
fn composite_ml_dsa_signs_files_and_signed_data() {
    let dir = scratch("cli-composite");
    let pki = dir.join("pki");
    run_ok(
        pqkit()
            .args(["pki", "init", "--sig", "MLDSA65-ECDSA-P256-SHA512", "--dir"])
            .arg(&pki),
    );
    let (cert, key) = code_signer(&dir, "MLDSA87-Ed448-SHAKE256", &pki);
    let file = dir.join("fw.bin");
    std::fs::write(&file, vec![9u8; 100_000]).expect("content");
    let signed = dir.join("fw.p7s");
    pqkit_cms_sign(
        &cert,
        &key,
        &["--detached", "--no-signed-attributes"],
        &signed,
        &file,
    );
    let out = run_ok(
        pqkit()
            .args(["cms", "verify", "--ca"])
            .arg(pki.join("ca.pem"))
            .arg("--content")
            .arg(&file)
            .arg(&signed),
    );
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.contains("MLDSA87-Ed448-SHAKE256") && report.contains(": OK"),
        "{report}"
    );

    let sign = |alg: &str, extra: &[&str], n: usize| {
        let key = dir.join(format!("{alg}.pem"));
        if !key.exists() {
            run_ok(
                pqkit()
                    .args(["keygen", "--alg", alg, "-o"])
                    .arg(&key)
                    .arg("--pub")
                    .arg(dir.join(format!("{alg}.pub"))),
            );
        }
        let sig = dir.join(format!("{alg}-{n}.sig"));
        let out = pqkit()
            .args(["sign", "--key"])
            .arg(&key)
            .args(extra)
            .arg("-o")
            .arg(&sig)
            .arg(&file)
            .output()
            .expect("run");
        (out, sig)
    };
    let (out, sig) = sign("MLDSA44-ECDSA-P256-SHA256", &["--context", "app v1"], 0);
    assert!(out.status.success(), "{}", stderr(&out));
    let verify = |alg: &str, context: &str| {
        pqkit()
            .args(["verify", "--pub"])
            .arg(dir.join(format!("{alg}.pub")))
            .args(["--context", context, "--signature"])
            .arg(&sig)
            .arg(&file)
            .output()
            .expect("run")
    };
    assert!(
        verify("MLDSA44-ECDSA-P256-SHA256", "app v1")
            .status
            .success()
    );
    assert_eq!(status(&verify("MLDSA44-ECDSA-P256-SHA256", "app v2")), 1);

    let ed = "MLDSA65-Ed25519-SHA512";
    let (a, sig_a) = sign(ed, &["--deterministic"], 1);
    let (b, sig_b) = sign(ed, &["--deterministic"], 2);
    assert!(a.status.success() && b.status.success(), "{}", stderr(&a));
    assert_eq!(
        std::fs::read(sig_a).expect("sig"),
        std::fs::read(sig_b).expect("sig")
    );
    let (refused, _) = sign("MLDSA65-RSA3072-PSS-SHA512", &["--deterministic"], 3);
    assert_eq!(status(&refused), 2, "{}", stderr(&refused));
    assert!(stderr(&refused).contains("--deterministic"));
}
