//! The state file: counters are never handed out twice — across reopen, with reservations
//! skipped after a "crash" (a dropped key with unused reserved values), with a second signer
//! locked out, at exhaustion, and with a directory that cannot be written or a disk that is
//! full (no signature either way).

use std::path::{Path, PathBuf};

use pqkit_hbs::ledger::Ledger;
use pqkit_hbs::params::{LMS, OTS};
use pqkit_hbs::public::PublicKey;
use pqkit_hbs::state::{AdoptTo, StateError, StatefulKey};

/// LMS_SHA256_M32_H5 / LMOTS_SHA256_N32_W8 at each level: small and quick.
const LEVEL: pqkit_hbs::hss::Level = (&LMS[0], &OTS[3]);

/// A scratch directory under the temporary directory, and beside it a directory for the
/// test's reservation ledger; both removed with their contents when dropped (a failing test's
/// too).
struct Scratch(PathBuf, PathBuf);

impl Scratch {
    /// The test's SQLite ledger (outside the scratch directory, which a test may mount over).
    fn ledger(&self) -> Ledger {
        Ledger::sqlite(&self.1.join("ledger.sqlite3")).expect("ledger")
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
        let _ = std::fs::remove_dir_all(&self.1);
    }
}

fn scratch(name: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("pqkit-hbs-{name}-{}", std::process::id()));
    let ledger = dir.with_extension("ledger");
    for d in [&dir, &ledger] {
        let _ = std::fs::remove_dir_all(d);
        std::fs::create_dir_all(d).expect("scratch dir");
    }
    Scratch(dir, ledger)
}

fn counter(pk: &PublicKey, sig: &[u8]) -> u64 {
    pk.counter(sig).expect("counter")
}

fn verify(pk: &PublicKey, msg: &[u8], sig: &[u8]) {
    assert_eq!(pk.verify(msg, sig), Ok(()));
}

#[test]
fn reopen_continues_and_skips_reserved_values() {
    let dir = scratch("reopen");
    let path = dir.join("key.hss");
    let mut key = StatefulKey::create(&path, &[LEVEL, LEVEL], dir.ledger(), 2).expect("create");
    let pk = key.public_key();
    let mut seen = Vec::new();
    for i in 0..3u8 {
        let sig = key.sign(&[i]).expect("sign");
        verify(&pk, &[i], &sig);
        seen.push(counter(&pk, &sig));
    }
    assert_eq!(key.status().used, 3);
    // Reserve 10 more, use 2, then "crash" (drop without using the other 8).
    key.reserve(10).expect("reserve");
    for i in 3..5u8 {
        seen.push(counter(&pk, &key.sign(&[i]).expect("sign")));
    }
    drop(key);
    let mut key = StatefulKey::open(&path, dir.ledger(), 2).expect("open");
    assert_eq!(key.public_key(), pk);
    assert_eq!(
        key.status().used,
        13,
        "the 8 unused reserved values are skipped"
    );
    let sig = key.sign(b"after").expect("sign");
    verify(&pk, b"after", &sig);
    seen.push(counter(&pk, &sig));
    assert_eq!(seen, [0, 1, 2, 3, 4, 13]);
    assert_eq!(key.status().remaining, 1024 - 14);
}

#[test]
fn a_second_signer_is_locked_out() {
    let dir = scratch("lock");
    let path = dir.join("key.hss");
    let key = StatefulKey::create(&path, &[LEVEL], dir.ledger(), 1).expect("create");
    match StatefulKey::open(&path, dir.ledger(), 1) {
        Err(StateError::Locked(p, _)) => assert_eq!(p, path),
        other => panic!("expected Locked, got {other:?}"),
    }
    assert!(matches!(
        StatefulKey::create(&path, &[LEVEL], dir.ledger(), 1),
        Err(StateError::Locked(..))
    ));
    drop(key);
    assert!(matches!(
        StatefulKey::create(&path, &[LEVEL], dir.ledger(), 1),
        Err(StateError::Exists(_))
    ));
    StatefulKey::open(&path, dir.ledger(), 1).expect("open after the first signer is gone");
}

