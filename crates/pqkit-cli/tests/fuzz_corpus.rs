//! Replays the fuzz corpus: every file of `fuzz/corpus/<target>` and every crash turned
//! regression in `fuzz/regressions/<target>` through its target (the same code the AFL++
//! harness runs, `fuzz/targets`). A panic here is a bug the fuzzer found, or one it would.
//!
//! `PQKIT_WRITE_FUZZ_SEEDS=1 cargo test -p pqkit-cli --test fuzz_corpus -- --ignored` writes
//! the seed files (valid inputs of each kind) into `fuzz/corpus`.

#[allow(dead_code, unreachable_pub)]
#[path = "../../../fuzz/targets/mod.rs"]
mod targets;

use std::path::{Path, PathBuf};
use std::sync::Arc;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    out.retain(|p| p.is_file());
    out.sort();
    out
}

#[test]
fn every_corpus_file_and_regression_runs_clean() {
    let mut total = 0;
    for (name, target) in targets::TARGETS {
        let corpus = files(&fuzz_dir().join("corpus").join(name));
        assert!(
            !corpus.is_empty(),
            "{}: no corpus for target {name}",
            fuzz_dir().join("corpus").join(name).display()
        );
        let regressions = files(&fuzz_dir().join("regressions").join(name));
        for file in corpus.iter().chain(&regressions) {
            let data = std::fs::read(file).expect("read");
            let result = std::panic::catch_unwind(|| target(&data));
            assert!(result.is_ok(), "{name}: {} panics", file.display());
            total += 1;
        }
    }
    assert!(total >= targets::TARGETS.len());
}

