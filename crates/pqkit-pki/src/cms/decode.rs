//! Reading a SignedData: decoding (BER converted), its content, its certificates, its
//! signers' identifiers and algorithms in words, and the version RFC 5652 §5.1 requires.

use cms::cert::CertificateChoices;
use cms::content_info::ContentInfo;
use cms::signed_data::{SignedData, SignerIdentifier};
use der::asn1::OctetString;
use der::{Decode, Encode};
use spki::{AlgorithmIdentifierOwned, SubjectPublicKeyInfoOwned};
use x509_cert::Certificate;

use super::error::CmsError;
use super::oids::{ID_DATA, ID_SIGNED_DATA, RSA_ENCRYPTION};

/// Decodes a ContentInfo holding a SignedData (DER, or BER converted to DER).
///
/// # Errors
/// [`CmsError::Malformed`].
pub(crate) fn decode(der: &[u8]) -> Result<SignedData, CmsError> {
    let bad = |e: der::Error| CmsError::Malformed(e.to_string());
    let der = super::ber::to_der(der).map_err(CmsError::Malformed)?;
    let info = ContentInfo::from_der(&der).map_err(bad)?;
    if info.content_type != ID_SIGNED_DATA {
        return Err(CmsError::Malformed(format!(
            "content type {} is not id-signedData",
            info.content_type
        )));
    }
    let sd = info.content.decode_as::<SignedData>().map_err(bad)?;
    if sd.signer_infos.0.len() > MAX_SIGNERS {
        return Err(CmsError::Malformed(format!(
            "{} signers; at most {MAX_SIGNERS} are read",
            sd.signer_infos.0.len()
        )));
    }
    Ok(sd)
}

/// The attached content's octets, if any.
pub(crate) fn attached_content(sd: &SignedData) -> Result<Option<Vec<u8>>, CmsError> {
    sd.encap_content_info
        .econtent
        .as_ref()
        .map(|any| {
            any.decode_as::<OctetString>()
                .map(OctetString::into_bytes)
                .map_err(|e| CmsError::Malformed(format!("eContent: {e}")))
        })
        .transpose()
}

/// The certificates (DER) a SignedData carries.
pub(crate) fn carried_certificates(sd: &SignedData) -> Vec<Vec<u8>> {
    sd.certificates
        .iter()
        .flat_map(|set| set.0.iter())
        .filter_map(|c| match c {
            CertificateChoices::Certificate(cert) => cert.to_der().ok(),
            CertificateChoices::Other(_) => None,
        })
        .collect()
}

/// The most SignerInfos read from one SignedData.
pub(crate) const MAX_SIGNERS: usize = 64;

/// The most certificates read from one SignedData and beside it.
pub(crate) const MAX_CERTIFICATES: usize = 256;

/// Certificates, each decoded once (those that do not decode are left out), to find signers'
/// certificates among.
pub(crate) struct CertPool(Vec<(Vec<u8>, Certificate)>);

impl CertPool {
    /// The certificates of `ders` that decode, in order.
    ///
    /// # Errors
    /// [`CmsError::Malformed`] for more than [`MAX_CERTIFICATES`].
    pub(crate) fn new(ders: Vec<Vec<u8>>) -> Result<Self, CmsError> {
        if ders.len() > MAX_CERTIFICATES {
            return Err(CmsError::Malformed(format!(
                "{} certificates; at most {MAX_CERTIFICATES} are read",
                ders.len()
            )));
        }
        Ok(Self(
            ders.into_iter()
                .filter_map(|d| Certificate::from_der(&d).ok().map(|c| (d, c)))
                .collect(),
        ))
    }

    /// The certificates (DER).
    pub(crate) fn ders(&self) -> impl Iterator<Item = &Vec<u8>> {
        self.0.iter().map(|(d, _)| d)
    }