#[test]
fn exhaustion_is_an_error_not_a_wrap_around() {
    let dir = scratch("exhaust");
    let path = dir.join("key.hss");
    let mut key = StatefulKey::create(&path, &[LEVEL], dir.ledger(), 1).expect("create");
    key.reserve(100).expect("reserve to the end");
    assert_eq!(key.status().remaining, 0);
    for i in 0..32u8 {
        key.sign(&[i]).expect("sign");
    }
    assert!(matches!(
        key.sign(b"one too many"),
        Err(StateError::Hbs(pqkit_hbs::Error::Exhausted))
    ));
    drop(key);
    let mut key = StatefulKey::open(&path, dir.ledger(), 1).expect("open");
    assert!(matches!(
        key.sign(b"m"),
        Err(StateError::Hbs(pqkit_hbs::Error::Exhausted))
    ));
}

#[test]
fn a_corrupt_state_file_is_refused_and_a_torn_counter_write_falls_back() {
    let dir = scratch("corrupt");
    let path = dir.join("key.hss");
    drop(StatefulKey::create(&path, &[LEVEL], dir.ledger(), 1).expect("create"));
    let fresh = std::fs::read(&path).expect("read");
    // The two counter slots (48 bytes each) end the file; a fresh key uses slot 0.
    let slot0 = fresh.len() - 96;
    let corrupt = |bytes: &[u8], what: &str| {
        std::fs::write(&path, bytes).expect("write");
        match StatefulKey::open(&path, dir.ledger(), 1) {
            Err(StateError::Corrupt(..)) => {}
            other => panic!("{what}: expected Corrupt, got {other:?}"),
        }
    };
    let mut bytes = fresh.clone();
    bytes[slot0 + 15] ^= 1; // the counter in the only slot in use
    corrupt(&bytes, "a flipped counter bit");
    let mut bytes = fresh.clone();
    bytes[30] ^= 1; // the key
    corrupt(&bytes, "a flipped key bit");
    corrupt(&fresh[..20], "a truncated file");
    corrupt(&fresh[..fresh.len() - 1], "a file one byte short");
    // A write of slot 1 torn by a crash (the ledger was not moved: the write never finished):
    // slot 0's counter holds, and the key signs from it.
    let mut bytes = fresh.clone();
    let n = bytes.len();
    bytes[n - 48..].copy_from_slice(&[0x5a; 48]);
    std::fs::write(&path, &bytes).expect("write");
    let mut key = StatefulKey::open(&path, dir.ledger(), 1).expect("a torn slot falls back");
    let sig = key.sign(b"m").expect("sign");
    assert_eq!(counter(&key.public_key(), &sig), 0);
}

/// Makes `dir` (a file or a directory) unwritable for this process until dropped: `chattr
/// +i` for root (who ignores permission bits), mode 0555 otherwise.
struct ReadOnly<'a>(&'a Path, bool);

impl<'a> ReadOnly<'a> {
    fn new(dir: &'a Path) -> Self {
        let root = std::process::Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|o| o.stdout.starts_with(b"0"));
        if root {
            let ok = std::process::Command::new("chattr")
                .arg("+i")
                .arg(dir)
                .status()
                .is_ok_and(|s| s.success());
            assert!(
                ok,
                "running as root and `chattr +i {}` failed: cannot make a read-only directory",
                dir.display()
            );
        } else {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555)).expect("chmod");
        }
        Self(dir, root)
    }
}

impl Drop for ReadOnly<'_> {
    fn drop(&mut self) {
        if self.1 {
            let _ = std::process::Command::new("chattr")
                .arg("-i")
                .arg(self.0)
                .status();
        } else {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(self.0, std::fs::Permissions::from_mode(0o755));
        }
    }
}

