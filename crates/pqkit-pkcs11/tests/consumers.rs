//! Consumers written elsewhere drive the module: python-pkcs11 and PyKCS11 (PyPI) generate
//! ML-DSA-65, ML-KEM-768 and SLH-DSA-SHA2-128f keys, sign, verify, encapsulate and
//! decapsulate; pqkit-core checks what the token made, and the token checks what pqkit-core
//! made. OpenSC's pkcs11-tool lists slots, mechanisms and objects and signs by mechanism
//! number. CI installs them (.ci/run); a missing one fails the test with what to install.

#![allow(clippy::unwrap_used, missing_docs, unsafe_code)]

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use common::*;
use pqkit_core::catalogue;

fn json_lines(out: &[u8]) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(out)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn hex_field(v: &serde_json::Value, k: &str) -> Vec<u8> {
    hex::decode(v[k].as_str().unwrap_or_else(|| panic!("{k} in {v}"))).unwrap()
}

#[test]
fn python_pkcs11_and_pykcs11_use_the_token() {
    fixture();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/consumers/python_consumers.py"
    );
    let ml_dsa = catalogue::signature("ML-DSA-65")
        .unwrap()
        .generate()
        .unwrap();
    let msg = b"signed by pqkit-core, verified by the token";
    let sig = ml_dsa.sign(msg, &[]).unwrap();
    let kem = catalogue::kem("ML-KEM-768").unwrap().generate().unwrap();
    let given = serde_json::json!({
        "ml_dsa_pk": hex::encode(ml_dsa.verifying_key().as_bytes()),
        "ml_dsa_msg": hex::encode(msg),
        "ml_dsa_sig": hex::encode(&sig),
        "ml_kem_ek": hex::encode(kem.encapsulation_key().as_bytes()),
    });
    let mut child = Command::new("python3")
        .arg(script)
        .arg(module_path())
        .args(["main", USER_PIN])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(given.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "python consumers failed (CI installs them: pip install python-pkcs11 PyKCS11):\n{stderr}"
    );
    let lines = json_lines(&out.stdout);
    let kinds: Vec<&str> = lines.iter().filter_map(|l| l["kind"].as_str()).collect();
    assert_eq!(
        kinds,
        ["ml-dsa", "ml-dsa-reverse", "ml-kem", "slh-dsa"],
        "{stderr}"
    );
    for l in &lines {
        match l["kind"].as_str().unwrap() {
            "ml-dsa" | "slh-dsa" => {
                let alg = catalogue::signature(l["alg"].as_str().unwrap()).unwrap();
                let vk = alg.verifying_key(&hex_field(l, "pk")).unwrap();
                vk.verify(&hex_field(l, "msg"), &[], &hex_field(l, "sig"))
                    .unwrap();
            }
            "ml-dsa-reverse" => assert_eq!(l["ok"], true),
            "ml-kem" => {
                let ss = kem.decapsulate(&hex_field(l, "ct")).unwrap();
                assert_eq!(ss.as_bytes(), &hex_field(l, "ss")[..]);
            }
            other => panic!("{other}"),
        }
    }
}

#[test]
fn pkcs11_tool_lists_and_signs_by_mechanism_number() {
    let f = fixture();
    let t = token();
    let _ = t;
    let tool = |args: &[&str]| {
        let out = Command::new("pkcs11-tool")
            .arg("--module")
            .arg(module_path())
            .args(args)
            .output()
            .expect("pkcs11-tool (Debian opensc; CI installs it)");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "pkcs11-tool {args:?}:\n{text}");
        text
    };
    let slots = tool(&["--list-slots"]);
    assert!(slots.contains("pqkit token"), "{slots}");
    let mechanisms = tool(&["--token-label", "main", "--list-mechanisms"]);
    // pkcs11-tool 0.23 predates PKCS#11 3.2: it prints unknown mechanisms by number.
    let lower = mechanisms.to_ascii_lowercase();
    assert!(
        lower.contains("ecdsa") && lower.contains("mechtype-0x1d"),
        "{mechanisms}"
    );
    // An ECDSA P-256 key with CKA_ID 7e, made through cryptoki; pkcs11-tool finds it by id and
    // signs with CKM_ECDSA given by number (0x1041) over a digest; pqkit verifies.
    let s = t.user_session();
    s.generate_key_pair(
        &cryptoki::mechanism::Mechanism::EccKeyPairGen,
        &[
            cryptoki::object::Attribute::Token(true),
            cryptoki::object::Attribute::Id(vec![0x7e]),
            cryptoki::object::Attribute::EcParams(
                pqkit_pkcs11::mech::ec_params_of("ECDSA-P256")
                    .unwrap()
                    .to_vec(),
            ),
        ],
        &[
            cryptoki::object::Attribute::Token(true),
            cryptoki::object::Attribute::Id(vec![0x7e]),
        ],
    )
    .unwrap();
    // Keys of the stateful and KEM types beside the rest: every attribute pkcs11-tool asks
    // of any of them has an answer (PKCS#11 3.2's defaults), so the listing warns of nothing.
    let _hss = generate_hss(&t, &[5], 4, "tool-hss");
    let _kem = generate(
        &s,
        cryptoki::object::KeyType::ML_KEM,
        cryptoki_sys::CKP_ML_KEM_768,
        "tool-kem",
    );
    for login in [false, true] {
        let mut args = vec!["--token-label", "main", "--list-objects"];
        if login {
            args.extend(["--login", "--pin", USER_PIN]);
        }
        let objects = tool(&args);
        assert!(
            !objects.contains("warning:") && !objects.contains("error:"),
            "pkcs11-tool --list-objects (login {login}) warned:\n{objects}"
        );
        assert_eq!(objects.contains("Private Key Object"), login, "{objects}");
    }
    let objects = tool(&[
        "--token-label",
        "main",
        "--login",
        "--pin",
        USER_PIN,
        "--list-objects",
    ]);
    assert!(objects.contains("Private Key Object"), "{objects}");
    let dir = f.dir.join("tool");
    std::fs::create_dir_all(&dir).unwrap();
    let message = b"pkcs11-tool signs this digest in the pqkit token";
    let digest = pqkit_core::prehash::PreHash::Sha256.digest(message);
    std::fs::write(dir.join("in"), &digest).unwrap();
    tool(&[
        "--token-label",
        "main",
        "--login",
        "--pin",
        USER_PIN,
        "--sign",
        "-m",
        "0x1041",
        "--id",
        "7e",
        "-i",
        dir.join("in").to_str().unwrap(),
        "-o",
        dir.join("sig").to_str().unwrap(),
    ]);
    let raw = std::fs::read(dir.join("sig")).unwrap();
    let der = pqkit_pkcs11::ecdsa_raw_to_der(&raw).unwrap();
    let public = s
        .find_objects(&[
            cryptoki::object::Attribute::Class(cryptoki::object::ObjectClass::PUBLIC_KEY),
            cryptoki::object::Attribute::Id(vec![0x7e]),
        ])
        .unwrap();
    let vk = verifying_key(&s, public[0], "ECDSA-P256");
    vk.verify(message, &[], &der).unwrap();
}
