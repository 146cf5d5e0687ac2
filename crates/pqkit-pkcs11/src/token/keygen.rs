//! Key pairs generated or imported here (PKCS#11 3.2 §5.15): templates to attributes, stateful
//! keys with their state files.

use super::*;

/// The common attributes of a key pair made or imported here.
fn key_pair_attrs(
    kind: &mech::KeyKind,
    vk: &[u8],
    spki: Vec<u8>,
    pkcs8: Option<&[u8]>,
    mechanism: CK_MECHANISM_TYPE,
    kem: bool,
) -> (Attributes, Attributes) {
    let mut public: Attributes = [
        (CKA_CLASS, ulong(CKO_PUBLIC_KEY)),
        (CKA_KEY_TYPE, ulong(kind.key_type)),
        (CKA_TOKEN, boolean(false)),
        (CKA_PRIVATE, boolean(false)),
        (CKA_LOCAL, boolean(true)),
        (CKA_KEY_GEN_MECHANISM, ulong(mechanism)),
        (CKA_PUBLIC_KEY_INFO, spki.clone()),
    ]
    .into();
    let mut private: Attributes = [
        (CKA_PUBLIC_KEY_INFO, spki),
        (CKA_CLASS, ulong(CKO_PRIVATE_KEY)),
        (CKA_KEY_TYPE, ulong(kind.key_type)),
        (CKA_TOKEN, boolean(false)),
        (CKA_PRIVATE, boolean(true)),
        (CKA_SENSITIVE, boolean(true)),
        (CKA_EXTRACTABLE, boolean(false)),
        (CKA_ALWAYS_SENSITIVE, boolean(true)),
        (CKA_NEVER_EXTRACTABLE, boolean(true)),
        (CKA_LOCAL, boolean(true)),
        (CKA_KEY_GEN_MECHANISM, ulong(mechanism)),
    ]
    .into();
    if kem {
        public.insert(CKA_ENCAPSULATE, boolean(true));
        private.insert(CKA_DECAPSULATE, boolean(true));
    } else {
        public.insert(CKA_VERIFY, boolean(true));
        private.insert(CKA_SIGN, boolean(true));
    }
    match mech::ec_params_of(kind.name) {
        Some(params) => {
            // CKA_EC_POINT: the DER OCTET STRING of the point (PKCS#11 3.2 §6.3.3, §6.5.3).
            let point = der::asn1::OctetString::new(vk.to_vec())
                .ok()
                .and_then(|o| der::Encode::to_der(&o).ok())
                .unwrap_or_default();
            for a in [&mut public, &mut private] {
                a.insert(CKA_EC_PARAMS, params.to_vec());
            }
            public.insert(CKA_EC_POINT, point);
        }
        None => {
            for a in [&mut public, &mut private] {
                a.insert(CKA_PARAMETER_SET, ulong(kind.parameter_set));
            }
            public.insert(CKA_VALUE, vk.to_vec());
        }
    }
    if let Some(der) = pkcs8 {
        private.insert(mech::CKA_PQKIT_PKCS8, der.to_vec());
    }
    (public, private)
}

fn template_kind(
    m: &Mechanism,
    public: &Attributes,
    private: &Attributes,
) -> Result<&'static mech::KeyKind> {
    let either =
        |t| -> Result<Option<CK_ULONG>> { Ok(get_ulong(public, t)?.or(get_ulong(private, t)?)) };
    let ec = public
        .get(&CKA_EC_PARAMS)
        .or(private.get(&CKA_EC_PARAMS))
        .map(Vec::as_slice);
    let ec = match (m.key_type, ec) {
        (CKK_EC_EDWARDS, None) => Some(mech::ED25519_PARAMS),
        (_, ec) => ec,
    };
    let set = either(CKA_PARAMETER_SET)?;
    if matches!(m.key_type, CKK_EC | CKK_EC_EDWARDS) {
        mech::kind_for(m.key_type, None, ec).ok_or(CKR_CURVE_NOT_SUPPORTED)
    } else {
        let set = set.ok_or(CKR_TEMPLATE_INCOMPLETE)?;
        mech::kind_for(m.key_type, Some(set), None).ok_or(CKR_ATTRIBUTE_VALUE_INVALID)
    }
}

