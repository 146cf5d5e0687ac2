//! The C interface (OASIS PKCS#11 3.2 §5): the only place with `unsafe`.
//!
//! Every function runs inside [`guard`]: a panic never unwinds into the caller
//! (CKR_GENERAL_ERROR instead). Nothing the caller hands over is trusted: a null, misaligned or
//! absurdly long pointer argument is CKR_ARGUMENTS_BAD before it is read, handles are looked up
//! (CKR_*_HANDLE_INVALID), and each pointer is read once, into owned Rust values, before the
//! work starts. What cannot be checked — that a non-null pointer really points to as many
//! bytes as its length says — is the caller's contract, as in every C API.

// CK_ULONG is C `unsigned long`: as wide as a pointer on the LP64 targets this module builds for,
// so its casts to usize do not truncate.
#![allow(
    non_snake_case,
    unsafe_code,
    clippy::cast_possible_truncation,
    clippy::collapsible_match
)]

use core::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};

use cryptoki_sys::*;

use crate::call::{Call, Reply};
use crate::mech::{self, SignOp};
use crate::remote::execute;
use crate::store::Attributes;
use crate::token::{self, Hedge, Result, SignParams};

#[rustfmt::skip]
mod lists;

/// Longest byte string accepted from a caller, in bytes (a message to sign may be large).
const MAX_BYTES: CK_ULONG = 1 << 31;
/// Most attributes accepted in one template.
const MAX_ATTRIBUTES: CK_ULONG = 1024;

fn guard(f: impl FnOnce() -> Result<()>) -> CK_RV {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => CKR_OK,
        Ok(Err(rv)) => rv,
        Err(_) => CKR_GENERAL_ERROR,
    }
}

/// `len` bytes at `p`; null is allowed only for an empty string.
///
/// # Safety
/// A non-null `p` must point to `len` readable bytes that outlive `'a`.
unsafe fn bytes<'a>(p: *const u8, len: CK_ULONG) -> Result<&'a [u8]> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() || len > MAX_BYTES {
        return Err(CKR_ARGUMENTS_BAD);
    }
    let len = usize::try_from(len).map_err(|_| CKR_ARGUMENTS_BAD)?;
    // SAFETY: non-null, and the caller promises `len` readable bytes.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// A writable `T`, or CKR_ARGUMENTS_BAD for a null or misaligned pointer.
///
/// # Safety
/// A non-null, aligned `p` must point to a writable `T`.
unsafe fn out<'a, T>(p: *mut T) -> Result<&'a mut T> {
    if p.is_null() || !p.is_aligned() {
        return Err(CKR_ARGUMENTS_BAD);
    }
    // SAFETY: checked non-null and aligned; the caller promises a writable T.
    Ok(unsafe { &mut *p })
}

/// A readable `T`, or CKR_ARGUMENTS_BAD.
///
/// # Safety
/// As [`out`], readable.
unsafe fn input<'a, T>(p: *const T) -> Result<&'a T> {
    if p.is_null() || !p.is_aligned() {
        return Err(CKR_ARGUMENTS_BAD);
    }
    // SAFETY: checked non-null and aligned; the caller promises a readable T.
    Ok(unsafe { &*p })
}

/// The caller's template as attributes (values copied).
///
/// # Safety
/// A non-null `p` must point to `n` CK_ATTRIBUTEs whose values are readable.
unsafe fn template(p: *const CK_ATTRIBUTE, n: CK_ULONG) -> Result<Attributes> {
    if n == 0 {
        return Ok(Attributes::new());
    }
    if p.is_null() || !p.is_aligned() || n > MAX_ATTRIBUTES {
        return Err(CKR_ARGUMENTS_BAD);
    }
    // SAFETY: non-null, aligned, and the caller promises n attributes.
    let attrs = unsafe { std::slice::from_raw_parts(p, n as usize) };
    let mut out = Attributes::new();
    for a in attrs {
        // SAFETY: each value is readable for its length (the caller's contract).
        let value = unsafe { bytes(a.pValue.cast(), a.ulValueLen) }?;
        if out.insert(a.type_, value.to_vec()).is_some() {
            return Err(CKR_TEMPLATE_INCONSISTENT);
        }
    }
    Ok(out)
}

/// Writes `values` with the two-call convention (PKCS#11 3.2 §5.2): a null `p` asks for the
/// count; a short buffer is CKR_BUFFER_TOO_SMALL with the count written back. Bytes, lists of
/// CK_ULONG and interfaces alike.
///
/// # Safety
/// `count` as [`out`]; a non-null `p` must point to `*count` writable elements.
unsafe fn write_list<T: Copy>(values: &[T], p: *mut T, count: *mut CK_ULONG) -> Result<()> {
    // SAFETY: forwarded contract.
    let count = unsafe { out(count) }?;
    let needed = values.len() as CK_ULONG;
    if p.is_null() {
        *count = needed;
        return Ok(());
    }
    if !p.is_aligned() {
        return Err(CKR_ARGUMENTS_BAD);
    }
    if *count < needed {
        *count = needed;
        return Err(CKR_BUFFER_TOO_SMALL);
    }
    // SAFETY: p is aligned and has room for `needed` elements (checked against the caller's
    // count).
    unsafe { std::ptr::copy_nonoverlapping(values.as_ptr(), p, values.len()) };
    *count = needed;
    Ok(())
}

/// [`write_list`] of bytes.
///
/// # Safety
/// As [`write_list`].
unsafe fn write_bytes(value: &[u8], p: *mut u8, len: *mut CK_ULONG) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe { write_list(value, p, len) }
}

/// `s` in a blank-padded fixed field (PKCS#11 strings are not NUL-terminated).
fn padded<const N: usize>(s: &str) -> [u8; N] {
    let mut out = [b' '; N];
    let mut end = s.len().min(N);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    out[..end].copy_from_slice(&s.as_bytes()[..end]);
    out
}

