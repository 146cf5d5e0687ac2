//! pqkit's tools with keys that never leave a PKCS#11 token (pqkit's own module): `pqkit
//! token` creates the token and a key, `csr create` and `sign` use it, and `pqkit server`
//! signs each TLS 1.3 CertificateVerify in the token for a mutually authenticated handshake
//! with `pqkit client`.

mod support;

use std::path::Path;
use std::process::Command;

use support::*;

fn with_token<'a>(cmd: &'a mut Command, dir: &Path) -> &'a mut Command {
    cmd.env("PQKIT_PKCS11_CONF", dir.join("pkcs11.json"))
        .env("PQKIT_PKCS11_PIN", "1234")
        .env_remove("PQKIT_PKCS11_MODULE")
}

#[test]
fn a_server_key_in_the_token_serves_tls_and_signs_files() {
    let dir = scratch("token-cli");
    let pki = dir.join("pki");
    run_ok(
        pqkit()
            .args(["pki", "init", "--sig", "ML-DSA-65", "--dir"])
            .arg(&pki),
    );
    run_ok(with_token(
        pqkit()
            .args([
                "token", "init", "--label", "tls", "--so-pin", "87654321", "--pin", "1234",
            ])
            .args(["--kdf-memory-kib", "1024", "--kdf-passes", "1", "--dir"])
            .arg(dir.join("token")),
        &dir,
    ));
    let out = run_ok(with_token(
        pqkit().args([
            "token",
            "keygen",
            "--token",
            "tls",
            "--alg",
            "ML-DSA-65",
            "--label",
            "server",
            "--id",
            "01",
        ]),
        &dir,
    ));
    let uri = String::from_utf8(out.stdout)
        .expect("utf-8")
        .trim()
        .to_owned();
    assert_eq!(uri, "pkcs11:token=tls;object=server;id=%01");
    // The private key is in the token only: no file in the token directory holds it in the clear.
    let listing = run_ok(with_token(
        pqkit().args(["token", "list", "--token", "tls"]),
        &dir,
    ));
    let listing = String::from_utf8_lossy(&listing.stdout);
    assert!(
        listing.contains("CKO_PRIVATE_KEY label=\"server\" id=01 type=CKK_ML_DSA"),
        "{listing}"
    );

    // A CSR signed in the token, a certificate from the file CA.
    run_ok(with_token(
        pqkit()
            .args([
                "csr",
                "create",
                "--key",
                &uri,
                "--subject",
                "CN=localhost",
                "--dns",
                "localhost",
                "-o",
            ])
            .arg(dir.join("server.csr")),
        &dir,
    ));
    run_ok(
        pqkit()
            .args(["csr", "sign", "--ca"])
            .arg(pki.join("ca.pem"))
            .arg("--ca-key")
            .arg(pki.join("ca.key"))
            .arg("-o")
            .arg(dir.join("server.pem"))
            .arg(dir.join("server.csr")),
    );

    // A file signed in the token verifies with the certificate's key.
    std::fs::write(dir.join("doc.txt"), b"signed inside the token").expect("write");
    run_ok(with_token(
        pqkit()
            .args(["sign", "--key", &uri, "-o"])
            .arg(dir.join("doc.sig"))
            .arg(dir.join("doc.txt")),
        &dir,
    ));
    run_ok(
        pqkit()
            .args(["verify", "--pub"])
            .arg(dir.join("server.pem"))
            .arg("--signature")
            .arg(dir.join("doc.sig"))
            .arg(dir.join("doc.txt")),
    );

    // TLS: the server's CertificateVerify is signed in the token; mutual authentication.
    let port = free_port();
    let mut server = Guard::spawn(with_token(
        pqkit()
            .args([
                "server",
                "--json",
                "--count",
                "2",
                "--port",
                &port.to_string(),
                "--groups",
                "X25519MLKEM768",
            ])
            .arg("--cert")
            .arg(dir.join("server.pem"))
            .args(["--key", &uri])
            .arg("--mutual")
            .arg("--ca")
            .arg(pki.join("ca.pem")),
        &dir,
    ));
    wait_listening(port, server.child());
    for _ in 0..2 {
        let report = pqkit_mutual_client(&pki, port);
        assert_eq!(report["peer_signature_scheme"], "mldsa65", "{report}");
    }
    let out = server.wait();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