pub(super) fn generate(
    m: &'static Mechanism,
    public: &Attributes,
    private: &Attributes,
) -> Result<(Attributes, Attributes)> {
    let kind = template_kind(m, public, private)?;
    if m.key_type == CKK_ML_KEM {
        let alg = catalogue::kem(kind.name).map_err(core_rv)?;
        let dk = alg.generate().map_err(core_rv)?;
        let pkcs8 =
            pqkit_pki::key::decapsulation_key_to_pkcs8(&dk, pqkit_pki::key::KeyFormat::Seed)
                .map_err(|_| CKR_FUNCTION_FAILED)?;
        let ek = dk.encapsulation_key();
        let spki =
            pqkit_pki::key::encapsulation_key_spki_der(ek).map_err(|_| CKR_FUNCTION_FAILED)?;
        return Ok(key_pair_attrs(
            kind,
            ek.as_bytes(),
            spki,
            Some(&pkcs8),
            m.ty,
            true,
        ));
    }
    let alg = catalogue::signature(kind.name).map_err(core_rv)?;
    let key = alg.generate().map_err(core_rv)?;
    let pkcs8 = pqkit_pki::key::signing_key_to_pkcs8(&key, pqkit_pki::key::KeyFormat::Seed)
        .map_err(|_| CKR_FUNCTION_FAILED)?;
    let vk = key.verifying_key();
    let spki = pqkit_pki::key::spki_der(&vk).map_err(|_| CKR_FUNCTION_FAILED)?;
    Ok(key_pair_attrs(
        kind,
        vk.as_bytes(),
        spki,
        Some(&pkcs8),
        m.ty,
        false,
    ))
}

/// The LMS/LM-OTS types of each HSS level from CKA_HSS_LEVELS with CKA_HSS_LMS_TYPES /
/// CKA_HSS_LMOTS_TYPES (arrays of CK_ULONG) or CKA_HSS_LMS_TYPE / CKA_HSS_LMOTS_TYPE (one type
/// for every level) (PKCS#11 3.2 §6.64.3).
fn hss_levels(t: &Attributes) -> Result<Vec<pqkit_hbs::hss::Level>> {
    let levels = get_ulong(t, CKA_HSS_LEVELS)?.ok_or(CKR_TEMPLATE_INCOMPLETE)?;
    let levels = usize::try_from(levels)
        .ok()
        .filter(|l| (1..=8).contains(l))
        .ok_or(CKR_ATTRIBUTE_VALUE_INVALID)?;
    let array = |many: CK_ATTRIBUTE_TYPE, one: CK_ATTRIBUTE_TYPE| -> Result<Vec<u32>> {
        let values: Vec<CK_ULONG> = match (t.get(&many), get_ulong(t, one)?) {
            (Some(v), _) => v
                .chunks(8)
                .map(|c| c.try_into().map(CK_ULONG::from_ne_bytes))
                .collect::<std::result::Result<_, _>>()
                .map_err(|_| CKR_ATTRIBUTE_VALUE_INVALID)?,
            (None, Some(v)) => vec![v; levels],
            (None, None) => return Err(CKR_TEMPLATE_INCOMPLETE),
        };
        if values.len() != levels {
            return Err(CKR_ATTRIBUTE_VALUE_INVALID);
        }
        values
            .into_iter()
            .map(|v| u32::try_from(v).map_err(|_| CKR_ATTRIBUTE_VALUE_INVALID))
            .collect()
    };
    let lms = array(CKA_HSS_LMS_TYPES, CKA_HSS_LMS_TYPE)?;
    let ots = array(CKA_HSS_LMOTS_TYPES, CKA_HSS_LMOTS_TYPE)?;
    lms.iter()
        .zip(&ots)
        .map(|(l, o)| {
            Ok((
                pqkit_hbs::params::lms_by_code(*l).map_err(|_| CKR_ATTRIBUTE_VALUE_INVALID)?,
                pqkit_hbs::params::ots_by_code(*o).map_err(|_| CKR_ATTRIBUTE_VALUE_INVALID)?,
            ))
        })
        .collect()
}

