//! rustls endpoints with the pqkit provider, fed raw bytes as if from the network: a server
//! (ML-DSA-44 certificate, every pqkit named group, client authentication offered) and a
//! client.

use std::sync::{Arc, OnceLock};

use rustls::{ClientConfig, ClientConnection, ServerConfig, ServerConnection};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};

struct Configs {
    server: Arc<ServerConfig>,
    client: Arc<ClientConfig>,
}

fn configs() -> &'static Configs {
    static CONFIGS: OnceLock<Configs> = OnceLock::new();
    CONFIGS.get_or_init(|| {
        let pki = pqkit_pki::Pki::generate(&pqkit_core::ml_dsa::ML_DSA_44).expect("pki");
        let chain: Vec<CertificateDer<'static>> = pki
            .server_chain()
            .into_iter()
            .map(CertificateDer::from)
            .collect();
        let der =
            pqkit_pki::key::signing_key_to_pkcs8(&pki.server_key, pqkit_pki::key::KeyFormat::Seed)
                .expect("pkcs8");
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(der.to_vec()));
        let roots = vec![CertificateDer::from(pki.ca_cert.clone())];
        let provider = Arc::new(pqkit_rustls::provider());
        let (server, _) = pqkit_rustls::server_config(provider.clone(), chain, key, Some(&roots))
            .expect("server");
        let (client, _) = pqkit_rustls::client_config(provider, &roots, None).expect("client");
        Configs {
            server: Arc::new(server),
            client: Arc::new(client),
        }
    })
}

/// Feeds `data` to a connection in records-sized reads, processing after each, writing what
/// it answers nowhere.
fn drive<D>(conn: &mut rustls::ConnectionCommon<D>, mut data: &[u8]) {
    let mut sink = Vec::new();
    while !data.is_empty() {
        match conn.read_tls(&mut data) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let failed = conn.process_new_packets().is_err();
        while conn.wants_write() {
            sink.clear();
            if conn.write_tls(&mut sink).is_err() {
                break;
            }
        }
        if failed {
            break;
        }
    }
}

/// Bytes from a client: ClientHello and what follows.
pub(crate) fn server(data: &[u8]) {
    if let Ok(mut conn) = ServerConnection::new(configs().server.clone()) {
        drive(&mut conn, data);
    }
}

/// Bytes from a server, after the client's ClientHello.
pub(crate) fn client(data: &[u8]) {
    let Ok(name) = ServerName::try_from("localhost") else {
        return;
    };
    if let Ok(mut conn) = ClientConnection::new(configs().client.clone(), name) {
        let mut hello = Vec::new();
        let _ = conn.write_tls(&mut hello);
        drive(&mut conn, data);
    }
}
