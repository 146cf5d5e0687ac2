//! Interop with Bouncy Castle (`../shared/peers/bctls`: bcprov/bcutil/bcpkix 1.86 and bctls
//! 1.84 on Java 17, built with Maven once per test run into the target directory).
//!
//! - Falcon-512 and Falcon-1024 (round 3) against BC's lightweight Falcon
//!   (`org.bouncycastle.pqc.crypto.falcon`): keys and signatures made on each side are checked
//!   on the other, private keys included. The peer's oracle has no Falcon, so a small Java
//!   helper ([`FALCON_ORACLE`]) is compiled here against the peer's own bcprov jar.
//! - ML-DSA-65 and all 12 SLH-DSA parameter sets through the peer's oracle: pqkit's signatures verify in BC,
//!   BC's verify in pqkit, and the deterministic signatures are byte-identical.
//! - TLS 1.3 with BC's low-level TLS API (`org.bouncycastle.tls`, `BcTlsCrypto`): X25519MLKEM768
//!   with mutual authentication, both directions, asserted from both sides' JSON: ML-DSA-65
//!   with pqkit's PKI (BC loads pqkit's RFC 9881 seed-form PKCS#8 keys), ML-DSA-65 with BC's own
//!   PKI (pqkit loads BC's seed+expanded PKCS#8 key and parses BC's certificates), and
//!   SLH-DSA-SHA2-128f (draft-reddy-tls-slhdsa code point 0x0912, which BC only offers or
//!   accepts when told to with `--sigalgs`).
//!
//! - HSS/LMS (RFC 8554) with SHA-256 and SHAKE256 at n = 32 and 24, two levels: pqkit's
//!   signatures verify in BC's `HSSSigner`, BC's in pqkit; the same for XMSS^MT
//!   (XMSSMT-SHA2_20/4_256) and XMSS (XMSS-SHA2_10_256).
//!
//! - CMS SignedData (RFC 5652) with BC's bcpkix (`tests/data/bc/CmsPeer.java`): ML-DSA-44/65/87
//!   (RFC 9882) and SLH-DSA (RFC 9814), attached and detached, with and without signed
//!   attributes, the 18 composite ML-DSA sets (draft-ietf-lamps-cms-composite-sigs) attached
//!   with signed attributes, and HSS/LMS (RFC 9708) from a pqkit state file and from a BC key:
//!   each side's SignedData verifies on the other.
//!
//! Fails (does not skip) when Java, Maven or the peer is missing.

mod support;

use pqkit_hbs::hazmat::SignAt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use pqkit_core::catalogue;
use pqkit_core::falcon::{FALCON_512, FALCON_1024};
use pqkit_core::sig::{SignatureAlgorithm, SigningRandomness};
use serde_json::Value;

use support::{
    Guard, code_signer, free_port, hss_code_signer, json_lines, pqkit, pqkit_cms_sign, run_ok,
    scratch, wait_listening,
};

const GROUP: &str = "X25519MLKEM768";
const GROUP_CODE_POINT: &str = "0x11ec";
/// What each client sends and each server echoes.
const MESSAGE: &str = "hello pqkit!";

/// The built peer: `java -jar bcpeer.jar` with BC's jars in `lib/`, and the compiled Falcon
/// and CMS helpers.
struct Bc {
    dir: PathBuf,
    jar: PathBuf,
    falcon_classes: PathBuf,
    cms_classes: PathBuf,
}

impl Bc {
    /// `java -jar bcpeer.jar <command>`. IPv4 sockets: by default the JVM listens on an
    /// IPv6 socket bound to ::ffff:127.0.0.1, which `wait_listening` (/proc/net/tcp) misses.
    fn cmd(&self, command: &str) -> Command {
        let mut c = Command::new("java");
        c.arg("-Djava.net.preferIPv4Stack=true")
            .arg("-jar")
            .arg(&self.jar)
            .arg(command);
        c
    }

    /// `java FalconOracle` with the peer's BC jars on the class path.
    fn falcon(&self) -> Command {
        let mut c = Command::new("java");
        c.arg("-cp")
            .arg(format!(
                "{}:{}/lib/*",
                self.falcon_classes.display(),
                self.dir.display()
            ))
            .arg("FalconOracle")
            .stdin(Stdio::null());
        c
    }

    /// `java CmsPeer` (tests/data/bc/CmsPeer.java: BC's CMS) with the peer's BC jars.
    fn cms(&self) -> Command {
        let mut c = Command::new("java");
        c.arg("-cp")
            .arg(format!(
                "{}:{}/lib/*",
                self.cms_classes.display(),
                self.dir.display()
            ))
            .arg("CmsPeer")
            .stdin(Stdio::null());
        c
    }
}

/// Builds the BC peer (once per test process) and the Falcon helper.
fn bc() -> &'static Bc {
    static BC: OnceLock<Bc> = OnceLock::new();
    BC.get_or_init(|| build_bc(&scratch("bctls")))
}

