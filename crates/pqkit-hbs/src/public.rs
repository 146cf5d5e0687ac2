//! The public key of any stateful scheme here — HSS, XMSS, XMSS^MT — and its
//! SubjectPublicKeyInfo (RFC 9802 / RFC 9708: the raw public key in the BIT STRING, no
//! parameters): id-alg-hss-lms-hashsig 1.2.840.113549.1.9.16.3.17, id-alg-xmss-hashsig
//! 1.3.6.1.5.5.7.6.34, id-alg-xmssmt-hashsig 1.3.6.1.5.5.7.6.35.

use der::asn1::BitString;
use der::{Decode, Encode};
use spki::{
    AlgorithmIdentifierOwned, ObjectIdentifier, SubjectPublicKeyInfoOwned, SubjectPublicKeyInfoRef,
};

use crate::Error;
use crate::lms::HssPublicKey;
use crate::xmss::XmssPublicKey;

/// id-alg-hss-lms-hashsig (RFC 9708 §3, RFC 9802).
pub const HSS_OID: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.16.3.17");
/// id-alg-xmss-hashsig (RFC 9802 §3).
pub const XMSS_OID: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.6.1.5.5.7.6.34");
/// id-alg-xmssmt-hashsig (RFC 9802 §3).
pub const XMSS_MT_OID: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.6.1.5.5.7.6.35");

/// A stateful scheme's public key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PublicKey {
    /// HSS (RFC 8554 §6.1).
    Hss(HssPublicKey),
    /// XMSS or XMSS^MT (RFC 8391): the parameters say which.
    Xmss(XmssPublicKey),
}

impl PublicKey {
    /// The encoding of RFC 8554 / RFC 8391.
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            Self::Hss(k) => k.to_bytes(),
            Self::Xmss(k) => k.to_bytes(),
        }
    }

    /// Verifies a signature.
    ///
    /// # Errors
    /// [`Error::Malformed`] or [`Error::Invalid`].
    pub fn verify(&self, message: &[u8], signature: &[u8]) -> Result<(), Error> {
        match self {
            Self::Hss(k) => k.verify(message, signature),
            Self::Xmss(k) => k.verify(message, signature),
        }
    }

    /// The one-time key a signature used, as the signer's counter value (HSS: the levels'
    /// leaf indices joined; XMSS: idx). Does not verify.
    ///
    /// # Errors
    /// [`Error::Malformed`] for an undecodable signature.
    pub fn counter(&self, signature: &[u8]) -> Result<u64, Error> {
        match self {
            Self::Hss(k) => k.counter(signature),
            Self::Xmss(k) => k.index(signature),
        }
    }

    /// The scheme's name: "HSS" with its levels, or the XMSS parameter set.
    pub fn name(&self) -> String {
        match self {
            Self::Hss(k) => format!(
                "HSS L={} ({}/{} on top)",
                k.levels, k.top.lms.name, k.top.ots.name
            ),
            Self::Xmss(k) => k.params.name.to_owned(),
        }
    }
}

impl PublicKey {
    /// The AlgorithmIdentifier OID of RFC 9802.
    pub fn oid(&self) -> ObjectIdentifier {
        match self {
            Self::Hss(_) => HSS_OID,
            Self::Xmss(k) if k.params.multi_tree => XMSS_MT_OID,
            Self::Xmss(_) => XMSS_OID,
        }
    }

    /// DER SubjectPublicKeyInfo.
    ///
    /// # Errors
    /// [`Error::Malformed`] when DER encoding fails.
    pub fn to_spki_der(&self) -> Result<Vec<u8>, Error> {
        let spki = SubjectPublicKeyInfoOwned {
            algorithm: AlgorithmIdentifierOwned {
                oid: self.oid(),
                parameters: None,
            },
            subject_public_key: BitString::from_bytes(&self.to_bytes())
                .map_err(|_| Error::Malformed("public key as BIT STRING"))?,
        };
        spki.to_der()
            .map_err(|_| Error::Malformed("SubjectPublicKeyInfo encoding"))
    }

    /// PEM "PUBLIC KEY".
    ///
    /// # Errors
    /// As [`PublicKey::to_spki_der`].
    pub fn to_pem(&self) -> Result<String, Error> {
        der::pem::encode_string("PUBLIC KEY", der::pem::LineEnding::LF, &self.to_spki_der()?)
            .map_err(|_| Error::Malformed("PEM encoding"))
    }

    /// Decodes a DER SubjectPublicKeyInfo with one of the three OIDs.
    ///
    /// # Errors
    /// [`Error::Malformed`] for bad DER, parameters present, or another algorithm; the key's own
    /// decoding errors.
    pub fn from_spki_der(der: &[u8]) -> Result<Self, Error> {
        let spki = SubjectPublicKeyInfoRef::from_der(der)
            .map_err(|_| Error::Malformed("SubjectPublicKeyInfo DER"))?;
        if spki.algorithm.parameters.is_some() {
            return Err(Error::Malformed("parameters must be absent (RFC 9802)"));
        }
        let key = spki
            .subject_public_key
            .as_bytes()
            .ok_or(Error::Malformed("public key BIT STRING has unused bits"))?;
        match spki.algorithm.oid {
            HSS_OID => Ok(Self::Hss(HssPublicKey::from_bytes(key)?)),
            XMSS_OID => Ok(Self::Xmss(XmssPublicKey::from_bytes(key, false)?)),
            XMSS_MT_OID => Ok(Self::Xmss(XmssPublicKey::from_bytes(key, true)?)),
            _ => Err(Error::Malformed("not an HSS, XMSS or XMSS^MT public key")),
        }
    }

    /// Decodes PEM "PUBLIC KEY".
    ///
    /// # Errors
    /// As [`PublicKey::from_spki_der`]; [`Error::Malformed`] for bad PEM.
    pub fn from_pem(text: &str) -> Result<Self, Error> {
        let (label, der) =
            der::pem::decode_vec(text.as_bytes()).map_err(|_| Error::Malformed("PEM"))?;
        if label != "PUBLIC KEY" {
            return Err(Error::Malformed("PEM label is not PUBLIC KEY"));
        }
        Self::from_spki_der(&der)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{LMS, OTS};

    #[test]
    fn spki_round_trip_for_every_kind() {
        let hss = crate::hss::HssSigner::generate(&[(&LMS[0], &OTS[3])], [1; 16], &[2; 32], 1)
            .expect("hss");
        let mt = crate::xmss::XmssSigner::generate(
            crate::xmss::by_name("XMSSMT-SHA2_20/4_256").expect("set"),
            &[1; 32],
            &[2; 32],
            &[3; 32],
            1,
        )
        .expect("xmss^mt");
        for (pk, oid) in [
            (PublicKey::Hss(hss.public_key()), HSS_OID),
            (PublicKey::Xmss(mt.public_key()), XMSS_MT_OID),
        ] {
            assert_eq!(pk.oid(), oid);
            let pem = pk.to_pem().expect("pem");
            assert!(pem.starts_with("-----BEGIN PUBLIC KEY-----"));
            assert_eq!(PublicKey::from_pem(&pem).expect("decode"), pk);
            let der = pk.to_spki_der().expect("der");
            for cut in 0..der.len() {
                assert!(PublicKey::from_spki_der(&der[..cut]).is_err());
            }
        }
    }
}