#[test]
fn an_unwritable_state_file_gives_an_error_and_no_signature() {
    let dir = scratch("readonly");
    let path = dir.join("key.hss");
    let mut key = StatefulKey::create(&path, &[LEVEL], dir.ledger(), 1).expect("create");
    key.sign(b"before").expect("sign while writable");
    let before = std::fs::read(&path).expect("state");
    {
        let _ro = ReadOnly::new(&path);
        if !_ro.1 {
            // Without root the open descriptor still writes (permission bits are checked at
            // open): reopen, which must fail to open the file for writing.
            drop(key);
            match StatefulKey::open(&path, dir.ledger(), 1) {
                Err(StateError::Io(p, _)) => assert_eq!(p, path),
                other => panic!("expected an I/O error, got {other:?}"),
            }
            return;
        }
        match key.sign(b"while read-only") {
            Err(StateError::Io(p, _)) => assert_eq!(p, path),
            other => panic!("expected an I/O error and no signature, got {other:?}"),
        }
        assert_eq!(
            std::fs::read(&path).expect("state"),
            before,
            "state unchanged"
        );
    }
    // Writable again: signing goes on after the last persisted value.
    let sig = key.sign(b"after").expect("sign");
    assert_eq!(counter(&key.public_key(), &sig), 1);
    assert!(
        std::fs::read_dir(&dir).expect("dir").all(|e| {
            !e.expect("entry")
                .file_name()
                .to_string_lossy()
                .contains(".tmp-")
        }),
        "no temporary file left behind"
    );
}

#[test]
fn an_xmss_mt_state_file_reopens_and_continues() {
    let dir = scratch("xmss-mt");
    let path = dir.join("key.xmssmt");
    let params = pqkit_hbs::xmss::by_name("XMSSMT-SHA2_20/4_256").expect("set");
    let mut key = StatefulKey::create_xmss(&path, params, dir.ledger(), 2).expect("create");
    let pk = key.public_key();
    let first = key.sign(b"one").expect("sign");
    verify(&pk, b"one", &first);
    key.reserve(40).expect("reserve");
    drop(key);
    let mut key = StatefulKey::open(&path, dir.ledger(), 2).expect("open");
    assert_eq!(key.public_key(), pk);
    let sig = key.sign(b"two").expect("sign");
    verify(&pk, b"two", &sig);
    assert_eq!((counter(&pk, &first), counter(&pk, &sig)), (0, 41));
    assert_eq!(key.status().capacity, 1 << 20);
}

/// A 1 MiB tmpfs mounted for the test (root only), unmounted when dropped.
struct SmallDisk(PathBuf);

