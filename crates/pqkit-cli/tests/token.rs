//! pqkit's tools with keys that never leave a PKCS#11 token (pqkit's own module): `pqkit
//! token` creates the token and a key, `csr create` and `sign` use it, and `pqkit server`
//! signs each TLS 1.3 CertificateVerify in the token for mutually authenticated handshakes
//! with `pqkit client` and Go 1.27's crypto/tls.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::*;

fn with_token<'a>(cmd: &'a mut Command, dir: &Path) -> &'a mut Command {
    cmd.env("PQKIT_PKCS11_CONF", dir.join("pkcs11.json"))
        .env("PQKIT_PKCS11_PIN", "12345678")
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
    run_ok(with_token(&mut token_init("tls", &dir.join("token")), &dir));
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
                "3",
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
    // Go 1.27's crypto/tls (ML-DSA) verifies the CertificateVerify the token signed.
    let gotls = build_gotls(&dir, "go1.27.1");
    let go = run_ok(
        Command::new(&gotls)
            .args([
                "client",
                "-groups",
                "X25519MLKEM768",
                "-send",
                "hello token",
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
    let go = &json_lines(&go.stdout)[0];
    assert_eq!(go["ok"], true, "{go}");
    assert_eq!(go["peer_verified"], true, "{go}");
    assert_eq!(go["peer_sig_scheme"], "mldsa65", "{go}");
    let out = server.wait();
    assert!(
        out.status.success(),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// SoftHSM v2 (Debian softhsm2) as the token, reached by pqkit's generic client: `pqkit token
/// keygen` makes an ECDSA P-256 key in it, `csr create` signs there, and `pqkit server` serves
/// the Go crypto/tls peer and `pqkit client` with it — directly, then across a real process
/// boundary: the token behind `p11-kit server`, pqkit through p11-kit-client.so. The same
/// for an ECDSA key in pqkit's own token behind p11-kit.
#[test]
fn softhsm_and_p11_kit_keys_serve_go_and_pqkit_clients() {
    let softhsm = Path::new("/usr/lib/softhsm/libsofthsm2.so");
    let p11_client = Path::new("/usr/lib/x86_64-linux-gnu/pkcs11/p11-kit-client.so");
    assert!(
        softhsm.exists() && p11_client.exists(),
        "SoftHSM and p11-kit are needed (Debian: apt-get install softhsm2 p11-kit; CI installs them)"
    );
    let dir = scratch("softhsm");
    let conf = dir.join("softhsm2.conf");
    std::fs::create_dir_all(dir.join("shsm-tokens")).expect("mkdir");
    std::fs::write(
        &conf,
        format!(
            "directories.tokendir = {}\nobjectstore.backend = file\nlog.level = ERROR\n",
            dir.join("shsm-tokens").display()
        ),
    )
    .expect("write");
    let shsm = |cmd: &mut Command| -> Command {
        let mut c = Command::new(cmd.get_program());
        c.args(cmd.get_args())
            .env("SOFTHSM2_CONF", &conf)
            .env("PQKIT_PKCS11_PIN", "12345678")
            .env("PQKIT_PKCS11_CONF", dir.join("pkcs11.json"));
        c
    };
    run_ok(&mut shsm(Command::new("softhsm2-util").args([
        "--init-token",
        "--free",
        "--label",
        "shsm",
        "--so-pin",
        "87654321",
        "--pin",
        "12345678",
    ])));
    let module = softhsm.to_str().expect("path");
    run_ok(&mut shsm(pqkit().args([
        "token",
        "keygen",
        "--pkcs11-module",
        module,
        "--token",
        "shsm",
        "--alg",
        "ECDSA-P256",
        "--label",
        "server",
        "--id",
        "02",
    ])));
    let pki = dir.join("pki");
    run_ok(
        pqkit()
            .args(["pki", "init", "--sig", "ECDSA-P256", "--dir"])
            .arg(&pki),
    );
    let uri = "pkcs11:token=shsm;object=server";
    run_ok(&mut shsm(
        pqkit()
            .args(["csr", "create", "--pkcs11-module", module, "--key", uri])
            .args(["--subject", "CN=localhost", "--dns", "localhost", "-o"])
            .arg(dir.join("server.csr")),
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

    let gotls = build_gotls(&dir, "local");
    let serve_and_connect = |module: &Path, uri: &str, extra_env: &[(&str, &Path)], what: &str| {
        let port = free_port();
        let mut cmd = shsm(
            pqkit()
                .args([
                    "server",
                    "--json",
                    "--count",
                    "2",
                    "--port",
                    &port.to_string(),
                ])
                .arg("--pkcs11-module")
                .arg(module)
                .arg("--cert")
                .arg(dir.join("server.pem"))
                .args(["--key", uri]),
        );
        for (k, v) in extra_env {
            cmd.env(k, v);
        }
        let mut server = Guard::spawn(&mut cmd);
        wait_listening(port, server.child());
        let go = run_ok(
            Command::new(&gotls)
                .args(["client", "-send", "hello token"])
                .arg("-addr")
                .arg(format!("127.0.0.1:{port}"))
                .arg("-ca")
                .arg(pki.join("ca.pem")),
        );
        let go = &json_lines(&go.stdout)[0];
        assert_eq!(go["ok"], true, "{what}: Go client {go}");
        let ours = run_ok(
            pqkit()
                .args(["client", "--json", "--port", &port.to_string(), "--ca"])
                .arg(pki.join("ca.pem")),
        );
        let ours = &json_lines(&ours.stdout)[0];
        assert_eq!(
            ours["peer_signature_scheme"], "ecdsa_secp256r1_sha256",
            "{what}: {ours}"
        );
        let out = server.wait();
        assert!(
            out.status.success(),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    // In process: SoftHSM loaded by pqkit server.
    serve_and_connect(softhsm, uri, &[], "SoftHSM");

    // Across p11-kit: SoftHSM in the `p11-kit server` process; pqkit server reaches it through
    // p11-kit-client.so over a Unix socket.
    let socket = dir.join("p11.sock");
    let mut p11 = Guard::spawn(&mut shsm(
        Command::new("p11-kit")
            .args(["server", "-f", "-n"])
            .arg(&socket)
            .args(["--provider", module, "pkcs11:"]),
    ));
    wait_socket(&socket, p11.child());
    let address = PathBuf::from(format!("unix:path={}", socket.display()));
    serve_and_connect(
        p11_client,
        uri,
        &[("P11_KIT_SERVER_ADDRESS", &address)],
        "SoftHSM via p11-kit",
    );
    drop(p11);

    // pqkit's own token behind p11-kit: an ECDSA key (p11-kit 0.24 forwards no post-quantum
    // mechanism: see the README).
    run_ok(&mut shsm(&mut token_init("own", &dir.join("own"))));
    run_ok(&mut shsm(pqkit().args([
        "token",
        "keygen",
        "--token",
        "own",
        "--alg",
        "ECDSA-P256",
        "--label",
        "server",
    ])));
    run_ok(&mut shsm(
        pqkit()
            .args(["csr", "create", "--key", "pkcs11:token=own;object=server"])
            .args(["--subject", "CN=localhost", "--dns", "localhost", "-o"])
            .arg(dir.join("own.csr")),
    ));
    run_ok(
        pqkit()
            .args(["csr", "sign", "--force", "--ca"])
            .arg(pki.join("ca.pem"))
            .arg("--ca-key")
            .arg(pki.join("ca.key"))
            .arg("-o")
            .arg(dir.join("server.pem"))
            .arg(dir.join("own.csr")),
    );
    // Where `cargo test` leaves the module (deps/), or where `cargo build` puts it.
    let own_module = ["deps/libpqkit_pkcs11.so", "libpqkit_pkcs11.so"]
        .iter()
        .filter_map(|n| Some(std::env::current_exe().ok()?.parent()?.parent()?.join(n)))
        .find(|p| p.exists())
        .expect("libpqkit_pkcs11.so built with the tests");
    let socket = dir.join("own.sock");
    let mut p11 = Guard::spawn(&mut shsm(
        Command::new("p11-kit")
            .args(["server", "-f", "-n"])
            .arg(&socket)
            .arg("--provider")
            .arg(&own_module)
            .arg("pkcs11:"),
    ));
    wait_socket(&socket, p11.child());
    let address = PathBuf::from(format!("unix:path={}", socket.display()));
    serve_and_connect(
        p11_client,
        "pkcs11:token=own;object=server",
        &[("P11_KIT_SERVER_ADDRESS", &address)],
        "pqkit token via p11-kit",
    );
}

fn wait_socket(path: &Path, child: &mut std::process::Child) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !path.exists() {
        assert!(
            child.try_wait().expect("try_wait").is_none(),
            "p11-kit server exited"
        );
        assert!(
            std::time::Instant::now() < deadline,
            "p11-kit server did not listen"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A CA key imported into the token signs a certificate; an HSS key generated in the token
/// signs files through `pqkit hbs sign`, each index reserved by the token; `pqkit pubkey`
/// reads a token key's public key.
#[test]
fn a_ca_key_and_an_hss_key_live_in_the_token() {
    let dir = scratch("token-ca-hss");
    let pki = dir.join("pki");
    run_ok(
        pqkit()
            .args(["pki", "init", "--sig", "ML-DSA-44", "--dir"])
            .arg(&pki),
    );
    run_ok(with_token(&mut token_init("ca", &dir.join("token")), &dir));
    let out = run_ok(with_token(
        pqkit()
            .args([
                "token", "import", "--token", "ca", "--label", "root", "--id", "0a",
            ])
            .arg(pki.join("ca.key")),
        &dir,
    ));
    let ca_uri = String::from_utf8(out.stdout)
        .expect("utf-8")
        .trim()
        .to_owned();
    run_ok(with_token(
        pqkit()
            .args([
                "token", "import", "--token", "ca", "--label", "root", "--id", "0a", "--cert",
            ])
            .arg(pki.join("ca.pem")),
        &dir,
    ));
    // The imported key is the CA's: pubkey through the token equals the file's.
    let from_token = run_ok(with_token(pqkit().args(["pubkey", &ca_uri]), &dir)).stdout;
    let from_file = run_ok(pqkit().arg("pubkey").arg(pki.join("ca.key"))).stdout;
    assert_eq!(from_token, from_file);
    // The CA signs a CSR from inside the token.
    run_ok(
        pqkit()
            .args(["keygen", "--alg", "ML-DSA-44", "-o"])
            .arg(dir.join("leaf.key")),
    );
    run_ok(
        pqkit()
            .args([
                "csr",
                "create",
                "--subject",
                "CN=leaf",
                "--dns",
                "localhost",
                "--key",
            ])
            .arg(dir.join("leaf.key"))
            .arg("-o")
            .arg(dir.join("leaf.csr")),
    );
    run_ok(with_token(
        pqkit()
            .args(["csr", "sign", "--ca"])
            .arg(pki.join("ca.pem"))
            .args(["--ca-key", &ca_uri])
            .arg("-o")
            .arg(dir.join("leaf.pem"))
            .arg(dir.join("leaf.csr")),
        &dir,
    ));
    run_ok(
        pqkit()
            .args(["x509", "verify", "--ca"])
            .arg(pki.join("ca.pem"))
            .arg(dir.join("leaf.pem")),
    );

    // HSS in the token: 32 one-time keys (one H5 tree, W8).
    let out = run_ok(with_token(
        pqkit().args([
            "token", "keygen", "--token", "ca", "--alg", "L1_H5_W8", "--label", "fw",
        ]),
        &dir,
    ));
    let hss_uri = String::from_utf8(out.stdout)
        .expect("utf-8")
        .trim()
        .to_owned();
    run_ok(with_token(
        pqkit()
            .args(["pubkey", &hss_uri, "-o"])
            .arg(dir.join("fw.pub")),
        &dir,
    ));
    let files: Vec<_> = (0..3).map(|i| dir.join(format!("fw{i}.bin"))).collect();
    for (i, f) in files.iter().enumerate() {
        std::fs::write(f, format!("firmware {i}")).expect("write");
    }
    std::fs::create_dir_all(dir.join("sigs")).expect("mkdir");
    let out = run_ok(with_token(
        pqkit()
            .args(["hbs", "sign", "--state", &hss_uri, "--out-dir"])
            .arg(dir.join("sigs"))
            .args(&files),
        &dir,
    ));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("29 remaining"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for f in &files {
        let sig = dir.join("sigs").join(format!(
            "{}.sig",
            f.file_name().and_then(|n| n.to_str()).expect("name")
        ));
        run_ok(
            pqkit()
                .args(["hbs", "verify", "--pub"])
                .arg(dir.join("fw.pub"))
                .arg("--signature")
                .arg(&sig)
                .arg(f),
        );
    }
    // More files than one-time keys left: refused before any is spent.
    let many: Vec<_> = (0..30).map(|_| files[0].clone()).collect();
    let out = with_token(
        pqkit()
            .args(["hbs", "sign", "--force", "--state", &hss_uri, "--out-dir"])
            .arg(dir.join("sigs"))
            .args(&many),
        &dir,
    )
    .output()
    .expect("run");
    assert!(!out.status.success());
}

/// The keys in another process: `pqkit token serve` holds the token; the tools in other
/// processes reach it through pqkit's module with PQKIT_PKCS11_REMOTE and have no token
/// configuration of their own. ML-DSA-65, SLH-DSA-SHA2-128f and HSS keys are generated and
/// used across the socket.
#[test]
fn tools_sign_with_keys_held_by_another_process() {
    let dir = scratch("token-remote");
    run_ok(with_token(&mut token_init("far", &dir.join("token")), &dir));
    let socket = dir.join("token.sock");
    let mut server = Guard::spawn(with_token(
        pqkit().args(["token", "serve", "--socket"]).arg(&socket),
        &dir,
    ));
    wait_socket(&socket, server.child());
    let remote = |cmd: &mut Command| -> Command {
        let mut c = Command::new(cmd.get_program());
        c.args(cmd.get_args())
            .env("PQKIT_PKCS11_REMOTE", &socket)
            .env("PQKIT_PKCS11_CONF", dir.join("no-such-config.json"))
            .env("PQKIT_PKCS11_PIN", "12345678")
            .env_remove("PQKIT_PKCS11_MODULE");
        c
    };
    // A socket nothing answers on is named as such.
    let nobody = dir.join("nobody.sock");
    let out = pqkit()
        .args(["token", "list"])
        .env("PQKIT_PKCS11_REMOTE", &nobody)
        .env("PQKIT_PKCS11_CONF", dir.join("no-such-config.json"))
        .env_remove("PQKIT_PKCS11_MODULE")
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains(&nobody.display().to_string())
            && stderr.contains("no `pqkit token serve` answers"),
        "{stderr}"
    );
    std::fs::write(dir.join("doc.txt"), b"signed in another process").expect("write");
    for alg in ["ML-DSA-65", "SLH-DSA-SHA2-128f"] {
        let out = run_ok(&mut remote(pqkit().args([
            "token", "keygen", "--token", "far", "--alg", alg, "--label", alg,
        ])));
        let uri = String::from_utf8(out.stdout)
            .expect("utf-8")
            .trim()
            .to_owned();
        let sig = dir.join(format!("{alg}.sig"));
        let public = dir.join(format!("{alg}.pub"));
        run_ok(&mut remote(
            pqkit()
                .args(["sign", "--key", &uri, "-o"])
                .arg(&sig)
                .arg(dir.join("doc.txt")),
        ));
        run_ok(&mut remote(
            pqkit().args(["pubkey", &uri, "-o"]).arg(&public),
        ));
        run_ok(
            pqkit()
                .args(["verify", "--pub"])
                .arg(&public)
                .arg("--signature")
                .arg(&sig)
                .arg(dir.join("doc.txt")),
        );
    }
    let out = run_ok(&mut remote(pqkit().args([
        "token", "keygen", "--token", "far", "--alg", "L1_H5_W8", "--label", "fw",
    ])));
    let uri = String::from_utf8(out.stdout)
        .expect("utf-8")
        .trim()
        .to_owned();
    // The public key needs no PIN: the public object is read without a login.
    let mut no_pin = remote(pqkit().args(["pubkey", &uri, "-o"]).arg(dir.join("fw.pub")));
    no_pin.env_remove("PQKIT_PKCS11_PIN");
    run_ok(&mut no_pin);
    run_ok(&mut remote(
        pqkit()
            .args(["hbs", "sign", "--state", &uri, "-o"])
            .arg(dir.join("fw.sig"))
            .arg(dir.join("doc.txt")),
    ));
    run_ok(
        pqkit()
            .args(["hbs", "verify", "--pub"])
            .arg(dir.join("fw.pub"))
            .arg("--signature")
            .arg(dir.join("fw.sig"))
            .arg(dir.join("doc.txt")),
    );
    let listing = run_ok(&mut remote(pqkit().args(["token", "list"])));
    let listing = String::from_utf8_lossy(&listing.stdout);
    assert!(
        listing.contains("label=\"fw\"") && listing.contains("label=\"ML-DSA-65\""),
        "{listing}"
    );
    drop(server);
}

/// What a user gets wrong is refused before it costs anything: a label taken twice, a second
/// token with the same label, a delete without a login (it would leave the private key), a
/// live token server's socket, a token key that is not the certificate's; and `token list`
/// without `--token` never spends a login attempt of a token whose PIN is another.
#[test]
fn token_mistakes_are_refused_before_they_cost() {
    let dir = scratch("token-mistakes");
    run_ok(with_token(&mut token_init("one", &dir.join("one")), &dir));
    // A second token, another PIN.
    let two = token_init("two", &dir.join("two"));
    let args: Vec<_> = two.get_args().map(|a| a.to_owned()).collect();
    let mut two = pqkit();
    for a in &args {
        two.arg(if a == "12345678" {
            std::ffi::OsStr::new("56785678")
        } else {
            a.as_os_str()
        });
    }
    run_ok(with_token(&mut two, &dir));
    let fails = |cmd: &mut Command| {
        let out = cmd.output().expect("run");
        assert!(!out.status.success(), "{cmd:?} succeeded");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = fails(with_token(
        &mut token_init("one", &dir.join("one-again")),
        &dir,
    ));
    assert!(err.contains("configured already"), "{err}");

    let keygen = |label: &str| {
        let mut c = pqkit();
        c.args([
            "token",
            "keygen",
            "--token",
            "one",
            "--alg",
            "ECDSA-P256",
            "--label",
            label,
        ]);
        c
    };
    run_ok(with_token(&mut keygen("server"), &dir));
    let err = fails(with_token(&mut keygen("server"), &dir));
    assert!(err.contains("exists already"), "{err}");

    // Delete without a login: refused, and the private key is still there.
    let err = fails(
        with_token(
            pqkit().args(["token", "delete", "--token", "one", "--label", "server"]),
            &dir,
        )
        .env_remove("PQKIT_PKCS11_PIN"),
    );
    assert!(err.contains("not logged in"), "{err}");
    let listing = run_ok(with_token(
        pqkit().args(["token", "list", "--token", "one"]),
        &dir,
    ));
    assert!(String::from_utf8_lossy(&listing.stdout).contains("CKO_PRIVATE_KEY label=\"server\""));

    // `token list` of every token with token one's PIN: token two counts no failed login.
    for _ in 0..3 {
        run_ok(with_token(pqkit().args(["token", "list"]), &dir));
    }
    let header: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("two").join("token.json")).expect("read"))
            .expect("json");
    assert_eq!(header["failed_user"], 0, "{header}");

    // A token key that is not the certificate's: the server refuses to start.
    let pki = dir.join("pki");
    run_ok(
        pqkit()
            .args(["pki", "init", "--sig", "ECDSA-P256", "--dir"])
            .arg(&pki),
    );
    let err = fails(with_token(
        pqkit()
            .args(["server", "--port", &free_port().to_string(), "--cert"])
            .arg(pki.join("server.pem"))
            .args(["--key", "pkcs11:token=one;object=server"]),
        &dir,
    ));
    assert!(err.to_lowercase().contains("key"), "{err}");

    // A live token server's socket is never replaced, even with --force.
    let socket = dir.join("t.sock");
    let mut server = Guard::spawn(with_token(
        pqkit().args(["token", "serve", "--socket"]).arg(&socket),
        &dir,
    ));
    wait_socket(&socket, server.child());
    let err = fails(with_token(
        pqkit()
            .args(["token", "serve", "--force", "--socket"])
            .arg(&socket),
        &dir,
    ));
    assert!(err.contains("running"), "{err}");
    drop(server);
}