    /// The certificate a signer identifier names: its DER and its decoded form.
    pub(crate) fn find(&self, sid: &SignerIdentifier) -> Option<(&Vec<u8>, &Certificate)> {
        self.0
            .iter()
            .find(|(_, cert)| {
                let tbs = &cert.tbs_certificate;
                match sid {
                    SignerIdentifier::IssuerAndSerialNumber(is) => {
                        tbs.issuer == is.issuer && tbs.serial_number == is.serial_number
                    }
                    SignerIdentifier::SubjectKeyIdentifier(ski) => tbs
                        .extensions
                        .iter()
                        .flatten()
                        .filter(|e| {
                            e.extn_id == const_oid::db::rfc5280::ID_CE_SUBJECT_KEY_IDENTIFIER
                        })
                        .any(|e| {
                            OctetString::from_der(e.extn_value.as_bytes())
                                .is_ok_and(|v| v.as_bytes() == ski.0.as_bytes())
                        }),
                }
            })
            .map(|(d, c)| (d, c))
    }
}

/// The signer identifier in words.
pub(crate) fn sid_words(sid: &SignerIdentifier) -> String {
    match sid {
        SignerIdentifier::IssuerAndSerialNumber(is) => {
            format!("issuer {}, serial {}", is.issuer, is.serial_number)
        }
        SignerIdentifier::SubjectKeyIdentifier(ski) => {
            let hex: String = ski
                .0
                .as_bytes()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            format!("subjectKeyIdentifier {hex}")
        }
    }
}

pub(crate) fn subject_of(der: &[u8]) -> String {
    Certificate::from_der(der).map_or_else(
        |_| "undecodable certificate".into(),
        |c| c.tbs_certificate.subject.to_string(),
    )
}

/// The signature algorithm's name: the catalogue's (for the signer's key, when its SPKI is
/// known: RSA key sizes share one identifier), HSS/XMSS, or the OID.
pub(crate) fn algorithm_name(
    id: &AlgorithmIdentifierOwned,
    signer: Option<&SubjectPublicKeyInfoOwned>,
) -> String {
    if crate::stateful::is_stateful(id) {
        return match id.oid {
            pqkit_hbs::public::HSS_OID => "HSS/LMS".into(),
            pqkit_hbs::public::XMSS_OID => "XMSS".into(),
            _ => "XMSS^MT".into(),
        };
    }
    if id.oid == RSA_ENCRYPTION {
        return "RSA (rsaEncryption)".into();
    }
    let Ok(contents) = crate::key::algorithm_contents(id) else {
        return id.oid.to_string();
    };
    if let Some(alg) = signer.and_then(|spki| {
        pqkit_core::catalogue::signature_by_algorithms(
            &contents,
            &crate::key::algorithm_contents(&spki.algorithm).ok()?,
            spki.subject_public_key.as_bytes()?.len(),
        )
    }) {
        return alg.name.into();
    }
    let names: Vec<&str> = pqkit_core::catalogue::signatures()
        .iter()
        .filter(|a| a.signature_algorithm_id == contents.as_slice())
        .map(|a| a.name)
        .collect();
    match names.as_slice() {
        [] => id.oid.to_string(),
        [one] => (*one).into(),
        // One identifier, several key sizes (RSA-PSS-2048/3072/4096): the name without the size.
        [first, ..] => first
            .rsplit_once('-')
            .map_or(*first, |(stem, _)| stem)
            .into(),
    }
}

/// A CmsVersion as its number.
pub(crate) fn version_number(v: cms::content_info::CmsVersion) -> u8 {
    v.to_der()
        .ok()
        .and_then(|d| d.last().copied())
        .unwrap_or(u8::MAX)
}

/// The SignedData version RFC 5652 §5.1 requires for what it holds (no attribute
/// certificates, which pqkit does not read: 5 with other certificate or CRL formats, 3 with a
/// version-3 SignerInfo or content other than id-data, else 1).
pub(crate) fn expected_version(sd: &SignedData) -> u8 {
    use cms::revocation::RevocationInfoChoice;
    let other_certs = sd
        .certificates
        .iter()
        .flat_map(|s| s.0.iter())
        .any(|c| matches!(c, CertificateChoices::Other(_)));
    let other_crls = sd
        .crls
        .iter()
        .flat_map(|s| s.0.iter())
        .any(|c| matches!(c, RevocationInfoChoice::Other(_)));
    let v3_signer = sd
        .signer_infos
        .0
        .iter()
        .any(|si| matches!(si.sid, SignerIdentifier::SubjectKeyIdentifier(_)));
    if other_certs || other_crls {
        5
    } else if v3_signer || sd.encap_content_info.econtent_type != ID_DATA {
        3
    } else {
        1
    }
}
