//! Creating objects in a PKCS#11 token, with the templates the standard gives:
//! - a key pair generated inside any token by its algorithm's name ([`template`], [`generate`]:
//!   PKCS#11 3.2 §6.67 ML-DSA, §6.69 SLH-DSA, §6.68 ML-KEM, §6.64 HSS, §6.65 XMSS and XMSS^MT,
//!   §6.3 EC and EdDSA, and pqkit's vendor-defined Falcon generator) — through cryptoki where it
//!   has the mechanism, else through the raw function list;
//! - a PKCS#8 signing key imported into pqkit's token ([`import_signing_key`]: the private key
//!   non-extractable, in the vendor attribute CKA_PQKIT_PKCS8, beside its public key);
//! - X.509 certificates ([`import_certificate`]: CKO_CERTIFICATE, CKC_X_509, §4.6.3);
//! - and the RFC 7512 URI that names the new object ([`uri_of`]).

use std::path::Path;

use cryptoki::mechanism::Mechanism;
use cryptoki::object::{
    Attribute, AttributeType, CertificateType, KeyType, ObjectClass, ParameterSetType,
};
use cryptoki::session::Session;

use super::raw::{RawAttribute, RawModule};
use super::{ClientError, percent_encode};
use crate::mech;

/// How a key pair of one algorithm is generated: the mechanism and the attributes each half
/// gets beyond CKA_TOKEN, CKA_LABEL and CKA_ID.
pub enum Template {
    /// A mechanism cryptoki has a type for.
    Cryptoki {
        /// The generation mechanism.
        mechanism: Mechanism<'static>,
        /// The public key's extra attribute (CKA_PARAMETER_SET or CKA_EC_PARAMS).
        public: Vec<Attribute>,
    },
    /// A mechanism cryptoki has no type for (CKM_HSS_KEY_PAIR_GEN, CKM_XMSS*_KEY_PAIR_GEN,
    /// pqkit's Falcon generator), called through the raw function list.
    Raw {
        /// The generation mechanism.
        mechanism: cryptoki_sys::CK_MECHANISM_TYPE,
        /// The public key's extra attributes.
        public: Vec<RawAttribute>,
        /// The private key's extra attributes.
        private: Vec<RawAttribute>,
    },
}

/// The template that generates a key pair of `alg`: a catalogue signature or KEM name, an HSS
/// preset ("L2_H10_W4") or an XMSS / XMSS^MT parameter set name.
///
/// # Errors
/// [`ClientError::Unsupported`] for a name no token generates (an RSA key, an unknown name).
pub fn template(alg: &str) -> Result<Template, ClientError> {
    if let Some((mechanism, private)) = stateful(alg) {
        return Ok(Template::Raw {
            mechanism,
            public: Vec::new(),
            private,
        });
    }
    let kind = pqkit_core::catalogue::signature(alg)
        .map(|a| a.name)
        .or_else(|_| pqkit_core::catalogue::kem(alg).map(|k| k.name))
        .ok()
        .and_then(mech::kind_of)
        .ok_or_else(|| {
            ClientError::Unsupported(format!(
                "{alg}: not an algorithm a token generates (see pqkit list, pqkit hbs params)"
            ))
        })?;
    let mechanism = match kind.key_type {
        cryptoki_sys::CKK_ML_DSA => Mechanism::MlDsaKeyPairGen,
        cryptoki_sys::CKK_SLH_DSA => Mechanism::SlhDsaKeyPairGen,
        cryptoki_sys::CKK_ML_KEM => Mechanism::MlKemKeyPairGen,
        cryptoki_sys::CKK_EC => Mechanism::EccKeyPairGen,
        cryptoki_sys::CKK_EC_EDWARDS => Mechanism::EccEdwardsKeyPairGen,
        mech::CKK_PQKIT_FALCON => {
            // Falcon's generator is vendor-defined (no FIPS 206 yet): pqkit's token has it.
            return Ok(Template::Raw {
                mechanism: mech::CKM_PQKIT_FALCON_KEY_PAIR_GEN,
                public: vec![(
                    cryptoki_sys::CKA_PARAMETER_SET,
                    kind.parameter_set.to_ne_bytes().to_vec(),
                )],
                private: Vec::new(),
            });
        }
        _ => {
            return Err(ClientError::Unsupported(format!(
                "{alg}: no key-generation mechanism; import it with pqkit token import"
            )));
        }
    };
    let public = match mech::ec_params_of(kind.name) {
        Some(params) => Attribute::EcParams(params.to_vec()),
        None => parameter_set(kind.parameter_set)?,
    };
    Ok(Template::Cryptoki {
        mechanism,
        public: vec![public],
    })
}

