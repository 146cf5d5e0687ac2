//! Interop with an independent TLS 1.3 stack: Go's crypto/tls (`../shared/peers/gotls`).
//!
//! - Go 1.26 (the machine's): no ML-DSA, so ECDSA P-256 certificates; the key exchange is each
//!   of the three ECDHE+ML-KEM hybrids, asserted on both ends, both directions.
//! - Go 1.27 (`GOTOOLCHAIN=go1.27.1`, fetched through the Go module proxy): ML-DSA-44/65/87 in
//!   crypto/tls and crypto/x509, so pqkit's RFC 9881 certificates, seed-form PKCS#8 keys and
//!   ML-DSA CertificateVerify are checked by an independent implementation, with mutual
//!   authentication, both directions.

mod support;

use std::process::Command;

use serde_json::Value;

use support::{
    Guard, build_gotls, free_port, json_lines, pqkit, pqkit_server, run_ok, scratch, wait_listening,
};

const GROUPS: [&str; 3] = ["X25519MLKEM768", "SecP256r1MLKEM768", "SecP384r1MLKEM1024"];

/// Bytes on the wire, counted independently at pqkit's and Go's sockets, agree exactly.
fn assert_same_wire_bytes(ours: &Value, go: &Value) {
    assert_eq!(
        ours["wire_bytes_read"], go["wire_bytes_written"],
        "{ours} {go}"
    );
    assert_eq!(
        ours["wire_bytes_written"], go["wire_bytes_read"],
        "{ours} {go}"
    );
}

/// Builds the Go peer into `dir` with `toolchain` ("local" or e.g. "go1.27.1"); fails (does
/// not skip) when Go, the toolchain or the peer is missing.
#[test]
fn go_client_to_pqkit_server_and_pqkit_client_to_go_server() {
    let dir = scratch("interop-go");
    let gotls = build_gotls(&dir, "local");
    let pki = dir.join("ec");
    run_ok(
        pqkit()
            .args(["pki", "init", "--sig", "ECDSA-P256", "--dir"])
            .arg(&pki),
    );
    // Go's own PKI: a CA and a server leaf (SAN localhost, 127.0.0.1) issued by it.
    let (go_ca, go_ca_key) = (dir.join("go-ca.pem"), dir.join("go-ca.key"));
    let (go_cert, go_key) = (dir.join("go-server.pem"), dir.join("go-server.key"));
    run_ok(
        Command::new(&gotls)
            .args(["gencert", "-type", "ecdsa-p256", "-cert"])
            .arg(&go_ca)
            .arg("-key")
            .arg(&go_ca_key),
    );
    run_ok(
        Command::new(&gotls)
            .args([
                "gencert",
                "-type",
                "ecdsa-p256",
                "-ca=false",
                "-cn",
                "localhost",
            ])
            .arg("-issuer-cert")
            .arg(&go_ca)
            .arg("-issuer-key")
            .arg(&go_ca_key)
            .arg("-cert")
            .arg(&go_cert)
            .arg("-key")
            .arg(&go_key),
    );

    for group in GROUPS {
        // Go client -> pqkit server.
        let port = free_port();
        let server = pqkit_server(&pki, port, group, 1, false);
        let go = run_ok(
            Command::new(&gotls)
                .args([
                    "client",
                    "-groups",
                    group,
                    "-expect-group",
                    group,
                    "-send",
                    "hello pqkit!",
                ])
                .arg("-addr")
                .arg(format!("127.0.0.1:{port}"))
                .arg("-ca")
                .arg(pki.join("ca.pem")),
        );
        let go_report = &json_lines(&go.stdout)[0];
        let server_out = server.wait();
        let ours = &json_lines(&server_out.stdout)[0];
        assert_eq!(go_report["ok"], true, "{go_report}");
        assert_eq!(go_report["group"], group, "Go client: {go_report}");
        assert_eq!(go_report["version"], "TLSv1.3");
        assert_eq!(ours["group"], group, "pqkit server: {ours}");
        assert_eq!(ours["received"], "hello pqkit!");
        assert_same_wire_bytes(ours, go_report);
        println!(
            "Go client -> pqkit server: {group} on both ends; {} B / {} B on the wire, same count \
             on both sides",
            ours["wire_bytes_read"], ours["wire_bytes_written"]
        );

        // pqkit client -> Go server (Go's own ECDSA P-256 certificate).
        let port = free_port();
        let mut go_server = Guard::spawn(
            Command::new(&gotls)
                .args(["server", "-mode", "echo", "-count", "1", "-groups", group])
                .arg("-addr")
                .arg(format!("127.0.0.1:{port}"))
                .arg("-cert")
                .arg(&go_cert)
                .arg("-key")
                .arg(&go_key),
        );
        wait_listening(port, go_server.child());
        let client = run_ok(
            pqkit()
                .args([
                    "client",
                    "--json",
                    "--groups",
                    group,
                    "--expect-group",
                    group,
                    "--port",
                ])
                .arg(port.to_string())
                .arg("--ca")
                .arg(&go_ca),
        );
        let ours = &json_lines(&client.stdout)[0];
        let go_out = go_server.wait();
        let go_report = &json_lines(&go_out.stdout)[0];
        assert_eq!(ours["group"], group, "pqkit client: {ours}");
        assert_eq!(ours["received"], "hello pqkit!", "Go echoes the message");
        assert_eq!(ours["peer_signature_scheme"], "ecdsa_secp256r1_sha256");
        assert_eq!(go_report["group"], group, "Go server: {go_report}");
        assert_eq!(go_report["ok"], true, "{go_report}");
        assert_same_wire_bytes(ours, go_report);
        println!(
            "pqkit client -> Go server: {group} on both ends; {} B / {} B on the wire, same count \
             on both sides",
            ours["wire_bytes_written"], ours["wire_bytes_read"]
        );
    }
}

