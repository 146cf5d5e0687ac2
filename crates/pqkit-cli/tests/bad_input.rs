//! Hostile key shares against `pqkit server`: a ClientHello whose X25519MLKEM768 key share has
//! the wrong length, and one whose ML-KEM encapsulation key fails the FIPS 203 §7.2 modulus
//! check. Each must end the handshake with an `illegal_parameter` alert — no panic — and the
//! server must go on to serve the next connection.

mod support;

use std::net::TcpStream;
use std::sync::Arc;

use pqkit_core::hybrid;
use rustls::crypto::{ActiveKeyExchange, SharedSecret, SupportedKxGroup};
use rustls::{AlertDescription, ClientConnection, NamedGroup};
use rustls_pki_types::CertificateDer;
use support::{free_port, json_lines, pqkit, pqkit_server, run_ok, scratch};

/// A "group" that claims to be X25519MLKEM768 but sends the share it was given.
#[derive(Debug)]
struct ForgedShare(Vec<u8>);

impl SupportedKxGroup for ForgedShare {
    fn start(&self) -> Result<Box<dyn ActiveKeyExchange>, rustls::Error> {
        Ok(Box::new(Forged(self.0.clone())))
    }

    fn name(&self) -> NamedGroup {
        NamedGroup::X25519MLKEM768
    }
}

struct Forged(Vec<u8>);

impl ActiveKeyExchange for Forged {
    fn complete(self: Box<Self>, _: &[u8]) -> Result<SharedSecret, rustls::Error> {
        Err(rustls::Error::General(
            "forged share cannot complete".into(),
        ))
    }

    fn pub_key(&self) -> &[u8] {
        &self.0
    }

    fn group(&self) -> NamedGroup {
        NamedGroup::X25519MLKEM768
    }
}

/// Connects with a forged key share and returns the error the handshake ended with.
fn handshake_with(share: Vec<u8>, port: u16, ca: &[CertificateDer<'static>]) -> rustls::Error {
    let group: &'static dyn SupportedKxGroup = Box::leak(Box::new(ForgedShare(share)));
    let provider = Arc::new(pqkit_rustls::provider_with_groups(vec![group]));
    let (config, _) = pqkit_rustls::client_config(provider, ca, None).expect("config");
    let mut conn = ClientConnection::new(Arc::new(config), "localhost".try_into().expect("name"))
        .expect("client");
    let mut sock = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    loop {
        match conn.complete_io(&mut sock) {
            Ok(_) if conn.is_handshaking() => {}
            Ok(_) => panic!("handshake with a forged key share succeeded"),
            Err(e) => {
                let inner = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>());
                return inner
                    .cloned()
                    .unwrap_or_else(|| panic!("I/O error instead of an alert: {e}"));
            }
        }
    }
}

#[test]
fn bad_key_shares_get_illegal_parameter_and_the_server_keeps_serving() {
    let dir = scratch("bad-input");
    let pki = dir.join("pki");
    run_ok(
        pqkit()
            .args(["pki", "init", "--sig", "ML-DSA-44", "--dir"])
            .arg(&pki),
    );
    let ca: Vec<CertificateDer<'static>> = pqkit_pki::pem::read_certificates(&pki.join("ca.pem"))
        .expect("ca")
        .into_iter()
        .map(CertificateDer::from)
        .collect();

    let port = free_port();
    let server = pqkit_server(&pki, port, "X25519MLKEM768", 3, false);

    // 1. Wrong length: one byte short of ek (1184) ‖ X25519 (32).
    let g = &hybrid::X25519MLKEM768;
    let short = vec![0x42; g.client_share_size() - 1];
    let err = handshake_with(short, port, &ca);
    assert_eq!(
        err,
        rustls::Error::AlertReceived(AlertDescription::IllegalParameter)
    );

    // 2. Right length, but the first coefficient of ek is 4095 >= q = 3329.
    let mut share = g.start().expect("share").share().to_vec();
    share[..3].fill(0xff);
    let err = handshake_with(share, port, &ca);
    assert_eq!(
        err,
        rustls::Error::AlertReceived(AlertDescription::IllegalParameter)
    );

    // 3. The server still serves an honest client.
    let ok = run_ok(
        pqkit()
            .args(["client", "--json", "--groups", "X25519MLKEM768", "--port"])
            .arg(port.to_string())
            .arg("--ca")
            .arg(pki.join("ca.pem")),
    );
    assert_eq!(json_lines(&ok.stdout)[0]["group"], "X25519MLKEM768");

    let out = server.wait();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "server panicked: {stderr}");
    assert!(
        out.status.success(),
        "server exit: {}\n{stderr}",
        out.status
    );
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 3, "one report per connection: {lines:?}");
    for bad in &lines[..2] {
        let e = bad["error"].as_str().expect("error reported");
        assert!(e.contains("InvalidKeyShare"), "server reason: {e}");
    }
    assert_eq!(lines[2]["group"], "X25519MLKEM768");
    println!("2 forged key shares rejected with illegal_parameter; the 3rd connection served");
}