const VERSION: CK_VERSION = CK_VERSION { major: 0, minor: 1 };
const CRYPTOKI: CK_VERSION = CK_VERSION { major: 3, minor: 2 };

/// The mechanism and its parameters (PKCS#11 3.2 §6.67.5: CK_SIGN_ADDITIONAL_CONTEXT for pure
/// ML-DSA / SLH-DSA and the hashing variants, CK_HASH_SIGN_ADDITIONAL_CONTEXT for
/// CKM_HASH_ML_DSA / CKM_HASH_SLH_DSA; no parameter for the others).
///
/// # Safety
/// As [`input`]; the parameter must be readable for its length.
unsafe fn mechanism(p: *const CK_MECHANISM) -> Result<(&'static mech::Mechanism, SignParams)> {
    // SAFETY: forwarded contract.
    let m = unsafe { input(p) }?;
    let found = mech::find(m.mechanism).ok_or(CKR_MECHANISM_INVALID)?;
    let mut params = SignParams::default();
    let has_param = !m.pParameter.is_null() && m.ulParameterLen != 0;
    let context = |ptr: *const u8, len: CK_ULONG| -> Result<Vec<u8>> {
        if len > 255 {
            return Err(CKR_MECHANISM_PARAM_INVALID);
        }
        // SAFETY: the caller's parameter says `len` bytes at ptr.
        Ok(unsafe { bytes(ptr, len) }
            .map_err(|_| CKR_MECHANISM_PARAM_INVALID)?
            .to_vec())
    };
    match found.sign {
        Some(SignOp::Digest) => {
            if !has_param
                || m.ulParameterLen as usize != size_of::<CK_HASH_SIGN_ADDITIONAL_CONTEXT>()
            {
                return Err(CKR_MECHANISM_PARAM_INVALID);
            }
            // SAFETY: non-null, its length is the structure's; alignment checked by `input`.
            let p = unsafe { input(m.pParameter as *const CK_HASH_SIGN_ADDITIONAL_CONTEXT) }
                .map_err(|_| CKR_MECHANISM_PARAM_INVALID)?;
            params.hedge = Hedge::from_ck(p.hedgeVariant)?;
            params.context = context(p.pContext, p.ulContextLen)?;
            params.hash = Some(mech::prehash_of(p.hash).ok_or(CKR_MECHANISM_PARAM_INVALID)?);
        }
        Some(SignOp::Message | SignOp::HashThen(_) | SignOp::Mu)
            if matches!(found.key_type, CKK_ML_DSA | CKK_SLH_DSA) =>
        {
            if has_param {
                if m.ulParameterLen as usize != size_of::<CK_SIGN_ADDITIONAL_CONTEXT>() {
                    return Err(CKR_MECHANISM_PARAM_INVALID);
                }
                // SAFETY: non-null, its length is the structure's; alignment checked.
                let p = unsafe { input(m.pParameter as *const CK_SIGN_ADDITIONAL_CONTEXT) }
                    .map_err(|_| CKR_MECHANISM_PARAM_INVALID)?;
                params.hedge = Hedge::from_ck(p.hedgeVariant)?;
                params.context = context(p.pContext, p.ulContextLen)?;
                if found.sign == Some(SignOp::Mu) && !params.context.is_empty() {
                    return Err(CKR_MECHANISM_PARAM_INVALID);
                }
            }
        }
        _ if has_param => return Err(CKR_MECHANISM_PARAM_INVALID),
        _ => {}
    }
    Ok((found, params))
}

// ------------------------------------------------------------------ general purpose (§5.4)

#[unsafe(no_mangle)]
/// C_GetFunctionList (PKCS#11 3.2 §5.4.3): the 2.40-compatible list.
///
/// # Safety
/// `list` must be null or writable.
pub unsafe extern "C" fn C_GetFunctionList(list: *mut *mut CK_FUNCTION_LIST) -> CK_RV {
    guard(|| {
        // SAFETY: checked by `out`.
        *unsafe { out(list) }? = (&raw const lists::FUNCTIONS_2_40).cast_mut();
        Ok(())
    })
}

struct Interfaces([CK_INTERFACE; 3]);
// SAFETY: the interfaces point to immutable statics only.
unsafe impl Sync for Interfaces {}

const INTERFACE_NAME: &[u8; 8] = b"PKCS 11\0";
static INTERFACES: Interfaces = Interfaces([
    CK_INTERFACE {
        pInterfaceName: INTERFACE_NAME.as_ptr().cast_mut(),
        pFunctionList: (&raw const lists::FUNCTIONS_3_2).cast_mut().cast(),
        flags: 0,
    },
    CK_INTERFACE {
        pInterfaceName: INTERFACE_NAME.as_ptr().cast_mut(),
        pFunctionList: (&raw const lists::FUNCTIONS_3_0).cast_mut().cast(),
        flags: 0,
    },
    CK_INTERFACE {
        pInterfaceName: INTERFACE_NAME.as_ptr().cast_mut(),
        pFunctionList: (&raw const lists::FUNCTIONS_2_40).cast_mut().cast(),
        flags: 0,
    },
]);

fn interface_version(i: &CK_INTERFACE) -> CK_VERSION {
    // Every function list starts with its CK_VERSION.
    // SAFETY: pFunctionList points to one of our static lists.
    unsafe { *(i.pFunctionList as *const CK_VERSION) }
}

#[unsafe(no_mangle)]
/// C_GetInterfaceList (PKCS#11 3.2 §5.4.6): PKCS 11 versions 3.2, 3.0 and 2.40.
///
/// # Safety
/// `count` writable; `list` null or room for `*count` interfaces.
pub unsafe extern "C" fn C_GetInterfaceList(
    list: *mut CK_INTERFACE,
    count: *mut CK_ULONG,
) -> CK_RV {
    guard(|| {
        // SAFETY: forwarded contract.
        unsafe { write_list(&INTERFACES.0, list, count) }
    })
}

