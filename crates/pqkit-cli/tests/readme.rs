//! The README runs as pasted: every ```` ```sh ```` block that follows a `<!-- readme-test -->`
//! line runs, in the README's order, as one bash script (`set -euo pipefail`) in an empty
//! directory, with `pqkit` on the PATH and a ledger of its own. Then the outputs the blocks
//! quote are checked (a ciphertext's size, a verified signature, the files a command says it
//! writes).

mod support;

use std::path::PathBuf;
use std::process::Command;

use support::scratch;

/// The marked blocks, in order.
fn blocks(readme: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        if line.trim() != "<!-- readme-test -->" {
            continue;
        }
        let fence = lines.next().unwrap_or_default();
        assert_eq!(fence, "```sh", "a marked block must be a ```sh block");
        let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
        out.push(body.join("\n"));
    }
    out
}

#[test]
fn the_readme_blocks_run_as_pasted() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let blocks = blocks(&readme);
    assert!(blocks.len() >= 3, "{} marked blocks", blocks.len());
    let dir = scratch("readme");
    let work = dir.join("work");
    std::fs::create_dir_all(&work).expect("dir");
    // `pqkit` on the PATH, as after `cargo install`.
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let link = bin.join("pqkit");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_pqkit"), &link).expect("symlink");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let script = format!("set -euxo pipefail\n{}\n", blocks.join("\n"));
    let out = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(&work)
        .env("PATH", path)
        .env("PQKIT_HBS_LEDGER", dir.join("ledger.sqlite3"))
        .env("XDG_STATE_HOME", dir.join("state"))
        .output()
        .expect("bash");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let tail: Vec<&str> = stderr.lines().rev().take(12).collect();
    assert!(
        out.status.success(),
        "the README's blocks stopped ({}); the last lines:\n{}",
        out.status,
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    );
    let size = |name: &str| {
        std::fs::metadata(work.join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .len()
    };
    // What the blocks quote.
    assert_eq!(size("mce-ct.bin"), 96, "96-byte ciphertext");
    for f in [
        "key.pem",
        "pub.pem",
        "doc.sig",
        "doc-sha512.sig",
        "doc-mu.sig",
        "chain/server.pem",
        "device.pem",
        "fw.bin.sig",
        "sigs",
        "fw.pem",
        "device-hbs.pem",
        "sites",
    ] {
        assert!(work.join(f).exists(), "{f} was not written");
    }
    let mode = |name: &str| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(work.join(name))
            .expect("meta")
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode("key.pem"), 0o600, "a private key file is 0600");
    // The demo table the README quotes: its byte counts are those of a run now.
    let demo = Command::new(env!("CARGO_BIN_EXE_pqkit"))
        .arg("demo")
        .output()
        .expect("demo");
    assert!(demo.status.success());
    let demo = String::from_utf8_lossy(&demo.stdout);
    for label in [
        "bytes written at socket",
        "bytes read at socket",
        "certificate chain sent (bytes)",
        "bytes on the wire:",
    ] {
        let quoted = readme
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("the README quotes no {label:?} line"));
        let now = demo
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("pqkit demo prints no {label:?} line"));
        assert_eq!(quoted, now, "the README's demo output is stale");
    }
    assert_eq!(mode("fw.hss"), 0o600, "a state file is 0600");
}
