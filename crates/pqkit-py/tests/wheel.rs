//! The Python package as a user installs it: `maturin build` makes the wheel, `pip install`
//! puts it into a fresh virtual environment (no network: `--no-index`), and the pytest suite
//! beside this file runs against the installed package (tests/test_*.py: every algorithm's
//! round trip, ACVP samples, pyca/cryptography interop, stateful keys from several processes,
//! exceptions, X.509 and CMS, the overhead micro-benchmark).
//!
//! Needs `maturin` (1.9 or newer), and `pytest` and `cryptography` (48, with ML-KEM and
//! ML-DSA) importable by `python3`: the virtual environment sees the system's packages but
//! not the source tree. `.ci/run` installs them. pytest's report — the interop table and the
//! micro-benchmark among it — is kept in `target/pqkit-py/pytest.txt` (CI prints it).
//!
//! The wheel is built with the profile of this test (the dev profile under `cargo test`), in
//! the workspace's target directory (what `cargo test` built is reused): every crate
//! optimised (opt-level 3, see the workspace's Cargo.toml), without the release profile's LTO.
//! `maturin build --release` makes the wheel to distribute. pytest gets 15 minutes.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How long the pytest suite may run (it takes well under a minute on 2 cores).
const PYTEST_LIMIT: Duration = Duration::from_secs(15 * 60);

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository's root")
}

/// The target directory's directory of this profile: what `cargo test` built.
fn built() -> PathBuf {
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root().join("target"), PathBuf::from);
    target.join(if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    })
}

/// Runs `cmd`, failing the test with its output when it fails.
fn run(what: &str, cmd: &mut Command) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot start {:?}: {e}", cmd.get_program()));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn wheel_installs_and_pytest_passes() {
    let root = root();
    let work = root.join("target/pqkit-py");
    let wheels = work.join("wheels");
    let venv = work.join("venv");
    for dir in [&wheels, &venv] {
        if dir.exists() {
            std::fs::remove_dir_all(dir).expect("remove the last run's wheel and venv");
        }
    }
    std::fs::create_dir_all(&wheels).expect("create target/pqkit-py/wheels");
    let maturin = std::env::var_os("MATURIN").unwrap_or_else(|| "maturin".into());
    let mut build = Command::new(&maturin);
    build
        .current_dir(&root)
        .args([
            "build",
            "--quiet",
            "-m",
            "crates/pqkit-py/Cargo.toml",
            "--out",
        ])
        .arg(&wheels);
    if !cfg!(debug_assertions) {
        build.arg("--release");
    }
    run("maturin build (pip install maturin)", &mut build);
    let wheel = std::fs::read_dir(&wheels)
        .expect("read the wheel directory")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .expect("maturin made no .whl");
    run(
        "python3 -m venv",
        Command::new("python3")
            .args(["-m", "venv", "--system-site-packages"])
            .arg(&venv),
    );
    let python = venv.join("bin/python");
    run(
        "pip install of the wheel",
        Command::new(&python)
            .args(["-m", "pip", "install", "--quiet", "--no-index", "--no-deps"])
            .arg("--force-reinstall")
            .arg(&wheel),
    );
    // The package imported is the one just installed, not one the system has.
    let origin = run(
        "import pqkit",
        Command::new(&python)
            .current_dir(&work)
            .args(["-c", "import pqkit; print(pqkit.__file__)"]),
    );
    let origin = String::from_utf8_lossy(&origin.stdout).trim().to_owned();
    assert!(
        Path::new(&origin).starts_with(&venv),
        "import pqkit found {origin}, not the wheel installed in {}",
        venv.display()
    );
    // The token test sets up a pqkit token with the CLI, as a user does: the binary and the
    // module `cargo test --workspace` built (`cargo build -p pqkit-cli -p pqkit-pkcs11` alone).
    // `cargo test` leaves the module in deps/, `cargo build` beside the binary.
    let built = built();
    let pqkit = built.join("pqkit");
    let module = ["deps/libpqkit_pkcs11.so", "libpqkit_pkcs11.so"]
        .iter()
        .map(|name| built.join(name))
        .find(|path| path.exists())
        .unwrap_or_else(|| built.join("libpqkit_pkcs11.so"));
    for built in [&pqkit, &module] {
        assert!(
            built.exists(),
            "{}: missing; build it first (cargo build -p pqkit-cli -p pqkit-pkcs11)",
            built.display()
        );
    }
    // From the tests directory: `import pqkit` must find the installed wheel, not the source.
    let tests = root.join("crates/pqkit-py/tests");
    let log = work.join("pytest.txt");
    let file = std::fs::File::create(&log).expect("create target/pqkit-py/pytest.txt");
    let mut child = Command::new(&python)
        .current_dir(&tests)
        .env("PQKIT_TEST_PQKIT", &pqkit)
        .env("PQKIT_TEST_PKCS11_MODULE", &module)
        .args([
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-rs",
            "-s",
            "-q",
            ".",
        ])
        .stdin(Stdio::null())
        // Its own process group: a stopped run takes its worker processes with it.
        .process_group(0)
        .stdout(file.try_clone().expect("the log file, twice"))
        .stderr(file)
        .spawn()
        .expect("start pytest");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for pytest") {
            break Some(status);
        }
        if start.elapsed() > PYTEST_LIMIT {
            let group = format!("-{}", child.id());
            let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let report = std::fs::read_to_string(&log).unwrap_or_default();
    print!("{report}");
    match status {
        Some(status) => assert!(status.success(), "pytest failed ({status}):\n{report}"),
        None => panic!("pytest ran over {PYTEST_LIMIT:?} and was stopped:\n{report}"),
    }
}
