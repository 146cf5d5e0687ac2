//! `<state>.cache`: the trees (public nodes) of a key, MACed with a key derived from the
//! signing key, so that opening a key computes no leaves. Never state: which counter values
//! are used never depends on it.

use std::fs;
use std::path::{Path, PathBuf};

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use super::file::{MAGIC, VERSION_1};
use crate::tree::TreeCache;

/// The cache file's own format version.
const CACHE_VERSION: u8 = 1;
const CACHE_MAGIC: &[u8; 16] = b"PQKIT-HBS-CACHE\0";

pub(super) fn cache_path(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(".cache");
    PathBuf::from(p)
}

/// HMAC-SHA-256 keyed with SHA-256("pqkit-hbs tree cache v1" ‖ the key's state bytes), the
/// format version byte read as 1 (a key adopted from an earlier version keeps its cache).
fn cache_mac(key: &[u8]) -> Hmac<Sha256> {
    let at = MAGIC.len();
    let mac_key: Zeroizing<[u8; 32]> = Zeroizing::new(
        Sha256::new()
            .chain_update(b"pqkit-hbs tree cache v1")
            .chain_update(&key[..at.min(key.len())])
            .chain_update(if key.len() > at {
                &[VERSION_1][..]
            } else {
                &[][..]
            })
            .chain_update(key.get(at + 1..).unwrap_or(&[]))
            .finalize()
            .into(),
    );
    // HMAC takes keys of any length.
    Hmac::<Sha256>::new_from_slice(&mac_key[..]).unwrap_or_else(|_| unreachable!())
}

/// The cache file's trees when the file is present, whole and this key's; `None` otherwise.
/// `key` is the state's key bytes with the secrets unsealed.
pub(super) fn read_cache(path: &Path, key: &[u8]) -> Option<TreeCache> {
    let bytes = fs::read(cache_path(path)).ok()?;
    let rest = bytes.strip_prefix(&CACHE_MAGIC[..])?;
    let (&version, rest) = rest.split_first()?;
    (version == CACHE_VERSION && rest.len() >= 32).then_some(())?;
    let (body, tag) = rest.split_at(rest.len() - 32);
    cache_mac(key).chain_update(body).verify_slice(tag).ok()?;
    TreeCache::from_bytes(body)
}

/// The cache file's bytes for `trees`: magic ‖ version ‖ body ‖ HMAC tag.
pub(super) fn encode_cache(key: &[u8], trees: &TreeCache) -> Vec<u8> {
    let body = trees.to_bytes();
    let tag = cache_mac(key).chain_update(&body).finalize().into_bytes();
    let mut out = Vec::with_capacity(CACHE_MAGIC.len() + 1 + body.len() + 32);
    out.extend_from_slice(CACHE_MAGIC);
    out.push(CACHE_VERSION);
    out.extend_from_slice(&body);
    out.extend_from_slice(&tag);
    out
}