#[test]
fn go_1_27_and_pqkit_authenticate_each_other_with_ml_dsa() {
    let dir = scratch("interop-go127");
    let gotls = build_gotls(&dir, "go1.27.1");
    for (alg, scheme) in [
        ("ML-DSA-44", "mldsa44"),
        ("ML-DSA-65", "mldsa65"),
        ("ML-DSA-87", "mldsa87"),
    ] {
        let pki = dir.join(alg);
        run_ok(
            pqkit()
                .args(["pki", "init", "--sig", alg, "--dir"])
                .arg(&pki),
        );

        // Go 1.27 client (pqkit's client certificate and seed-form key) -> pqkit server.
        let port = free_port();
        let server = pqkit_server(&pki, port, "X25519MLKEM768", 1, true);
        let go = run_ok(
            Command::new(&gotls)
                .args([
                    "client",
                    "-groups",
                    "X25519MLKEM768",
                    "-send",
                    "hello pqkit!",
                ])
                .arg("-addr")
                .arg(format!("127.0.0.1:{port}"))
                .arg("-ca")
                .arg(pki.join("ca.pem"))
                .arg("-cert")
                .arg(pki.join("client.pem"))
                .arg("-key")
                .arg(pki.join("client.key")),
        );
        let go_report = &json_lines(&go.stdout)[0];
        let ours = &json_lines(&server.wait().stdout)[0];
        assert_eq!(go_report["ok"], true, "{go_report}");
        assert_eq!(
            go_report["peer_verified"], true,
            "Go verified pqkit's chain: {go_report}"
        );
        assert_eq!(go_report["peer_sig_scheme"], scheme, "{go_report}");
        assert_eq!(go_report["peer_cert"]["sig_alg"], alg, "{go_report}");
        assert_eq!(
            ours["peer_signature_scheme"], scheme,
            "pqkit verified Go's signature: {ours}"
        );
        assert_eq!(ours["received"], "hello pqkit!");

        // pqkit client -> Go 1.27 server (pqkit's server certificate and key), client auth
        // required and verified by Go.
        let port = free_port();
        let mut go_server = Guard::spawn(
            Command::new(&gotls)
                .args([
                    "server",
                    "-mode",
                    "echo",
                    "-count",
                    "1",
                    "-client-auth",
                    "require",
                ])
                .args(["-groups", "X25519MLKEM768"])
                .arg("-addr")
                .arg(format!("127.0.0.1:{port}"))
                .arg("-cert")
                .arg(pki.join("server.pem"))
                .arg("-key")
                .arg(pki.join("server.key"))
                .arg("-ca")
                .arg(pki.join("ca.pem")),
        );
        wait_listening(port, go_server.child());
        let client = run_ok(
            pqkit()
                .args(["client", "--json", "--groups", "X25519MLKEM768", "--port"])
                .arg(port.to_string())
                .arg("--ca")
                .arg(pki.join("ca.pem"))
                .arg("--cert")
                .arg(pki.join("client.pem"))
                .arg("--key")
                .arg(pki.join("client.key")),
        );
        let ours = &json_lines(&client.stdout)[0];
        let go_report = &json_lines(&go_server.wait().stdout)[0];
        assert_eq!(ours["peer_signature_scheme"], scheme, "{ours}");
        assert_eq!(ours["received"], "hello pqkit!");
        assert_eq!(go_report["ok"], true, "{go_report}");
        assert_eq!(
            go_report["peer_verified"], true,
            "Go verified pqkit's client chain"
        );
        assert_eq!(go_report["peer_sig_scheme"], scheme, "{go_report}");
        assert_same_wire_bytes(ours, go_report);
        println!("Go 1.27 <-> pqkit, {alg} mutual authentication: verified on both ends");
    }
}
