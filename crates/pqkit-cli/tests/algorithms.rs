//! Every algorithm through the CLI: TLS handshakes per signature algorithm (leaf and CA), the
//! rustls handshake-buffer limit pinned, key/sign/verify/KEM file operations in every mode,
//! chains, and one-line errors.

mod support;

use std::path::Path;
use std::process::Output;

use support::{
    Guard, free_port, pqkit, pqkit_mutual_client, pqkit_server, run_ok, scratch, wait_listening,
};

fn fails_cleanly(out: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "expected failure; stderr: {err}");
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "{err}"
    );
    assert!(err.contains(needle), "stderr lacks {needle:?}: {err}");
    let lines: Vec<_> = err.lines().filter(|l| l.starts_with("pqkit:")).collect();
    assert_eq!(lines.len(), 1, "one error line: {err}");
}

#[test]
fn every_family_completes_a_mutually_authenticated_handshake() {
    // One per family and size class; SLH-DSA-SHA2-256s is the largest that fits as root+leaf.
    for sig in [
        "ML-DSA-44",
        "Falcon-512",
        "Falcon-1024",
        "SLH-DSA-SHA2-128f",
        "SLH-DSA-SHAKE-128s",
        "SLH-DSA-SHA2-256s",
        "ECDSA-P384",
        "ECDSA-P521",
        "Ed25519",
        "RSA-PSS-2048",
    ] {
        let out = run_ok(pqkit().args(["demo", "--json", "--sig", sig]));
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        let scheme = |side: &str| {
            report[side]["peer_signature_scheme"]
                .as_str()
                .map(str::to_owned)
        };
        assert!(
            scheme("client").is_some() && scheme("server").is_some(),
            "{sig}: {report}"
        );
        assert_eq!(scheme("client"), scheme("server"), "{sig}");
    }
}

#[test]
fn level_named_hybrids_negotiate() {
    for (group, cp) in [
        ("p256_mlkem512", "0x2f4b"),
        ("P384_KYBER_LEVEL3", "0x2f4c"),
        ("p521_mlkem1024", "0x2f4d"),
    ] {
        let out = run_ok(pqkit().args(["demo", "--json", "--group", group]));
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        assert_eq!(report["client"]["group_code_point"], cp, "{group}");
        assert_eq!(report["server"]["group_code_point"], cp, "{group}");
    }
}

/// rustls buffers at most 65535 bytes of a flight while joining a large handshake message:
/// SLH-DSA-192f/256f cannot sign both the leaf and the CertificateVerify, and a 256f chain with
/// an intermediate cannot be sent. pqkit says so before connecting.
#[test]
fn the_rustls_handshake_buffer_limit_is_reported_before_connecting() {
    let out = pqkit()
        .args(["demo", "--sig", "SLH-DSA-SHA2-192f"])
        .output()
        .expect("run");
    fails_cleanly(&out, "handshake buffer");

    let dir = scratch("chain-256f");
    let out = run_ok(
        pqkit()
            .args([
                "pki",
                "issue",
                "--root",
                "SLH-DSA-SHAKE-256f",
                "--intermediate",
                "SLH-DSA-SHAKE-256f",
                "--leaf",
                "SLH-DSA-SHAKE-256f",
                "--dir",
            ])
            .arg(&dir),
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("warning: server.pem"));
    let out = pqkit()
        .args(["server", "--port", "0", "--count", "1", "--cert"])
        .arg(dir.join("server.pem"))
        .arg("--key")
        .arg(dir.join("server.key"))
        .output()
        .expect("run");
    fails_cleanly(&out, "handshake buffer");
}