#[unsafe(no_mangle)]
/// C_GetInterface (PKCS#11 3.2 §5.4.7): by name ("PKCS 11" or null), version (null: 3.2) and
/// flags.
///
/// # Safety
/// `name` null or NUL-terminated; `version` null or readable; `interface` writable.
pub unsafe extern "C" fn C_GetInterface(
    name: *mut CK_UTF8CHAR,
    version: *mut CK_VERSION,
    interface: *mut *mut CK_INTERFACE,
    flags: CK_FLAGS,
) -> CK_RV {
    guard(|| {
        // SAFETY: checked by `out`.
        let interface = unsafe { out(interface) }?;
        if !name.is_null() {
            // SAFETY: the caller promises a NUL-terminated string.
            let name = unsafe { std::ffi::CStr::from_ptr(name.cast()) };
            if name.to_bytes() != b"PKCS 11" {
                return Err(CKR_ARGUMENTS_BAD);
            }
        }
        let wanted = if version.is_null() {
            None
        } else {
            // SAFETY: checked by `input`.
            Some(*unsafe { input(version) }?)
        };
        let found = INTERFACES.0.iter().find(|i| {
            let v = interface_version(i);
            wanted.is_none_or(|w| (w.major, w.minor) == (v.major, v.minor))
                && i.flags & flags == flags
        });
        *interface = found
            .map(|i| std::ptr::from_ref(i).cast_mut())
            .ok_or(CKR_ARGUMENTS_BAD)?;
        Ok(())
    })
}

/// C_Initialize (§5.4.1): OS locking only (CKF_OS_LOCKING_OK, or no locking functions given).
///
/// # Safety
/// `args` null or a readable CK_C_INITIALIZE_ARGS.
pub(crate) unsafe extern "C" fn C_Initialize(args: *mut c_void) -> CK_RV {
    guard(|| {
        if !args.is_null() {
            // SAFETY: checked by `input`.
            let a = unsafe { input(args as *const CK_C_INITIALIZE_ARGS) }?;
            if !a.pReserved.is_null() {
                return Err(CKR_ARGUMENTS_BAD);
            }
            let given = [
                a.CreateMutex.is_some(),
                a.DestroyMutex.is_some(),
                a.LockMutex.is_some(),
                a.UnlockMutex.is_some(),
            ];
            if given.iter().any(|g| *g) && !given.iter().all(|g| *g) {
                return Err(CKR_ARGUMENTS_BAD);
            }
            if given[0] && a.flags & CKF_OS_LOCKING_OK == 0 {
                return Err(CKR_CANT_LOCK);
            }
        }
        let config = crate::config::Config::load().map_err(|_| CKR_GENERAL_ERROR)?;
        let remote = std::env::var_os("PQKIT_PKCS11_REMOTE")
            .map(std::path::PathBuf::from)
            .or(config.remote);
        match remote {
            Some(socket) => crate::remote::connect(&socket),
            None => token::initialize(),
        }
    })
}

/// C_Finalize (§5.4.2).
///
/// # Safety
/// `reserved` must be null.
pub(crate) unsafe extern "C" fn C_Finalize(reserved: *mut c_void) -> CK_RV {
    guard(|| {
        if !reserved.is_null() {
            return Err(CKR_ARGUMENTS_BAD);
        }
        if crate::remote::is_remote() {
            crate::remote::disconnect()
        } else {
            token::finalize()
        }
    })
}

/// C_GetInfo (§5.4.3).
///
/// # Safety
/// `info` writable.
pub(crate) unsafe extern "C" fn C_GetInfo(info: *mut CK_INFO) -> CK_RV {
    guard(|| {
        if !crate::remote::is_remote() {
            token::with(|_| Ok(()))?;
        }
        // SAFETY: checked by `out`.
        *unsafe { out(info) }? = CK_INFO {
            cryptokiVersion: CRYPTOKI,
            manufacturerID: padded("pqkit"),
            flags: 0,
            libraryDescription: padded("pqkit PKCS#11 token"),
            libraryVersion: VERSION,
        };
        Ok(())
    })
}

// ------------------------------------------------------ slots and tokens (§5.5)

/// C_GetSlotList (§5.5.1).
///
/// # Safety
/// `count` writable; `list` null or room for `*count` ids.
pub(crate) unsafe extern "C" fn C_GetSlotList(
    present: CK_BBOOL,
    list: *mut CK_SLOT_ID,
    count: *mut CK_ULONG,
) -> CK_RV {
    guard(|| {
        let ids = execute(Call::SlotList {
            present: present != CK_FALSE,
        })?
        .ulongs()?;
        // SAFETY: forwarded contract.
        unsafe { write_list(&ids, list, count) }
    })
}

/// C_GetSlotInfo (§5.5.2).
///
/// # Safety
/// `info` writable.
pub(crate) unsafe extern "C" fn C_GetSlotInfo(slot: CK_SLOT_ID, info: *mut CK_SLOT_INFO) -> CK_RV {
    guard(|| {
        let Reply::SlotInfo { present, dir } = execute(Call::SlotInfo { slot })? else {
            return Err(CKR_DEVICE_ERROR);
        };
        // SAFETY: checked by `out`.
        *unsafe { out(info) }? = CK_SLOT_INFO {
            slotDescription: padded(&format!("pqkit token {dir}")),
            manufacturerID: padded("pqkit"),
            flags: if present { CKF_TOKEN_PRESENT } else { 0 },
            hardwareVersion: VERSION,
            firmwareVersion: VERSION,
        };
        Ok(())
    })
}