#[test]
#[ignore = "writes fuzz/corpus; run with PQKIT_WRITE_FUZZ_SEEDS=1"]
fn write_seed_corpus() {
    if std::env::var_os("PQKIT_WRITE_FUZZ_SEEDS").is_none() {
        return;
    }
    let root = fuzz_dir().join("corpus");
    let write = |target: &str, name: &str, bytes: &[u8]| {
        let dir = root.join(target);
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(dir.join(name), bytes).expect("write");
    };
    use pqkit_core::catalogue;
    use pqkit_pki::key::{self, KeyFormat};
    use pqkit_pki::{Pki, pem};

    let pki = Pki::generate(&pqkit_core::ml_dsa::ML_DSA_44).expect("pki");
    let ec = Pki::generate_chain(
        &pqkit_core::classical::ECDSA_P256_SHA256,
        Some(&pqkit_core::classical::ECDSA_P256_SHA256),
        &pqkit_core::classical::ECDSA_P256_SHA256,
    )
    .expect("pki");
    // PEM and DER.
    write(
        "pem_der",
        "cert.pem",
        pem::encode(pem::CERTIFICATE, &pki.server_cert)
            .expect("pem")
            .as_bytes(),
    );
    write("pem_der", "cert.der", &ec.server_cert);
    let ec_key = key::signing_key_to_pkcs8(&ec.server_key, KeyFormat::Seed).expect("pkcs8");
    write(
        "pem_der",
        "key.pem",
        pem::encode(pem::PRIVATE_KEY, &ec_key)
            .expect("pem")
            .as_bytes(),
    );
    // PKCS#8 of every family and form.
    for name in [
        "ML-DSA-44",
        "SLH-DSA-SHA2-128f",
        "Falcon-512",
        "ECDSA-P256",
        "Ed25519",
        "RSA-PSS-2048",
    ] {
        let alg = catalogue::signature(name).expect("alg");
        let k = alg.generate().expect("key");
        let forms: &[KeyFormat] = if alg.seed_size > 0 {
            &[KeyFormat::Seed, KeyFormat::Expanded, KeyFormat::Both]
        } else {
            &[KeyFormat::Seed]
        };
        for &f in forms {
            let der = key::signing_key_to_pkcs8(&k, f).expect("pkcs8");
            write("pkcs8_key", &format!("{name}-{f:?}.der"), &der);
        }
        let spki = key::spki_der(&k.verifying_key()).expect("spki");
        write("spki", &format!("{name}.der"), &spki);
        let sig = k.sign(b"fuzz", &[]).expect("sign");
        let pick = catalogue::signatures()
            .iter()
            .position(|a| a.name == name)
            .unwrap_or(0);
        let mut seed = vec![u8::try_from(pick).unwrap_or(0)];
        seed.extend_from_slice(&sig);
        write("signature_verify", &format!("{name}.bin"), &seed);
    }
    for kem in catalogue::kems() {
        let dk = kem.generate().expect("key");
        for f in [KeyFormat::Seed, KeyFormat::Expanded] {
            let der = key::decapsulation_key_to_pkcs8(&dk, f).expect("pkcs8");
            write("pkcs8_key", &format!("{}-{f:?}.der", kem.name), &der);
        }
        let (ct, _) = dk.encapsulation_key().encapsulate().expect("encaps");
        let mut seed = vec![0u8];
        seed.extend_from_slice(&ct);
        write("kem_decapsulate", &format!("{}.bin", kem.name), &seed);
    }
    for (i, g) in catalogue::groups().iter().enumerate() {
        let client = g.start().expect("start");
        let mut seed = vec![u8::try_from(i).unwrap_or(0)];
        seed.extend_from_slice(client.share());
        write("key_share", &format!("{}.bin", g.name), &seed);
    }
    // Chains (leaf, intermediate, root concatenated) and CSRs.
    for (name, p) in [("ml-dsa-44", &pki), ("ecdsa-p256", &ec)] {
        let mut chain = p.server_chain().concat();
        chain.extend_from_slice(&p.ca_cert);
        write("certificate_path", &format!("{name}.der"), &chain);
        let csr = pqkit_pki::csr::create(&p.client_key, "CN=fuzz,O=pqkit", &[], &[]).expect("csr");
        write("csr", &format!("{name}.der"), &csr);
    }
    // Stateful keys: public keys, a signature, a state file.
    let dir = std::env::temp_dir().join(format!("pqkit-seeds-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let level = (&pqkit_hbs::params::LMS[0], &pqkit_hbs::params::OTS[3]);
    let state = dir.join("hss");
    let ledger = || pqkit_hbs::ledger::hazmat::in_memory();
    let mut hss = pqkit_hbs::state::StatefulKey::create(&state, &[level, level], ledger(), 1)
        .expect("create");
    let xmss = pqkit_hbs::state::StatefulKey::create_xmss(
        &dir.join("xmss"),
        pqkit_hbs::xmss::by_name("XMSS-SHA2_10_256").expect("xmss"),
        ledger(),
        1,
    )
    .expect("create");
    let sig = hss.sign(b"fuzz").expect("sign");
    for (name, k) in [("hss", hss.public_key()), ("xmss", xmss.public_key())] {
        write(
            "hbs_public_key",
            &format!("{name}.der"),
            &k.to_spki_der().expect("spki"),
        );
        write(
            "hbs_public_key",
            &format!("{name}.pem"),
            k.to_pem().expect("pem").as_bytes(),
        );
    }
    write("hbs_signature", "hss.sig", &sig);
    drop(hss);
    write(
        "hbs_state_file",
        "hss.state",
        &std::fs::read(&state).expect("state"),
    );
    drop(xmss);
    let _ = std::fs::remove_dir_all(&dir);
    // TLS: a ClientHello per named group, and a server's first flight.
    use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
    let roots = vec![CertificateDer::from(pki.ca_cert.clone())];
    for g in [
        "X25519MLKEM768",
        "MLKEM1024",
        "SecP384r1MLKEM1024",
        "X25519",
    ] {
        let provider = Arc::new(pqkit_rustls::provider_with_groups(vec![
            pqkit_rustls::find_group(g).expect("group"),
        ]));
        let (config, _) = pqkit_rustls::client_config(provider, &roots, None).expect("client");
        let mut conn = rustls::ClientConnection::new(
            Arc::new(config),
            ServerName::try_from("localhost").expect("name"),
        )
        .expect("conn");
        let mut hello = Vec::new();
        conn.write_tls(&mut hello).expect("hello");
        write("tls_server", &format!("client-hello-{g}.bin"), &hello);
        if g == "X25519MLKEM768" {
            let chain: Vec<CertificateDer<'static>> = pki
                .server_chain()
                .into_iter()
                .map(CertificateDer::from)
                .collect();
            let der = key::signing_key_to_pkcs8(&pki.server_key, KeyFormat::Seed).expect("k");
            let server_key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(der.to_vec()));
            let (server_config, _) = pqkit_rustls::server_config(
                Arc::new(pqkit_rustls::provider()),
                chain,
                server_key,
                None,
            )
            .expect("server");
            let mut server = rustls::ServerConnection::new(Arc::new(server_config)).expect("s");
            server.read_tls(&mut &hello[..]).expect("read");
            server.process_new_packets().expect("process");
            let mut flight = Vec::new();
            while server.wants_write() {
                server.write_tls(&mut flight).expect("write");
            }
            write("tls_client", "server-flight.bin", &flight);
        }
    }
}
