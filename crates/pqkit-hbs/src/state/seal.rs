//! Sealed state files: the secrets stored XORed with a stream of a seal key, so that the file
//! alone cannot sign (pqkit's PKCS#11 token derives one seal key per state file).

use zeroize::Zeroizing;

use super::layout::{MAGIC, secret_start};

/// A key that seals a state file's secrets — the HSS SEED; XMSS's S_XMSS, SK_PRF and SEED —
/// so that the file alone cannot sign: they are stored XORed with SHAKE256("pqkit-hbs seal v1"
/// ‖ key ‖ the file's public header), and the kind byte says so. A PKCS#11 token derives one
/// per key from its PIN-sealed data key. Everything else in this module's contract holds
/// unchanged: reservations, locks, location checks and [`super::status`] need no seal key.
pub struct SealKey(Zeroizing<[u8; 32]>);

impl SealKey {
    /// Wraps 32 secret bytes.
    pub fn new(key: [u8; 32]) -> Self {
        Self(Zeroizing::new(key))
    }
}

impl std::fmt::Debug for SealKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SealKey(..)")
    }
}

/// XORs the secrets of `key` with the seal's stream: the same call seals and unseals. The
/// stream depends on the header except its version byte ([`super::StatefulKey::adopt`] rewrites it).
pub(super) fn apply_seal(key: &mut [u8], seal: &SealKey) {
    use sha3::digest::{ExtendableOutput, Update, XofReader};
    let Some(start) = secret_start(key).filter(|s| *s <= key.len()) else {
        return;
    };
    let at = MAGIC.len();
    let mut h = sha3::Shake256::default();
    h.update(b"pqkit-hbs seal v1");
    h.update(&seal.0[..]);
    h.update(&key[..at]);
    h.update(&key[at + 1..start]);
    let mut mask = Zeroizing::new(vec![0u8; key.len() - start]);
    h.finalize_xof().read(&mut mask);
    for (b, m) in key[start..].iter_mut().zip(mask.iter()) {
        *b ^= m;
    }
}