/// C_GetTokenInfo (§5.5.3).
///
/// # Safety
/// `info` writable.
pub(crate) unsafe extern "C" fn C_GetTokenInfo(
    slot: CK_SLOT_ID,
    info: *mut CK_TOKEN_INFO,
) -> CK_RV {
    guard(|| {
        let Reply::TokenInfo {
            label,
            serial,
            flags,
            sessions,
            rw_sessions,
            min_pin_len,
        } = execute(Call::TokenInfo { slot })?
        else {
            return Err(CKR_DEVICE_ERROR);
        };
        // SAFETY: checked by `out`.
        *unsafe { out(info) }? = CK_TOKEN_INFO {
            label: padded(&label),
            manufacturerID: padded("pqkit"),
            model: padded("pqkit token"),
            serialNumber: padded(&serial),
            flags,
            ulMaxSessionCount: CK_EFFECTIVELY_INFINITE,
            ulSessionCount: sessions,
            ulMaxRwSessionCount: CK_EFFECTIVELY_INFINITE,
            ulRwSessionCount: rw_sessions,
            ulMaxPinLen: 255,
            ulMinPinLen: min_pin_len.max(4),
            ulTotalPublicMemory: CK_UNAVAILABLE_INFORMATION,
            ulFreePublicMemory: CK_UNAVAILABLE_INFORMATION,
            ulTotalPrivateMemory: CK_UNAVAILABLE_INFORMATION,
            ulFreePrivateMemory: CK_UNAVAILABLE_INFORMATION,
            hardwareVersion: VERSION,
            firmwareVersion: VERSION,
            utcTime: [b' '; 16],
        };
        Ok(())
    })
}

/// C_GetMechanismList (§5.5.5).
///
/// # Safety
/// As [`write_list`].
pub(crate) unsafe extern "C" fn C_GetMechanismList(
    slot: CK_SLOT_ID,
    list: *mut CK_MECHANISM_TYPE,
    count: *mut CK_ULONG,
) -> CK_RV {
    guard(|| {
        execute(Call::SlotInfo { slot })?;
        let all: Vec<CK_MECHANISM_TYPE> = mech::all().map(|m| m.ty).collect();
        // SAFETY: forwarded contract.
        unsafe { write_list(&all, list, count) }
    })
}

/// C_GetMechanismInfo (§5.5.6).
///
/// # Safety
/// `info` writable.
pub(crate) unsafe extern "C" fn C_GetMechanismInfo(
    slot: CK_SLOT_ID,
    ty: CK_MECHANISM_TYPE,
    info: *mut CK_MECHANISM_INFO,
) -> CK_RV {
    guard(|| {
        execute(Call::SlotInfo { slot })?;
        let found = mech::find(ty).ok_or(CKR_MECHANISM_INVALID)?;
        // SAFETY: checked by `out`.
        *unsafe { out(info) }? = CK_MECHANISM_INFO {
            ulMinKeySize: found.key_sizes.0,
            ulMaxKeySize: found.key_sizes.1,
            flags: found.flags,
        };
        Ok(())
    })
}

/// A PIN argument.
///
/// # Safety
/// As [`bytes`].
unsafe fn pin<'a>(p: *const CK_UTF8CHAR, len: CK_ULONG) -> Result<&'a [u8]> {
    if p.is_null() {
        // No protected authentication path: a PIN is always given.
        return Err(CKR_ARGUMENTS_BAD);
    }
    if len > 255 {
        return Err(CKR_PIN_LEN_RANGE);
    }
    // SAFETY: forwarded contract.
    unsafe { bytes(p, len) }
}

/// C_InitToken (§5.5.7): erases the token; the SO PIN must be the current one.
///
/// # Safety
/// `so_pin` readable for `len`; `label` 32 readable bytes.
pub(crate) unsafe extern "C" fn C_InitToken(
    slot: CK_SLOT_ID,
    so_pin: *mut CK_UTF8CHAR,
    len: CK_ULONG,
    label: *mut CK_UTF8CHAR,
) -> CK_RV {
    guard(|| {
        // SAFETY: forwarded contract.
        let so_pin = unsafe { pin(so_pin, len) }?;
        // SAFETY: a label is 32 bytes (§5.5.7).
        let label = unsafe { bytes(label, 32) }?;
        let label = String::from_utf8_lossy(label).trim_end().to_owned();
        execute(Call::InitToken {
            slot,
            so_pin: so_pin.to_vec(),
            label,
        })?
        .unit()
    })
}

/// C_InitPIN (§5.5.8): the SO sets the user PIN.
///
/// # Safety
/// `p` readable for `len`.
pub(crate) unsafe extern "C" fn C_InitPIN(
    session: CK_SESSION_HANDLE,
    p: *mut CK_UTF8CHAR,
    len: CK_ULONG,
) -> CK_RV {
    guard(|| {
        // SAFETY: forwarded contract.
        let p = unsafe { pin(p, len) }?;
        execute(Call::InitPin {
            session,
            pin: p.to_vec(),
        })?
        .unit()
    })
}

/// C_SetPIN (§5.5.9).
///
/// # Safety
/// Both PINs readable for their lengths.
pub(crate) unsafe extern "C" fn C_SetPIN(
    session: CK_SESSION_HANDLE,
    old: *mut CK_UTF8CHAR,
    old_len: CK_ULONG,
    new: *mut CK_UTF8CHAR,
    new_len: CK_ULONG,
) -> CK_RV {
    guard(|| {
        // SAFETY: forwarded contract.
        let (old, new) = unsafe { (pin(old, old_len)?, pin(new, new_len)?) };
        execute(Call::SetPin {
            session,
            old: old.to_vec(),
            new: new.to_vec(),
        })?
        .unit()
    })
}

// ------------------------------------------------------------------ sessions (§5.6)

