//! The signature schemes pqkit signs and verifies with, as data.
//!
//! Each entry pairs a catalogue algorithm with the exact rustls [`SignatureScheme`] variant
//! pqkit matches on (TLS 1.3 only, pure mode, empty context).

use std::sync::OnceLock;

use pqkit_core::catalogue;
use pqkit_core::sig::SignatureAlgorithm;
use rustls::SignatureScheme;

/// A TLS 1.3 signature scheme implemented by pqkit-core.
#[derive(Debug)]
pub struct Scheme {
    /// The catalogue algorithm.
    pub algorithm: &'static SignatureAlgorithm,
    /// The rustls variant for its code point (`From<u16>`: named where rustls names it, e.g.
    /// `ML_DSA_65`, else `Unknown`).
    pub scheme: SignatureScheme,
}

/// Every post-quantum signature algorithm of the catalogue that has a TLS code point: ML-DSA
/// (draft-ietf-tls-mldsa), SLH-DSA (draft-reddy-tls-slhdsa), Falcon (oqs-provider), in catalogue
/// order. Classical schemes stay with rustls's aws-lc-rs provider.
pub fn schemes() -> &'static [Scheme] {
    static SCHEMES: OnceLock<Vec<Scheme>> = OnceLock::new();
    SCHEMES.get_or_init(|| {
        catalogue::signatures()
            .iter()
            .filter(|a| a.family.is_post_quantum())
            .filter_map(|a| {
                a.tls_scheme.map(|cp| Scheme {
                    algorithm: a,
                    scheme: SignatureScheme::from(cp.value),
                })
            })
            .collect()
    })
}

/// The scheme pqkit uses for `algorithm`, if it signs with it in TLS.
pub fn for_algorithm(algorithm: &SignatureAlgorithm) -> Option<&'static Scheme> {
    schemes()
        .iter()
        .find(|s| core::ptr::eq(s.algorithm, algorithm))
}

/// The IANA name of any signature scheme (pqkit's, or rustls's own name).
pub fn name(scheme: SignatureScheme) -> String {
    let wire = u16::from(scheme);
    catalogue::signatures()
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
        for s in schemes() {
            let wire = u16::from(s.scheme);
            let cp = s.algorithm.tls_scheme.expect("catalogue code point");
            assert_eq!(wire, cp.value, "{}", s.algorithm.name);
        }
        // rustls names the ML-DSA code points; pqkit must match on those variants.
        let ml_dsa: Vec<_> = schemes().iter().take(3).map(|s| s.scheme).collect();
        assert_eq!(
            ml_dsa,
            [
                SignatureScheme::ML_DSA_44,
                SignatureScheme::ML_DSA_65,
                SignatureScheme::ML_DSA_87
            ]
        );
        // 12 SLH-DSA + 2 Falcon + 3 ML-DSA.
        assert_eq!(schemes().len(), 17);
    }
}