#[test]
fn a_chain_mixing_algorithms_works_in_tls_and_x509_verify() {
    // Root ML-DSA-87 -> intermediate Falcon-512 -> leaf SLH-DSA-SHA2-192f: 192f fits as a leaf
    // under a CA with small signatures.
    let dir = scratch("chain-mixed");
    run_ok(
        pqkit()
            .args([
                "pki",
                "issue",
                "--root",
                "ML-DSA-87",
                "--intermediate",
                "Falcon-512",
                "--leaf",
                "SLH-DSA-SHA2-192f",
                "--dir",
            ])
            .arg(&dir),
    );
    let out = run_ok(
        pqkit()
            .args(["x509", "verify", "--ca"])
            .arg(dir.join("ca.pem"))
            .arg(dir.join("server.pem")),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("signed by Falcon-512") && text.contains("signed by ML-DSA-87"),
        "{text}"
    );
    // Not anchored in another CA: the leaf's issuer is the subject of no trusted certificate.
    let out = pqkit()
        .args(["x509", "verify", "--ca"])
        .arg(dir.join("ca.pem"))
        .arg(dir.join("client.pem"))
        .output()
        .expect("run");
    assert!(out.status.success());
    let other = scratch("chain-other");
    run_ok(
        pqkit()
            .args(["pki", "init", "--sig", "ML-DSA-44", "--dir"])
            .arg(&other),
    );
    let out = pqkit()
        .args(["x509", "verify", "--ca"])
        .arg(other.join("ca.pem"))
        .arg(dir.join("server.pem"))
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(1),
        "a path that does not validate: exit 1"
    );
    // The other PKI's root has the same name: the intermediate's signature fails under its key.
    fails_cleanly(&out, "certificate 1 (intermediate)");

    let port = free_port();
    let server = pqkit_server(&dir, port, "X25519MLKEM768", 1, true);
    let report = pqkit_mutual_client(&dir, port);
    assert_eq!(report["peer_signature_scheme"], "slhdsa_sha2_192f");
    assert_eq!(report["peer_chain_len"], 2);
    server.wait();
    let out = run_ok(
        pqkit()
            .args(["x509", "show", "--json"])
            .arg(dir.join("server.pem")),
    );
    let shown: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(shown[0]["public_key_algorithm"], "SLH-DSA-SHA2-192f");
    assert_eq!(shown[0]["signature_algorithm"], "Falcon-512");
    assert_eq!(shown[1]["signature_algorithm"], "ML-DSA-87");
    assert_eq!(shown[0]["subject_alt_names"][0], "DNS:localhost");
    let _ = (Guard::spawn, wait_listening);
}

fn sign_verify(dir: &Path, alg: &str, mode: &[&str]) {
    let (key, public, doc, sig) = (
        dir.join("k.pem"),
        dir.join("p.pem"),
        dir.join("doc"),
        dir.join("s"),
    );
    // Each call replaces the previous algorithm's files: --force.
    run_ok(
        pqkit()
            .args(["keygen", "--force", "--alg", alg, "-o"])
            .arg(&key)
            .arg("--pub")
            .arg(&public),
    );
    run_ok(
        pqkit()
            .args(["sign", "--force", "--key"])
            .arg(&key)
            .args(mode)
            .arg("-o")
            .arg(&sig)
            .arg(&doc),
    );
    run_ok(
        pqkit()
            .args(["verify", "--pub"])
            .arg(&public)
            .args(mode)
            .arg("--signature")
            .arg(&sig)
            .arg(&doc),
    );
    // A changed document fails with one line.
    let other = dir.join("doc2");
    std::fs::write(&other, b"something else").expect("write");
    let out = pqkit()
        .args(["verify", "--pub"])
        .arg(&public)
        .args(mode)
        .arg("--signature")
        .arg(&sig)
        .arg(&other)
        .output()
        .expect("run");
    fails_cleanly(&out, "verification failed");
}

