//! Helpers for tests that start real processes on 127.0.0.1: free ports, waiting for a
//! listener without connecting to it, and children that are killed when dropped.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The `pqkit` binary under test, its stateful keys' reservations recorded in a ledger of
/// this test process under the target directory (`PQKIT_HBS_LEDGER`), not the user's.
pub(crate) fn pqkit() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pqkit"));
    cmd.env("PQKIT_HBS_LEDGER", test_ledger());
    cmd
}

/// This test process's reservation ledger (an SQLite file under the target directory).
pub(crate) fn test_ledger() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("hbs-ledger-{}.sqlite3", std::process::id()))
}

/// A fresh directory under the target directory for this test.
pub(crate) fn scratch(name: &str) -> PathBuf {
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// A TCP port that was free a moment ago on 127.0.0.1.
pub(crate) fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

/// Waits until `child` itself listens on `port`, reading /proc/net/tcp so that no connection
/// is used up (servers here run with a connection count). The listening socket must be one of
/// the child's own (its inode among /proc/<pid>/fd): another test's server that happens to get
/// the same port from `free_port` does not count.
pub(crate) fn wait_listening(port: u16, child: &mut Child) {
    let needle = format!(":{port:04X} ");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let table = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
        let own: Vec<String> = std::fs::read_dir(format!("/proc/{}/fd", child.id()))
            .map(|d| {
                d.flatten()
                    .filter_map(|e| std::fs::read_link(e.path()).ok())
                    .filter_map(|l| {
                        let l = l.to_string_lossy().into_owned();
                        Some(l.strip_prefix("socket:[")?.strip_suffix(']')?.to_owned())
                    })
                    .collect()
            })
            .unwrap_or_default();
        if table.lines().any(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            cols.len() > 9
                && format!("{} ", &cols[1][cols[1].len() - 5..]) == needle
                && cols[3] == "0A"
                && own.iter().any(|inode| inode == cols[9])
        }) {
            return;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("server exited before listening on {port}: {status}");
        }
        assert!(
            Instant::now() < deadline,
            "nothing listens on 127.0.0.1:{port} after 30 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A child process that is killed and reaped when dropped.
pub(crate) struct Guard(pub Option<Child>);

impl Guard {
    pub(crate) fn spawn(cmd: &mut Command) -> Self {
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"));
        Self(Some(child))
    }

    pub(crate) fn child(&mut self) -> &mut Child {
        self.0.as_mut().expect("child")
    }

    /// Waits (at most 30 s) for the child to exit and returns its output.
    pub(crate) fn wait(mut self) -> Output {
        let mut child = self.0.take().expect("child");
        let deadline = Instant::now() + Duration::from_secs(30);
        while child.try_wait().expect("try_wait").is_none() {
            if Instant::now() > deadline {
                let _ = child.kill();
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        child.wait_with_output().expect("output")
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Runs a command to completion; panics with its output on a non-zero exit.
pub(crate) fn run_ok(cmd: &mut Command) -> Output {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The JSON objects printed one per line on stdout.
pub(crate) fn json_lines(out: &[u8]) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(out)
        .lines()
        .filter(|l| l.trim_start().starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSON line {l}: {e}")))
        .collect()
}

/// `../shared/peers` beside the repository (override with `PQKIT_PEERS`).
pub(crate) fn peers_dir() -> PathBuf {
    std::env::var_os("PQKIT_PEERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/peers"))
}

/// Starts `pqkit server --json` on `port` with the server files of the PKI in `pki`, serving
/// `count` connections over `groups`, requiring a client certificate from that PKI's CA when
/// `mutual`; returns once it listens.
/// Runs `pqkit client --json` with mutual authentication against 127.0.0.1:`port`, trusting
/// `pki`/ca.pem and presenting `pki`/client.pem; returns its report.
pub(crate) fn pqkit_mutual_client(pki: &Path, port: u16) -> serde_json::Value {
    let out = run_ok(
        pqkit()
            .args(["client", "--json", "--port", &port.to_string(), "--ca"])
            .arg(pki.join("ca.pem"))
            .arg("--cert")
            .arg(pki.join("client.pem"))
            .arg("--key")
            .arg(pki.join("client.key")),
    );
    json_lines(&out.stdout).remove(0)
}

pub(crate) fn pqkit_server(pki: &Path, port: u16, groups: &str, count: u32, mutual: bool) -> Guard {
    let mut cmd = pqkit();
    cmd.args(["server", "--json", "--groups", groups])
        .args(["--count", &count.to_string(), "--port", &port.to_string()])
        .arg("--cert")
        .arg(pki.join("server.pem"))
        .arg("--key")
        .arg(pki.join("server.key"));
    if mutual {
        cmd.arg("--mutual").arg("--ca").arg(pki.join("ca.pem"));
    }
    let mut server = Guard::spawn(&mut cmd);
    wait_listening(port, server.child());
    server
}

/// Builds the Go crypto/tls peer (../shared/peers/gotls) with Go `toolchain` ("local" or
/// e.g. "go1.27.1") into `dir`.
pub(crate) fn build_gotls(dir: &Path, toolchain: &str) -> PathBuf {
    let src = peers_dir().join("gotls");
    assert!(
        src.join("main.go").exists(),
        "Go peer missing at {}",
        src.display()
    );
    let bin = dir.join(format!("gotls-{toolchain}"));
    let out = Command::new("go")
        .args(["build", "-o"])
        .arg(&bin)
        .arg(".")
        .current_dir(&src)
        .env("GOFLAGS", "-mod=mod")
        .env("GOTOOLCHAIN", toolchain)
        .output()
        .expect("`go` must be installed (Go >= 1.26) for the interop tests");
    assert!(
        out.status.success(),
        "go build failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    bin
}

/// `pqkit token init` of a token `label` in `dir`, with a light Argon2id for tests.
pub(crate) fn token_init(label: &str, dir: &Path) -> Command {
    let mut cmd = pqkit();
    cmd.args([
        "token", "init", "--label", label, "--so-pin", "87654321", "--pin", "12345678",
    ])
    .args(["--kdf-memory-kib", "1024", "--kdf-passes", "1", "--dir"])
    .arg(dir);
    cmd
}

/// Whether the tests run as root (CI does): only root mounts a small file system.
pub(crate) fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0"))
}

/// A tmpfs of `size` (e.g. "16k") mounted at `dir` for a full-disk test, unmounted when
/// dropped; `None` (the caller skips, saying why) when not root.
pub(crate) struct SmallDisk(PathBuf);

impl SmallDisk {
    pub(crate) fn mount(dir: &Path, size: &str) -> Option<Self> {
        if !is_root() {
            eprintln!("skipped: not root, so no small file system can be mounted here");
            return None;
        }
        std::fs::create_dir_all(dir).expect("dir");
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .status()
            .is_ok_and(|s| s.success());
        assert!(mounted, "mount tmpfs at {}", dir.display());
        Some(Self(dir.to_path_buf()))
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// OpenSSL 3.6's `openssl` for the CMS interop tests: `$PQKIT_OPENSSL`, else one built from the
/// openssl-src crate's sources into `$XDG_CACHE_HOME/pqkit` (else `~/.cache/pqkit`) — once per
/// machine, a few minutes on two cores, never inside the repository; concurrent test processes
/// wait on a lock file. Fails (does not skip) when it cannot be built.
pub(crate) fn openssl() -> PathBuf {
    static BIN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(p) = std::env::var_os("PQKIT_OPENSSL") {
            return PathBuf::from(p);
        }
        let cache = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .expect("HOME or XDG_CACHE_HOME for the OpenSSL build cache")
            .join("pqkit")
            .join(format!("openssl-{}", openssl_src::version()));
        let bin = cache.join("bin").join("openssl");
        if bin.exists() {
            return bin;
        }
        std::fs::create_dir_all(cache.join("bin")).expect("OpenSSL cache directory");
        let lock = std::fs::File::create(cache.join(".lock")).expect("OpenSSL build lock");
        lock.lock().expect("lock the OpenSSL build");
        if bin.exists() {
            return bin;
        }
        let build = cache.join("build");
        let _ = std::fs::remove_dir_all(&build);
        let run = |cmd: &mut Command, what: &str| {
            let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
            assert!(
                out.status.success(),
                "{what} failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        run(
            Command::new("cp")
                .arg("-a")
                .arg(openssl_src::source_dir())
                .arg(&build),
            "copying the OpenSSL sources",
        );
        // Static, no loadable modules (the crate ships no legacy provider sources), no tests,
        // no docs: one self-contained `openssl` executable.
        run(
            Command::new("perl")
                .args([
                    "Configure",
                    "no-shared",
                    "no-module",
                    "no-legacy",
                    "no-tests",
                    "no-docs",
                ])
                .arg(format!("--prefix={}", cache.display()))
                .current_dir(&build),
            "OpenSSL Configure (needs perl)",
        );
        let jobs = std::thread::available_parallelism().map_or(2, |n| n.get());
        run(
            Command::new("make")
                .args(["-j", &jobs.to_string(), "build_programs"])
                .current_dir(&build),
            "building OpenSSL (needs make and a C compiler)",
        );
        let tmp = cache.join("bin").join(".openssl.tmp");
        std::fs::copy(build.join("apps").join("openssl"), &tmp).expect("copy openssl");
        std::fs::rename(&tmp, &bin).expect("place openssl");
        let _ = std::fs::remove_dir_all(&build);
        bin
    })
    .clone()
}

/// A command running OpenSSL with a minimal configuration file in `dir` (no system
/// openssl.cnf needed).
pub(crate) fn openssl_cmd(dir: &Path) -> Command {
    let conf = dir.join("openssl.cnf");
    if !conf.exists() {
        std::fs::write(&conf, "[req]\ndistinguished_name = dn\n[dn]\n").expect("openssl.cnf");
    }
    let mut cmd = Command::new(openssl());
    cmd.env("OPENSSL_CONF", conf);
    cmd
}

/// A code-signing certificate (`dir`/ALG.pem) and key (`dir`/ALG.key) for a new `alg` key,
/// issued by the PKI of `pqkit pki init` in `pki` (through a CSR, as a user would).
pub(crate) fn code_signer(dir: &Path, alg: &str, pki: &Path) -> (PathBuf, PathBuf) {
    issued(dir, alg, alg, pki, "code-signing", 365)
}

/// A certificate (`dir`/NAME.pem) of `profile` (`csr sign --profile`), valid `days`, and its
/// key (`dir`/NAME.key) for a new `alg` key, issued through a CSR by the PKI in `pki`.
pub(crate) fn issued(
    dir: &Path,
    name: &str,
    alg: &str,
    pki: &Path,
    profile: &str,
    days: u32,
) -> (PathBuf, PathBuf) {
    let (key, csr, cert) = (
        dir.join(format!("{name}.key")),
        dir.join(format!("{name}.csr")),
        dir.join(format!("{name}.pem")),
    );
    run_ok(pqkit().args(["keygen", "--alg", alg, "-o"]).arg(&key));
    run_ok(
        pqkit()
            .args([
                "csr",
                "create",
                "--subject",
                &format!("CN={name} signer"),
                "--key",
            ])
            .arg(&key)
            .arg("-o")
            .arg(&csr),
    );
    run_ok(
        pqkit()
            .args([
                "csr",
                "sign",
                "--profile",
                profile,
                "--days",
                &days.to_string(),
                "--ca",
            ])
            .arg(pki.join("ca.pem"))
            .arg("--ca-key")
            .arg(pki.join("ca.key"))
            .arg("-o")
            .arg(&cert)
            .arg(&csr),
    );
    (cert, key)
}

/// An HSS root CA (state file `dir`/root.hss, certificate `dir`/hss-root.pem) and an HSS
/// firmware signer under it (state file `dir`/fw.hss, code-signing certificate `dir`/fw.pem),
/// both of HSS `preset`. Returns (root certificate, signer certificate, signer state file).
pub(crate) fn hss_code_signer(dir: &Path, preset: &str) -> (PathBuf, PathBuf, PathBuf) {
    let (root_state, root_pub) = (dir.join("root.hss"), dir.join("root.pub"));
    let (fw_state, fw_pub) = (dir.join("fw.hss"), dir.join("fw.pub"));
    for (state, public) in [(&root_state, &root_pub), (&fw_state, &fw_pub)] {
        run_ok(
            pqkit()
                .args(["hbs", "keygen", "--preset", preset, "--state"])
                .arg(state)
                .arg("--pub")
                .arg(public),
        );
    }
    let root = dir.join("hss-root.pem");
    run_ok(
        pqkit()
            .args(["hbs", "ca", "--subject", "CN=HSS root", "--state"])
            .arg(&root_state)
            .arg("-o")
            .arg(&root),
    );
    let fw_cert = dir.join("fw.pem");
    run_ok(
        pqkit()
            .args([
                "hbs",
                "issue",
                "--subject",
                "CN=HSS firmware signer",
                "--state",
            ])
            .arg(&root_state)
            .arg("--ca")
            .arg(&root)
            .arg("--pub")
            .arg(&fw_pub)
            .arg("-o")
            .arg(&fw_cert),
    );
    (root, fw_cert, fw_state)
}

/// `pqkit cms sign` of `file` by one signer with `flags`, into `out`.
pub(crate) fn pqkit_cms_sign(cert: &Path, key: &Path, flags: &[&str], out: &Path, file: &Path) {
    run_ok(
        pqkit()
            .args(["cms", "sign"])
            .args(flags)
            .arg("--signer")
            .arg(cert)
            .arg("--key")
            .arg(key)
            .arg("-o")
            .arg(out)
            .arg(file),
    );
}
