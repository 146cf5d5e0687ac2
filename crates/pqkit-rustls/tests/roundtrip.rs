//! In-process TLS 1.3 round trips through the pqkit provider: every named group, and every
//! ML-DSA level as server and as client certificate, with mutual authentication.

use std::io::{Read, Write};
use std::sync::Arc;

use pqkit_core::ml_dsa::{ML_DSA_44, ML_DSA_65, ML_DSA_87};
use pqkit_core::sig::{SignatureAlgorithm, SigningKey};
use pqkit_pki::Pki;
use pqkit_pki::key::{KeyFormat, signing_key_to_pkcs8};
use pqkit_rustls::observe::PeerScheme;
use rustls::crypto::SupportedKxGroup;
use rustls::{ClientConnection, ConnectionCommon, NamedGroup, ServerConnection, SideData};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

struct Outcome {
    group: NamedGroup,
    suite: rustls::CipherSuite,
    server_scheme: Option<rustls::SignatureScheme>,
    client_scheme: Option<rustls::SignatureScheme>,
}

fn key_der(key: &SigningKey) -> PrivateKeyDer<'static> {
    let der = signing_key_to_pkcs8(key, KeyFormat::Seed).expect("pkcs8");
    PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(der.to_vec()))
}

/// Moves TLS records from one side to the other until neither has anything to send.
fn pump<A: SideData, B: SideData>(a: &mut ConnectionCommon<A>, b: &mut ConnectionCommon<B>) {
    let mut buf = Vec::new();
    while a.wants_write() {
        a.write_tls(&mut buf).expect("write_tls");
    }
    let mut rd = &buf[..];
    while !rd.is_empty() {
        b.read_tls(&mut rd).expect("read_tls");
        b.process_new_packets().expect("process");
    }
}

/// A full mutually authenticated handshake plus one message each way.
fn connect(group: &'static dyn SupportedKxGroup, server_pki: &Pki, client_pki: &Pki) -> Outcome {
    let provider = Arc::new(pqkit_rustls::provider_with_groups(vec![group]));
    // The server trusts the client's CA and vice versa; the two PKIs may differ in algorithm.
    let client_ca = [CertificateDer::from(client_pki.ca_cert.clone())];
    let server_ca = [CertificateDer::from(server_pki.ca_cert.clone())];
    let (server_cfg, server_seen) = pqkit_rustls::server_config(
        provider.clone(),
        vec![CertificateDer::from(server_pki.server_cert.clone())],
        key_der(&server_pki.server_key),
        Some(&client_ca),
    )
    .expect("server config");
    let (client_cfg, client_seen): (_, Arc<PeerScheme>) = pqkit_rustls::client_config(
        provider,
        &server_ca,
        Some((
            vec![CertificateDer::from(client_pki.client_cert.clone())],
            key_der(&client_pki.client_key).into(),
        )),
    )
    .expect("client config");
    let mut client =
        ClientConnection::new(Arc::new(client_cfg), "localhost".try_into().expect("name"))
            .expect("client");
    let mut server = ServerConnection::new(Arc::new(server_cfg)).expect("server");
    while client.is_handshaking() || server.is_handshaking() {
        pump(&mut client, &mut server);
        pump(&mut server, &mut client);
    }
    client.writer().write_all(b"hello pqkit!").expect("write");
    pump(&mut client, &mut server);
    let mut got = [0u8; 12];
    server.reader().read_exact(&mut got).expect("server reads");
    assert_eq!(&got, b"hello pqkit!");
    server
        .writer()
        .write_all(b"I hear you fa shizzle!")
        .expect("write");
    pump(&mut server, &mut client);
    let mut got = [0u8; 22];
    client.reader().read_exact(&mut got).expect("client reads");
    assert_eq!(&got, b"I hear you fa shizzle!");
    let group = client
        .negotiated_key_exchange_group()
        .expect("group")
        .name();
    assert_eq!(
        server
            .negotiated_key_exchange_group()
            .expect("group")
            .name(),
        group
    );
    Outcome {
        group,
        suite: client.negotiated_cipher_suite().expect("suite").suite(),
        server_scheme: client_seen.get(),
        client_scheme: server_seen.get(),
    }
}