#[test]
fn sign_and_verify_files_in_every_mode() {
    let dir = scratch("files");
    std::fs::write(dir.join("doc"), vec![0x5a; 300_000]).expect("write");
    for alg in [
        "ML-DSA-65",
        "SLH-DSA-SHAKE-128f",
        "Falcon-512",
        "ECDSA-P256",
        "Ed25519",
        "RSA-PSS-2048",
    ] {
        sign_verify(&dir, alg, &[]);
    }
    for mode in [
        &["--context", "v1"][..],
        &["--prehash", "SHA-512"],
        &["--prehash", "SHAKE-256", "--context", "ctx"],
        &["--external-mu", "--context", "v1"],
    ] {
        sign_verify(&dir, "ML-DSA-44", mode);
    }
    sign_verify(
        &dir,
        "SLH-DSA-SHA2-128f",
        &["--prehash", "SHA-256", "--context", "x"],
    );
    // External μ gives the same signature as pure signing (deterministic).
    let key = dir.join("k.pem");
    run_ok(
        pqkit()
            .args(["keygen", "--force", "--alg", "ML-DSA-65", "-o"])
            .arg(&key),
    );
    let sig = |mode: &[&str], out: &str| {
        run_ok(
            pqkit()
                .args(["sign", "--deterministic", "--context", "c", "--key"])
                .arg(&key)
                .args(mode)
                .arg("-o")
                .arg(dir.join(out))
                .arg(dir.join("doc")),
        );
        std::fs::read(dir.join(out)).expect("sig")
    };
    assert_eq!(sig(&[], "pure.sig"), sig(&["--external-mu"], "mu.sig"));
    // Errors: no pre-hash for Falcon, a KEM key cannot sign, a truncated key file.
    run_ok(
        pqkit()
            .args(["keygen", "--force", "--alg", "Falcon-512", "-o"])
            .arg(&key),
    );
    let out = pqkit()
        .args(["sign", "--prehash", "SHA-256", "--key"])
        .arg(&key)
        .arg("-o")
        .arg(dir.join("x"))
        .arg(dir.join("doc"))
        .output()
        .expect("run");
    fails_cleanly(&out, "pre-hash");
    let kem = dir.join("kem.pem");
    run_ok(
        pqkit()
            .args(["keygen", "--alg", "ML-KEM-512", "-o"])
            .arg(&kem),
    );
    let out = pqkit()
        .args(["sign", "--key"])
        .arg(&kem)
        .arg("-o")
        .arg(dir.join("x"))
        .arg(dir.join("doc"))
        .output()
        .expect("run");
    fails_cleanly(&out, "pqkit:");
    let text = std::fs::read_to_string(&key).expect("key");
    std::fs::write(dir.join("trunc.pem"), &text[..text.len() / 2]).expect("write");
    let out = pqkit()
        .args(["sign", "--key"])
        .arg(dir.join("trunc.pem"))
        .arg("-o")
        .arg(dir.join("x"))
        .arg(dir.join("doc"))
        .output()
        .expect("run");
    fails_cleanly(&out, "PEM");
}

/// `pqkit kem encapsulate` to `public`, then `decapsulate` with `key`: the same secret.
fn kem_round_trip(dir: &Path, key: &Path, public: &Path) {
    run_ok(
        pqkit()
            .args(["kem", "encapsulate", "--force", "--pub"])
            .arg(public)
            .arg("-o")
            .arg(dir.join("ct"))
            .arg("--secret")
            .arg(dir.join("a")),
    );
    run_ok(
        pqkit()
            .args(["kem", "decapsulate", "--force", "--key"])
            .arg(key)
            .arg("--ciphertext")
            .arg(dir.join("ct"))
            .arg("--secret")
            .arg(dir.join("b")),
    );
    assert_eq!(
        std::fs::read(dir.join("a")).expect("a"),
        std::fs::read(dir.join("b")).expect("b")
    );
}

#[test]
fn kem_files_and_key_formats() {
    let dir = scratch("kem");
    for format in ["seed", "expanded", "both"] {
        let (key, public) = (
            dir.join(format!("{format}.pem")),
            dir.join(format!("{format}.pub")),
        );
        run_ok(
            pqkit()
                .args(["keygen", "--alg", "ML-KEM-768", "--format", format, "-o"])
                .arg(&key)
                .arg("--pub")
                .arg(&public),
        );
        kem_round_trip(&dir, &key, &public);
    }
    // ML-DSA keys in all three forms give the same public key from the same seed.
    let seed = "11".repeat(32);
    let mut publics = Vec::new();
    for format in ["seed", "expanded", "both"] {
        let key = dir.join(format!("dsa-{format}.pem"));
        run_ok(
            pqkit()
                .args([
                    "keygen",
                    "--alg",
                    "ML-DSA-44",
                    "--seed",
                    &seed,
                    "--format",
                    format,
                    "-o",
                ])
                .arg(&key),
        );
        publics.push(run_ok(pqkit().arg("pubkey").arg(&key)).stdout);
    }
    assert!(publics.windows(2).all(|w| w[0] == w[1]));
}

