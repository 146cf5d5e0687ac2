//! The reproducers through the CLI, as a careless user meets them: a backup restored
//! with `cp` on a file system that keeps no creation time (ext4 `-I 128` on a loop device), and
//! the temporary file a SIGKILL leaves behind moved over the state file. Both are refused and
//! sign nothing. Also: key generation on a full disk
//! leaves nothing, `hbs pubkey`, and `hbs sector`.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use pqkit_hbs::public::PublicKey;
use support::{SmallDisk, is_root, pqkit, run_ok, scratch};

fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

fn keygen(preset: &str, state: &Path, public: &Path) {
    run_ok(pqkit().args([
        "hbs",
        "keygen",
        "--preset",
        preset,
        "--threads",
        "1",
        "--state",
        path(state),
        "--pub",
        path(public),
    ]));
}

fn sign(state: &Path, file: &Path, out: &Path) -> Output {
    pqkit()
        .args([
            "hbs",
            "sign",
            "--threads",
            "1",
            "--state",
            path(state),
            "-o",
        ])
        .args([path(out), path(file)])
        .stdin(Stdio::null())
        .output()
        .expect("run pqkit")
}

fn inode(p: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(p).expect("stat").ino()
}

/// An ext4 file system with 128-byte inodes (no creation time) and few inodes, on a loop
/// device, unmounted when dropped.
struct Ext4NoBirth {
    mount: PathBuf,
}

impl Ext4NoBirth {
    /// `None` (with the reason printed) where this process may not make one.
    fn new(dir: &Path) -> Option<Self> {
        if !is_root() {
            eprintln!("skipped: not root, so no loop-mounted ext4 file system can be made here");
            return None;
        }
        let image = dir.join("nb.img");
        let mount = dir.join("nb");
        std::fs::create_dir_all(&mount).expect("mount point");
        let ok = |cmd: &mut std::process::Command| {
            cmd.stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        if !ok(std::process::Command::new("truncate")
            .args(["-s", "64M"])
            .arg(&image))
            || !ok(std::process::Command::new("mkfs.ext4")
                .args(["-q", "-I", "128", "-N", "64", "-F"])
                .arg(&image))
        {
            eprintln!("skipped: mkfs.ext4 is not available");
            return None;
        }
        if !ok(std::process::Command::new("mount")
            .args(["-o", "loop"])
            .arg(&image)
            .arg(&mount))
        {
            eprintln!("skipped: `mount -o loop` is not permitted here");
            return None;
        }
        Some(Self { mount })
    }
}

impl Drop for Ext4NoBirth {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(&self.mount)
            .status();
    }
}

/// Reproducer 1: keygen, `cp k.hss bak`, sign until the state file's inode number is the one
/// the backup recorded, then `cp bak k.hss`: device, inode and path match and there is no
/// creation time to differ — the ledger refuses it. (The run needed the inode number
/// to come back: signers then renamed a new file into place at each reservation. Today a
/// reservation rewrites the file in place and its inode never changes, so the first signature
/// already leaves it as the backup recorded it.)
#[test]
fn a_backup_restored_where_the_inode_number_came_back_is_refused() {
    let dir = scratch("hbs-ext4-restore");
    let Some(fs) = Ext4NoBirth::new(&dir) else {
        return;
    };
    let nb = &fs.mount;
    let (state, public, bak) = (nb.join("k.hss"), nb.join("k.pub"), dir.join("bak"));
    keygen("L1_H15_W2", &state, &public);
    std::fs::copy(&state, &bak).expect("cp k.hss bak");
    let recorded = inode(&state);
    let message = nb.join("a.txt");
    std::fs::write(&message, b"a").expect("write");
    let mut signed = 0;
    while inode(&state) != recorded || signed == 0 {
        assert!(
            signed < 200,
            "the inode number {recorded} did not come back in {signed} signatures"
        );
        let out = sign(&state, &message, &nb.join(format!("s{signed}.sig")));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::remove_file(nb.join(format!("s{signed}.sig"))).expect("rm");
        signed += 1;
    }
    // `cp` onto the live file writes into its inode: the restored backup is that inode now.
    std::fs::copy(&bak, &state).expect("cp bak k.hss");
    assert_eq!(inode(&state), recorded);
    let evil = nb.join("evil.sig");
    let b = nb.join("b.txt");
    std::fs::write(&b, b"b").expect("write");
    let out = sign(&state, &b, &evil);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("older than the key"), "{stderr}");
    assert!(stderr.contains(&format!("--skip-to {signed}")), "{stderr}");
    assert!(!evil.exists(), "no signature was made");
}