fn scheme_of(alg: &SignatureAlgorithm) -> rustls::SignatureScheme {
    pqkit_rustls::scheme::for_algorithm(alg)
        .expect("scheme")
        .scheme
}

#[test]
fn every_named_group_completes_a_mutually_authenticated_handshake() {
    let pki = Pki::generate(&ML_DSA_65).expect("pki");
    for g in pqkit_rustls::kx::every_kx_group() {
        let out = connect(g, &pki, &pki);
        assert_eq!(out.group, g.name, "{}", g.group.name);
        assert_eq!(out.suite, rustls::CipherSuite::TLS13_AES_256_GCM_SHA384);
        assert_eq!(out.server_scheme, Some(rustls::SignatureScheme::ML_DSA_65));
        assert_eq!(out.client_scheme, Some(rustls::SignatureScheme::ML_DSA_65));
        println!("{}: ok", g.group.name);
    }
    println!(
        "{} named groups round-tripped",
        pqkit_rustls::kx::every_kx_group().count()
    );
}

/// ffdhe3072 (RFC 7919), offered only when named: a full handshake with the padded
/// 384-byte shares and secret.
#[test]
fn ffdhe3072_completes_a_handshake_when_named() {
    let pki = Pki::generate(&ML_DSA_65).expect("pki");
    let group = pqkit_rustls::find_group("ffdhe3072").expect("named");
    let out = connect(group, &pki, &pki);
    assert_eq!(out.group, NamedGroup::FFDHE3072);
    assert!(
        !pqkit_rustls::provider()
            .kx_groups
            .iter()
            .any(|g| g.name() == NamedGroup::FFDHE3072),
        "not in the default offer"
    );
}

#[test]
fn every_ml_dsa_level_as_server_and_as_client_certificate() {
    let other = Pki::generate(&ML_DSA_65).expect("pki");
    for alg in [&ML_DSA_44, &ML_DSA_65, &ML_DSA_87] {
        let pki = Pki::generate(alg).expect("pki");
        let group = &pqkit_rustls::kx::X25519MLKEM768;
        // As the server's certificate (client uses ML-DSA-65).
        let out = connect(group, &pki, &other);
        assert_eq!(
            out.server_scheme,
            Some(scheme_of(alg)),
            "{} as server",
            alg.name
        );
        // As the client's certificate (server uses ML-DSA-65).
        let out = connect(group, &other, &pki);
        assert_eq!(
            out.client_scheme,
            Some(scheme_of(alg)),
            "{} as client",
            alg.name
        );
        println!("{}: ok as server and as client certificate", alg.name);
    }
}

#[test]
fn a_server_certificate_from_an_untrusted_ca_is_rejected() {
    let pki = Pki::generate(&ML_DSA_44).expect("pki");
    let stranger = Pki::generate(&ML_DSA_44).expect("pki");
    let provider = Arc::new(pqkit_rustls::provider());
    let (server_cfg, _) = pqkit_rustls::server_config(
        provider.clone(),
        vec![CertificateDer::from(stranger.server_cert.clone())],
        key_der(&stranger.server_key),
        None,
    )
    .expect("server config");
    let (client_cfg, _) =
        pqkit_rustls::client_config(provider, &[CertificateDer::from(pki.ca_cert.clone())], None)
            .expect("client config");
    let mut client =
        ClientConnection::new(Arc::new(client_cfg), "localhost".try_into().expect("name"))
            .expect("client");
    let mut server = ServerConnection::new(Arc::new(server_cfg)).expect("server");
    pump(&mut client, &mut server);
    let mut buf = Vec::new();
    while server.wants_write() {
        server.write_tls(&mut buf).expect("write");
    }
    let mut rd = &buf[..];
    let err = loop {
        assert!(
            !rd.is_empty(),
            "the client accepted a certificate from an untrusted CA"
        );
        client.read_tls(&mut rd).expect("read");
        if let Err(e) = client.process_new_packets() {
            break e;
        }
    };
    assert!(
        matches!(err, rustls::Error::InvalidCertificate(_)),
        "{err:?}"
    );
}
