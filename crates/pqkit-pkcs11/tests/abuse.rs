//! The C interface under hostile callers: null, misaligned and oversized arguments, stale
//! handles — each an error code, never a crash — and a stateful key's signer killed with
//! SIGKILL at random moments, after which no one-time key has been used twice.

#![allow(clippy::unwrap_used, missing_docs, unsafe_code)]

mod common;

use common::*;
use cryptoki_sys::*;

/// The module's 3.2 function list, through C_GetInterface.
fn functions() -> &'static CK_FUNCTION_LIST_3_2 {
    fixture();
    // SAFETY: loading the module under test.
    let lib = Box::leak(Box::new(
        unsafe { libloading::Library::new(module_path()) }.unwrap(),
    ));
    let mut iface: *mut CK_INTERFACE = std::ptr::null_mut();
    // SAFETY: the exported C_GetInterface; out pointer valid.
    unsafe {
        let get: libloading::Symbol<
            '_,
            unsafe extern "C" fn(
                *mut u8,
                *mut CK_VERSION,
                *mut *mut CK_INTERFACE,
                CK_FLAGS,
            ) -> CK_RV,
        > = lib.get(b"C_GetInterface\0").unwrap();
        assert_eq!(
            get(
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &raw mut iface,
                0
            ),
            CKR_OK
        );
        // Null out pointer, unknown name, unknown version.
        assert_eq!(
            get(
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                0
            ),
            CKR_ARGUMENTS_BAD
        );
        assert_eq!(
            get(
                c"PKCS 12".as_ptr().cast_mut().cast(),
                std::ptr::null_mut(),
                &raw mut iface,
                0
            ),
            CKR_ARGUMENTS_BAD
        );
        let mut v = CK_VERSION { major: 9, minor: 9 };
        let mut other: *mut CK_INTERFACE = std::ptr::null_mut();
        assert_eq!(
            get(std::ptr::null_mut(), &raw mut v, &raw mut other, 0),
            CKR_ARGUMENTS_BAD
        );
        &*((*iface).pFunctionList as *const CK_FUNCTION_LIST_3_2)
    }
}