fn xorshift(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

/// Reproducer 2: the temporary file a process killed with SIGKILL leaves behind is a complete
/// state. Signers no longer make one — a reservation rewrites the state file's counter in place
/// — so killing `hbs sign` at random leaves none; the commands that write a whole state file
/// (`adopt`, `keygen`, `sector`) still do. One left by a killed `hbs adopt`, moved aside and
/// over the state file once the key has signed on, is refused; one left in place is removed by
/// the next signer.
#[test]
fn a_leftover_temporary_moved_over_the_state_is_refused() {
    let dir = scratch("hbs-tmp-rename");
    let (state, public) = (dir.join("k.hss"), dir.join("k.pub"));
    keygen("L2_H5_W4", &state, &public);
    let files: Vec<PathBuf> = (0..64)
        .map(|i| {
            let f = dir.join(format!("m{i}"));
            std::fs::write(&f, format!("message {i}")).expect("write");
            f
        })
        .collect();
    let leftover = |dir: &Path| {
        std::fs::read_dir(dir)
            .expect("dir")
            .filter_map(Result::ok)
            .map(|e| e.path())
            .find(|p| p.to_string_lossy().contains("k.hss.tmp-"))
    };
    let mut seed = u64::from(std::process::id()) | 1;
    // Signers killed at random: no state temporary, ever.
    for round in 0..30 {
        let out = dir.join(format!("out-{round}"));
        std::fs::create_dir_all(&out).expect("out dir");
        let mut child = pqkit()
            .args(["hbs", "sign", "--threads", "1", "--state", path(&state)])
            .args(["--out-dir", path(&out)])
            .args(files.iter().map(|f| path(f)))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        std::thread::sleep(Duration::from_micros(2_000 + xorshift(&mut seed) % 40_000));
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(
            leftover(&dir),
            None,
            "a killed signer left a state temporary"
        );
    }
    // `hbs adopt` rewrites the whole file through a temporary: kill it until one is left.
    let start = Instant::now();
    let mut saved = None;
    let mut tries = 0u64;
    while saved.is_none() {
        assert!(
            start.elapsed() < Duration::from_secs(180),
            "no kill of `hbs adopt` left a temporary file in {tries} tries"
        );
        let mut child = pqkit()
            .args(["hbs", "adopt", "--yes", "--state", path(&state)])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        std::thread::sleep(Duration::from_micros(xorshift(&mut seed) % 15_000));
        let _ = child.kill();
        let _ = child.wait();
        if let Some(tmp) = leftover(&dir) {
            // Killed mid-write, a temporary is cut short: the parser refuses it as no state
            // file at all. Only a complete one is the attack; drop the rest and try again.
            let whole = std::fs::metadata(&state).expect("state").len();
            if std::fs::metadata(&tmp).map(|m| m.len()).ok() != Some(whole) {
                std::fs::remove_file(&tmp).expect("rm a cut-short temporary");
                tries += 1;
                continue;
            }
            let aside = dir.join("saved-state");
            std::fs::rename(&tmp, &aside).expect("mv k.hss.tmp-PID saved-state");
            saved = Some(aside);
        }
        tries += 1;
    }
    // The key signs on (a killed adopt may have left the file adopted or not: adopt it).
    run_ok(pqkit().args(["hbs", "adopt", "--yes", "--state", path(&state)]));
    let done = dir.join("done");
    std::fs::create_dir_all(&done).expect("dir");
    let out = pqkit()
        .args([
            "hbs",
            "sign",
            "--state",
            path(&state),
            "--out-dir",
            path(&done),
        ])
        .args(files.iter().take(3).map(|f| path(f)))
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let saved = saved.expect("a leftover");
    std::fs::rename(&saved, &state).expect("mv saved-state k.hss");
    let evil = dir.join("evil.sig");
    let out = sign(&state, &files[0], &evil);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("older than the key"), "{stderr}");
    assert!(!evil.exists(), "no signature was made");

    // A leftover left in place is a stale secret: the next signer removes it.
    let (state2, public2) = (dir.join("l.hss"), dir.join("l.pub"));
    keygen("L1_H5_W4", &state2, &public2);
    let stale = dir.join("l.hss.tmp-999999");
    std::fs::copy(&state2, &stale).expect("a leftover");
    let out = sign(&state2, &files[0], &dir.join("l.sig"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!stale.exists(), "the leftover temporary file was removed");
}

/// `hbs keygen` on a full disk (the public key's or the state file's) leaves no state file,
/// no public key and no ledger record: a key that could sign without its public key would be
/// a key nobody can use or retire.
#[test]
fn keygen_on_a_full_disk_leaves_nothing() {
    let dir = scratch("hbs-keygen-full");
    let full = dir.join("full");
    let Some(_disk) = SmallDisk::mount(&full, "16k") else {
        return;
    };
    let filler = full.join("filler");
    let mut f = std::fs::File::create(&filler).expect("filler");
    while std::io::Write::write_all(&mut f, &[0u8; 1024]).is_ok() {}
    drop(f);
    // A ledger of this test's own: the other tests of this process make keys meanwhile.
    let ledger = dir.join("ledger.sqlite3");
    let records = || -> usize {
        let out = pqkit()
            .args(["hbs", "ledger", "--json", "--ledger", path(&ledger)])
            .output()
            .expect("run");
        if !out.status.success() {
            // Listing makes no ledger: none there yet is no record.
            assert!(
                String::from_utf8_lossy(&out.stderr).contains("no ledger there"),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            return 0;
        }
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        v["records"].as_array().map_or(0, Vec::len)
    };
    for (state, public) in [
        (dir.join("a.hss"), full.join("a.pub")),
        (full.join("b.hss"), dir.join("b.pub")),
    ] {
        let before = records();
        let out = pqkit()
            .args(["hbs", "keygen", "--preset", "L1_H5_W4", "--state"])
            .args([
                path(&state),
                "--pub",
                path(&public),
                "--ledger",
                path(&ledger),
            ])
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{stderr}");
        assert!(
            stderr.contains("No space left") || stderr.contains("space"),
            "{stderr}"
        );
        assert!(!state.exists(), "{} left behind", state.display());
        assert!(!public.exists(), "{} left behind", public.display());
        assert_eq!(records(), before, "a ledger record was left behind");
        for d in [&dir, &full] {
            for e in std::fs::read_dir(d).expect("dir").filter_map(Result::ok) {
                let name = e.file_name().to_string_lossy().into_owned();
                assert!(!name.contains(".tmp"), "temporary {name} left behind");
            }
        }
    }
}

#[test]
fn pubkey_prints_the_public_key_of_a_state_file() {
    let dir = scratch("hbs-pubkey");
    let (state, public) = (dir.join("k.hss"), dir.join("k.pub"));
    keygen("L1_H5_W8", &state, &public);
    let out = run_ok(pqkit().args(["hbs", "pubkey", "--state", path(&state)]));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        std::fs::read_to_string(&public).expect("pub")
    );
    // No lock taken: it works while a signer holds the key, and writes nothing there.
    assert!(!dir.join("k.hss.lock").exists());
}

#[test]
fn sectors_sign_disjoint_ranges_through_the_cli() {
    let dir = scratch("hbs-sector");
    let (state, public) = (dir.join("k.hss"), dir.join("k.pub"));
    keygen("L2_H5_W4", &state, &public);
    let out = run_ok(pqkit().args(["hbs", "sector", "--state", path(&state), "--count", "3"]));
    let listing = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(listing.lines().count(), 3, "{listing}");
    let pk = PublicKey::from_pem(&std::fs::read_to_string(&public).expect("pub")).expect("pub");
    let message = dir.join("m");
    std::fs::write(&message, b"m").expect("write");
    let mut seen = Vec::new();
    for i in 1..=3 {
        let sector = dir.join(format!("k.hss.{i}of3"));
        // Released: it signs nowhere until adopted at its site, into that site's ledger.
        let out = sign(&sector, &message, &dir.join("early.sig"));
        assert_eq!(out.status.code(), Some(3));
        assert!(String::from_utf8_lossy(&out.stderr).contains("adopt"));
        let site = dir.join(format!("site{i}.sqlite3"));
        run_ok(
            pqkit()
                .args(["hbs", "adopt", "--yes", "--state", path(&sector)])
                .args(["--ledger", path(&site)]),
        );
        for j in 0..2 {
            let sig = dir.join(format!("s{i}-{j}.sig"));
            let out = pqkit()
                .args(["hbs", "sign", "--threads", "1", "--state", path(&sector)])
                .args(["--ledger", path(&site), "-o", path(&sig), path(&message)])
                .output()
                .expect("run");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let bytes = std::fs::read(&sig).expect("sig");
            assert_eq!(pk.verify(b"m", &bytes), Ok(()));
            seen.push(pk.counter(&bytes).expect("counter"));
        }
    }
    let mut unique = seen.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), seen.len(), "{seen:?}");
    // The split key signs no more.
    let out = sign(&state, &message, &dir.join("after.sig"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("0 one-time keys remain"), "{stderr}");
}
