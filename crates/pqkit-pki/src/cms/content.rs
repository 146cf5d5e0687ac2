//! Reading the content once: its digests, its μ, and its bytes when they must be held —
//! within bounds.

use std::io::Read;

use pqkit_core::sig::MuHasher;

use super::digest::{DigestAlgorithm, Hasher};

/// Bytes read from the content at a time.
pub const CHUNK: usize = 1 << 20;

/// The most content held in memory (256 MiB): an attached SignedData, or a signer without
/// signed attributes that needs the whole message (all but ML-DSA, whose μ streams). Detached
/// content with signed attributes streams, whatever its length.
pub const MAX_HELD_CONTENT: u64 = 256 << 20;

/// What one pass over the content gives: each digest asked for, each μ (FIPS 204 §6.2), and
/// the content itself when it must be held.
pub(crate) struct Pass {
    /// The digests, in the order asked for.
    pub(crate) digests: Vec<(DigestAlgorithm, Vec<u8>)>,
    /// The μ of each hasher given (`None` where none was).
    pub(crate) mus: Vec<Option<[u8; 64]>>,
    /// The content, when held.
    pub(crate) held: Option<Vec<u8>>,
}

impl Pass {
    /// The digest computed with `d` (asked for by the caller).
    pub(crate) fn digest(&self, d: DigestAlgorithm) -> &[u8] {
        &self
            .digests
            .iter()
            .find(|(x, _)| *x == d)
            .expect("every digest asked for is computed")
            .1
    }
}

/// Why a pass stopped.
pub(crate) enum PassError {
    /// Reading failed.
    Io(std::io::Error),
    /// The content must be held and is longer than [`MAX_HELD_CONTENT`].
    TooLarge,
}

/// Reads `content` to its end in [`CHUNK`]-byte reads, feeding every digest of `digests`
/// (each once) and every μ hasher, and holding the bytes when `hold`.
pub(crate) fn read(
    content: &mut dyn Read,
    digests: &[DigestAlgorithm],
    mut mus: Vec<Option<MuHasher>>,
    hold: bool,
) -> Result<Pass, PassError> {
    let mut hashers: Vec<(DigestAlgorithm, Hasher)> = Vec::new();
    for &d in digests {
        if !hashers.iter().any(|(x, _)| *x == d) {
            hashers.push((d, d.hasher()));
        }
    }
    let mut held = hold.then(Vec::new);
    let mut buf = vec![0u8; CHUNK];
    let mut total = 0u64;
    loop {
        let n = match content.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(PassError::Io(e)),
        };
        let piece = &buf[..n];
        total += n as u64;
        for (_, h) in &mut hashers {
            h.update(piece);
        }
        for m in mus.iter_mut().flatten() {
            m.update(piece);
        }
        if let Some(held) = &mut held {
            if total > MAX_HELD_CONTENT {
                return Err(PassError::TooLarge);
            }
            held.extend_from_slice(piece);
        }
    }
    Ok(Pass {
        digests: hashers.into_iter().map(|(d, h)| (d, h.finish())).collect(),
        mus: mus.into_iter().map(|m| m.map(MuHasher::finalize)).collect(),
        held,
    })
}