#[test]
fn bad_pointers_lengths_and_handles_are_errors() {
    let f = functions();
    assert_eq!((f.version.major, f.version.minor), (3, 2));
    // SAFETY: every call below passes arguments the module must reject without reading them.
    unsafe {
        assert_eq!(
            f.C_GetInfo.unwrap()(std::ptr::null_mut()),
            CKR_ARGUMENTS_BAD
        );
        assert_eq!(
            f.C_GetSlotList.unwrap()(CK_TRUE, std::ptr::null_mut(), std::ptr::null_mut()),
            CKR_ARGUMENTS_BAD
        );
        let mut count: CK_ULONG = 0;
        assert_eq!(
            f.C_GetSlotList.unwrap()(CK_TRUE, std::ptr::null_mut(), &raw mut count),
            CKR_OK
        );
        assert!(count >= 2);
        // A buffer that is too small is reported, not overrun.
        let mut one = [0 as CK_SLOT_ID; 1];
        let mut n: CK_ULONG = 1;
        assert_eq!(
            f.C_GetSlotList.unwrap()(CK_TRUE, one.as_mut_ptr(), &raw mut n),
            CKR_BUFFER_TOO_SMALL
        );
        assert_eq!(n, count);
        assert_eq!(
            f.C_GetTokenInfo.unwrap()(9999, std::ptr::null_mut()),
            CKR_SLOT_ID_INVALID
        );
        let mut info: CK_TOKEN_INFO = std::mem::zeroed();
        assert_eq!(
            f.C_GetTokenInfo.unwrap()(9999, &raw mut info),
            CKR_SLOT_ID_INVALID
        );
        // Misaligned out pointer.
        let mut bytes = [0u64; 4];
        let misaligned = (bytes.as_mut_ptr() as *mut u8).add(1) as *mut CK_ULONG;
        assert_eq!(
            f.C_GetSlotList.unwrap()(CK_TRUE, std::ptr::null_mut(), misaligned),
            CKR_ARGUMENTS_BAD
        );
        // Sessions: a stale handle, then a real one with bad arguments.
        assert_eq!(
            f.C_CloseSession.unwrap()(0xdead_beef),
            CKR_SESSION_HANDLE_INVALID
        );
        let mut session: CK_SESSION_HANDLE = 0;
        assert_eq!(
            f.C_OpenSession.unwrap()(
                0,
                CKF_SERIAL_SESSION | CKF_RW_SESSION,
                std::ptr::null_mut(),
                None,
                std::ptr::null_mut()
            ),
            CKR_ARGUMENTS_BAD
        );
        assert_eq!(
            f.C_OpenSession.unwrap()(
                0,
                CKF_RW_SESSION,
                std::ptr::null_mut(),
                None,
                &raw mut session
            ),
            CKR_SESSION_PARALLEL_NOT_SUPPORTED
        );
        assert_eq!(
            f.C_OpenSession.unwrap()(
                0,
                CKF_SERIAL_SESSION | CKF_RW_SESSION,
                std::ptr::null_mut(),
                None,
                &raw mut session
            ),
            CKR_OK
        );
        assert_eq!(
            f.C_Login.unwrap()(session, CKU_USER, std::ptr::null_mut(), 4),
            CKR_ARGUMENTS_BAD
        );
        assert_eq!(
            f.C_Login.unwrap()(session, 77, b"1234".as_ptr().cast_mut(), 4),
            CKR_USER_TYPE_INVALID
        );
        assert_eq!(
            f.C_FindObjectsInit.unwrap()(session, std::ptr::null_mut(), 3),
            CKR_ARGUMENTS_BAD
        );
        assert_eq!(
            f.C_FindObjectsInit.unwrap()(session, std::ptr::null_mut(), CK_ULONG::MAX),
            CKR_ARGUMENTS_BAD
        );
        assert_eq!(
            f.C_FindObjects.unwrap()(session, std::ptr::null_mut(), 5, &raw mut count),
            CKR_OPERATION_NOT_INITIALIZED.min(CKR_ARGUMENTS_BAD)
        );
        assert_eq!(
            f.C_GetAttributeValue.unwrap()(session, 0xffff_ffff, std::ptr::null_mut(), 0),
            CKR_OBJECT_HANDLE_INVALID
        );
        assert_eq!(
            f.C_GetAttributeValue.unwrap()(session, 1, std::ptr::null_mut(), 2),
            CKR_ARGUMENTS_BAD
        );
        let mut m = CK_MECHANISM {
            mechanism: CKM_ML_DSA,
            pParameter: std::ptr::null_mut(),
            ulParameterLen: 0,
        };
        assert_eq!(
            f.C_SignInit.unwrap()(session, std::ptr::null_mut(), 1),
            CKR_ARGUMENTS_BAD
        );
        assert_eq!(
            f.C_SignInit.unwrap()(session, &raw mut m, 0xffff_ffff),
            CKR_KEY_HANDLE_INVALID
        );
        // A parameter of the wrong size, and a context over 255 bytes.
        let mut junk = [0u8; 3];
        let mut bad = CK_MECHANISM {
            mechanism: CKM_ML_DSA,
            pParameter: junk.as_mut_ptr().cast(),
            ulParameterLen: 3,
        };
        assert_eq!(
            f.C_SignInit.unwrap()(session, &raw mut bad, 1),
            CKR_MECHANISM_PARAM_INVALID
        );
        let mut ctx = CK_SIGN_ADDITIONAL_CONTEXT {
            hedgeVariant: CKH_HEDGE_PREFERRED,
            pContext: junk.as_mut_ptr(),
            ulContextLen: 300,
        };
        let mut long = CK_MECHANISM {
            mechanism: CKM_ML_DSA,
            pParameter: (&raw mut ctx).cast(),
            ulParameterLen: size_of::<CK_SIGN_ADDITIONAL_CONTEXT>() as CK_ULONG,
        };
        assert_eq!(
            f.C_SignInit.unwrap()(session, &raw mut long, 1),
            CKR_MECHANISM_PARAM_INVALID
        );
        let mut unknown = CK_MECHANISM {
            mechanism: 0x7777_7777,
            pParameter: std::ptr::null_mut(),
            ulParameterLen: 0,
        };
        assert_eq!(
            f.C_SignInit.unwrap()(session, &raw mut unknown, 1),
            CKR_MECHANISM_INVALID
        );
        let mut sig_len: CK_ULONG = 0;
        assert_eq!(
            f.C_Sign.unwrap()(
                session,
                b"x".as_ptr().cast_mut(),
                1,
                std::ptr::null_mut(),
                &raw mut sig_len
            ),
            CKR_OPERATION_NOT_INITIALIZED
        );
        assert_eq!(
            f.C_Sign.unwrap()(
                session,
                std::ptr::null_mut(),
                10,
                std::ptr::null_mut(),
                &raw mut sig_len
            ),
            CKR_ARGUMENTS_BAD
        );
        assert_eq!(
            f.C_GenerateRandom.unwrap()(session, std::ptr::null_mut(), 16),
            CKR_ARGUMENTS_BAD
        );
        assert_eq!(
            f.C_EncapsulateKey.unwrap()(
                session,
                std::ptr::null_mut(),
                1,
                std::ptr::null_mut(),
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut()
            ),
            CKR_ARGUMENTS_BAD
        );
        // Functions the token does not offer answer so.
        assert_eq!(
            f.C_DigestInit.unwrap()(session, &raw mut m),
            CKR_FUNCTION_NOT_SUPPORTED
        );
        assert_eq!(f.C_CloseSession.unwrap()(session), CKR_OK);
        assert_eq!(
            f.C_CloseSession.unwrap()(session),
            CKR_SESSION_HANDLE_INVALID
        );
    }
}

