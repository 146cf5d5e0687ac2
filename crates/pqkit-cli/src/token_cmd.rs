//! `pqkit token`: create a pqkit token, and list, generate and delete keys in any PKCS#11 token
//! (pqkit's own, SoftHSM, hardware), with pkcs11-tool's habits: a module, a token label, a PIN
//! source, keys named by label and id.

use std::path::{Path, PathBuf};

use cryptoki::mechanism::Mechanism;
use cryptoki::object::{Attribute, AttributeType, ObjectClass};
use pqkit_pkcs11::client::{self, Options, Uri};
use pqkit_pkcs11::config::{Config, SlotConfig};
use pqkit_pkcs11::mech;
use pqkit_pkcs11::store::{InitOptions, Kdf, Store};

use crate::commands::Result;
use crate::failure::{Context, Failure};

/// The module a `pqkit token` command talks to: --pkcs11-module, $PQKIT_PKCS11_MODULE, or
/// pqkit's own libpqkit_pkcs11.so beside the pqkit executable.
fn module(options: &Options) -> PathBuf {
    options
        .module
        .clone()
        .or_else(|| std::env::var_os("PQKIT_PKCS11_MODULE").map(PathBuf::from))
        .unwrap_or_else(|| {
            std::env::current_exe()
                .ok()
                .and_then(|e| e.parent().map(|d| d.join("libpqkit_pkcs11.so")))
                .unwrap_or_else(|| PathBuf::from("libpqkit_pkcs11.so"))
        })
}

/// The global options with the module resolved (flag, environment, pqkit's own).
pub(crate) fn options(module_flag: Option<PathBuf>, pin_source: Option<String>) -> Options {
    let given = Options {
        module: module_flag,
        pin_source,
    };
    Options {
        module: Some(module(&given)),
        pin_source: given.pin_source,
    }
}

fn with_module(options: &Options) -> Options {
    options.clone()
}

/// `pqkit token init`: a new pqkit token directory, added to the module's configuration.
#[allow(clippy::too_many_arguments)]
pub(crate) fn init(
    label: &str,
    dir: Option<&Path>,
    so_pin: &str,
    pin: &str,
    kdf_memory_kib: u32,
    kdf_passes: u32,
    max_pin_attempts: u32,
) -> Result<()> {
    let dir = dir.map_or_else(
        || {
            pqkit_pkcs11::config::data_home()
                .join("pqkit")
                .join("tokens")
                .join(label)
        },
        Path::to_path_buf,
    );
    let options = InitOptions {
        kdf: Kdf {
            memory_kib: kdf_memory_kib,
            passes: kdf_passes,
            lanes: 1,
        },
        max_pin_attempts,
    };
    Store::init(
        &dir,
        label,
        so_pin.as_bytes(),
        Some(pin.as_bytes()),
        &options,
    )
    .about(dir.display())?;
    let path = Config::path();
    let mut config = Config::load_from(&path).about(path.display())?;
    let dir = std::fs::canonicalize(&dir).about(dir.display())?;
    if !config.slots.iter().any(|s| s.dir == dir) {
        config.slots.push(SlotConfig { dir: dir.clone() });
    }
    config.save_to(&path).about(path.display())?;
    eprintln!(
        "token {label:?} in {} (slot {} of {})",
        dir.display(),
        config.slots.len() - 1,
        path.display()
    );
    Ok(())
}

/// `pqkit token list`: every token and its objects (label, id, class, key type).
pub(crate) fn list(token: Option<&str>, options: &Options) -> Result<()> {
    let options = with_module(options);
    let m = client::load_module(options.module.as_deref().unwrap_or(Path::new("")))
        .about("PKCS#11 module")?;
    for slot in m.get_slots_with_token().about("C_GetSlotList")? {
        let info = m.get_token_info(slot).about("C_GetTokenInfo")?;
        let label = info.label().trim_end().to_owned();
        if token.is_some_and(|t| t != label) {
            continue;
        }
        println!(
            "slot {}: token {label:?} ({}, serial {})",
            slot.id(),
            info.model().trim_end(),
            info.serial_number().trim_end()
        );
        let uri = Uri {
            token: Some(label.clone()),
            slot_id: Some(slot.id()),
            ..Uri::default()
        };
        let (_, session) = client::open_session(&uri, &options).about(&label)?;
        for h in session.find_objects(&[]).about("C_FindObjects")? {
            let attrs = session
                .get_attributes(
                    h,
                    &[
                        AttributeType::Class,
                        AttributeType::Label,
                        AttributeType::Id,
                        AttributeType::KeyType,
                    ],
                )
                .unwrap_or_default();
            let mut line = String::from("  ");
            for a in attrs {
                match a {
                    Attribute::Class(c) => line += &format!("{c} "),
                    Attribute::Label(l) => {
                        line += &format!("label={:?} ", String::from_utf8_lossy(&l))
                    }
                    Attribute::Id(id) => line += &format!("id={} ", hex::encode(id)),
                    Attribute::KeyType(k) => line += &format!("type={k} "),
                    _ => {}
                }
            }
            println!("{}", line.trim_end());
        }
    }
    Ok(())
}

