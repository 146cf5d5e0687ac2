//! `bench handshake --preset NAME`: a reference document's handshake table rebuilt on this
//! machine — its rows by their own labels, each mapped to the (signature, named group) pqkit
//! runs for it, with the document's figures beside pqkit's where they are known.
//!
//! `m4-paper`: the Cortex-M4 post-quantum TLS paper's Table 2 rows (signature × KEM: Dil2-Kyb1,
//! Falc1-Kyb1, Dil3-Kyb3, Falc5-Kyb3, Dil3-Kyb5, Falc5-Kyb5, Sph1s-Kyb1, Dil2-Bike1, Dil2-Hqc1,
//! the classical RSA-ECDHE and ECDSA-ECDHE, and FFDHE-3072 of its Table 1; not its SIKE rows).
//! The paper's times and memory come from a Cortex-M4 client and are not compared in this
//! table (the m4-paper page of `pqkit report` sets them beside pqkit's: [`crate::documents`]);
//! what it prints beside pqkit's figures are the KEM sizes of the paper's Table 1 (BIKE-L1,
//! HQC-128; `../shared/seeds`, document 001) and the round-3 Kyber sizes of their
//! specification. Where pqkit's KEM is a later version (ML-KEM for Kyber, HQC-1 of 2025 for
//! HQC-128), the byte difference says so.

use serde::Serialize;

/// A KEM's sizes as the reference document (or its KEM's specification) gives them, in bytes.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct KemBytes {
    /// Public (encapsulation) key.
    pub public_key: usize,
    /// Ciphertext.
    pub ciphertext: usize,
    /// Where the figures come from.
    pub source: &'static str,
}

/// One row of a reference table.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct PresetRow {
    /// The document's label, e.g. "Dil2-Bike1".
    pub label: &'static str,
    /// The signature algorithm pqkit runs for it.
    pub signature: &'static str,
    /// The named group pqkit runs for it.
    pub group: &'static str,
    /// The document's KEM, as it names it.
    pub their_kem: &'static str,
    /// The document's KEM sizes, where known.
    pub their_kem_bytes: Option<KemBytes>,
}

/// A reference table.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Preset {
    /// The name `--preset` takes.
    pub name: &'static str,
    /// What the document is.
    pub document: &'static str,
    /// The document's platform, as far as it is known here.
    pub platform: &'static str,
    /// What of the document is not available here.
    pub missing: &'static str,
    /// Its rows, in its order.
    pub rows: &'static [PresetRow],
}

const KYBER512: KemBytes = KemBytes {
    public_key: 800,
    ciphertext: 768,
    source: "Kyber round 3 specification (Kyber512), the paper's KEM",
};
const KYBER768: KemBytes = KemBytes {
    public_key: 1184,
    ciphertext: 1088,
    source: "Kyber round 3 specification (Kyber768), the paper's KEM",
};
const KYBER1024: KemBytes = KemBytes {
    public_key: 1568,
    ciphertext: 1568,
    source: "Kyber round 3 specification (Kyber1024), the paper's KEM",
};
const BIKE_L1: KemBytes = KemBytes {
    public_key: 1541,
    ciphertext: 1573,
    source: "the paper's Table 1 (BIKE-L1)",
};
const HQC_128: KemBytes = KemBytes {
    public_key: 2249,
    ciphertext: 4481,
    source: "the paper's Table 1: round-3 HQC-128",
};