/// C_OpenSession (§5.6.1). Notifications are not used.
///
/// # Safety
/// `session` writable.
pub(crate) unsafe extern "C" fn C_OpenSession(
    slot: CK_SLOT_ID,
    flags: CK_FLAGS,
    _app: *mut c_void,
    _notify: CK_NOTIFY,
    session: *mut CK_SESSION_HANDLE,
) -> CK_RV {
    guard(|| {
        // SAFETY: checked by `out`.
        let session = unsafe { out(session) }?;
        *session = execute(Call::OpenSession { slot, flags })?.ulong()?;
        Ok(())
    })
}

/// C_CloseSession (§5.6.2).
///
/// # Safety
/// None: no pointer.
pub(crate) unsafe extern "C" fn C_CloseSession(session: CK_SESSION_HANDLE) -> CK_RV {
    guard(|| execute(Call::CloseSession { session })?.unit())
}

/// C_CloseAllSessions (§5.6.3).
///
/// # Safety
/// None: no pointer.
pub(crate) unsafe extern "C" fn C_CloseAllSessions(slot: CK_SLOT_ID) -> CK_RV {
    guard(|| execute(Call::CloseAllSessions { slot })?.unit())
}

/// C_GetSessionInfo (§5.6.4).
///
/// # Safety
/// `info` writable.
pub(crate) unsafe extern "C" fn C_GetSessionInfo(
    session: CK_SESSION_HANDLE,
    info: *mut CK_SESSION_INFO,
) -> CK_RV {
    guard(|| {
        let Reply::SessionInfo {
            slot: slotID,
            state,
            flags,
        } = execute(Call::SessionInfo { session })?
        else {
            return Err(CKR_DEVICE_ERROR);
        };
        // SAFETY: checked by `out`.
        *unsafe { out(info) }? = CK_SESSION_INFO {
            slotID,
            state,
            flags,
            ulDeviceError: 0,
        };
        Ok(())
    })
}

/// C_Login (§5.6.9).
///
/// # Safety
/// `p` readable for `len`.
pub(crate) unsafe extern "C" fn C_Login(
    session: CK_SESSION_HANDLE,
    user: CK_USER_TYPE,
    p: *mut CK_UTF8CHAR,
    len: CK_ULONG,
) -> CK_RV {
    guard(|| {
        // SAFETY: forwarded contract.
        let p = unsafe { pin(p, len) }?;
        execute(Call::Login {
            session,
            user,
            pin: p.to_vec(),
        })?
        .unit()
    })
}

/// C_Logout (§5.6.11).
///
/// # Safety
/// None: no pointer.
pub(crate) unsafe extern "C" fn C_Logout(session: CK_SESSION_HANDLE) -> CK_RV {
    guard(|| execute(Call::Logout { session })?.unit())
}

// ---------------------------------------------------------------- objects (§5.7)

/// C_CreateObject (§5.7.1).
///
/// # Safety
/// As [`template`]; `object` writable.
pub(crate) unsafe extern "C" fn C_CreateObject(
    session: CK_SESSION_HANDLE,
    t: *mut CK_ATTRIBUTE,
    n: CK_ULONG,
    object: *mut CK_OBJECT_HANDLE,
) -> CK_RV {
    guard(|| {
        // SAFETY: forwarded contract.
        let (t, object) = unsafe { (template(t, n)?, out(object)?) };
        *object = execute(Call::CreateObject {
            session,
            template: t,
        })?
        .ulong()?;
        Ok(())
    })
}

/// C_DestroyObject (§5.7.3).
///
/// # Safety
/// None: no pointer.
pub(crate) unsafe extern "C" fn C_DestroyObject(
    session: CK_SESSION_HANDLE,
    object: CK_OBJECT_HANDLE,
) -> CK_RV {
    guard(|| execute(Call::DestroyObject { session, object })?.unit())
}

/// C_GetAttributeValue (§5.7.5): every attribute is answered; the first problem is returned
/// (CKR_ATTRIBUTE_SENSITIVE, CKR_ATTRIBUTE_TYPE_INVALID, CKR_BUFFER_TOO_SMALL) with that
/// attribute's length set to CK_UNAVAILABLE_INFORMATION.
///
/// # Safety
/// `t` points to `n` writable attributes whose non-null values have room for their lengths.
pub(crate) unsafe extern "C" fn C_GetAttributeValue(
    session: CK_SESSION_HANDLE,
    object: CK_OBJECT_HANDLE,
    t: *mut CK_ATTRIBUTE,
    n: CK_ULONG,
) -> CK_RV {
    guard(|| {
        if n > MAX_ATTRIBUTES || (n > 0 && (t.is_null() || !t.is_aligned())) {
            return Err(CKR_ARGUMENTS_BAD);
        }
        // The template is read and written through raw pointers, one field at a time: a value
        // buffer may lie anywhere, even inside the template, so no reference to it is held.
        let types: Vec<CK_ATTRIBUTE_TYPE> = (0..n as usize)
            .map(|i| {
                // SAFETY: non-null, aligned, `i < n` attributes (the caller's contract); the
                // same holds for every `t.add(i)` below.
                unsafe { std::ptr::read(&raw const (*t.add(i)).type_) }
            })
            .collect();
        let Reply::Attributes(answers) = execute(Call::GetAttributes {
            session,
            object,
            types,
        })?
        else {
            return Err(CKR_DEVICE_ERROR);
        };
        if answers.len() != n as usize {
            return Err(CKR_DEVICE_ERROR);
        }
        let mut result = Ok(());
        for (i, answer) in answers.into_iter().enumerate() {
            // SAFETY: as above.
            let (value_ptr, len_ptr) = unsafe {
                (
                    std::ptr::read(&raw const (*t.add(i)).pValue),
                    &raw mut (*t.add(i)).ulValueLen,
                )
            };
            let unavailable = || {
                // SAFETY: as above.
                unsafe { std::ptr::write(len_ptr, CK_UNAVAILABLE_INFORMATION) };
            };
            let problem = match answer {
                Ok(Some(value)) => {
                    // SAFETY: as above.
                    let mut len = unsafe { std::ptr::read(len_ptr) };
                    // SAFETY: pValue has room for ulValueLen bytes (the caller's contract).
                    let r = unsafe { write_bytes(&value, value_ptr.cast(), &raw mut len) };
                    if r.is_ok() {
                        // SAFETY: as above.
                        unsafe { std::ptr::write(len_ptr, len) };
                    } else {
                        unavailable();
                    }
                    r.err()
                }
                Ok(None) => {
                    unavailable();
                    Some(CKR_ATTRIBUTE_TYPE_INVALID)
                }
                Err(rv) => {
                    unavailable();
                    Some(rv)
                }
            };
            if let (Some(rv), Ok(())) = (problem, &result) {
                result = Err(rv);
            }
        }
        result
    })
}

