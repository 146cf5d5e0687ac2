//! The main job, as the README runs it: `pqkit demo` (throwaway PKI and with `--dir`).

mod support;

use support::{pqkit, run_ok, scratch};

fn demo(args: &[&str]) -> serde_json::Value {
    let out = run_ok(pqkit().arg("demo").arg("--json").args(args));
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("demo --json: {e}: {text}"))
}

#[test]
fn demo_defaults_are_x25519mlkem768_ml_dsa_65_aes_256_gcm_with_mutual_auth() {
    let r = demo(&[]);
    let (c, s) = (&r["client"], &r["server"]);
    for side in [c, s] {
        assert_eq!(side["version"], "TLSv1.3");
        assert_eq!(side["cipher_suite"], "TLS_AES_256_GCM_SHA384");
        assert_eq!(side["group"], "X25519MLKEM768");
        assert_eq!(side["group_code_point"], "0x11ec");
        // Each side verified the other's ML-DSA-65 CertificateVerify.
        assert_eq!(side["peer_signature_scheme"], "mldsa65");
        assert!(side["handshake_ms"].as_f64().expect("ms") > 0.0);
        assert_eq!(side["peer_chain_len"], 1);
        assert_eq!(side["handshake_kind"], "Full");
    }
    assert_eq!(c["received"], "I hear you fa shizzle!");
    assert_eq!(s["received"], "hello pqkit!");
    // Bytes counted at both sockets agree per direction, and cover both certificate chains
    // (ML-DSA-65: 1952-byte key and 3309-byte signature in each certificate) and both
    // ML-KEM-768 shares.
    assert_eq!(c["wire_bytes_written"], s["wire_bytes_read"]);
    assert_eq!(s["wire_bytes_written"], c["wire_bytes_read"]);
    let c2s = c["wire_bytes_written"].as_u64().expect("bytes");
    let s2c = s["wire_bytes_written"].as_u64().expect("bytes");
    let chain = r["server_chain_bytes"].as_u64().expect("bytes");
    assert!(chain > 1952 + 3309, "server chain {chain} B");
    assert!(s2c > chain + 1088 + 3309, "server -> client {s2c} B");
    assert!(c2s > r["client_chain_bytes"].as_u64().expect("bytes") + 1184 + 3309);
}

#[test]
fn demo_with_other_group_and_signature_and_with_a_pki_dir() {
    let r = demo(&["--group", "SecP384r1MLKEM1024", "--sig", "ML-DSA-87"]);
    assert_eq!(r["client"]["group"], "SecP384r1MLKEM1024");
    assert_eq!(r["client"]["peer_signature_scheme"], "mldsa87");
    assert_eq!(r["certificate_algorithm"], "ML-DSA-87");

    let dir = scratch("demo-dir");
    run_ok(
        pqkit()
            .args(["pki", "init", "--sig", "ML-DSA-44", "--dir"])
            .arg(&dir),
    );
    let r = demo(&[
        "--dir",
        dir.to_str().expect("utf-8 path"),
        "--group",
        "MLKEM1024",
    ]);
    assert_eq!(r["server"]["peer_signature_scheme"], "mldsa44");
    assert_eq!(r["client"]["group"], "MLKEM1024");
}

#[test]
fn errors_are_one_line_and_a_non_zero_exit() {
    let out = pqkit()
        .args(["demo", "--sig", "no-such-alg"])
        .output()
        .expect("run");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("pqkit: unknown algorithm"), "{err}");
    let out = pqkit()
        .args(["client", "--ca", "/nonexistent/ca.pem"])
        .output()
        .expect("run");
    assert!(!out.status.success());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
}

#[test]
fn a_server_that_drops_the_connection_is_a_client_error() {
    let dir = scratch("dropped");
    run_ok(
        pqkit()
            .args(["pki", "init", "--sig", "ML-DSA-44", "--dir"])
            .arg(&dir),
    );
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let dropper = std::thread::spawn(move || {
        // Accept, read a little of the ClientHello, then close without a word.
        let (mut s, _) = listener.accept().expect("accept");
        let _ = std::io::Read::read(&mut s, &mut [0u8; 64]);
    });
    let out = pqkit()
        .args(["client", "--port", &port.to_string(), "--ca"])
        .arg(dir.join("ca.pem"))
        .output()
        .expect("run");
    dropper.join().expect("dropper");
    assert!(
        !out.status.success(),
        "client reported success against a dropped connection"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("pqkit: ") && !err.contains("panicked"),
        "{err}"
    );
}