/// The KEMs from liboqs: a Classic McEliece key in files (its 261 KB encapsulation key), BIKE
/// and eFrodoKEM refused as long-term keys, and their TLS groups at oqs-provider's code points.
#[test]
fn code_based_and_lwe_kems_in_files_and_tls() {
    let dir = scratch("liboqs-kems");
    let (key, public) = (dir.join("mce.pem"), dir.join("mce.pub"));
    run_ok(
        pqkit()
            .args(["keygen", "--force", "--alg", "mceliece348864", "-o"])
            .arg(&key)
            .arg("--pub")
            .arg(&public),
    );
    kem_round_trip(&dir, &key, &public);
    assert_eq!(std::fs::read(dir.join("ct")).expect("ct").len(), 96);
    // The public key comes back out of the private key file (its RFC 5958 publicKey).
    let derived = run_ok(pqkit().arg("pubkey").arg(&key)).stdout;
    assert_eq!(derived, std::fs::read(&public).expect("pub"));

    for (alg, why) in [
        ("BIKE-L1", "unproven decoding-failure rate"),
        ("efrodo640aes", "ephemeral"),
    ] {
        let out = pqkit()
            .args(["keygen", "--alg", alg, "-o"])
            .arg(dir.join(format!("{alg}.pem")))
            .output()
            .expect("run");
        fails_cleanly(&out, why);
        assert!(!dir.join(format!("{alg}.pem")).exists());
    }
    // The salted FrodoKEM is not eFrodoKEM: the name is refused with a note.
    let out = pqkit()
        .args(["keygen", "--alg", "FrodoKEM-640-AES", "-o"])
        .arg(dir.join("frodo.pem"))
        .output()
        .expect("run");
    assert!(String::from_utf8_lossy(&out.stderr).contains("eFrodoKEM"));
    assert!(!out.status.success());

    for (group, cp) in [
        ("bikel1", "0xfe10"),
        ("x25519_bikel1", "0xfe12"),
        ("efrodo640aes", "0xfe00"),
        ("p256_efrodo640shake", "0xfe04"),
    ] {
        let out = run_ok(pqkit().args(["demo", "--json", "--group", group]));
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        assert_eq!(report["client"]["group_code_point"], cp, "{group}");
        assert_eq!(report["server"]["group_code_point"], cp, "{group}");
    }
    // Classic McEliece has no group, and says why.
    let out = pqkit()
        .args(["demo", "--group", "Classic-McEliece-348864"])
        .output()
        .expect("run");
    fails_cleanly(&out, "65535 bytes of a key share");
}

#[test]
fn list_resolves_the_names_users_bring() {
    let out = run_ok(pqkit().args(["list", "--json"]));
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let entries = list.as_array().expect("array");
    let has = |name: &str| {
        let n = name.to_ascii_lowercase().replace(['-', '_'], "");
        entries.iter().any(|e| {
            e["name"]
                .as_str()
                .is_some_and(|x| x.to_ascii_lowercase().replace(['-', '_'], "") == n)
                || e["aliases"].as_array().is_some_and(|a| {
                    a.iter().any(|x| {
                        x.as_str()
                            .is_some_and(|x| x.to_ascii_lowercase().replace(['-', '_'], "") == n)
                    })
                })
        })
    };
    // DESIGN.md, "names users bring" (KEM names resolve through the KEM entries).
    for name in [
        "KYBER_LEVEL1",
        "Kyber768",
        "P256_KYBER_LEVEL1",
        "P384_KYBER_LEVEL3",
        "P521_KYBER_LEVEL5",
        "DILITHIUM_LEVEL2",
        "Dilithium3",
        "mldsa87",
        "FALCON_LEVEL1",
        "falcon1024",
        "SPHINCS_FAST_LEVEL1",
        "SPHINCS_SMALL_LEVEL5",
        "ML-KEM-1024",
        "X25519MLKEM768",
    ] {
        assert!(has(name), "{name} not in `pqkit list`");
    }
    assert!(entries.len() >= 27 + 3 + 6, "{}", entries.len());
    // Round-3 names print the note.
    let out = run_ok(
        pqkit()
            .args(["keygen", "--alg", "SPHINCS_FAST_LEVEL1", "-o"])
            .arg(scratch("note").join("k.pem")),
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("not SLH-DSA"));
}