/// Generates an HSS / XMSS / XMSS^MT key whose state file (under the token's `hbs/`) keeps its
/// secrets sealed under a key derived from the token's data key: the file alone cannot sign.
pub(super) fn generate_stateful(
    m: &'static Mechanism,
    public: &Attributes,
    private: &Attributes,
    store: &Store,
    data_key: &DataKey,
) -> Result<(Attributes, Attributes, StatefulKey)> {
    let mut both = public.clone();
    both.extend(private.iter().map(|(k, v)| (*k, v.clone())));
    let id = store.new_id();
    let file = format!("{id}.state");
    let path = store.hbs_dir().join(&file);
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let seal = SealKey::new(data_key.derive(&state_seal_label(file.as_bytes())));
    let new = match m.key_type {
        CKK_HSS => NewKey::hss(&path, &hss_levels(&both)?, threads),
        _ => {
            let oid = get_ulong(&both, CKA_PARAMETER_SET)?.ok_or(CKR_TEMPLATE_INCOMPLETE)?;
            let oid = u32::try_from(oid).map_err(|_| CKR_ATTRIBUTE_VALUE_INVALID)?;
            let params = pqkit_hbs::xmss::by_oid(oid, m.key_type == CKK_XMSSMT)
                .map_err(|_| CKR_ATTRIBUTE_VALUE_INVALID)?;
            NewKey::xmss(&path, params, threads)
        }
    }
    .map_err(state_rv)?;
    let ledger = store.ledger().map_err(store_rv)?;
    let key = new.sealed(&seal).commit(ledger).map_err(state_rv)?;
    let pk = key.public_key();
    let spki = pk.to_spki_der().map_err(|_| CKR_FUNCTION_FAILED)?;
    let remaining = key.status().remaining;
    let mut public: Attributes = [
        (CKA_CLASS, ulong(CKO_PUBLIC_KEY)),
        (CKA_KEY_TYPE, ulong(m.key_type)),
        (CKA_VALUE, pk.to_bytes()),
        (CKA_PUBLIC_KEY_INFO, spki.clone()),
        (CKA_VERIFY, boolean(true)),
        (CKA_LOCAL, boolean(true)),
        (CKA_KEY_GEN_MECHANISM, ulong(m.ty)),
    ]
    .into();
    let mut private: Attributes = [
        (CKA_CLASS, ulong(CKO_PRIVATE_KEY)),
        (CKA_KEY_TYPE, ulong(m.key_type)),
        (CKA_PRIVATE, boolean(true)),
        (CKA_SENSITIVE, boolean(true)),
        (CKA_EXTRACTABLE, boolean(false)),
        (CKA_ALWAYS_SENSITIVE, boolean(true)),
        (CKA_NEVER_EXTRACTABLE, boolean(true)),
        (CKA_SIGN, boolean(true)),
        (CKA_LOCAL, boolean(true)),
        (CKA_KEY_GEN_MECHANISM, ulong(m.ty)),
        (CKA_HSS_KEYS_REMAINING, ulong(remaining as CK_ULONG)),
        (mech::CKA_PQKIT_STATE_FILE, file.into_bytes()),
        (CKA_PUBLIC_KEY_INFO, spki.clone()),
    ]
    .into();
    if m.key_type != CKK_HSS {
        for a in [&mut public, &mut private] {
            a.insert(
                CKA_PARAMETER_SET,
                get_ulong(&both, CKA_PARAMETER_SET)?
                    .map(ulong)
                    .unwrap_or_default(),
            );
        }
    }
    Ok((public, private, key))
}