/// The Cortex-M4 post-quantum TLS paper's handshake rows.
pub static M4_PAPER: Preset = Preset {
    name: "m4-paper",
    document: "the Cortex-M4 post-quantum TLS paper (signature × KEM handshake table)",
    platform: "ARM Cortex-M4 microcontroller",
    missing: "the paper's times and memory were measured on a Cortex-M4 client and are not \
              compared in this table; its KEM sizes (Table 1) are. The m4-paper page \
              `pqkit report` writes sets the paper's times, memory and bytes beside pqkit's; \
              its SIKE rows are left out (SIKE was broken in 2022)",
    rows: &[
        PresetRow {
            label: "Dil2-Kyb1",
            signature: "ML-DSA-44",
            group: "MLKEM512",
            their_kem: "Kyber512",
            their_kem_bytes: Some(KYBER512),
        },
        PresetRow {
            label: "Falc1-Kyb1",
            signature: "Falcon-512",
            group: "MLKEM512",
            their_kem: "Kyber512",
            their_kem_bytes: Some(KYBER512),
        },
        PresetRow {
            label: "Dil3-Kyb3",
            signature: "ML-DSA-65",
            group: "MLKEM768",
            their_kem: "Kyber768",
            their_kem_bytes: Some(KYBER768),
        },
        PresetRow {
            label: "Falc5-Kyb3",
            signature: "Falcon-1024",
            group: "MLKEM768",
            their_kem: "Kyber768",
            their_kem_bytes: Some(KYBER768),
        },
        PresetRow {
            label: "Dil3-Kyb5",
            signature: "ML-DSA-65",
            group: "MLKEM1024",
            their_kem: "Kyber1024",
            their_kem_bytes: Some(KYBER1024),
        },
        PresetRow {
            label: "Falc5-Kyb5",
            signature: "Falcon-1024",
            group: "MLKEM1024",
            their_kem: "Kyber1024",
            their_kem_bytes: Some(KYBER1024),
        },
        PresetRow {
            label: "Sph1s-Kyb1",
            signature: "SLH-DSA-SHA2-128s",
            group: "MLKEM512",
            their_kem: "Kyber512",
            their_kem_bytes: Some(KYBER512),
        },
        PresetRow {
            label: "Dil2-Bike1",
            signature: "ML-DSA-44",
            group: "bikel1",
            their_kem: "BIKE-L1",
            their_kem_bytes: Some(BIKE_L1),
        },
        PresetRow {
            label: "Dil2-Hqc1",
            signature: "ML-DSA-44",
            group: "hqc1",
            their_kem: "HQC-128",
            their_kem_bytes: Some(HQC_128),
        },
        PresetRow {
            label: "RSA-ECDHE",
            signature: "RSA-PSS-2048",
            group: "secp256r1",
            their_kem: "ECDHE",
            their_kem_bytes: None,
        },
        PresetRow {
            label: "ECDSA-ECDHE",
            signature: "ECDSA-P256",
            group: "secp256r1",
            their_kem: "ECDHE",
            their_kem_bytes: None,
        },
        PresetRow {
            label: "FFDHE-3072",
            signature: "RSA-PSS-2048",
            group: "ffdhe3072",
            their_kem: "FFDHE-3072",
            their_kem_bytes: None,
        },
    ],
};

/// Every preset.
pub static PRESETS: &[&Preset] = &[&M4_PAPER];

/// The preset called `name` (case-insensitive).
///
/// # Errors
/// An unknown name, with the known ones.
pub fn find(name: &str) -> Result<&'static Preset, String> {
    PRESETS
        .iter()
        .copied()
        .find(|p| p.name.eq_ignore_ascii_case(name))
        .ok_or_else(|| {
            let known: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
            format!("unknown preset {name:?}; presets: {}", known.join(", "))
        })
}

/// pqkit's KEM sizes for a named group's post-quantum half (encapsulation key, ciphertext), in
/// bytes; `None` for a classical group.
pub fn kem_bytes(group: &str) -> Option<(usize, usize)> {
    let g = pqkit_core::catalogue::group(group).ok()?;
    Some((g.kem.encapsulation_key_size, g.kem.ciphertext_size))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_names_what_pqkit_has() {
        for row in M4_PAPER.rows {
            assert!(
                pqkit_core::catalogue::signature(row.signature).is_ok(),
                "{}",
                row.label
            );
            assert!(pqkit_rustls::find_group(row.group).is_ok(), "{}", row.label);
            assert_eq!(
                row.their_kem_bytes.is_some(),
                kem_bytes(row.group).is_some(),
                "{}",
                row.label
            );
        }
        // BIKE-L1 is the same BIKE as the paper's: the bytes agree exactly.
        assert_eq!(kem_bytes("bikel1"), Some((1541, 1573)));
        assert!(find("M4-PAPER").is_ok() && find("m5").is_err());
    }
}