fn build_bc(dir: &Path) -> Bc {
    let src = support::peers_dir().join("bctls");
    assert!(
        src.join("pom.xml").exists(),
        "Bouncy Castle peer missing at {}",
        src.display()
    );
    let out = Command::new("mvn")
        .args(["-q", "-B", "package"])
        .arg(format!("-Dpeer.build.dir={}", dir.display()))
        .current_dir(&src)
        .stdin(Stdio::null())
        .output()
        .expect(
            "`mvn` must be installed, with Java >= 17, for the Bouncy Castle interop tests \
             (Debian: maven, openjdk-17-jdk-headless)",
        );
    assert!(
        out.status.success(),
        "mvn package failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let jar = dir.join("bcpeer.jar");
    assert!(jar.exists(), "mvn built no {}", jar.display());

    let falcon_classes = dir.join("falcon");
    std::fs::create_dir_all(&falcon_classes).expect("mkdir");
    let java = falcon_classes.join("FalconOracle.java");
    std::fs::write(&java, FALCON_ORACLE).expect("write FalconOracle.java");
    run_ok(
        Command::new("javac")
            .arg("-cp")
            .arg(format!("{}/lib/*", dir.display()))
            .arg("-d")
            .arg(&falcon_classes)
            .arg(&java),
    );

    let cms_classes = dir.join("cms");
    std::fs::create_dir_all(&cms_classes).expect("mkdir");
    let java = cms_classes.join("CmsPeer.java");
    std::fs::write(&java, include_str!("data/bc/CmsPeer.java")).expect("write CmsPeer.java");
    run_ok(
        Command::new("javac")
            .arg("-cp")
            .arg(format!("{}/lib/*", dir.display()))
            .arg("-d")
            .arg(&cms_classes)
            .arg(&java),
    );

    let bc = Bc {
        dir: dir.to_owned(),
        jar,
        falcon_classes,
        cms_classes,
    };
    let version = run_ok(&mut bc.cmd("version"));
    println!(
        "Bouncy Castle peer: {}",
        String::from_utf8_lossy(&version.stdout).trim()
    );
    bc
}

// ---------------------------------------------------------------------------------- signatures

// Falcon encodings.
// pqkit: Falcon round 3 (fn-dsa 0.3, round-3 hashing SHAKE256(nonce ‖ msg)), the round-3
//   specification's encodings with their header bytes: public key 0x00+logn ‖ h (897 / 1793 B),
//   private key 0x50+logn ‖ f ‖ g ‖ F (1281 / 2305 B).
// BC: bcprov 1.86, org.bouncycastle.pqc.crypto.falcon (round 3, also SHAKE256(nonce ‖ msg)):
//   public key h alone (896 / 1792 B, FalconPublicKeyParameters.getH), private key f ‖ g ‖ F
//   alone (getSpolyf ‖ getG ‖ getSpolyF, 1280 / 2304 B): no header bytes. The test adds and
//   strips them.
// Signatures are the same on both sides and passed as they are: 0x30+logn ‖ nonce (40) ‖
//   compressed s2, variable length, no padding.

/// BC's Falcon on its lightweight API, in BC's raw encodings (see above); files hold raw bytes.
const FALCON_ORACLE: &str = r#"
import java.nio.file.Files;
import java.nio.file.Paths;
import java.security.SecureRandom;

import org.bouncycastle.crypto.AsymmetricCipherKeyPair;
import org.bouncycastle.pqc.crypto.falcon.FalconKeyGenerationParameters;
import org.bouncycastle.pqc.crypto.falcon.FalconKeyPairGenerator;
import org.bouncycastle.pqc.crypto.falcon.FalconParameters;
import org.bouncycastle.pqc.crypto.falcon.FalconPrivateKeyParameters;
import org.bouncycastle.pqc.crypto.falcon.FalconPublicKeyParameters;
import org.bouncycastle.pqc.crypto.falcon.FalconSigner;
import org.bouncycastle.util.Arrays;

/** keygen ALG PK SK | sign ALG SK MSG SIG | verify ALG PK MSG SIG (prints valid/invalid, exit 0/1). */
public final class FalconOracle {
    public static void main(String[] a) throws Exception {
        FalconParameters p = a[1].equals("Falcon-512") ? FalconParameters.falcon_512
                : a[1].equals("Falcon-1024") ? FalconParameters.falcon_1024 : null;
        if (p == null) throw new IllegalArgumentException("unknown algorithm " + a[1]);
        switch (a[0]) {
            case "keygen": {
                FalconKeyPairGenerator g = new FalconKeyPairGenerator();
                g.init(new FalconKeyGenerationParameters(new SecureRandom(), p));
                AsymmetricCipherKeyPair kp = g.generateKeyPair();
                FalconPrivateKeyParameters sk = (FalconPrivateKeyParameters) kp.getPrivate();
                Files.write(Paths.get(a[2]), ((FalconPublicKeyParameters) kp.getPublic()).getH());
                Files.write(Paths.get(a[3]), Arrays.concatenate(sk.getSpolyf(), sk.getG(), sk.getSpolyF()));
                return;
            }
            case "sign": {
                byte[] sk = Files.readAllBytes(Paths.get(a[2]));
                int n = 1 << p.getLogN(), fg = (sk.length - n) / 2; // F: one byte a coefficient
                FalconSigner s = new FalconSigner();
                s.init(true, new FalconPrivateKeyParameters(p, Arrays.copyOfRange(sk, 0, fg),
                        Arrays.copyOfRange(sk, fg, 2 * fg), Arrays.copyOfRange(sk, 2 * fg, sk.length), new byte[0]));
                Files.write(Paths.get(a[4]), s.generateSignature(Files.readAllBytes(Paths.get(a[3]))));
                return;
            }
            case "verify": {
                boolean ok;
                try {
                    FalconSigner s = new FalconSigner();
                    s.init(false, new FalconPublicKeyParameters(p, Files.readAllBytes(Paths.get(a[2]))));
                    ok = s.verifySignature(Files.readAllBytes(Paths.get(a[3])), Files.readAllBytes(Paths.get(a[4])));
                } catch (RuntimeException e) {
                    System.err.println("verify error: " + e);
                    ok = false;
                }
                System.out.println(ok ? "valid" : "invalid");
                System.exit(ok ? 0 : 1);
            }
            default:
                throw new IllegalArgumentException("unknown operation " + a[0]);
        }
    }
}
"#;

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).expect("write");
    p
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Reads a hex file written by the peer's oracle.
fn read_hex(p: &Path) -> Vec<u8> {
    let s: String = std::fs::read_to_string(p)
        .unwrap_or_else(|e| panic!("read {}: {e}", p.display()))
        .split_whitespace()
        .collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

/// `raw:PATH`: the peer's oracle reads the file as binary.
fn raw(p: &Path) -> String {
    format!("raw:{}", p.display())
}

/// The verdict of a verify run ("valid" / "invalid"), checked against its exit code.
fn verdict(out: &Output) -> bool {
    let text = String::from_utf8_lossy(&out.stdout);
    let valid = text.trim() == "valid";
    assert!(
        valid || text.trim() == "invalid",
        "verify printed {text:?}, stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        out.status.success(),
        valid,
        "exit code and verdict disagree"
    );
    valid
}

/// BC's verdict on a Falcon signature (BC's public-key encoding).
fn falcon_verify(bc: &Bc, alg: &str, pk: &Path, msg: &Path, sig: &Path) -> bool {
    let out = bc
        .falcon()
        .args(["verify", alg])
        .arg(pk)
        .arg(msg)
        .arg(sig)
        .output()
        .expect("run java");
    verdict(&out)
}

#[test]
fn falcon_round_3_keys_and_signatures_interoperate_with_bouncy_castle() {
    let bc = bc();
    let dir = scratch("interop-bc-falcon");
    for alg in [&FALCON_512, &FALCON_1024] {
        let name = alg.name;
        let logn: u8 = if name == "Falcon-512" { 9 } else { 10 };
        let d = dir.join(name);
        std::fs::create_dir_all(&d).expect("mkdir");
        let msg = format!("pqkit <-> Bouncy Castle, {name}").into_bytes();
        let msg_file = write(&d, "msg", &msg);

        // pqkit generates and signs; BC verifies with the public key minus its header byte.
        let key = alg.generate().expect("pqkit keygen");
        let vk = key.verifying_key();
        let pk = vk.as_bytes();
        assert_eq!((pk.len(), pk[0]), (alg.verifying_key_size, logn), "{name}");
        let sig = key.sign(&msg, &[]).expect("pqkit sign");
        assert_eq!(sig[0], 0x30 + logn, "{name}: compressed-signature header");
        let bc_pk_file = write(&d, "pqkit.h", &pk[1..]);
        let sig_file = write(&d, "pqkit.sig", &sig);
        assert!(
            falcon_verify(bc, name, &bc_pk_file, &msg_file, &sig_file),
            "{name}: BC rejects pqkit's signature"
        );
        let mut bad = sig.clone();
        *bad.last_mut().expect("sig") ^= 0x01;
        let bad_file = write(&d, "pqkit.bad", &bad);
        assert!(
            !falcon_verify(bc, name, &bc_pk_file, &msg_file, &bad_file),
            "{name}: BC accepts a modified signature"
        );

        // BC signs with pqkit's private key (header byte stripped); pqkit verifies.
        let sk = key.expanded().expect("Falcon private key");
        assert_eq!((sk.len(), sk[0]), (alg.signing_key_size, 0x50 + logn));
        let bc_sk_file = write(&d, "pqkit.fgF", &sk[1..]);
        let bc_sig_file = d.join("bc-with-pqkit-key.sig");
        run_ok(
            bc.falcon()
                .args(["sign", name])
                .arg(&bc_sk_file)
                .arg(&msg_file)
                .arg(&bc_sig_file),
        );
        let bc_sig = read(&bc_sig_file);
        assert_eq!(bc_sig[0], 0x30 + logn);
        vk.verify(&msg, &[], &bc_sig)
            .unwrap_or_else(|e| panic!("{name}: BC's signature with pqkit's key: {e}"));

        // BC generates and signs; pqkit verifies with the header byte added.
        let (h_file, fgf_file) = (d.join("bc.h"), d.join("bc.fgF"));
        run_ok(
            bc.falcon()
                .args(["keygen", name])
                .arg(&h_file)
                .arg(&fgf_file),
        );
        let bc_sig_file = d.join("bc.sig");
        run_ok(
            bc.falcon()
                .args(["sign", name])
                .arg(&fgf_file)
                .arg(&msg_file)
                .arg(&bc_sig_file),
        );
        let mut bc_pk = vec![logn];
        bc_pk.extend(read(&h_file));
        let bc_vk = alg.verifying_key(&bc_pk).expect("BC public key");
        let bc_sig = read(&bc_sig_file);
        bc_vk
            .verify(&msg, &[], &bc_sig)
            .unwrap_or_else(|e| panic!("{name}: pqkit rejects BC's signature: {e}"));
        assert!(
            bc_vk.verify(b"another message", &[], &bc_sig).is_err(),
            "{name}: pqkit accepts BC's signature for another message"
        );

        // pqkit loads BC's private key (header byte added), derives BC's public key, signs;
        // BC verifies.
        let mut bc_sk = vec![0x50 + logn];
        bc_sk.extend(read(&fgf_file));
        let loaded = alg
            .signing_key_from_expanded(&bc_sk)
            .expect("pqkit loads BC's Falcon private key");
        assert_eq!(loaded.verifying_key(), bc_vk, "{name}: same public key");
        let sig = loaded.sign(&msg, &[]).expect("sign");
        let sig_file = write(&d, "pqkit-with-bc-key.sig", &sig);
        assert!(
            falcon_verify(bc, name, &h_file, &msg_file, &sig_file),
            "{name}: BC rejects pqkit's signature with BC's key"
        );
        println!(
            "{name}: pqkit <-> BC keys (public and private) and signatures verified both ways \
             ({} B / {} B signatures)",
            sig.len(),
            bc_sig.len()
        );
    }
}

/// ML-DSA and SLH-DSA through the peer's oracle (FIPS 204 / 205 byte strings on both sides).
#[test]
fn ml_dsa_and_slh_dsa_signatures_interoperate_with_the_bouncy_castle_oracle() {
    let bc = bc();
    let dir = scratch("interop-bc-oracle");
    let ctx = b"pqkit interop";
    // ML-DSA-65 and every SLH-DSA parameter set (pqkit's own SLH-DSA on the pqkit-hash engine).
    let names = std::iter::once("ML-DSA-65").chain(pqkit_core::slh_dsa::ALL.iter().map(|a| a.name));
    for name in names {
        let alg: &'static SignatureAlgorithm = catalogue::signature(name).expect("algorithm");
        let d = dir.join(name);
        std::fs::create_dir_all(&d).expect("mkdir");
        let msg = format!("pqkit <-> Bouncy Castle, {name}").into_bytes();
        let msg_file = write(&d, "msg", &msg);
        let bc_alg = name.to_uppercase();
        let key = alg.generate().expect("keygen");
        let vk = key.verifying_key();

        // The private key BC signs with: for ML-DSA BC derives it from pqkit's seed ξ (and must
        // derive the same public key); for SLH-DSA it is pqkit's SK.seed‖SK.prf‖PK.seed‖PK.root.
        let sk_file = if let Some(seed) = key.seed().filter(|_| name.starts_with("ML-DSA")) {
            let (pk_hex, sk_hex) = (d.join("bc.pk"), d.join("bc.sk"));
            run_ok(
                bc.cmd("oracle")
                    .args(["keygen", "--alg", &bc_alg, "--seed"])
                    .arg(raw(&write(&d, "seed", seed)))
                    .arg("--pk")
                    .arg(&pk_hex)
                    .arg("--sk")
                    .arg(&sk_hex),
            );
            assert_eq!(
                read_hex(&pk_hex),
                vk.as_bytes(),
                "{name}: BC derives another public key from pqkit's seed"
            );
            sk_hex.display().to_string()
        } else {
            raw(&write(&d, "pqkit.sk", &key.expanded().expect("sk")))
        };
        let pk_file = write(&d, "pqkit.pk", vk.as_bytes());

        // pqkit signs (hedged, with a context); BC verifies, and rejects another context.
        let sig = key.sign(&msg, ctx).expect("sign");
        let sig_file = write(&d, "pqkit.sig", &sig);
        let verify = |ctx: &[u8]| {
            verdict(
                &bc.cmd("oracle")
                    .args(["verify", "--alg", &bc_alg, "--ctx"])
                    .arg(format!("hex:{}", hex(ctx)))
                    .arg("--pk")
                    .arg(raw(&pk_file))
                    .arg("--msg")
                    .arg(raw(&msg_file))
                    .arg("--sig")
                    .arg(raw(&sig_file))
                    .output()
                    .expect("run java"),
            )
        };
        assert!(verify(ctx), "{name}: BC rejects pqkit's signature");
        assert!(!verify(b"other"), "{name}: BC ignores the context");

        // BC signs deterministically with the same key; pqkit verifies, and its own
        // deterministic signature is the same bytes.
        let bc_sig_file = d.join("bc.sig");
        run_ok(
            bc.cmd("oracle")
                .args(["sign", "--alg", &bc_alg, "--ctx"])
                .arg(format!("hex:{}", hex(ctx)))
                .arg("--sk")
                .arg(&sk_file)
                .arg("--msg")
                .arg(raw(&msg_file))
                .arg("--sig")
                .arg(&bc_sig_file),
        );
        let bc_sig = read_hex(&bc_sig_file);
        vk.verify(&msg, ctx, &bc_sig)
            .unwrap_or_else(|e| panic!("{name}: pqkit rejects BC's signature: {e}"));
        let ours = key
            .sign_with(&msg, ctx, SigningRandomness::Deterministic)
            .expect("sign");
        assert!(
            ours == bc_sig,
            "{name}: deterministic signatures differ between pqkit and BC"
        );
        println!(
            "{name}: pqkit <-> BC oracle signatures verified both ways; deterministic \
             signatures identical ({} B)",
            bc_sig.len()
        );
    }
}

// ----------------------------------------------------------------------------------------- TLS

/// One side's files: its certificate and private key, and the CA it trusts for the peer.
struct Side {
    cert: PathBuf,
    key: PathBuf,
    trusts: PathBuf,
}

impl Side {
    fn pqkit(pki: &Path, role: &str) -> Self {
        Self {
            cert: pki.join(format!("{role}.pem")),
            key: pki.join(format!("{role}.key")),
            trusts: pki.join("ca.pem"),
        }
    }
}

/// A finished process's JSON report, or a panic with everything both processes printed.
fn report(what: &str, out: &Output, other: &Output) -> Value {
    let lines = json_lines(&out.stdout);
    let describe = || {
        format!(
            "{what} ({}):\nstdout: {}\nstderr: {}\npeer stdout: {}\npeer stderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&other.stdout),
            String::from_utf8_lossy(&other.stderr)
        )
    };
    assert!(out.status.success() && lines.len() == 1, "{}", describe());
    let r = lines.into_iter().next().expect("one line");
    assert!(r["error"].is_null(), "{}", describe());
    r
}

/// pqkit client -> BC server (echo, one connection, client certificate required).
/// Returns (pqkit's report, BC's report).
fn pqkit_client_to_bc_server(
    bc: &Bc,
    ours: &Side,
    theirs: &Side,
    bc_args: &[&str],
) -> (Value, Value) {
    let port = free_port();
    let mut server = Guard::spawn(
        bc.cmd("server")
            .args(["--mode", "echo", "--count", "1", "--client-auth", "need"])
            .args(["--groups", GROUP])
            .args(bc_args)
            .arg("--port")
            .arg(port.to_string())
            .arg("--cert")
            .arg(&theirs.cert)
            .arg("--key")
            .arg(&theirs.key)
            .arg("--ca")
            .arg(&theirs.trusts),
    );
    wait_listening(port, server.child());
    let client = pqkit()
        .args([
            "client",
            "--json",
            "--groups",
            GROUP,
            "--expect-group",
            GROUP,
        ])
        .args(["--message", MESSAGE, "--port"])
        .arg(port.to_string())
        .arg("--ca")
        .arg(&ours.trusts)
        .arg("--cert")
        .arg(&ours.cert)
        .arg("--key")
        .arg(&ours.key)
        .stdin(Stdio::null())
        .output()
        .expect("run pqkit");
    let server = server.wait();
    (
        report("pqkit client", &client, &server),
        report("BC server", &server, &client),
    )
}

/// BC client -> pqkit server (one connection, client certificate required).
/// Returns (pqkit's report, BC's report).
fn bc_client_to_pqkit_server(
    bc: &Bc,
    ours: &Side,
    theirs: &Side,
    bc_args: &[&str],
) -> (Value, Value) {
    let port = free_port();
    let mut server = Guard::spawn(
        pqkit()
            .args(["server", "--json", "--mutual", "--count", "1"])
            .args(["--groups", GROUP, "--port"])
            .arg(port.to_string())
            .arg("--cert")
            .arg(&ours.cert)
            .arg("--key")
            .arg(&ours.key)
            .arg("--ca")
            .arg(&ours.trusts),
    );
    wait_listening(port, server.child());
    let client = bc
        .cmd("client")
        .args([
            "--groups",
            GROUP,
            "--expect-group",
            GROUP,
            "--send",
            MESSAGE,
        ])
        .args(bc_args)
        .arg("--port")
        .arg(port.to_string())
        .arg("--ca")
        .arg(&theirs.trusts)
        .arg("--cert")
        .arg(&theirs.cert)
        .arg("--key")
        .arg(&theirs.key)
        .stdin(Stdio::null())
        .output()
        .expect("run java");
    let server = server.wait();
    (
        report("pqkit server", &server, &client),
        report("BC client", &client, &server),
    )
}

/// Both ends agree: TLS 1.3, X25519MLKEM768 (0x11ec), the peer's CertificateVerify in `scheme`
/// (`code_point`), a certificate of `cert_alg` verified by BC, the message echoed, and the same
/// byte counts at both sockets.
fn assert_handshake(
    label: &str,
    ours: &Value,
    bc: &Value,
    scheme: &str,
    code_point: &str,
    cert_alg: &str,
) {
    assert_eq!(ours["version"], "TLSv1.3", "{label}: pqkit: {ours}");
    assert_eq!(ours["group"], GROUP, "{label}: pqkit: {ours}");
    assert_eq!(
        ours["group_code_point"], GROUP_CODE_POINT,
        "{label}: pqkit: {ours}"
    );
    assert_eq!(
        ours["peer_signature_scheme"], scheme,
        "{label}: pqkit: {ours}"
    );
    assert_eq!(
        ours["peer_signature_code_point"], code_point,
        "{label}: pqkit: {ours}"
    );
    assert_eq!(ours["received"], MESSAGE, "{label}: pqkit: {ours}");

    assert_eq!(bc["ok"], true, "{label}: BC: {bc}");
    assert_eq!(bc["version"], "TLS1.3", "{label}: BC: {bc}");
    assert_eq!(bc["group"], GROUP, "{label}: BC: {bc}");
    assert_eq!(bc["group_hex"], GROUP_CODE_POINT, "{label}: BC: {bc}");
    assert_eq!(bc["peer_sig_scheme"], scheme, "{label}: BC: {bc}");
    assert_eq!(bc["peer_sig_scheme_hex"], code_point, "{label}: BC: {bc}");
    assert_eq!(bc["local_sig_scheme"], scheme, "{label}: BC: {bc}");
    assert_eq!(bc["peer_cert"]["pubkey_alg"], cert_alg, "{label}: BC: {bc}");
    assert_eq!(bc["peer_cert"]["sig_alg"], cert_alg, "{label}: BC: {bc}");
    assert_eq!(bc["app_bytes_read"], MESSAGE.len(), "{label}: BC: {bc}");

    assert_eq!(
        ours["wire_bytes_read"], bc["wire_bytes_written"],
        "{label}: {ours} {bc}"
    );
    assert_eq!(
        ours["wire_bytes_written"], bc["wire_bytes_read"],
        "{label}: {ours} {bc}"
    );
    println!(
        "{label}: {GROUP} ({GROUP_CODE_POINT}) and {scheme} ({code_point}) on both ends, mutual \
         authentication; {} B in / {} B out at pqkit's socket, same count at BC's",
        ours["wire_bytes_read"], ours["wire_bytes_written"]
    );
}

#[test]
fn tls_with_ml_dsa_65_certificates_and_x25519mlkem768_both_ways() {
    let bc = bc();
    let dir = scratch("interop-bc-mldsa");
    let (scheme, cp, alg) = ("mldsa65", "0x0905", "ML-DSA-65");

    // pqkit's PKI on both sides: BC loads pqkit's certificates and seed-form PKCS#8 keys.
    let pki = dir.join("pqkit-pki");
    run_ok(
        pqkit()
            .args(["pki", "init", "--sig", alg, "--dir"])
            .arg(&pki),
    );
    let (ours, theirs) = (Side::pqkit(&pki, "client"), Side::pqkit(&pki, "server"));
    let (o, b) = pqkit_client_to_bc_server(bc, &ours, &theirs, &[]);
    assert_handshake(
        "pqkit client -> BC server (pqkit PKI)",
        &o,
        &b,
        scheme,
        cp,
        alg,
    );
    let (ours, theirs) = (Side::pqkit(&pki, "server"), Side::pqkit(&pki, "client"));
    let (o, b) = bc_client_to_pqkit_server(bc, &ours, &theirs, &[]);
    assert_handshake(
        "BC client -> pqkit server (pqkit PKI)",
        &o,
        &b,
        scheme,
        cp,
        alg,
    );

    // BC's own PKI (a CA and two leaves made by `bcpeer gencert`; BC writes its ML-DSA keys
    // in the PKCS#8 seed+expanded form).
    let bcpki = dir.join("bc-pki");
    std::fs::create_dir_all(&bcpki).expect("mkdir");
    let p = |f: &str| bcpki.join(f);
    run_ok(
        bc.cmd("gencert")
            .args(["--alg", alg, "--cn", "bc root", "--cert"])
            .arg(p("ca.pem"))
            .arg("--key")
            .arg(p("ca.key")),
    );
    for (role, cn) in [("server", "localhost"), ("client", "bc client")] {
        run_ok(
            bc.cmd("gencert")
                .args(["--alg", alg, "--ca", "false", "--cn", cn])
                .arg("--issuer-cert")
                .arg(p("ca.pem"))
                .arg("--issuer-key")
                .arg(p("ca.key"))
                .arg("--cert")
                .arg(p(&format!("{role}.pem")))
                .arg("--key")
                .arg(p(&format!("{role}.key"))),
        );
    }
    // pqkit client (pqkit's certificate) -> BC server (BC's certificate): each trusts the
    // other's CA.
    let ours = Side {
        trusts: p("ca.pem"),
        ..Side::pqkit(&pki, "client")
    };
    let theirs = Side {
        trusts: pki.join("ca.pem"),
        ..Side::pqkit(&bcpki, "server")
    };
    let (o, b) = pqkit_client_to_bc_server(bc, &ours, &theirs, &[]);
    assert_handshake(
        "pqkit client -> BC server (BC's certificate)",
        &o,
        &b,
        scheme,
        cp,
        alg,
    );
    // BC client -> pqkit server, both with BC's certificates and keys.
    let (ours, theirs) = (Side::pqkit(&bcpki, "server"), Side::pqkit(&bcpki, "client"));
    let (o, b) = bc_client_to_pqkit_server(bc, &ours, &theirs, &[]);
    assert_handshake(
        "BC client -> pqkit server (BC's certificates and keys)",
        &o,
        &b,
        scheme,
        cp,
        alg,
    );
}

#[test]
fn tls_with_slh_dsa_sha2_128f_certificates_and_x25519mlkem768_both_ways() {
    let bc = bc();
    let dir = scratch("interop-bc-slhdsa");
    // draft-reddy-tls-slhdsa: slhdsa_sha2_128f = 0x0912. BC's default signature_algorithms
    // (offered as a client, requested as a server) have no SLH-DSA: `--sigalgs` adds it.
    let (scheme, cp, alg) = ("slhdsa_sha2_128f", "0x0912", "SLH-DSA-SHA2-128f");
    let bc_args = ["--sigalgs", scheme];
    let pki = dir.join("pki");
    run_ok(
        pqkit()
            .args(["pki", "init", "--sig", alg, "--dir"])
            .arg(&pki),
    );
    let bc_cert_alg = "SLH-DSA-SHA2-128F";
    let (ours, theirs) = (Side::pqkit(&pki, "client"), Side::pqkit(&pki, "server"));
    let (o, b) = pqkit_client_to_bc_server(bc, &ours, &theirs, &bc_args);
    assert_handshake("pqkit client -> BC server", &o, &b, scheme, cp, bc_cert_alg);
    let (ours, theirs) = (Side::pqkit(&pki, "server"), Side::pqkit(&pki, "client"));
    let (o, b) = bc_client_to_pqkit_server(bc, &ours, &theirs, &bc_args);
    assert_handshake("BC client -> pqkit server", &o, &b, scheme, cp, bc_cert_alg);
}

// ------------------------------------------------------------------------------------ HSS/LMS

/// The oracle's verdict on a stateful signature (`alg`: HSS, XMSS or XMSSMT; raw files).
fn oracle_verify(bc: &Bc, alg: &str, pk: &Path, msg: &Path, sig: &Path) -> bool {
    verdict(
        &bc.cmd("oracle")
            .args(["verify", "--alg", alg, "--pk"])
            .arg(raw(pk))
            .arg("--msg")
            .arg(raw(msg))
            .arg("--sig")
            .arg(raw(sig))
            .output()
            .expect("run java"),
    )
}

/// A stateful key made by the oracle in `dir`: its public key bytes and its private key file.
fn oracle_keygen(bc: &Bc, alg: &str, dir: &Path) -> (Vec<u8>, PathBuf) {
    let (pk_hex, sk_hex) = (dir.join("bc.pk"), dir.join("bc.sk"));
    run_ok(
        bc.cmd("oracle")
            .args(["keygen", "--alg", alg, "--pk"])
            .arg(&pk_hex)
            .arg("--sk")
            .arg(&sk_hex),
    );
    (read_hex(&pk_hex), sk_hex)
}

/// The oracle signs `msg` with its stateful key (the key file is rewritten, advanced).
fn oracle_sign(bc: &Bc, alg: &str, sk_hex: &Path, dir: &Path, msg: &[u8]) -> Vec<u8> {
    let msg_file = write(dir, "bc.msg", msg);
    let sig_hex = dir.join("bc.sig");
    run_ok(
        bc.cmd("oracle")
            .args(["sign", "--alg", alg, "--sk"])
            .arg(sk_hex)
            .arg("--msg")
            .arg(raw(&msg_file))
            .arg("--sig")
            .arg(&sig_hex),
    );
    read_hex(&sig_hex)
}

/// pqkit's signatures (from `sign`, on three messages) verify in the oracle under `pk`, and
/// not on another message.
fn bc_verifies(bc: &Bc, alg: &str, dir: &Path, pk: &[u8], mut sign: impl FnMut(&[u8]) -> Vec<u8>) {
    let pk_file = write(dir, "pqkit.pk", pk);
    let other = write(dir, "other", b"another message");
    for i in 0..3 {
        let msg = format!("pqkit -> BC, {alg} #{i}").into_bytes();
        let msg_file = write(dir, &format!("m{i}"), &msg);
        let sig = write(dir, &format!("pqkit{i}.sig"), &sign(&msg));
        assert!(
            oracle_verify(bc, alg, &pk_file, &msg_file, &sig),
            "BC rejects pqkit's {alg} #{i}"
        );
        assert!(
            !oracle_verify(bc, alg, &pk_file, &other, &sig),
            "BC accepts another message"
        );
    }
}

/// The oracle's signatures on three messages verify in pqkit (`verify`), not on another
/// message, and use three different one-time keys (`index`).
fn pqkit_verifies<I: PartialEq + std::fmt::Debug>(
    bc: &Bc,
    alg: &str,
    sk_hex: &Path,
    dir: &Path,
    verify: impl Fn(&[u8], &[u8]) -> bool,
    index: impl Fn(&[u8]) -> I,
) {
    let mut used = Vec::new();
    for i in 0..3 {
        let msg = format!("BC -> pqkit, {alg} #{i}").into_bytes();
        let sig = oracle_sign(bc, alg, sk_hex, dir, &msg);
        assert!(verify(&msg, &sig), "pqkit rejects BC's {alg} #{i}");
        assert!(!verify(b"another message", &sig));
        used.push(index(&sig));
    }
    used.dedup();
    assert_eq!(used.len(), 3, "BC reused a one-time key: {used:?}");
}

/// HSS across: for each hash family (SHA-256 and SHAKE256, n = 32 and 24), a two-level key
/// with different Winternitz widths per level. pqkit's signatures (from its state file) verify
/// in BC's `HSSSigner` and an altered message does not; BC's signatures (its private key
/// advanced after each) verify in pqkit, each with its own one-time keys.
#[test]
fn hss_signatures_interoperate_with_the_bouncy_castle_oracle() {
    use pqkit_hbs::lms::HssPublicKey;
    use pqkit_hbs::params::{lms_by_name, ots_by_name};
    use pqkit_hbs::state::StatefulKey;

    let bc = bc();
    let dir = scratch("interop-bc-hss");
    for (hash, n, bc_hash, bc_n) in [
        ("SHA256", "N32", "sha256", "n32"),
        ("SHA256", "N24", "sha256", "n24"),
        ("SHAKE", "N32", "shake256", "n32"),
        ("SHAKE", "N24", "shake256", "n24"),
    ] {
        let m = n.replace('N', "M");
        let level = |w: u8| {
            (
                lms_by_name(&format!("LMS_{hash}_{m}_H5")).expect("LMS"),
                ots_by_name(&format!("LMOTS_{hash}_{n}_W{w}")).expect("LM-OTS"),
            )
        };
        let d = dir.join(format!("{hash}-{n}"));
        std::fs::create_dir_all(&d).expect("mkdir");
        let mut key = StatefulKey::create(
            &d.join("k.hss"),
            &[level(8), level(4)],
            pqkit_hbs::ledger::hazmat::in_memory(),
            2,
        )
        .expect("key");
        let pk = key.public_key().to_bytes();
        bc_verifies(bc, "HSS", &d, &pk, |msg| key.sign(msg).expect("sign"));

        let alg = format!(
            "HSS:lms_{bc_hash}_{bc_n}_h5:{bc_hash}_{bc_n}_w8,lms_{bc_hash}_{bc_n}_h5:{bc_hash}_{bc_n}_w4"
        );
        let (pk, sk_hex) = oracle_keygen(bc, &alg, &d);
        let pk = HssPublicKey::from_bytes(&pk).expect("BC's HSS public key");
        pqkit_verifies(
            bc,
            &alg,
            &sk_hex,
            &d,
            |m, s| pk.verify(m, s).is_ok(),
            |s| pk.leaf_indices(s).expect("indices"),
        );
    }
}

/// XMSS^MT (and XMSS) across: pqkit's XMSSMT-SHA2_20/4_256 and XMSS-SHA2_10_256 signatures
/// verify in BC (`XMSSMTSigner` / `XMSSSigner`), and BC's verify in pqkit, at distinct
/// indices.
#[test]
fn xmss_and_xmss_mt_signatures_interoperate_with_the_bouncy_castle_oracle() {
    use pqkit_hbs::xmss::{XmssPublicKey, XmssSigner, by_name};

    let bc = bc();
    let dir = scratch("interop-bc-xmss");
    for (name, bc_alg, multi_tree) in [
        ("XMSSMT-SHA2_20/4_256", "XMSSMT:SHA2_20/4_256", true),
        ("XMSS-SHA2_10_256", "XMSS:SHA2_10_256", false),
    ] {
        let kind = if multi_tree { "XMSSMT" } else { "XMSS" };
        let d = dir.join(kind);
        std::fs::create_dir_all(&d).expect("mkdir");
        let params = by_name(name).expect("set");
        let mut key = XmssSigner::generate(params, &[7; 32], &[8; 32], &[9; 32], 2).expect("key");
        let pk = key.public_key().to_bytes();
        let mut idx = [0u64, 33, 1000].into_iter();
        bc_verifies(bc, kind, &d, &pk, |msg| {
            key.sign_at(idx.next().expect("index"), msg).expect("sign")
        });

        let (pk, sk_hex) = oracle_keygen(bc, bc_alg, &d);
        let pk = XmssPublicKey::from_bytes(&pk, multi_tree).expect("BC's public key");
        assert_eq!(pk.params.name, name);
        pqkit_verifies(
            bc,
            bc_alg,
            &sk_hex,
            &d,
            |m, s| pk.verify(m, s).is_ok(),
            |s| pk.index(s).expect("index"),
        );
    }
}

// ---------------------------------------------------------------------------------------- CMS

/// `pqkit cms verify` against `ca`, with the content when detached; returns its report.
fn pqkit_cms_verify(ca: &Path, signed: &Path, content: Option<&Path>) -> String {
    let mut cmd = pqkit();
    cmd.args(["cms", "verify", "--ca"]).arg(ca);
    if let Some(c) = content {
        cmd.arg("--content").arg(c);
    }
    String::from_utf8_lossy(&run_ok(cmd.arg(signed)).stdout).into_owned()
}

/// BC verifies `signed` (with `content` when detached); returns its one line per signer.
fn bc_cms_verify(bc: &Bc, signed: &Path, content: Option<&Path>) -> String {
    let mut cmd = bc.cms();
    cmd.arg("verify").arg(signed);
    if let Some(c) = content {
        cmd.arg(c);
    }
    String::from_utf8_lossy(&run_ok(&mut cmd).stdout).into_owned()
}

#[test]
fn cms_signed_data_interoperates_with_bouncy_castle() {
    let bc = bc();
    let dir = scratch("bc-cms");
    let pki = dir.join("pki");
    run_ok(
        pqkit()
            .args(["pki", "init", "--sig", "ML-DSA-65", "--dir"])
            .arg(&pki),
    );
    let ca = pki.join("ca.pem");
    let file = write(&dir, "firmware.bin", &vec![0x42; 70_000]);
    let mut matrix = Vec::new();
    for (alg, bc_name) in [
        ("ML-DSA-44", "ML-DSA-44"),
        ("ML-DSA-65", "ML-DSA-65"),
        ("ML-DSA-87", "ML-DSA-87"),
        ("SLH-DSA-SHA2-128f", "SLH-DSA-SHA2-128F"),
        ("SLH-DSA-SHA2-192s", "SLH-DSA-SHA2-192S"),
        ("SLH-DSA-SHAKE-128f", "SLH-DSA-SHAKE-128F"),
        ("SLH-DSA-SHAKE-256f", "SLH-DSA-SHAKE-256F"),
    ] {
        let (cert, key) = code_signer(&dir, alg, &pki);
        for (attached, attrs) in [(true, true), (false, true), (true, false), (false, false)] {
            let how = format!(
                "{}, {}",
                if attached { "attached" } else { "detached" },
                if attrs {
                    "signed attributes"
                } else {
                    "no signed attributes"
                }
            );
            let content = (!attached).then_some(file.as_path());
            // pqkit → BC.
            let ours = dir.join(format!("{alg}-{attached}-{attrs}.p7"));
            let mut flags = Vec::new();
            if !attached {
                flags.push("--detached");
            }
            if !attrs {
                flags.push("--no-signed-attributes");
            }
            pqkit_cms_sign(&cert, &key, &flags, &ours, &file);
            let said = bc_cms_verify(bc, &ours, content);
            assert!(said.starts_with("OK "), "{alg}, {how}: BC says {said}");
            // BC → pqkit.
            let theirs = dir.join(format!("{alg}-{attached}-{attrs}-bc.p7"));
            run_ok(
                bc.cms()
                    .args(["sign", bc_name])
                    .arg(&cert)
                    .arg(&key)
                    .arg(&file)
                    .arg(&theirs)
                    .arg(if attached { "attached" } else { "detached" })
                    .arg(if attrs { "attrs" } else { "noattrs" }),
            );
            let said = pqkit_cms_verify(&ca, &theirs, content);
            assert!(
                said.contains(alg) && said.contains(": OK"),
                "{alg}, {how}: {said}"
            );
            matrix.push(format!("{alg}: {how}: both ways"));
        }
    }
    // Composite ML-DSA (draft-ietf-lamps-pq-composite-sigs-19, draft-ietf-lamps-cms-composite-
    // sigs): all 18, attached with signed attributes (the profile's preferred form), both
    // ways; BC's JCA names are the draft's.
    for alg in pqkit_core::composite::algorithms() {
        let name = alg.name;
        let (cert, key) = code_signer(&dir, name, &pki);
        let ours = dir.join(format!("{name}.p7"));
        pqkit_cms_sign(&cert, &key, &[], &ours, &file);
        let said = bc_cms_verify(bc, &ours, None);
        assert!(
            said.starts_with(&format!("OK {} ", alg.oid)),
            "{name}: BC says {said}"
        );
        let theirs = dir.join(format!("{name}-bc.p7"));
        run_ok(
            bc.cms()
                .args(["sign", name])
                .arg(&cert)
                .arg(&key)
                .arg(&file)
                .arg(&theirs)
                .args(["attached", "attrs"]),
        );
        let said = pqkit_cms_verify(&ca, &theirs, None);
        assert!(
            said.contains(name) && said.contains(": OK"),
            "{name}: {said}"
        );
        matrix.push(format!("{name}: attached, signed attributes: both ways"));
    }
    // HSS/LMS from a pqkit state file → BC.
    let (_, fw_cert, fw_state) = hss_code_signer(&dir, "L2_H10_W4");
    let ours = dir.join("hss.p7m");
    pqkit_cms_sign(&fw_cert, &fw_state, &[], &ours, &file);
    let said = bc_cms_verify(bc, &ours, None);
    assert!(
        said.starts_with("OK 1.2.840.113549.1.9.16.3.17 2.16.840.1.101.3.4.2.1"),
        "HSS: BC says {said}"
    );
    // HSS/LMS from a BC key, its certificate issued by pqkit's CA (signed by BC) → pqkit.
    let (bc_cert, bc_key) = (dir.join("bc-hss.pem"), dir.join("bc-hss.key"));
    run_ok(
        bc.cms()
            .arg("hss-signer")
            .arg(&ca)
            .arg(pki.join("ca.key"))
            .arg("ML-DSA-65")
            .arg(&bc_cert)
            .arg(&bc_key),
    );
    let theirs = dir.join("hss-bc.p7m");
    run_ok(
        bc.cms()
            .args(["sign", "LMS"])
            .arg(&bc_cert)
            .arg(&bc_key)
            .arg(&file)
            .arg(&theirs)
            .args(["attached", "attrs"]),
    );
    let said = pqkit_cms_verify(&ca, &theirs, None);
    assert!(
        said.contains("HSS/LMS, SHA-256") && said.contains(": OK"),
        "{said}"
    );
    matrix.push("HSS/LMS: attached, signed attributes: both ways".into());
    println!("{}", matrix.join("\n"));
}