/// A private key from C_CreateObject: CKA_PQKIT_PKCS8, or CKA_KEY_TYPE + CKA_PARAMETER_SET with
/// CKA_SEED (ML-DSA ξ, ML-KEM d‖z) or CKA_VALUE (the expanded key).
pub(super) fn private_key_from_template(t: &Attributes) -> Result<Attributes> {
    let pkcs8 = match t.get(&mech::CKA_PQKIT_PKCS8) {
        Some(der) => Zeroizing::new(der.clone()),
        None => {
            let key_type = get_ulong(t, CKA_KEY_TYPE)?.ok_or(CKR_TEMPLATE_INCOMPLETE)?;
            let kind = mech::kind_for(
                key_type,
                get_ulong(t, CKA_PARAMETER_SET)?,
                t.get(&CKA_EC_PARAMS).map(Vec::as_slice),
            )
            .ok_or(CKR_ATTRIBUTE_VALUE_INVALID)?;
            let bad = |_| CKR_ATTRIBUTE_VALUE_INVALID;
            // The key is kept in the form it was given: its seed, or its expanded encoding.
            use pqkit_pki::key::KeyFormat;
            let (material, format) = match (t.get(&CKA_SEED), t.get(&CKA_VALUE)) {
                (Some(seed), _) => (seed, KeyFormat::Seed),
                (None, Some(value)) => (value, KeyFormat::Expanded),
                _ => return Err(CKR_TEMPLATE_INCOMPLETE),
            };
            let from_seed = format == KeyFormat::Seed;
            let der = if key_type == CKK_ML_KEM {
                let alg = catalogue::kem(kind.name).map_err(core_rv)?;
                let dk = if from_seed {
                    alg.generate_from_seed(material)
                } else {
                    alg.decapsulation_key_from_expanded(material)
                }
                .map_err(bad)?;
                pqkit_pki::key::decapsulation_key_to_pkcs8(&dk, format)
            } else {
                let alg = catalogue::signature(kind.name).map_err(core_rv)?;
                let key = if from_seed {
                    alg.signing_key_from_seed(material)
                } else {
                    alg.signing_key_from_expanded(material)
                }
                .map_err(bad)?;
                pqkit_pki::key::signing_key_to_pkcs8(&key, format)
            };
            der.map_err(|_| CKR_FUNCTION_FAILED)?
        }
    };
    let (private, _) = imported_pair(&pkcs8)?;
    let mut template = t.clone();
    template.remove(&mech::CKA_PQKIT_PKCS8);
    let mut attrs = merge(private, &template);
    // Imported: never "local", and only as sensitive as it always was from here on.
    attrs.insert(CKA_LOCAL, boolean(false));
    attrs.remove(&CKA_KEY_GEN_MECHANISM);
    Ok(attrs)
}

/// The private and public attributes of an imported PKCS#8 key.
fn imported_pair(pkcs8: &[u8]) -> Result<(Attributes, Attributes)> {
    let bad = |_| CKR_ATTRIBUTE_VALUE_INVALID;
    match pqkit_pki::key::pkcs8_algorithm(pkcs8).map_err(bad)? {
        pqkit_pki::key::Algorithm::Signature(alg) => {
            let kind = mech::kind_of(alg.name).ok_or(CKR_KEY_TYPE_INCONSISTENT)?;
            let key = pqkit_pki::key::signing_key_from_pkcs8(pkcs8).map_err(bad)?;
            let vk = key.verifying_key();
            let spki = pqkit_pki::key::spki_der(&vk).map_err(|_| CKR_FUNCTION_FAILED)?;
            let (public, private) = key_pair_attrs(
                kind,
                vk.as_bytes(),
                spki,
                Some(pkcs8),
                CK_UNAVAILABLE_INFORMATION,
                false,
            );
            Ok((private, public))
        }
        pqkit_pki::key::Algorithm::Kem(alg) => {
            let kind = mech::kind_of(alg.name).ok_or(CKR_KEY_TYPE_INCONSISTENT)?;
            let dk = pqkit_pki::key::decapsulation_key_from_pkcs8(pkcs8).map_err(bad)?;
            let ek = dk.encapsulation_key();
            let spki =
                pqkit_pki::key::encapsulation_key_spki_der(ek).map_err(|_| CKR_FUNCTION_FAILED)?;
            let (public, private) = key_pair_attrs(
                kind,
                ek.as_bytes(),
                spki,
                Some(pkcs8),
                CK_UNAVAILABLE_INFORMATION,
                true,
            );
            Ok((private, public))
        }
    }
}

/// A public key from C_CreateObject: CKA_KEY_TYPE with CKA_PARAMETER_SET and CKA_VALUE, or
/// CKA_EC_PARAMS and CKA_EC_POINT.
pub(super) fn public_key_from_template(t: &Attributes) -> Result<Attributes> {
    let mut attrs = t.clone();
    // The key must decode (and, for ML-KEM, pass FIPS 203 §7.2's check) before it is stored.
    let usage = if get_ulong(t, CKA_KEY_TYPE)? == Some(CKK_ML_KEM) {
        if !t.contains_key(&CKA_VALUE) {
            return Err(CKR_TEMPLATE_INCOMPLETE);
        }
        encapsulation_key(t).map_err(|_| CKR_ATTRIBUTE_VALUE_INVALID)?;
        CKA_ENCAPSULATE
    } else {
        public_op_key(t)?;
        CKA_VERIFY
    };
    attrs.entry(CKA_PRIVATE).or_insert_with(|| boolean(false));
    attrs.entry(usage).or_insert_with(|| boolean(true));
    Ok(attrs)
}