/// Generates a key pair from `template` in the session's token, as token objects labelled
/// `label` (and with CKA_ID `id`). `module` is the module's path, for the raw function list.
///
/// # Errors
/// [`ClientError::Pkcs11`] or [`ClientError::Rv`] with the token's CK_RV.
pub fn generate(
    session: &Session,
    module: &Path,
    template: Template,
    label: &str,
    id: Option<&[u8]>,
) -> Result<(), ClientError> {
    match template {
        Template::Cryptoki { mechanism, public } => {
            let private = common(label, id);
            let mut public_template = private.clone();
            public_template.extend(public);
            session.generate_key_pair(&mechanism, &public_template, &private)?;
        }
        Template::Raw {
            mechanism,
            public,
            private,
        } => {
            let slot = session.get_session_info()?.slot_id();
            let mut common = vec![
                (cryptoki_sys::CKA_TOKEN, vec![1u8]),
                (cryptoki_sys::CKA_LABEL, label.as_bytes().to_vec()),
            ];
            if let Some(id) = id {
                common.push((cryptoki_sys::CKA_ID, id.to_vec()));
            }
            let mut public_template = common.clone();
            public_template.extend(public);
            common.extend(private);
            let raw = RawModule::load(module).map_err(ClientError::Rv)?;
            raw.generate_key_pair(slot.id(), mechanism, public_template, common)
                .map_err(ClientError::Rv)?;
        }
    }
    Ok(())
}

/// CKA_TOKEN, CKA_LABEL and (when given) CKA_ID of a new token object.
fn common(label: &str, id: Option<&[u8]>) -> Vec<Attribute> {
    let mut common = vec![
        Attribute::Token(true),
        Attribute::Label(label.as_bytes().to_vec()),
    ];
    if let Some(id) = id {
        common.push(Attribute::Id(id.to_vec()));
    }
    common
}

/// CKA_PARAMETER_SET of a key kind.
fn parameter_set(set: u64) -> Result<Attribute, ClientError> {
    Ok(Attribute::ParameterSet(
        ParameterSetType::try_from(cryptoki::types::Ulong::from(set))
            .map_err(|e| ClientError::Unsupported(e.to_string()))?,
    ))
}

/// Stores the DER X.509 certificate `der` as a token object (CKO_CERTIFICATE, CKC_X_509 with
/// CKA_VALUE and CKA_SUBJECT, PKCS#11 3.2 §4.6.3).
///
/// # Errors
/// [`ClientError::Malformed`] for a certificate that does not decode; the token's errors.
pub fn import_certificate(
    session: &Session,
    der: &[u8],
    label: &str,
    id: Option<&[u8]>,
) -> Result<(), ClientError> {
    let parsed = <x509_cert::Certificate as der::Decode>::from_der(der)
        .map_err(|e| ClientError::Malformed(format!("certificate: {e}")))?;
    let subject = der::Encode::to_der(&parsed.tbs_certificate.subject)
        .map_err(|e| ClientError::Malformed(format!("certificate subject: {e}")))?;
    let mut t = common(label, id);
    t.extend([
        Attribute::Class(ObjectClass::CERTIFICATE),
        Attribute::CertificateType(CertificateType::X_509),
        Attribute::Value(der.to_vec()),
        Attribute::Subject(subject),
    ]);
    session.create_object(&t)?;
    Ok(())
}

