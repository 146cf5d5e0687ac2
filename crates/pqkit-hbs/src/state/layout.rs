//! The byte layout of a state file's key part, shared by the file's reader and writer
//! ([`super::file`]) and the seal ([`super::seal`]): magic, version, kind, and where the secrets
//! lie.

use crate::lms::u32_at;
use crate::params::lms_by_code;
use crate::xmss::by_oid;

pub(super) const MAGIC: &[u8; 10] = b"PQKIT-HBS\0";
pub(super) const VERSION: u8 = 3;
/// Files of version 2 have no binding to a ledger.
pub(super) const VERSION_2: u8 = 2;
/// Files of version 1 have no location either.
pub(super) const VERSION_1: u8 = 1;
pub(super) const KIND_HSS: u8 = 1;
pub(super) const KIND_XMSS: u8 = 2;
pub(super) const KIND_XMSS_MT: u8 = 3;
/// Set in the kind byte of a file whose secrets are sealed (see [`SealKey`]).
pub(super) const SEALED: u8 = 0x80;

/// Where the secrets end in a key's bytes (the end of its key part).
pub(super) fn secret_end(key: &[u8]) -> Option<usize> {
    let at = MAGIC.len();
    let end = match key.get(at + 1)? & !SEALED {
        KIND_HSS => {
            let l = usize::from(*key.get(at + 2)?);
            let lms = lms_by_code(u32_at(key, at + 3).ok()?).ok()?;
            at + 3 + 8 * l + 16 + lms.m
        }
        kind @ (KIND_XMSS | KIND_XMSS_MT) => {
            let params = by_oid(u32_at(key, at + 2).ok()?, kind == KIND_XMSS_MT).ok()?;
            at + 2 + 4 + 3 * params.n
        }
        _ => return None,
    };
    (end <= key.len()).then_some(end)
}

/// Where the secrets start in a key's bytes (HSS: after I; XMSS: after the OID).
pub(super) fn secret_start(key: &[u8]) -> Option<usize> {
    let at = MAGIC.len();
    match key.get(at + 1)? & !SEALED {
        KIND_HSS => Some(at + 3 + 8 * usize::from(*key.get(at + 2)?) + 16),
        KIND_XMSS | KIND_XMSS_MT => Some(at + 2 + 4),
        _ => None,
    }
}