/// The child of the SIGKILL test: signs with the token's HSS key "hss-kill" forever, printing
/// each signature as a hex line once it is complete.
#[test]
#[ignore = "run by stateful_key_survives_sigkill"]
fn kill_child() {
    let Ok(label) = std::env::var("PQKIT_KILL_CHILD") else {
        return;
    };
    let t = token();
    let s = t.user_session();
    let key = find_private(&s, &label);
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let count: u64 = std::env::var("PQKIT_KILL_CHILD_COUNT")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(u64::MAX);
    let base: u64 = std::env::var("PQKIT_KILL_CHILD_BASE")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    // The test harness has printed "test kill_child ... " without a newline: end its line.
    writeln!(out).unwrap();
    for i in 0..count {
        let msg = (base + i).to_be_bytes();
        match sign_hss(&t, key, &msg) {
            Ok(sig) => {
                writeln!(out, "{} {}", hex::encode(msg), hex::encode(sig)).unwrap();
                out.flush().unwrap();
            }
            Err(rv) => panic!("sign: {rv:#x}"),
        }
    }
}

/// This test binary again, running only `kill_child` on key `label` with `env`: signatures
/// on its stdout.
fn signer_child(label: &str, env: &[(&str, String)]) -> std::process::Child {
    let conf = std::env::var("PQKIT_PKCS11_CONF").unwrap();
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        "kill_child",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("PQKIT_KILL_CHILD", label)
    .env("PQKIT_P11_TEST_PARENT_CONF", conf)
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.spawn().unwrap()
}

#[test]
fn stateful_key_survives_sigkill() {
    use std::io::Read;
    let t = token();
    let s = t.user_session();
    let (public, _) = generate_hss(&t, &[10, 5], 4, "hss-kill");
    let pk = hss_public(&s, public);
    drop(s);
    let mut lines = Vec::new();
    let start = std::time::Instant::now();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let kills = 120;
    for _ in 0..kills {
        let mut child = signer_child("hss-kill", &[]);
        // xorshift: a kill 40–300 ms after start, somewhere in login, key lookup or a signature.
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        std::thread::sleep(std::time::Duration::from_millis(40 + seed % 260));
        child.kill().unwrap();
        child.wait().unwrap();
        let mut text = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        // A line cut by the kill has no newline: only complete lines count.
        let complete = text.rfind('\n').map_or("", |i| &text[..i]);
        lines.extend(
            complete
                .lines()
                .filter(|l| {
                    l.split_once(' ')
                        .is_some_and(|(m, _)| m.len() == 16 && hex::decode(m).is_ok())
                })
                .map(str::to_owned),
        );
        assert!(
            start.elapsed() < std::time::Duration::from_secs(240),
            "the kill loop is too slow"
        );
    }
    assert!(
        lines.len() >= kills / 2,
        "only {} signatures in {kills} runs",
        lines.len()
    );
    let mut seen = std::collections::BTreeSet::new();
    for line in &lines {
        let (msg, sig) = line.split_once(' ').unwrap();
        let (msg, sig) = (hex::decode(msg).unwrap(), hex::decode(sig).unwrap());
        pk.verify(&msg, &sig).unwrap();
        assert!(
            seen.insert(pk.counter(&sig).unwrap()),
            "one-time key {} used twice",
            pk.counter(&sig).unwrap()
        );
    }
    eprintln!(
        "{} signatures over {kills} SIGKILLs in {:?}, no index reused",
        seen.len(),
        start.elapsed()
    );
    // Reproducer 2 through the token: a C_Sign reservation rewrites the state file's counter
    // in place, so no kill leaves a temporary state file to be moved over the key's.
    let hbs = fixture().dir.join("main").join("hbs");
    let leftovers: Vec<_> = std::fs::read_dir(&hbs)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".state.tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "temporary state files: {leftovers:?}");
}