/// Imports the PKCS#8 signing key `pkcs8` into pqkit's token: a private key object that is
/// sensitive and not extractable (the PKCS#8 in the vendor attribute CKA_PQKIT_PKCS8, which
/// only pqkit's module reads) and its public key (CKA_VALUE, or CKA_EC_PARAMS + CKA_EC_POINT).
///
/// # Errors
/// [`ClientError::Malformed`] for a key that does not decode; [`ClientError::Unsupported`] for
/// an algorithm a token does not hold; the token's errors.
pub fn import_signing_key(
    session: &Session,
    pkcs8: &[u8],
    label: &str,
    id: Option<&[u8]>,
) -> Result<(), ClientError> {
    let key = pqkit_pki::key::signing_key_from_pkcs8(pkcs8)
        .map_err(|e| ClientError::Malformed(e.to_string()))?;
    let vk = key.verifying_key();
    let name = vk.algorithm().name;
    let kind = mech::kind_of(name)
        .ok_or_else(|| ClientError::Unsupported(format!("a token does not hold {name} keys")))?;
    let key_type =
        KeyType::try_from(kind.key_type).map_err(|e| ClientError::Unsupported(e.to_string()))?;
    let mut private = common(label, id);
    private.extend([
        Attribute::Class(ObjectClass::PRIVATE_KEY),
        Attribute::KeyType(key_type),
        Attribute::Private(true),
        Attribute::Sensitive(true),
        Attribute::Extractable(false),
        Attribute::Sign(true),
        Attribute::VendorDefined((
            AttributeType::VendorDefined(mech::CKA_PQKIT_PKCS8),
            pkcs8.to_vec(),
        )),
    ]);
    session.create_object(&private)?;
    let mut public = common(label, id);
    public.extend([
        Attribute::Class(ObjectClass::PUBLIC_KEY),
        Attribute::KeyType(key_type),
        Attribute::Verify(true),
    ]);
    match mech::ec_params_of(kind.name) {
        Some(params) => {
            let point = der::asn1::OctetString::new(vk.as_bytes().to_vec())
                .and_then(|o| der::Encode::to_der(&o))
                .map_err(|e| ClientError::Malformed(format!("EC point: {e}")))?;
            public.extend([
                Attribute::EcParams(params.to_vec()),
                Attribute::EcPoint(point),
            ]);
        }
        None => public.extend([
            parameter_set(kind.parameter_set)?,
            Attribute::Value(vk.as_bytes().to_vec()),
        ]),
    }
    session.create_object(&public)?;
    Ok(())
}

/// The `pkcs11:` URI of an object (RFC 7512: each value percent-encoded; the id every byte).
pub fn uri_of(token: &str, label: &str, id: Option<&[u8]>) -> String {
    let id = id.map(|i| {
        let escaped: String = i.iter().map(|b| format!("%{b:02X}")).collect();
        format!(";id={escaped}")
    });
    format!(
        "pkcs11:token={};object={}{}",
        percent_encode(token.as_bytes()),
        percent_encode(label.as_bytes()),
        id.unwrap_or_default()
    )
}

/// A stateful key's generation mechanism and private-key template: an HSS preset
/// ("L2_H10_W4": CKA_HSS_LEVELS, CKA_HSS_LMS_TYPES, CKA_HSS_LMOTS_TYPES, PKCS#11 3.2 §6.64.3)
/// or an XMSS / XMSS^MT parameter set name (CKA_PARAMETER_SET = its RFC 8391 OID, §6.65.3).
fn stateful(alg: &str) -> Option<(cryptoki_sys::CK_MECHANISM_TYPE, Vec<RawAttribute>)> {
    let ulongs = |v: &[u64]| v.iter().flat_map(|x| x.to_ne_bytes()).collect::<Vec<u8>>();
    if let Ok(shape) = pqkit_hbs::preset::Shape::parse(alg) {
        let levels = shape.levels();
        let lms: Vec<u64> = levels.iter().map(|(l, _)| u64::from(l.code)).collect();
        let ots: Vec<u64> = levels.iter().map(|(_, o)| u64::from(o.code)).collect();
        return Some((
            cryptoki_sys::CKM_HSS_KEY_PAIR_GEN,
            vec![
                (cryptoki_sys::CKA_HSS_LEVELS, ulongs(&[levels.len() as u64])),
                (cryptoki_sys::CKA_HSS_LMS_TYPES, ulongs(&lms)),
                (cryptoki_sys::CKA_HSS_LMOTS_TYPES, ulongs(&ots)),
            ],
        ));
    }
    let params = pqkit_hbs::xmss::by_name(alg).ok()?;
    let mechanism = if params.name.starts_with("XMSSMT") {
        cryptoki_sys::CKM_XMSSMT_KEY_PAIR_GEN
    } else {
        cryptoki_sys::CKM_XMSS_KEY_PAIR_GEN
    };
    Some((
        mechanism,
        vec![(
            cryptoki_sys::CKA_PARAMETER_SET,
            ulongs(&[u64::from(params.oid)]),
        )],
    ))
}
