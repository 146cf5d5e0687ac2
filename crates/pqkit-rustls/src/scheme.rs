//! The signature schemes pqkit signs and verifies with, as data.
//!
//! Each entry pairs a catalogue algorithm with the exact rustls [`SignatureScheme`] variant
//! pqkit matches on (TLS 1.3 only, pure mode, empty context).

use pqkit_core::ml_dsa;
use pqkit_core::sig::SignatureAlgorithm;
use rustls::SignatureScheme;

/// A TLS 1.3 signature scheme implemented by pqkit-core.
#[derive(Debug)]
pub struct Scheme {
    /// The catalogue algorithm.
    pub algorithm: &'static SignatureAlgorithm,
    /// The rustls variant for its code point.
    pub scheme: SignatureScheme,
}

/// Every signature scheme pqkit provides, in preference order.
pub static SCHEMES: &[Scheme] = &[
    // draft-ietf-tls-mldsa: mldsa65 = 0x0905.
    Scheme {
        algorithm: &ml_dsa::ML_DSA_65,
        scheme: SignatureScheme::ML_DSA_65,
    },
    // draft-ietf-tls-mldsa: mldsa87 = 0x0906.
    Scheme {
        algorithm: &ml_dsa::ML_DSA_87,
        scheme: SignatureScheme::ML_DSA_87,
    },
    // draft-ietf-tls-mldsa: mldsa44 = 0x0904.
    Scheme {
        algorithm: &ml_dsa::ML_DSA_44,
        scheme: SignatureScheme::ML_DSA_44,
    },
];

/// The scheme pqkit uses for `algorithm`, if it signs with it in TLS.
pub fn for_algorithm(algorithm: &SignatureAlgorithm) -> Option<&'static Scheme> {
    SCHEMES
        .iter()
        .find(|s| core::ptr::eq(s.algorithm, algorithm))
}

/// The IANA name of any signature scheme (pqkit's, or rustls's own name).
pub fn name(scheme: SignatureScheme) -> String {
    let wire = u16::from(scheme);
    pqkit_core::catalogue::signatures()
        .iter()
        .filter_map(|a| a.tls_scheme)
        .find(|cp| cp.value == wire)
        .map_or_else(|| format!("{scheme:?}"), |cp| cp.iana.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_point_round_trips_to_the_variant_pqkit_matches_on() {
        for s in SCHEMES {
            let wire = u16::from(s.scheme);
            let cp = s.algorithm.tls_scheme.expect("catalogue code point");
            assert_eq!(wire, cp.value, "{}", s.algorithm.name);
            assert_eq!(
                SignatureScheme::from(wire),
                s.scheme,
                "{}",
                s.algorithm.name
            );
        }
    }
}