#[test]
fn csr_create_show_sign_and_serve() {
    // An ML-DSA-65 CA issues a Falcon-512 server certificate from a CSR; the server uses it.
    let dir = scratch("csr");
    run_ok(
        pqkit()
            .args(["pki", "init", "--sig", "ML-DSA-65", "--dir"])
            .arg(&dir),
    );
    let (key, csr, cert) = (
        dir.join("device.key"),
        dir.join("device.csr"),
        dir.join("device.pem"),
    );
    run_ok(
        pqkit()
            .args(["keygen", "--force", "--alg", "Falcon-512", "-o"])
            .arg(&key),
    );
    run_ok(
        pqkit()
            .args(["csr", "create", "--key"])
            .arg(&key)
            .args(["--subject", "CN=device 7,O=pqkit", "--dns", "localhost"])
            .args(["--ip", "127.0.0.1", "--ip", "::1", "-o"])
            .arg(&csr),
    );
    let out = run_ok(pqkit().args(["csr", "show", "--json"]).arg(&csr));
    let shown: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(shown["subject"], "CN=device 7,O=pqkit");
    assert_eq!(shown["public_key_algorithm"], "Falcon-512");
    assert_eq!(shown["public_key_bytes"], 897);
    assert_eq!(
        shown["subject_alt_names"],
        serde_json::json!(["DNS:localhost", "IP:127.0.0.1", "IP:::1"])
    );
    assert_eq!(shown["signature_valid"], true);

    // A CA key that is not the CA certificate's is refused.
    let out = pqkit()
        .args(["csr", "sign", "--ca"])
        .arg(dir.join("ca.pem"))
        .arg("--ca-key")
        .arg(dir.join("client.key"))
        .arg(&csr)
        .arg("-o")
        .arg(&cert)
        .output()
        .expect("run");
    fails_cleanly(&out, "not the CA certificate's key");
    // A CSR whose signature does not verify is refused, by show and by sign.
    let text = std::fs::read_to_string(&csr).expect("csr");
    let der = pqkit_pki::pem::decode_all(&text, "CERTIFICATE REQUEST").expect("pem");
    let mut forged = der[0].clone();
    let at = forged.len() - 20;
    forged[at] ^= 0x10;
    let forged_path = dir.join("forged.csr");
    std::fs::write(
        &forged_path,
        pqkit_pki::pem::encode("CERTIFICATE REQUEST", &forged).expect("pem"),
    )
    .expect("write");
    let out = pqkit()
        .args(["csr", "show"])
        .arg(&forged_path)
        .output()
        .expect("run");
    fails_cleanly(&out, "forged.csr");

    run_ok(
        pqkit()
            .args(["csr", "sign", "--profile", "server", "--days", "30", "--ca"])
            .arg(dir.join("ca.pem"))
            .arg("--ca-key")
            .arg(dir.join("ca.key"))
            .arg(&csr)
            .arg("-o")
            .arg(&cert),
    );
    let out = run_ok(
        pqkit()
            .args(["x509", "verify", "--ca"])
            .arg(dir.join("ca.pem"))
            .arg(&cert),
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("signed by ML-DSA-65"),
        "{out:?}"
    );
    // Serve with it.
    std::fs::copy(&cert, dir.join("server.pem")).expect("copy");
    std::fs::copy(&key, dir.join("server.key")).expect("copy");
    let port = free_port();
    let server = pqkit_server(&dir, port, "X25519MLKEM768", 1, true);
    assert_eq!(
        pqkit_mutual_client(&dir, port)["peer_signature_scheme"],
        "falcon512"
    );
    server.wait();
}