/// `pqkit token keygen`: a key pair generated inside the token (its private key never leaves).
pub(crate) fn keygen(
    token: &str,
    alg: &str,
    label: &str,
    id: Option<&str>,
    options: &Options,
) -> Result<()> {
    let options = with_module(options);
    let id = id
        .map(hex::decode)
        .transpose()
        .map_err(|_| Failure::usage("--id: hex bytes"))?;
    let uri = Uri {
        token: Some(token.to_owned()),
        ..Uri::default()
    };
    let (_, session) = client::open_session(&uri, &options).about(token)?;
    let mut common = vec![
        Attribute::Token(true),
        Attribute::Label(label.as_bytes().to_vec()),
    ];
    if let Some(id) = &id {
        common.push(Attribute::Id(id.clone()));
    }
    let mut public = common.clone();
    let private = common;
    let kind = pqkit_core::catalogue::signature(alg)
        .map(|a| a.name)
        .or_else(|_| pqkit_core::catalogue::kem(alg).map(|k| k.name))
        .ok()
        .and_then(mech::kind_of)
        .ok_or_else(|| {
            Failure::usage(format!(
                "{alg}: not an algorithm a token generates (see pqkit list)"
            ))
        })?;
    let mechanism = match kind.key_type {
        cryptoki_sys::CKK_ML_DSA => Mechanism::MlDsaKeyPairGen,
        cryptoki_sys::CKK_SLH_DSA => Mechanism::SlhDsaKeyPairGen,
        cryptoki_sys::CKK_ML_KEM => Mechanism::MlKemKeyPairGen,
        cryptoki_sys::CKK_EC => Mechanism::EccKeyPairGen,
        cryptoki_sys::CKK_EC_EDWARDS => Mechanism::EccEdwardsKeyPairGen,
        _ => {
            return Err(Failure::usage(format!(
                "{alg}: generate it with pqkit's own tools (no standard mechanism)"
            )));
        }
    };
    match mech::ec_params_of(kind.name) {
        Some(params) => public.push(Attribute::EcParams(params.to_vec())),
        None => public.push(Attribute::ParameterSet(
            cryptoki::object::ParameterSetType::try_from(cryptoki::types::Ulong::from(
                kind.parameter_set,
            ))
            .map_err(|e| Failure::other(e.to_string()))?,
        )),
    }
    let (p, _) = session
        .generate_key_pair(&mechanism, &public, &private)
        .about("C_GenerateKeyPair")?;
    let _ = p;
    println!(
        "pkcs11:token={};object={}{}",
        token,
        label,
        id.map(|i| format!(
            ";id={}",
            i.iter().map(|b| format!("%{b:02X}")).collect::<String>()
        ))
        .unwrap_or_default()
    );
    Ok(())
}

/// `pqkit token delete`: every object with this label (public and private key, certificate).
pub(crate) fn delete(token: &str, label: &str, options: &Options) -> Result<()> {
    let options = with_module(options);
    let uri = Uri {
        token: Some(token.to_owned()),
        ..Uri::default()
    };
    let (_, session) = client::open_session(&uri, &options).about(token)?;
    let found = session
        .find_objects(&[Attribute::Label(label.as_bytes().to_vec())])
        .about("C_FindObjects")?;
    if found.is_empty() {
        return Err(Failure::usage(format!(
            "no object labelled {label:?} (logged in?)"
        )));
    }
    for h in &found {
        session.destroy_object(*h).about("C_DestroyObject")?;
    }
    let _ = ObjectClass::PRIVATE_KEY;
    eprintln!("deleted {} objects labelled {label:?}", found.len());
    Ok(())
}
