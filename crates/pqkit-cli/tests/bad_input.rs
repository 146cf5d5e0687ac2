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

/// An ML-DSA-44 PKI from `pqkit pki init` in a scratch directory, and its CA certificate.
fn ml_dsa_pki(name: &str) -> (std::path::PathBuf, Vec<CertificateDer<'static>>) {
    let pki = scratch(name).join("pki");
    run_ok(
        pqkit()
            .args(["pki", "init", "--sig", "ML-DSA-44", "--dir"])
            .arg(&pki),
    );
    let ca = pqkit_pki::pem::read_certificates(&pki.join("ca.pem"))
        .expect("ca")
        .into_iter()
        .map(CertificateDer::from)
        .collect();
    (pki, ca)
}

#[test]
fn bad_key_shares_get_illegal_parameter_and_the_server_keeps_serving() {
    let (pki, ca) = ml_dsa_pki("bad-input");

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

/// The TLS records in `bytes`: (content type, payload length).
fn records(mut bytes: &[u8]) -> Vec<(u8, usize)> {
    let mut out = Vec::new();
    while bytes.len() >= 5 {
        let len = usize::from(u16::from_be_bytes([bytes[3], bytes[4]]));
        out.push((bytes[0], len));
        bytes = &bytes[(5 + len).min(bytes.len())..];
    }
    out
}

/// A handshake that fails after the server has queued its first flight — here a plaintext
/// handshake record right behind the ClientHello, in the same TCP segment — must still end with
/// the fatal alert. pqkit's counting socket used to forward only `write`, so rustls's error path
/// (one `write_tls`, one `write_vectored` of every queued record) sent the ServerHello alone
/// and closed. Now the whole flight and the encrypted alert (a 19-byte record: 2 bytes of
/// alert, the inner content type and a 16-byte AEAD tag) reach the client.
#[test]
fn a_failed_handshake_after_the_server_hello_still_sends_the_alert() {
    use std::io::{Read, Write};
    let (pki, ca) = ml_dsa_pki("alert-after-flight");
    let port = free_port();
    let server = pqkit_server(&pki, port, "X25519MLKEM768", 1, false);
    let provider = Arc::new(pqkit_rustls::provider_with_groups(vec![
        pqkit_rustls::find_group("X25519MLKEM768").expect("group"),
    ]));
    let (config, _) = pqkit_rustls::client_config(provider, &ca, None).expect("config");
    let mut conn = ClientConnection::new(Arc::new(config), "localhost".try_into().expect("name"))
        .expect("client");
    let mut hello = Vec::new();
    conn.write_tls(&mut hello).expect("ClientHello");
    // A second ClientHello in plaintext where the client's encrypted Finished belongs.
    hello.extend_from_slice(&[0x16, 0x03, 0x03, 0x00, 0x04, 0x01, 0x00, 0x00, 0x00]);
    let mut sock = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    sock.set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .expect("timeout");
    sock.write_all(&hello).expect("write");
    let mut got = Vec::new();
    let _ = sock.read_to_end(&mut got);
    let recs = records(&got);
    assert_eq!(
        recs.first().map(|r| r.0),
        Some(0x16),
        "ServerHello first: {recs:?}"
    );
    assert!(
        recs.len() >= 3,
        "the whole flight, not the ServerHello alone: {recs:?}"
    );
    assert_eq!(
        recs.last().copied(),
        Some((0x17, 19)),
        "the last record is the encrypted fatal alert: {recs:?}"
    );
    let out = server.wait();
    let lines = json_lines(&out.stdout);
    assert!(lines[0]["error"].is_string(), "{lines:?}");
}
