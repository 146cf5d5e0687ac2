//! CMS SignedData interop with OpenSSL 3.6 (`openssl cms`, built from the openssl-src crate's
//! sources into a cache outside the repository: `support::openssl`), both directions:
//!
//! - ML-DSA-44/65/87 (RFC 9882) and the six SLH-DSA SHA2 sets (RFC 9814), attached and
//!   detached, with signed attributes: pqkit signs, OpenSSL verifies (and returns the content);
//!   OpenSSL signs (`-md` as each profile says: OpenSSL 3.6 has no default digest for them),
//!   pqkit verifies. PEM one way and the other for ML-DSA-65; ML-DSA-87's signer named by
//!   subjectKeyIdentifier.
//! - Without signed attributes: ECDSA P-256 and RSA PKCS#1 v1.5 both ways; for ML-DSA and
//!   SLH-DSA, OpenSSL 3.6 can do neither direction (its `-noattr` path for them was fixed only
//!   in OpenSSL 4.0) — asserted, so that the test says when that changes.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::{code_signer, issued, openssl_cmd, pqkit, pqkit_cms_sign, run_ok, scratch};

fn pki(dir: &Path) {
    run_ok(
        pqkit()
            .args(["pki", "init", "--sig", "ML-DSA-65", "--dir"])
            .arg(dir.join("pki")),
    );
}

/// The digest OpenSSL is told to use (`-md`): each profile's (RFC 9882, RFC 9814).
fn md(alg: &str) -> &'static str {
    if alg.starts_with("SLH-DSA-SHA2-128")
        || alg.starts_with("ECDSA-P256")
        || alg.starts_with("RSA")
    {
        "sha256"
    } else {
        "sha512"
    }
}

fn ossl(dir: &Path, args: &[&str], paths: &[(&str, &Path)]) -> Output {
    let mut cmd: Command = openssl_cmd(dir);
    cmd.arg("cms").args(args);
    for (flag, path) in paths {
        cmd.arg(flag).arg(path);
    }
    cmd.output().expect("openssl runs")
}

/// `openssl cms -verify` of `signed` (DER or PEM) for codeSigning against `ca`, with the
/// content beside it when detached, the content written to `out`.
fn ossl_verify(
    dir: &Path,
    form: &str,
    signed: &Path,
    ca: &Path,
    content: Option<&Path>,
    out: &Path,
) -> Output {
    let mut paths = vec![("-in", signed), ("-CAfile", ca), ("-out", out)];
    if let Some(c) = content {
        paths.push(("-content", c));
    }
    ossl(
        dir,
        &[
            "-verify", "-binary", "-purpose", "codesign", "-inform", form,
        ],
        &paths,
    )
}

