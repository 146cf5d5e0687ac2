//! The reservation ledger against the ways a state file goes back in time: a hard link raced
//! against a reservation's rename and moved back later, an older copy written before ledgers,
//! a lost or another ledger, leftover temporary files; and key generation that leaves all or
//! nothing, and sectors that split one key into disjoint ranges.

use std::path::{Path, PathBuf};

use pqkit_hbs::ledger::{Ledger, RecordId};
use pqkit_hbs::params::{LMS, OTS};
use pqkit_hbs::state::{AdoptTo, NewKey, StateError, StatefulKey};

/// LMS_SHA256_M32_H5 / LMOTS_SHA256_N32_W8 at each level: small and quick.
const LEVEL: pqkit_hbs::hss::Level = (&LMS[0], &OTS[3]);

/// A scratch directory and, beside it, one for the test's ledgers; removed when dropped.
struct Scratch(PathBuf, PathBuf);

impl Scratch {
    fn ledger(&self) -> Ledger {
        Ledger::sqlite(&self.ledger_path()).expect("ledger")
    }

    fn ledger_path(&self) -> PathBuf {
        self.1.join("ledger.sqlite3")
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
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
    let dir = std::env::temp_dir().join(format!("pqkit-ledger-{name}-{}", std::process::id()));
    let ledger = dir.with_extension("ledger");
    for d in [&dir, &ledger] {
        let _ = std::fs::remove_dir_all(d);
        std::fs::create_dir_all(d).expect("scratch dir");
    }
    Scratch(dir, ledger)
}

/// Reproducer 3 of the issue, against today's state file: a reservation rewrites the file's
/// counter in place — no temporary file, no rename — so a script polling the directory finds
/// no temporary to link, and a hard link taken at any moment makes the next reservation refuse
/// until it is removed. An older state written back into the live file (`cp bak k.hss`: same
/// inode, path and creation time) is refused by the ledger; one moved back in a new file is
/// also not where the key was recorded.
#[test]
fn hard_links_and_older_states_moved_back_are_refused() {
    let dir = scratch("race");
    let path = dir.join("key.hss");
    let mut key = StatefulKey::create(&path, &[LEVEL, LEVEL], dir.ledger(), 1).expect("create");
    let pk = key.public_key();
    for i in 0..3u8 {
        key.sign(&[i]).expect("sign");
    }
    let old = std::fs::read(&path).expect("the state after 3 signatures");
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (links, temporaries) = std::thread::scope(|s| {
        let grabber = s.spawn(|| {
            let (mut links, mut temporaries) = (0, 0);
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                temporaries += std::fs::read_dir(&*dir).map_or(0, |entries| {
                    entries
                        .filter_map(Result::ok)
                        .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
                        .count()
                });
                let grab = dir.join(format!("grab-{links}"));
                if std::fs::hard_link(&path, &grab).is_ok() {
                    links += 1;
                    std::thread::sleep(std::time::Duration::from_micros(300));
                    let _ = std::fs::remove_file(&grab);
                }
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
            (links, temporaries)
        });
        let (mut signed, mut refused) = (0u32, 0u32);
        while signed < 300 {
            match key.sign(&signed.to_be_bytes()) {
                Ok(sig) => {
                    assert_eq!(pk.verify(&signed.to_be_bytes(), &sig), Ok(()));
                    signed += 1;
                }
                Err(StateError::HardLinked { links: 2, .. }) => refused += 1,
                Err(e) => panic!("unexpected: {e}"),
            }
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let (links, temporaries) = grabber.join().expect("grabber");
        assert!(
            refused > 0,
            "no reservation met one of the {links} hard links"
        );
        (links, temporaries)
    });
    assert!(links > 0);
    assert_eq!(temporaries, 0, "a reservation wrote a temporary file");
    drop(key);
    let live = std::fs::read(&path).expect("state");
    // `cp bak k.hss` onto the live file: the same inode, now holding the older counter.
    std::fs::write(&path, &old).expect("restore in place");
    match StatefulKey::open(&path, dir.ledger(), 1) {
        Err(StateError::BehindLedger {
            next: 3,
            high_water,
            ..
        }) => assert!(high_water >= 303, "{high_water}"),
        other => panic!("an older state in the live file: expected BehindLedger, got {other:?}"),
    }
    // The older state in a new file moved over it: not where the key was recorded.
    let aside = dir.join("old-copy");
    std::fs::write(&aside, &old).expect("copy");
    std::fs::rename(&aside, &path).expect("mv");
    assert!(matches!(
        StatefulKey::open(&path, dir.ledger(), 1),
        Err(StateError::NotWhereRecorded { .. })
    ));
    // The live state back where it was: it signs on.
    std::fs::write(&path, &live).expect("restore");
    StatefulKey::adopt(&path, dir.ledger(), AdoptTo::Skip(0), false, 1)
        .expect("adopt the new inode");
    let mut key = StatefulKey::open(&path, dir.ledger(), 1).expect("open");
    let q = pk
        .counter(&key.sign(b"after").expect("sign"))
        .expect("counter");
    assert!(q >= 303, "{q}");
}

/// A version-2 state file (pqkit before ledgers) of a fresh version-3 one (counter 0):
/// key ‖ location ‖ u64 next ‖ SHA-256, without the binding and the counter slots (HSS with
/// `levels` levels of `LEVEL`).
fn as_version_2(v3: &[u8], levels: usize) -> Vec<u8> {
    use sha2::Digest;
    let key_end = 12 + 1 + 8 * levels + 16 + 32;
    let public_len = usize::from(u16::from_be_bytes([v3[key_end], v3[key_end + 1]]));
    let binding_end = key_end + 2 + public_len + 8 + 8 + 16 + 1;
    let mut out = v3[..key_end].to_vec();
    out[10] = 2;
    out.extend_from_slice(&v3[binding_end..v3.len() - 32 - 2 * 48]);
    out.extend_from_slice(&0u64.to_be_bytes());
    let digest = sha2::Sha256::digest(&out);
    out.extend_from_slice(&digest);
    out
}

#[test]
fn an_older_copy_from_before_ledgers_is_refused() {
    let dir = scratch("v2");
    let path = dir.join("key.hss");
    let mut key = StatefulKey::create(&path, &[LEVEL], dir.ledger(), 1).expect("create");
    let old = as_version_2(&std::fs::read(&path).expect("state"), 1);
    for i in 0..3u8 {
        key.sign(&[i]).expect("sign");
    }
    drop(key);
    // The old copy restored in place of the live state.
    std::fs::remove_file(&path).expect("rm");
    std::fs::write(&path, &old).expect("restore");
    assert!(matches!(
        StatefulKey::open(&path, dir.ledger(), 1),
        Err(StateError::Unregistered { next: 0, .. })
    ));
    // Adopting it where the ledger knows the key has handed out 3: refused without a skip past.
    match StatefulKey::adopt(&path, dir.ledger(), AdoptTo::Skip(0), false, 1) {
        Err(StateError::BehindLedger {
            next: 0,
            high_water: 3,
            ..
        }) => {}
        other => panic!("expected BehindLedger, got {other:?}"),
    }
    assert!(matches!(
        StatefulKey::adopt(&path, dir.ledger(), AdoptTo::At(2), false, 1),
        Err(StateError::BehindLedger { .. })
    ));
    let adopted = StatefulKey::adopt(&path, dir.ledger(), AdoptTo::At(3), false, 1)
        .expect("adopt at the mark");
    assert_eq!((adopted.next_before, adopted.next), (0, 3));
    let mut key = StatefulKey::open(&path, dir.ledger(), 1).expect("open");
    let pk = key.public_key();
    let sig = key.sign(b"after").expect("sign");
    assert_eq!(pk.counter(&sig), Ok(3));
    // Never backwards.
    drop(key);
    assert!(matches!(
        StatefulKey::adopt(&path, dir.ledger(), AdoptTo::At(1), false, 1),
        Err(StateError::Backwards { .. })
    ));
}

#[test]
fn a_lost_or_another_ledger_is_named_and_adopt_binds_to_the_new_one() {
    let dir = scratch("lost");
    let path = dir.join("key.hss");
    let mut key = StatefulKey::create(&path, &[LEVEL], dir.ledger(), 1).expect("create");
    key.sign(b"one").expect("sign");
    drop(key);
    let other = Ledger::sqlite(&dir.1.join("other.sqlite3")).expect("other ledger");
    let other_id = other.id();
    match StatefulKey::open(&path, other, 1) {
        Err(StateError::OtherLedger { bound, given, .. }) => {
            assert_eq!(bound, dir.ledger().id());
            assert_eq!(given, other_id);
        }
        r => panic!("expected OtherLedger, got {r:?}"),
    }
    // The ledger lost: a new one at the same path has a new id.
    for f in std::fs::read_dir(&dir.1)
        .expect("dir")
        .filter_map(Result::ok)
    {
        std::fs::remove_file(f.path()).expect("rm ledger");
    }
    let err = StatefulKey::open(&path, dir.ledger(), 1).expect_err("a lost ledger");
    assert!(matches!(err, StateError::OtherLedger { .. }), "{err}");
    assert!(err.to_string().contains("hbs adopt"), "{err}");
    // Rebinding is refused unless the old ledger is declared lost: a copy still recorded
    // there could sign the same one-time keys.
    let err = StatefulKey::adopt(&path, dir.ledger(), AdoptTo::Skip(0), false, 1)
        .expect_err("a rebinding not asked for");
    assert!(matches!(err, StateError::LedgerChange { .. }), "{err}");
    assert!(err.to_string().contains("--ledger-lost"), "{err}");
    let adopted =
        StatefulKey::adopt(&path, dir.ledger(), AdoptTo::Skip(0), true, 1).expect("adopt here");
    assert_eq!(adopted.high_water_before, None);
    assert!(adopted.was.iter().any(|w| w.contains("ledger")));
    let mut key = StatefulKey::open(&path, dir.ledger(), 1).expect("open");
    assert_eq!(
        key.public_key().counter(&key.sign(b"two").expect("sign")),
        Ok(1)
    );
}

#[test]
fn leftover_temporaries_are_zeroed_and_removed_under_the_lock() {
    let dir = scratch("leftovers");
    let path = dir.join("key.hss");
    drop(StatefulKey::create(&path, &[LEVEL], dir.ledger(), 1).expect("create"));
    let leftover = dir.join("key.hss.tmp-4242");
    std::fs::copy(&path, &leftover).expect("a leftover");
    let keep = dir.join("kept-by-someone");
    std::fs::hard_link(&leftover, &keep).expect("ln");
    let unrelated = dir.join("key.hssx.tmp-1");
    std::fs::write(&unrelated, b"not ours").expect("write");
    assert_eq!(pqkit_hbs::state::leftovers(&path), vec![leftover.clone()]);
    drop(StatefulKey::open(&path, dir.ledger(), 1).expect("open"));
    assert!(!leftover.exists(), "the leftover is removed");
    let kept = std::fs::read(&keep).expect("the other name");
    assert!(kept.iter().all(|&b| b == 0), "and its secrets overwritten");
    assert!(
        unrelated.exists(),
        "another file's temporaries are left alone"
    );
}

#[test]
fn key_generation_leaves_all_or_nothing() {
    let dir = scratch("keygen");
    let path = dir.join("sub").join("key.hss");
    // The state file cannot be written (no directory): no ledger record either.
    let new = NewKey::hss(&path, &[LEVEL], 1);
    let new = match new {
        Ok(n) => n,
        // The lock file cannot be made there either: nothing at all.
        Err(StateError::Io(..)) => {
            std::fs::create_dir_all(dir.join("sub")).expect("mkdir");
            let n = NewKey::hss(&path, &[LEVEL], 1).expect("generate");
            let pk = n.public_key().to_bytes();
            std::fs::remove_dir_all(dir.join("sub")).expect("rm dir");
            match n.commit(dir.ledger()) {
                Err(StateError::Io(..)) => {}
                other => panic!("expected an I/O error, got {other:?}"),
            }
            let record = RecordId::new(&pk, 0, 32);
            assert_eq!(dir.ledger().high_water(&record).expect("read"), None);
            std::fs::create_dir_all(dir.join("sub")).expect("mkdir");
            NewKey::hss(&path, &[LEVEL], 1).expect("generate")
        }
        Err(e) => panic!("{e}"),
    };
    let pk = new.public_key().to_bytes();
    let key = new.commit(dir.ledger()).expect("commit");
    let record = RecordId::new(&pk, 0, 32);
    assert_eq!(dir.ledger().high_water(&record).expect("read"), Some(0));
    // Discarded before it signed: state, cache and record go.
    key.discard().expect("discard");
    assert!(!path.exists());
    assert_eq!(dir.ledger().high_water(&record).expect("read"), None);
    // A key that signed is not discarded.
    let mut key = StatefulKey::create(&path, &[LEVEL], dir.ledger(), 1).expect("create");
    key.sign(b"m").expect("sign");
    assert!(matches!(key.discard(), Err(StateError::InUse(_))));
    assert!(path.exists());
}

/// Sectors: the key's state file spends what is left and signs no more; each sector is
/// released — it signs nowhere until adopted, at one site, into that site's ledger — and the
/// ledger of the machine that split the key records it as spent, so it cannot be adopted back
/// there. Signatures from every sector verify under the one public key, ranges disjoint.
#[test]
fn sectors_sign_disjoint_ranges_under_one_public_key() {
    let dir = scratch("sectors");
    for (name, xmss) in [("key.hss", false), ("key.xmssmt", true)] {
        let path = dir.join(name);
        let mut key = if xmss {
            let p = pqkit_hbs::xmss::by_name("XMSSMT-SHA2_20/4_256").expect("set");
            StatefulKey::create_xmss(&path, p, dir.ledger(), 2).expect("create")
        } else {
            StatefulKey::create(&path, &[LEVEL, LEVEL], dir.ledger(), 1).expect("create")
        };
        let pk = key.public_key();
        let first = key.sign(b"before").expect("sign");
        let outputs: Vec<PathBuf> = (1..=3).map(|i| dir.join(format!("{name}.s{i}"))).collect();
        let ranges = key.split(&outputs).expect("split");
        assert_eq!(ranges.len(), 3);
        assert_eq!(ranges[0].start, 1);
        assert_eq!(ranges[2].end, key.range().end);
        for w in ranges.windows(2) {
            assert_eq!(w[0].end, w[1].start, "{ranges:?}");
        }
        assert!(
            matches!(
                key.sign(b"after"),
                Err(StateError::Hbs(pqkit_hbs::Error::Exhausted))
            ),
            "the split key signs no more"
        );
        drop(key);
        // A copy of sector 1 before it is adopted anywhere.
        let copy = dir.join(format!("{name}.copy"));
        std::fs::copy(&outputs[0], &copy).expect("cp");
        let mut seen = vec![pk.counter(&first).expect("counter")];
        for (i, (out, range)) in outputs.iter().zip(&ranges).enumerate() {
            assert!(matches!(
                StatefulKey::open(out, dir.ledger(), 1),
                Err(StateError::Unadopted { .. })
            ));
            // Not back into the ledger that released it: spent there.
            assert!(matches!(
                StatefulKey::adopt(out, dir.ledger(), AdoptTo::Skip(0), false, 1),
                Err(StateError::BehindLedger { .. })
            ));
            let site =
                || Ledger::sqlite(&dir.1.join(format!("{name}-site{i}.sqlite3"))).expect("ledger");
            StatefulKey::adopt(out, site(), AdoptTo::Skip(0), false, 1).expect("adopt at a site");
            let mut sector = StatefulKey::open(out, site(), 2).expect("open sector");
            assert_eq!(sector.public_key(), pk);
            assert_eq!(sector.range(), range.clone());
            for j in 0..3u8 {
                let sig = sector.sign(&[j]).expect("sign");
                assert_eq!(pk.verify(&[j], &sig), Ok(()));
                let q = pk.counter(&sig).expect("counter");
                assert!(range.contains(&q), "{q} outside {range:?}");
                seen.push(q);
            }
        }
        let mut unique = seen.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), seen.len(), "a counter value was used twice");
        // The copy, adopted at the site that signs with sector 1 once that file is gone: behind
        // the site's record.
        std::fs::remove_file(&outputs[0]).expect("rm");
        let site0 = Ledger::sqlite(&dir.1.join(format!("{name}-site0.sqlite3"))).expect("ledger");
        assert!(matches!(
            StatefulKey::adopt(&copy, site0, AdoptTo::Skip(0), false, 1),
            Err(StateError::BehindLedger { .. })
        ));
    }
}