/// C_SetAttributeValue (§5.7.6).
///
/// # Safety
/// As [`template`].
pub(crate) unsafe extern "C" fn C_SetAttributeValue(
    session: CK_SESSION_HANDLE,
    object: CK_OBJECT_HANDLE,
    t: *mut CK_ATTRIBUTE,
    n: CK_ULONG,
) -> CK_RV {
    guard(|| {
        // SAFETY: forwarded contract.
        let t = unsafe { template(t, n) }?;
        execute(Call::SetAttributes {
            session,
            object,
            template: t,
        })?
        .unit()
    })
}

/// C_FindObjectsInit (§5.7.7).
///
/// # Safety
/// As [`template`].
pub(crate) unsafe extern "C" fn C_FindObjectsInit(
    session: CK_SESSION_HANDLE,
    t: *mut CK_ATTRIBUTE,
    n: CK_ULONG,
) -> CK_RV {
    guard(|| {
        // SAFETY: forwarded contract.
        let t = unsafe { template(t, n) }?;
        execute(Call::FindInit {
            session,
            template: t,
        })?
        .unit()
    })
}

/// C_FindObjects (§5.7.8).
///
/// # Safety
/// `found` room for `max` handles; `count` writable.
pub(crate) unsafe extern "C" fn C_FindObjects(
    session: CK_SESSION_HANDLE,
    found: *mut CK_OBJECT_HANDLE,
    max: CK_ULONG,
    count: *mut CK_ULONG,
) -> CK_RV {
    guard(|| {
        // SAFETY: checked by `out`.
        let count = unsafe { out(count) }?;
        if max > 0 && (found.is_null() || !found.is_aligned()) {
            return Err(CKR_ARGUMENTS_BAD);
        }
        let handles = execute(Call::FindNext { session, max })?.ulongs()?;
        // A remote token's answer is checked too: never more than the caller has room for.
        if handles.len() as CK_ULONG > max {
            return Err(CKR_DEVICE_ERROR);
        }
        if !handles.is_empty() {
            // SAFETY: `found` is non-null and aligned (max > 0) with room for max >=
            // handles.len() handles.
            unsafe { std::ptr::copy_nonoverlapping(handles.as_ptr(), found, handles.len()) };
        }
        *count = handles.len() as CK_ULONG;
        Ok(())
    })
}

/// C_FindObjectsFinal (§5.7.9).
///
/// # Safety
/// None: no pointer.
pub(crate) unsafe extern "C" fn C_FindObjectsFinal(session: CK_SESSION_HANDLE) -> CK_RV {
    guard(|| execute(Call::FindFinal { session })?.unit())
}

// ------------------------------------------------------- signing and verifying (§5.12, §5.13)

/// C_SignInit / C_VerifyInit: the mechanism and its parameters, read once.
///
/// # Safety
/// As [`mechanism`].
unsafe fn operation_init(
    session: CK_SESSION_HANDLE,
    m: *mut CK_MECHANISM,
    key: CK_OBJECT_HANDLE,
    verify: bool,
) -> Result<()> {
    // SAFETY: forwarded contract.
    let (found, params) = unsafe { mechanism(m) }?;
    execute(Call::OperationInit {
        session,
        mechanism: found.ty,
        params: (&params).into(),
        key,
        verify,
    })?
    .unit()
}

/// C_SignInit (§5.12.1).
///
/// # Safety
/// As [`mechanism`].
pub(crate) unsafe extern "C" fn C_SignInit(
    session: CK_SESSION_HANDLE,
    m: *mut CK_MECHANISM,
    key: CK_OBJECT_HANDLE,
) -> CK_RV {
    // SAFETY: forwarded contract.
    guard(|| unsafe { operation_init(session, m, key, false) })
}

/// The signature of the session's operation into the caller's buffer. The size is checked
/// before anything is signed: a short buffer costs no one-time key of a stateful key.
///
/// # Safety
/// As [`write_bytes`].
/// `result`, after ending the session's sign (or verify) operation when it is an error other
/// than CKR_BUFFER_TOO_SMALL: a failed C_Sign, C_SignUpdate, C_SignFinal, C_Verify… ends it
/// (PKCS#11 3.2 §5.13, §5.15).
fn ending_on_error<T>(session: CK_SESSION_HANDLE, verify: bool, result: Result<T>) -> Result<T> {
    if let Err(rv) = &result
        && *rv != CKR_BUFFER_TOO_SMALL
    {
        let _ = execute(Call::EndOperation { session, verify });
    }
    result
}