impl SmallDisk {
    fn mount(dir: &Path) -> Self {
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
            .arg(dir)
            .status()
            .is_ok_and(|s| s.success());
        assert!(
            ok,
            "mounting a 1 MiB tmpfs on {} failed: the disk-full test needs root (CAP_SYS_ADMIN)",
            dir.display()
        );
        Self(dir.to_path_buf())
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// A full disk: a reservation rewrites the state file's counter in place and needs no space,
/// so the state file never stops a signer; a ledger on the full disk cannot append its
/// record, which is an error, and no signature is made.
#[test]
fn a_full_disk_stops_signing_only_where_the_ledger_needs_room() {
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0"));
    if !root {
        // Without root there is no way to make a small file system here; the read-only
        // state file test covers a failed persist (no signature).
        eprintln!("not root: the disk-full case is covered by the read-only file test only");
        return;
    }
    let dir = scratch("diskfull");
    let _disk = SmallDisk::mount(&dir);
    let path = dir.join("key.hss");
    let on_disk = || Ledger::sqlite(&dir.join("ledger.sqlite3")).expect("ledger");
    let mut key = StatefulKey::create(&path, &[LEVEL], on_disk(), 1).expect("create");
    let pk = key.public_key();
    let first = key.sign(b"before").expect("sign with room on the disk");
    // Fill the file system.
    let filler = dir.join("filler");
    let mut f = std::fs::File::create(&filler).expect("filler");
    let block = vec![0u8; 4096];
    while std::io::Write::write_all(&mut f, &block).is_ok() {}
    drop(f);
    let mut refused = false;
    let mut signed = vec![counter(&pk, &first)];
    for i in 0..64u8 {
        match key.sign(&[i]) {
            Ok(sig) => signed.push(counter(&pk, &sig)),
            Err(StateError::Ledger(_)) => {
                refused = true;
                break;
            }
            Err(e) => panic!("expected a ledger error, got {e}"),
        }
    }
    assert!(refused, "the ledger on a full disk took 64 more records");
    std::fs::remove_file(&filler).expect("free the disk");
    let sig = key.sign(b"after").expect("sign after freeing space");
    verify(&pk, b"after", &sig);
    signed.push(counter(&pk, &sig));
    let mut unique = signed.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique, signed, "counters go up, never repeat");
}

#[cfg(unix)]
#[test]
fn state_files_are_private_exclusive_and_the_lock_goes_with_the_signer() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("private");
    let path = dir.join("key.hss");
    let lock = dir.join("key.hss.lock");
    let mut key = StatefulKey::create(&path, &[LEVEL], dir.ledger(), 1).expect("create");
    let mode = |p: &Path| std::fs::metadata(p).expect("stat").permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600, "a state file is a secret key");
    assert_eq!(mode(&lock), 0o600);
    key.sign(b"m").expect("sign");
    assert_eq!(mode(&path), 0o600, "and stays private when rewritten");
    // Reading the status takes no lock while a signer holds the key.
    let s = pqkit_hbs::state::status(&path).expect("status");
    assert_eq!((s.used, s.remaining), (1, 31));
    drop(key);
    assert!(
        !lock.exists(),
        "the lock file is removed when the key is released"
    );
    pqkit_hbs::state::status(&path).expect("status");
    assert!(!lock.exists(), "reading the status creates no lock file");
    // A symbolic link where a new state file would go is not followed.
    let target = dir.join("elsewhere");
    let link = dir.join("link.hss");
    std::os::unix::fs::symlink(&target, &link).expect("symlink");
    assert!(matches!(
        StatefulKey::create(&link, &[LEVEL], dir.ledger(), 1),
        Err(StateError::Exists(_))
    ));
    assert!(!target.exists());
}