/// Makes `path` immutable (root: `chattr +i`) until dropped.
struct Immutable(PathBuf);

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = std::process::Command::new("chattr")
            .arg("-i")
            .arg(&self.0)
            .status();
    }
}

#[test]
fn a_ledger_that_cannot_be_written_stops_signing() {
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0"));
    if !root {
        eprintln!("not root: chattr cannot make the ledger read-only here; test skipped");
        return;
    }
    let dir = scratch("ledger-ro");
    let path = dir.join("key.hss");
    let mut key = StatefulKey::create(&path, &[LEVEL], dir.ledger(), 1).expect("create");
    key.sign(b"one").expect("sign");
    let _guard = Immutable(dir.ledger_path());
    let wal = {
        let mut p = dir.ledger_path().into_os_string();
        p.push("-wal");
        PathBuf::from(p)
    };
    let _wal = Immutable(wal.clone());
    for f in [dir.ledger_path(), wal] {
        assert!(
            std::process::Command::new("chattr")
                .arg("+i")
                .arg(&f)
                .status()
                .is_ok_and(|s| s.success()),
            "chattr +i {}",
            f.display()
        );
    }
    match key.sign(b"two") {
        Err(StateError::Ledger(_)) => {}
        other => panic!("expected a ledger error and no signature, got {other:?}"),
    }
}