unsafe fn sign_into(
    session: CK_SESSION_HANDLE,
    data: Option<&[u8]>,
    sig: *mut u8,
    sig_len: *mut CK_ULONG,
) -> Result<()> {
    // SAFETY: checked by `out`.
    let len = unsafe { out(sig_len) }?;
    let needed = execute(Call::SignatureLen { session })?.ulong()?;
    if sig.is_null() {
        *len = needed;
        return Ok(());
    }
    if *len < needed {
        *len = needed;
        return Err(CKR_BUFFER_TOO_SMALL);
    }
    let signature = execute(Call::Sign {
        session,
        data: data.map(<[u8]>::to_vec),
    })?
    .bytes()?;
    // SAFETY: the buffer holds `needed` >= signature.len() bytes.
    unsafe { write_bytes(&signature, sig, sig_len) }
}

/// C_Sign (§5.12.2).
///
/// # Safety
/// `data` readable for `len`; as [`write_bytes`] for the signature.
pub(crate) unsafe extern "C" fn C_Sign(
    session: CK_SESSION_HANDLE,
    data: *mut CK_BYTE,
    len: CK_ULONG,
    sig: *mut CK_BYTE,
    sig_len: *mut CK_ULONG,
) -> CK_RV {
    guard(|| {
        ending_on_error(
            session,
            false,
            (|| {
                // SAFETY: forwarded contract.
                let data = unsafe { bytes(data, len) }?;
                // SAFETY: forwarded contract.
                unsafe { sign_into(session, Some(data), sig, sig_len) }
            })(),
        )
    })
}

/// C_SignUpdate (§5.12.3).
///
/// # Safety
/// `data` readable for `len`.
pub(crate) unsafe extern "C" fn C_SignUpdate(
    session: CK_SESSION_HANDLE,
    data: *mut CK_BYTE,
    len: CK_ULONG,
) -> CK_RV {
    guard(|| {
        ending_on_error(
            session,
            false,
            (|| {
                // SAFETY: forwarded contract.
                let data = unsafe { bytes(data, len) }?;
                execute(Call::Update {
                    session,
                    verify: false,
                    data: data.to_vec(),
                })?
                .unit()
            })(),
        )
    })
}

/// C_SignFinal (§5.12.4).
///
/// # Safety
/// As [`write_bytes`].
pub(crate) unsafe extern "C" fn C_SignFinal(
    session: CK_SESSION_HANDLE,
    sig: *mut CK_BYTE,
    sig_len: *mut CK_ULONG,
) -> CK_RV {
    guard(|| {
        // SAFETY: forwarded contract.
        let result = unsafe { sign_into(session, None, sig, sig_len) };
        ending_on_error(session, false, result)
    })
}

/// C_VerifyInit (§5.13.1).
///
/// # Safety
/// As [`mechanism`].
pub(crate) unsafe extern "C" fn C_VerifyInit(
    session: CK_SESSION_HANDLE,
    m: *mut CK_MECHANISM,
    key: CK_OBJECT_HANDLE,
) -> CK_RV {
    // SAFETY: forwarded contract.
    guard(|| unsafe { operation_init(session, m, key, true) })
}

/// C_Verify (§5.13.2).
///
/// # Safety
/// `data` and `sig` readable for their lengths.
pub(crate) unsafe extern "C" fn C_Verify(
    session: CK_SESSION_HANDLE,
    data: *mut CK_BYTE,
    len: CK_ULONG,
    sig: *mut CK_BYTE,
    sig_len: CK_ULONG,
) -> CK_RV {
    guard(|| {
        ending_on_error(
            session,
            true,
            (|| {
                // SAFETY: forwarded contract.
                let (data, sig) = unsafe { (bytes(data, len)?, bytes(sig, sig_len)?) };
                execute(Call::Verify {
                    session,
                    data: Some(data.to_vec()),
                    signature: sig.to_vec(),
                })?
                .unit()
            })(),
        )
    })
}

/// C_VerifyUpdate (§5.13.3).
///
/// # Safety
/// `data` readable for `len`.
pub(crate) unsafe extern "C" fn C_VerifyUpdate(
    session: CK_SESSION_HANDLE,
    data: *mut CK_BYTE,
    len: CK_ULONG,
) -> CK_RV {
    guard(|| {
        ending_on_error(
            session,
            true,
            (|| {
                // SAFETY: forwarded contract.
                let data = unsafe { bytes(data, len) }?;
                execute(Call::Update {
                    session,
                    verify: true,
                    data: data.to_vec(),
                })?
                .unit()
            })(),
        )
    })
}

/// C_VerifyFinal (§5.13.4).
///
/// # Safety
/// `sig` readable for `len`.
pub(crate) unsafe extern "C" fn C_VerifyFinal(
    session: CK_SESSION_HANDLE,
    sig: *mut CK_BYTE,
    len: CK_ULONG,
) -> CK_RV {
    guard(|| {
        ending_on_error(
            session,
            true,
            (|| {
                // SAFETY: forwarded contract.
                let sig = unsafe { bytes(sig, len) }?;
                execute(Call::Verify {
                    session,
                    data: None,
                    signature: sig.to_vec(),
                })?
                .unit()
            })(),
        )
    })
}

// ------------------------------------------------------------ keys (§5.18, §5.19)

/// C_GenerateKeyPair (§5.18.2).
///
/// # Safety
/// As [`mechanism`] and [`template`]; both handle pointers writable.
pub(crate) unsafe extern "C" fn C_GenerateKeyPair(
    session: CK_SESSION_HANDLE,
    m: *mut CK_MECHANISM,
    public: *mut CK_ATTRIBUTE,
    public_n: CK_ULONG,
    private: *mut CK_ATTRIBUTE,
    private_n: CK_ULONG,
    public_key: *mut CK_OBJECT_HANDLE,
    private_key: *mut CK_OBJECT_HANDLE,
) -> CK_RV {
    guard(|| {
        // SAFETY: forwarded contract.
        let (found, _) = unsafe { mechanism(m) }?;
        // SAFETY: forwarded contract.
        let (public, private) =
            unsafe { (template(public, public_n)?, template(private, private_n)?) };
        // SAFETY: forwarded contract.
        let (public_key, private_key) = unsafe { (out(public_key)?, out(private_key)?) };
        // Key generation runs under the module lock (seconds for large stateful keys).
        let Reply::Pair(p, s) = execute(Call::GenerateKeyPair {
            session,
            mechanism: found.ty,
            public,
            private,
        })?
        else {
            return Err(CKR_DEVICE_ERROR);
        };
        *public_key = p;
        *private_key = s;
        Ok(())
    })
}

