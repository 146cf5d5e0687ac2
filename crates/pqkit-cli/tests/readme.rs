//! The README and the book run as pasted: every ```` ```sh ```` block that follows a
//! `<!-- readme-test -->` line runs — README.md's first, then each chapter's in the order
//! `docs/src/SUMMARY.md` lists them — as one bash script (`set -euo pipefail`) in an empty
//! directory, with `pqkit` on the PATH and a ledger of its own. Then the outputs the blocks
//! quote are checked (a ciphertext's size, a verified signature, the files a command says it
//! writes). `every_relative_link_resolves` checks the links of the same pages.

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

/// The repository's root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// README.md, then the book's chapters in SUMMARY.md's order (each read once).
fn pages() -> Vec<(PathBuf, String)> {
    let read = |p: PathBuf| {
        let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        (p, text)
    };
    let mut pages = vec![read(root().join("README.md"))];
    let src = root().join("docs/src");
    let summary = read(src.join("SUMMARY.md"));
    for target in links(&summary.1) {
        let chapter = src.join(target.split('#').next().unwrap_or_default());
        if !pages.iter().any(|(p, _)| *p == chapter) {
            pages.push(read(chapter));
        }
    }
    pages.insert(1, summary);
    pages
}

/// The targets of the inline Markdown links `[text](target)` of `text`, outside code blocks
/// and code spans.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Code spans hold no links.
        let plain: String = line
            .split('`')
            .enumerate()
            .filter(|(i, _)| i % 2 == 0)
            .map(|(_, s)| s)
            .collect::<Vec<_>>()
            .join(" ");
        let mut rest = plain.as_str();
        while let Some(i) = rest.find("](") {
            rest = &rest[i + 2..];
            let Some(end) = rest.find(')') else { break };
            let target = rest[..end].split_whitespace().next().unwrap_or_default();
            out.push(target.to_string());
            rest = &rest[end..];
        }
    }
    out
}

/// GitHub's and mdBook's anchor of a heading: lowercase, spaces to `-`, other punctuation
/// than `-` and `_` dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of `text`'s headings (outside code blocks).
fn anchors(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            out.push(slug(line.trim_start_matches('#')));
        }
    }
    out
}

#[test]
fn every_relative_link_resolves() {
    let mut broken = Vec::new();
    let mut checked = 0;
    let pages = pages();
    assert!(
        pages.len() >= 8,
        "{} pages: README, SUMMARY and the chapters",
        pages.len()
    );
    for (page, text) in &pages {
        for target in links(text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (file, anchor) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target.as_str(), None),
            };
            let file = if file.is_empty() {
                page.clone()
            } else {
                page.parent().expect("a page's directory").join(file)
            };
            if !file.exists() {
                broken.push(format!("{}: {target}: no such file", page.display()));
                continue;
            }
            if let Some(anchor) = anchor
                && file.extension().is_some_and(|e| e == "md")
            {
                let text = std::fs::read_to_string(&file).unwrap_or_default();
                if !anchors(&text).iter().any(|a| a == anchor) {
                    broken.push(format!("{}: {target}: no such heading", page.display()));
                }
            }
        }
    }
    assert!(checked > 20, "only {checked} relative links checked");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_readme_blocks_run_as_pasted() {
    let pages = pages();
    let readme = &pages[0].1;
    let blocks: Vec<String> = pages.iter().flat_map(|(_, text)| blocks(text)).collect();
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