fn ok(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn content(dir: &Path) -> (PathBuf, Vec<u8>) {
    let bytes: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let path = dir.join("firmware.bin");
    std::fs::write(&path, &bytes).expect("content");
    (path, bytes)
}

#[test]
fn pqkit_and_openssl_verify_each_others_signed_data() {
    let dir = scratch("interop-openssl-cms");
    pki(&dir);
    let ca = dir.join("pki/ca.pem");
    let (file, bytes) = content(&dir);
    let mut matrix = Vec::new();
    for alg in [
        "ML-DSA-44",
        "ML-DSA-65",
        "ML-DSA-87",
        "SLH-DSA-SHA2-128s",
        "SLH-DSA-SHA2-128f",
        "SLH-DSA-SHA2-192s",
        "SLH-DSA-SHA2-192f",
        "SLH-DSA-SHA2-256s",
        "SLH-DSA-SHA2-256f",
    ] {
        let (cert, key) = code_signer(&dir, alg, &dir.join("pki"));
        let pem = alg == "ML-DSA-65";
        let form = if pem { "PEM" } else { "DER" };
        // pqkit → OpenSSL, attached: OpenSSL returns the content.
        let signed = dir.join(format!("{alg}.p7m"));
        // ML-DSA-87's signer is named by subjectKeyIdentifier (SignerInfo version 3).
        let flags: &[&str] = match alg {
            "ML-DSA-65" => &["--pem"],
            "ML-DSA-87" => &["--subject-key-identifier"],
            _ => &[],
        };
        pqkit_cms_sign(&cert, &key, flags, &signed, &file);
        let got = dir.join(format!("{alg}.out"));
        let out = ossl_verify(&dir, form, &signed, &ca, None, &got);
        ok(
            &out,
            &format!("{alg}: OpenSSL verifies pqkit's attached SignedData"),
        );
        assert_eq!(std::fs::read(&got).expect("content"), bytes, "{alg}");
        // pqkit → OpenSSL, detached.
        let detached = dir.join(format!("{alg}.p7s"));
        pqkit_cms_sign(&cert, &key, &["--detached"], &detached, &file);
        let out = ossl_verify(
            &dir,
            "DER",
            &detached,
            &ca,
            Some(&file),
            Path::new("/dev/null"),
        );
        ok(
            &out,
            &format!("{alg}: OpenSSL verifies pqkit's detached SignedData"),
        );
        // OpenSSL → pqkit, attached and detached.
        for attached in [true, false] {
            let theirs = dir.join(format!("{alg}-openssl-{attached}.p7"));
            let mut args = vec!["-sign", "-binary", "-md", md(alg), "-outform", form];
            if attached {
                args.push("-nodetach");
            }
            let out = ossl(
                &dir,
                &args,
                &[
                    ("-in", &file),
                    ("-signer", &cert),
                    ("-inkey", &key),
                    ("-out", &theirs),
                ],
            );
            ok(&out, &format!("{alg}: OpenSSL signs"));
            let mut verify = pqkit();
            verify.args(["cms", "verify", "--ca"]).arg(&ca);
            let back = dir.join(format!("{alg}-openssl.out"));
            if attached {
                verify.arg("--out").arg(&back);
            } else {
                verify.arg("--content").arg(&file);
            }
            let out = run_ok(verify.arg(&theirs));
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(text.contains(alg) && text.contains(": OK"), "{alg}: {text}");
            if attached {
                assert_eq!(std::fs::read(&back).expect("content"), bytes, "{alg}");
                std::fs::remove_file(&back).expect("rm");
            }
        }
        matrix.push(format!(
            "{alg}: pqkit→OpenSSL attached+detached ({form}), OpenSSL→pqkit attached+detached (-md {})",
            md(alg)
        ));
    }
    println!("{}", matrix.join("\n"));
}

#[test]
fn without_signed_attributes_and_what_openssl_3_6_cannot_do() {
    let dir = scratch("interop-openssl-cms-noattr");
    pki(&dir);
    let ca = dir.join("pki/ca.pem");
    let (file, _) = content(&dir);
    for alg in [
        "ECDSA-P256",
        "RSA-PKCS1-2048",
        "ML-DSA-65",
        "SLH-DSA-SHA2-128f",
    ] {
        let (cert, key) = code_signer(&dir, alg, &dir.join("pki"));
        let pq = alg.starts_with("ML-DSA") || alg.starts_with("SLH-DSA");
        let ours = dir.join(format!("{alg}-noattr.p7m"));
        pqkit_cms_sign(&cert, &key, &["--no-signed-attributes"], &ours, &file);
        // pqkit verifies its own either way.
        run_ok(pqkit().args(["cms", "verify", "--ca"]).arg(&ca).arg(&ours));
        let out = ossl_verify(&dir, "DER", &ours, &ca, None, Path::new("/dev/null"));
        let theirs = dir.join(format!("{alg}-openssl-noattr.p7m"));
        let signed = ossl(
            &dir,
            &[
                "-sign",
                "-binary",
                "-noattr",
                "-nodetach",
                "-md",
                md(alg),
                "-outform",
                "DER",
            ],
            &[
                ("-in", &file),
                ("-signer", &cert),
                ("-inkey", &key),
                ("-out", &theirs),
            ],
        );
        if pq {
            let said = String::from_utf8_lossy(&out.stderr);
            assert!(
                !out.status.success() && said.contains("signature not supported"),
                "{alg}: OpenSSL 3.6 now verifies a SignedData without signed attributes \
                 — update this test and the book's CMS chapter: {said}"
            );
            assert!(
                !signed.status.success(),
                "{alg}: OpenSSL 3.6 now signs without signed attributes — update this test"
            );
        } else {
            ok(
                &out,
                &format!("{alg}: OpenSSL verifies pqkit's -noattr SignedData"),
            );
            ok(&signed, &format!("{alg}: OpenSSL signs with -noattr"));
            run_ok(
                pqkit()
                    .args(["cms", "verify", "--ca"])
                    .arg(&ca)
                    .arg(&theirs),
            );
        }
    }
}

/// OpenSSL 3.6 as an RFC 3161 time-stamping authority (`openssl ts -reply -token_out`) for a
/// pqkit SignedData: `pqkit cms timestamp` hands out the signature value and takes the token
/// back, and `pqkit cms verify` then accepts a signer whose certificate has expired since —
/// validated at the token's time — and refuses it without the token.
#[test]
fn openssl_time_stamps_a_pqkit_signer() {
    let dir = scratch("interop-openssl-tsa");
    pki(&dir);
    let ca = dir.join("pki/ca.pem");
    let (file, _) = content(&dir);
    let pki_dir = dir.join("pki");
    let (cert, key) = issued(&dir, "fw", "ML-DSA-65", &pki_dir, "code-signing", 100);
    let (tsa_cert, tsa_key) = issued(&dir, "tsa", "ECDSA-P256", &pki_dir, "time-stamping", 300);
    let signed = dir.join("fw.p7s");
    pqkit_cms_sign(&cert, &key, &["--detached"], &signed, &file);
    let value = dir.join("fw.sig");
    run_ok(
        pqkit()
            .args(["cms", "timestamp", "--signature-out"])
            .arg(&value)
            .arg(&signed),
    );
    std::fs::write(dir.join("tsaserial"), "01\n").expect("serial");
    let conf = dir.join("tsa.cnf");
    std::fs::write(
        &conf,
        format!(
            "[tsa]\ndefault_tsa = tsa1\n[tsa1]\nserial = {}\ncrypto_device = builtin\n\
             signer_digest = sha256\ndefault_policy = 1.3.6.1.4.1.99999.1\n\
             digests = sha256, sha384, sha512\naccuracy = secs:1\nordering = no\n\
             tsa_name = no\ness_cert_id_chain = no\ness_cert_id_alg = sha256\n",
            dir.join("tsaserial").display()
        ),
    )
    .expect("tsa.cnf");
    let (query, token) = (dir.join("fw.tsq"), dir.join("fw.tst"));
    let out = openssl_cmd(&dir)
        .args(["ts", "-query", "-sha512", "-cert", "-data"])
        .arg(&value)
        .arg("-out")
        .arg(&query)
        .output()
        .expect("openssl ts -query");
    ok(&out, "openssl ts -query");
    let out = openssl_cmd(&dir)
        .args(["ts", "-reply", "-token_out", "-config"])
        .arg(&conf)
        .arg("-queryfile")
        .arg(&query)
        .arg("-inkey")
        .arg(&tsa_key)
        .arg("-signer")
        .arg(&tsa_cert)
        .arg("-out")
        .arg(&token)
        .output()
        .expect("openssl ts -reply");
    ok(&out, "openssl ts -reply");
    let stamped = dir.join("fw-stamped.p7s");
    run_ok(
        pqkit()
            .args(["cms", "timestamp", "--token"])
            .arg(&token)
            .arg("-o")
            .arg(&stamped)
            .arg(&signed),
    );
    // 200 days on: the signer's certificate (100 days) has expired, the TSA's (300) has not.
    let later = (std::time::SystemTime::now() + std::time::Duration::from_secs(200 * 86_400))
        .duration_since(std::time::UNIX_EPOCH)
        .expect("epoch")
        .as_secs()
        .to_string();
    let verify = |signed: &Path| {
        pqkit()
            .args(["cms", "verify", "--at", &later, "--ca"])
            .arg(&ca)
            .arg("--content")
            .arg(&file)
            .arg(signed)
            .output()
            .expect("run")
    };
    let out = verify(&stamped);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && said.contains("time-stamped at"),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = verify(&signed);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("expired"));
}
