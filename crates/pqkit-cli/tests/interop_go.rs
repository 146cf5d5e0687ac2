//! Interop with an independent TLS 1.3 stack: Go's crypto/tls (`../shared/peers/gotls`, built
//! with the machine's Go 1.26). Go 1.26 has no ML-DSA, so these connections authenticate with
//! ECDSA P-256 certificates; the key exchange is each of the three ECDHE+ML-KEM hybrids, and
//! the negotiated group is asserted on both ends.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::{
    Guard, free_port, json_lines, peers_dir, pqkit, pqkit_server, run_ok, scratch, wait_listening,
};

const GROUPS: [&str; 3] = ["X25519MLKEM768", "SecP256r1MLKEM768", "SecP384r1MLKEM1024"];

/// Builds the Go peer into `dir`; fails (does not skip) when Go or the peer is missing.
fn build_gotls(dir: &Path) -> PathBuf {
    let src = peers_dir().join("gotls");
    assert!(
        src.join("main.go").exists(),
        "Go peer missing at {}",
        src.display()
    );
    let bin = dir.join("gotls");
    let out = Command::new("go")
        .args(["build", "-o"])
        .arg(&bin)
        .arg(".")
        .current_dir(&src)
        .env("GOFLAGS", "-mod=mod")
        .output()
        .expect("`go` must be installed (Go >= 1.26) for the interop tests");
    assert!(
        out.status.success(),
        "go build failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    bin
}

#[test]
fn go_client_to_pqkit_server_and_pqkit_client_to_go_server() {
    let dir = scratch("interop-go");
    let gotls = build_gotls(&dir);
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
        let server = pqkit_server(&pki, port, group, 1);
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
        // Bytes on the wire, counted independently at each socket, agree exactly.
        assert_eq!(
            ours["wire_bytes_read"], go_report["wire_bytes_written"],
            "{ours} {go_report}"
        );
        assert_eq!(
            ours["wire_bytes_written"], go_report["wire_bytes_read"],
            "{ours} {go_report}"
        );
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
        assert_eq!(
            ours["wire_bytes_read"], go_report["wire_bytes_written"],
            "{ours} {go_report}"
        );
        assert_eq!(
            ours["wire_bytes_written"], go_report["wire_bytes_read"],
            "{ours} {go_report}"
        );
        println!(
            "pqkit client -> Go server: {group} on both ends; {} B / {} B on the wire, same count \
             on both sides",
            ours["wire_bytes_written"], ours["wire_bytes_read"]
        );
    }
}
