//! The response file of a KEM known-answer run (NIST `PQCgenKAT_kem` / liboqs `kat_kem.c`):
//! for each count its seed, pk, sk, ct and ss in upper-case hex, records separated by a blank
//! line, no trailing blank line; compared by SHA-256 with liboqs's `kats.json`.

use std::fmt::Write as _;

use pqkit_core::kem::{DecapsulationKey, SharedSecret};
use sha2::{Digest, Sha256};

/// A response file being written.
#[derive(Default)]
pub(crate) struct KatFile(String);

impl KatFile {
    fn line(&mut self, label: &str, bytes: &[u8]) {
        self.0.push_str(label);
        for b in bytes {
            write!(self.0, "{b:02X}").expect("write to String");
        }
        self.0.push('\n');
    }

    /// Appends count `count` of `counts`, after checking that `dk` decapsulates `ct` to `ss`.
    pub(crate) fn record(
        &mut self,
        (count, counts): (usize, usize),
        seed: &[u8],
        dk: &DecapsulationKey,
        (ct, ss): (&[u8], &SharedSecret),
    ) {
        let name = dk.algorithm().name;
        assert_eq!(
            dk.decapsulate(ct).expect("decapsulate"),
            *ss,
            "{name} count {count}"
        );
        writeln!(self.0, "count = {count}").expect("write to String");
        self.line("seed = ", seed);
        self.line("pk = ", dk.encapsulation_key().as_bytes());
        self.line("sk = ", dk.expanded());
        self.line("ct = ", ct);
        self.line("ss = ", ss.as_bytes());
        if count != counts - 1 {
            self.0.push('\n');
        }
    }

    /// The file's SHA-256, in hex (liboqs `kats.json`'s form).
    pub(crate) fn sha256_hex(&self) -> String {
        hex::encode(Sha256::digest(&self.0))
    }
}