/// C_EncapsulateKey (PKCS#11 3.2 §5.18.8): CKM_ML_KEM with the public key `key`; the shared
/// secret becomes a CKK_GENERIC_SECRET object from `t`; the ciphertext follows the two-call
/// convention (a size query creates no object).
///
/// # Safety
/// As [`mechanism`], [`template`], [`write_bytes`]; `secret` writable.
pub(crate) unsafe extern "C" fn C_EncapsulateKey(
    session: CK_SESSION_HANDLE,
    m: *mut CK_MECHANISM,
    key: CK_OBJECT_HANDLE,
    t: *mut CK_ATTRIBUTE,
    n: CK_ULONG,
    ct: *mut CK_BYTE,
    ct_len: *mut CK_ULONG,
    secret: *mut CK_OBJECT_HANDLE,
) -> CK_RV {
    guard(|| {
        // SAFETY: forwarded contract.
        let (found, _) = unsafe { mechanism(m) }?;
        if found.ty != CKM_ML_KEM {
            return Err(CKR_MECHANISM_INVALID);
        }
        // SAFETY: forwarded contract.
        let t = unsafe { template(t, n) }?;
        // SAFETY: checked by `out`.
        let len = unsafe { out(ct_len) }?;
        let needed = execute(Call::CiphertextLen { session, key })?.ulong()?;
        if ct.is_null() {
            *len = needed;
            return Ok(());
        }
        if *len < needed {
            *len = needed;
            return Err(CKR_BUFFER_TOO_SMALL);
        }
        // SAFETY: checked by `out`.
        let secret = unsafe { out(secret) }?;
        let Reply::Encapsulated {
            ciphertext,
            secret: handle,
        } = execute(Call::Encapsulate {
            session,
            key,
            template: t,
        })?
        else {
            return Err(CKR_DEVICE_ERROR);
        };
        *secret = handle;
        // SAFETY: room for `needed` bytes, checked above.
        unsafe { write_bytes(&ciphertext, ct, ct_len) }
    })
}

/// C_DecapsulateKey (PKCS#11 3.2 §5.18.9): CKM_ML_KEM with the private key `key`.
///
/// # Safety
/// As [`mechanism`], [`template`]; `ct` readable for `ct_len`; `secret` writable.
pub(crate) unsafe extern "C" fn C_DecapsulateKey(
    session: CK_SESSION_HANDLE,
    m: *mut CK_MECHANISM,
    key: CK_OBJECT_HANDLE,
    t: *mut CK_ATTRIBUTE,
    n: CK_ULONG,
    ct: *mut CK_BYTE,
    ct_len: CK_ULONG,
    secret: *mut CK_OBJECT_HANDLE,
) -> CK_RV {
    guard(|| {
        // SAFETY: forwarded contract.
        let (found, _) = unsafe { mechanism(m) }?;
        if found.ty != CKM_ML_KEM {
            return Err(CKR_MECHANISM_INVALID);
        }
        // SAFETY: forwarded contract.
        let (t, ct, secret) = unsafe { (template(t, n)?, bytes(ct, ct_len)?, out(secret)?) };
        *secret = execute(Call::Decapsulate {
            session,
            key,
            template: t,
            ciphertext: ct.to_vec(),
        })?
        .ulong()?;
        Ok(())
    })
}

// ----------------------------------------------------------- random numbers (§5.20)

/// C_SeedRandom (§5.20.1): the generator (AWS-LC) takes no seed.
///
/// # Safety
/// None: the pointer is not read.
pub(crate) unsafe extern "C" fn C_SeedRandom(
    session: CK_SESSION_HANDLE,
    _seed: *mut CK_BYTE,
    _len: CK_ULONG,
) -> CK_RV {
    guard(|| {
        execute(Call::SessionInfo { session })?;
        Err(CKR_RANDOM_SEED_NOT_SUPPORTED)
    })
}

/// C_GenerateRandom (§5.20.2).
///
/// # Safety
/// `p` writable for `len` bytes.
pub(crate) unsafe extern "C" fn C_GenerateRandom(
    session: CK_SESSION_HANDLE,
    p: *mut CK_BYTE,
    len: CK_ULONG,
) -> CK_RV {
    guard(|| {
        execute(Call::SessionInfo { session })?;
        if len == 0 {
            return Ok(());
        }
        if p.is_null() || len > MAX_BYTES {
            return Err(CKR_ARGUMENTS_BAD);
        }
        // SAFETY: non-null, `len` writable bytes (the caller's contract).
        let buf = unsafe { std::slice::from_raw_parts_mut(p, len as usize) };
        aws_lc_rs::rand::fill(buf).map_err(|_| CKR_FUNCTION_FAILED)
    })
}

/// C_GetFunctionStatus (§5.21.1): legacy, always CKR_FUNCTION_NOT_PARALLEL.
///
/// # Safety
/// None: no pointer.
pub(crate) unsafe extern "C" fn C_GetFunctionStatus(_session: CK_SESSION_HANDLE) -> CK_RV {
    CKR_FUNCTION_NOT_PARALLEL
}

/// C_CancelFunction (§5.21.2): legacy, always CKR_FUNCTION_NOT_PARALLEL.
///
/// # Safety
/// None: no pointer.
pub(crate) unsafe extern "C" fn C_CancelFunction(_session: CK_SESSION_HANDLE) -> CK_RV {
    CKR_FUNCTION_NOT_PARALLEL
}