/// Batches reserved ahead on the key's worker thread: signatures from consecutive batches,
/// never a value twice across a drop and a reopen, at most three batches skipped, and the
/// ledger ahead of every signature.
#[test]
fn reserving_ahead_never_repeats_a_value() {
    let dir = scratch("ahead");
    let path = dir.join("key.hss");
    let mut key = StatefulKey::create(&path, &[LEVEL, LEVEL], dir.ledger(), 1).expect("create");
    let pk = key.public_key();
    let mut seen = Vec::new();
    for round in 0..3u8 {
        key.set_batch(8);
        key.set_ahead(true);
        for i in 0..21u8 {
            let sig = key.sign(&[round, i]).expect("sign");
            assert_eq!(pk.verify(&[round, i], &sig), Ok(()));
            let q = pk.counter(&sig).expect("counter");
            let record = RecordId::new(&pk.to_bytes(), 0, 1024);
            let mark = dir.ledger().high_water(&record).expect("mark");
            assert!(
                mark.is_some_and(|m| m > q),
                "value {q} signed beyond the mark {mark:?}"
            );
            seen.push(q);
        }
        let used = key.status().used;
        let last = *seen.last().expect("signed");
        assert!(
            used > last && used <= last + 1 + 3 * 8,
            "used {used} after {last}"
        );
        drop(key);
        key = StatefulKey::open(&path, dir.ledger(), 1).expect("reopen");
    }
    let mut unique = seen.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), seen.len(), "{seen:?}");
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
}