#[test]
fn a_copied_restored_or_moved_state_file_refuses_to_sign_until_adopted() {
    let dir = scratch("copies");
    let path = dir.join("key.hss");
    let mut key = StatefulKey::create(&path, &[LEVEL], dir.ledger(), 1).expect("create");
    let pk = key.public_key();
    let first = key.sign(b"one").expect("sign");
    drop(key);
    let not_where = |r: Result<StatefulKey, StateError>| match r {
        Err(StateError::NotWhereRecorded { why, .. }) => why,
        other => panic!("expected NotWhereRecorded, got {other:?}"),
    };
    // `cp`: the copy refuses; the original still signs.
    let copy = dir.join("copy.hss");
    std::fs::copy(&path, &copy).expect("cp");
    let why = not_where(StatefulKey::open(&copy, dir.ledger(), 1));
    assert!(why.contains("copy"), "{why}");
    // Adopting the copy while its original is still there, the same key, is refused.
    assert!(matches!(
        StatefulKey::adopt(&copy, dir.ledger(), AdoptTo::Skip(0), false, 1),
        Err(StateError::OriginalExists { .. })
    ));
    // A backup taken now, restored after the original signed again, refuses too.
    let backup = dir.join("backup");
    std::fs::copy(&path, &backup).expect("backup");
    let mut key = StatefulKey::open(&path, dir.ledger(), 1).expect("the original");
    let second = key.sign(b"two").expect("sign");
    drop(key);
    std::fs::remove_file(&path).expect("rm");
    std::fs::copy(&backup, &path).expect("restore");
    not_where(StatefulKey::open(&path, dir.ledger(), 1));
    // Adopting it where it is, without moving past what the ledger saw: refused.
    assert!(matches!(
        StatefulKey::adopt(&path, dir.ledger(), AdoptTo::Skip(0), false, 1),
        Err(StateError::BehindLedger {
            next: 1,
            high_water: 2,
            ..
        })
    ));
    // Adopting the restored file with a skip past what the original used: no counter repeats.
    let adopted =
        StatefulKey::adopt(&path, dir.ledger(), AdoptTo::Skip(5), false, 1).expect("adopt");
    assert_eq!((adopted.next_before, adopted.next), (1, 6));
    assert!(!adopted.was.is_empty());
    let mut key = StatefulKey::open(&path, dir.ledger(), 1).expect("adopted");
    let third = key.sign(b"three").expect("sign");
    assert_eq!(
        [&first, &second, &third].map(|s| counter(&pk, s)),
        [0, 1, 6]
    );
    drop(key);
    // A renamed file and a second hard link refuse as well.
    let moved = dir.join("moved.hss");
    std::fs::rename(&path, &moved).expect("mv");
    let why = not_where(StatefulKey::open(&moved, dir.ledger(), 1));
    assert!(why.contains("now at"), "{why}");
    StatefulKey::adopt(&moved, dir.ledger(), AdoptTo::Skip(0), false, 1)
        .expect("adopt after a move");
    let linked = dir.join("linked.hss");
    std::fs::hard_link(&moved, &linked).expect("ln");
    // A second hard link: no open, no adopt (the other name would keep the old inode).
    for result in [
        StatefulKey::open(&moved, dir.ledger(), 1).map(|_| ()),
        StatefulKey::adopt(&moved, dir.ledger(), AdoptTo::Skip(0), false, 1).map(|_| ()),
    ] {
        assert!(
            matches!(result, Err(StateError::HardLinked { links: 2, .. })),
            "{result:?}"
        );
    }
    std::fs::remove_file(&linked).expect("rm");
    // A symbolic link to the state file: no open, no adopt (adopting through it would replace
    // the link with a second copy of the key).
    let symlink = dir.join("symlink.hss");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&moved, &symlink).expect("ln -s");
        for result in [
            StatefulKey::open(&symlink, dir.ledger(), 1).map(|_| ()),
            StatefulKey::adopt(&symlink, dir.ledger(), AdoptTo::Skip(0), false, 1).map(|_| ()),
        ] {
            assert!(
                matches!(result, Err(StateError::SymbolicLink(..))),
                "{result:?}"
            );
        }
        assert!(
            std::fs::symlink_metadata(&symlink)
                .expect("stat")
                .file_type()
                .is_symlink()
        );
    }
    StatefulKey::open(&moved, dir.ledger(), 1).expect("one name again");
}

/// A sealed state file signs only with its seal key: opened without it the key is refused,
/// with a wrong one its secrets do not give the public key it records; reservations and status
/// work as for any state file.
#[test]
#[allow(clippy::unwrap_used)]
fn a_sealed_state_file_opens_only_with_its_seal_key() {
    use pqkit_hbs::state::{NewKey, SealKey};
    let dir = scratch("sealed");
    let path = dir.join("k.state");
    let levels = pqkit_hbs::preset::Shape::parse("L1_H5_W8")
        .unwrap()
        .levels();
    let seal = SealKey::new([7u8; 32]);
    let public = {
        let key = NewKey::hss(&path, &levels, 1)
            .unwrap()
            .sealed(&seal)
            .commit(dir.ledger())
            .unwrap();
        key.public_key()
    };
    assert!(matches!(
        StatefulKey::open(&path, dir.ledger(), 1),
        Err(StateError::Sealed(_))
    ));
    let mut key = StatefulKey::open_sealed(&path, dir.ledger(), 1, &seal).unwrap();
    let sig = key.sign(b"sealed").unwrap();
    public.verify(b"sealed", &sig).unwrap();
    drop(key);
    assert_eq!(pqkit_hbs::state::status(&path).unwrap().used, 1);
    assert!(matches!(
        StatefulKey::open_sealed(&path, dir.ledger(), 1, &SealKey::new([8u8; 32])),
        Err(StateError::Corrupt(..))
    ));
}