fn state_files(hbs: &std::path::Path) -> std::collections::BTreeSet<std::path::PathBuf> {
    std::fs::read_dir(hbs)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "state"))
        .collect()
}

/// Reproducer 3 and its neighbours through the token: a hard link to a stateful key's state
/// file, an older state written back into it (`cp`, same inode), the state in a new file, a
/// damaged file and a missing one each refuse C_Sign with a return value of their own, each
/// with its own message; the key signs again once its file is back.
#[test]
fn each_state_refusal_has_its_own_return_value() {
    use pqkit_pkcs11::mech::{self, state_refusal};
    let t = token();
    // A logged-in session held for the test: the raw calls below are in it.
    let s = t.user_session();
    let hbs = fixture().dir.join("main").join("hbs");
    let (public, private) = generate_hss(&t, &[5], 4, "hss-refusals");
    // The file that holds this key's public key: the other tests make keys at the same time.
    let pk = hss_public(&s, public).to_bytes();
    let path = state_files(&hbs)
        .into_iter()
        .find(|p| std::fs::read(p).is_ok_and(|b| b.windows(pk.len()).any(|w| w == pk.as_slice())))
        .expect("the new key's state file");
    sign_hss(&t, private, b"one").unwrap();
    let old = std::fs::read(&path).unwrap();
    for _ in 0..3 {
        sign_hss(&t, private, b"more").unwrap();
    }
    let live = std::fs::read(&path).unwrap();
    let mut seen = Vec::new();
    let mut refused = |what: &str, rv: u64| {
        assert_eq!(sign_hss(&t, private, b"evil"), Err(rv), "{what}");
        seen.push(rv);
    };
    // A hard link raced against the key: refused while the second name exists.
    let link = path.with_extension("grab");
    std::fs::hard_link(&path, &link).unwrap();
    refused("a hard link", mech::CKR_PQKIT_STATE_LINKED);
    std::fs::remove_file(&link).unwrap();
    // The older state written back into the live file: same inode, path and creation time.
    std::fs::write(&path, &old).unwrap();
    refused("an older state", mech::CKR_PQKIT_STATE_ROLLED_BACK);
    // The live state in a new file: not where the key was recorded.
    std::fs::remove_file(&path).unwrap();
    std::fs::write(&path, &live).unwrap();
    refused("a new file", mech::CKR_PQKIT_STATE_MOVED);
    // Damaged, then missing.
    let mut damaged = live.clone();
    damaged[20] ^= 1;
    std::fs::write(&path, &damaged).unwrap();
    refused("a damaged file", mech::CKR_PQKIT_STATE_DAMAGED);
    std::fs::remove_file(&path).unwrap();
    refused("a missing file", mech::CKR_PQKIT_STATE_MISSING);
    let messages: std::collections::BTreeSet<&str> = seen
        .iter()
        .map(|rv| state_refusal(*rv).expect("a message"))
        .collect();
    assert_eq!(messages.len(), seen.len(), "one message per refusal");
}

/// Two processes sign with one stateful key at the same time, 100 signatures each: every
/// signature verifies and no index is used twice (the state file's lock and reservation hold
/// across processes).
#[test]
fn two_processes_share_a_stateful_key_without_reusing_an_index() {
    let t = token();
    let s = t.user_session();
    let (public, _) = generate_hss(&t, &[10, 5], 4, "hss-two");
    let pk = hss_public(&s, public);
    drop(s);
    let children: Vec<_> = (0..2u64)
        .map(|c| {
            signer_child(
                "hss-two",
                &[
                    ("PQKIT_KILL_CHILD_COUNT", "100".to_owned()),
                    ("PQKIT_KILL_CHILD_BASE", (c << 32).to_string()),
                ],
            )
        })
        .collect();
    let mut seen = std::collections::BTreeSet::new();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        let lines: Vec<_> = text
            .lines()
            .filter_map(|l| l.split_once(' '))
            .filter(|(m, _)| m.len() == 16 && hex::decode(m).is_ok())
            .collect();
        assert_eq!(lines.len(), 100);
        for (msg, sig) in lines {
            let (msg, sig) = (hex::decode(msg).unwrap(), hex::decode(sig).unwrap());
            pk.verify(&msg, &sig).unwrap();
            assert!(
                seen.insert(pk.counter(&sig).unwrap()),
                "an index was used twice"
            );
        }
    }
    assert_eq!(seen.len(), 200);
}
