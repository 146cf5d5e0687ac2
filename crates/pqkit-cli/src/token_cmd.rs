//! `pqkit token`: create a pqkit token, and list, generate and delete keys in any PKCS#11 token
//! (pqkit's own, SoftHSM, hardware), with pkcs11-tool's habits: a module, a token label, a PIN
//! source, keys named by label and id.

use std::io::Write;
use std::path::{Path, PathBuf};

use cryptoki::object::{Attribute, AttributeType};
use pqkit_pkcs11::client::objects;
use pqkit_pkcs11::client::{self, ClientError, Options, Uri};
use pqkit_pkcs11::config::{Config, SlotConfig};
use pqkit_pkcs11::store::{InitOptions, Kdf, Store, StoreError};

use crate::failure::Result;
use crate::failure::{Context, Failure};

/// pqkit's own module: beside the pqkit executable, in its `deps/` (a `cargo test` build
/// leaves it there), or in `../lib/` (an installed layout).
fn own_module() -> PathBuf {
    const NAME: &str = "libpqkit_pkcs11.so";
    let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    else {
        return PathBuf::from(NAME);
    };
    let candidates = [
        dir.join(NAME),
        dir.join("deps").join(NAME),
        dir.join("../lib").join(NAME),
    ];
    candidates
        .iter()
        .find(|c| c.exists())
        .cloned()
        .unwrap_or_else(|| candidates[0].clone())
}

/// The module a `pqkit token` command talks to: --pkcs11-module, $PQKIT_PKCS11_MODULE, or
/// pqkit's own libpqkit_pkcs11.so beside the pqkit executable.
fn module(options: &Options) -> PathBuf {
    options
        .module
        .clone()
        .or_else(|| std::env::var_os("PQKIT_PKCS11_MODULE").map(PathBuf::from))
        .unwrap_or_else(own_module)
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
    min_pin_len: u32,
    ledger: Option<String>,
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
        min_pin_len,
        // The ledger is the token's from now on, whoever's module opens it: recorded as
        // resolved here (--ledger, else $PQKIT_HBS_LEDGER, else this user's default).
        ledger: Some(
            match pqkit_hbs::ledger::LedgerSpec::resolve(ledger.as_deref())
                .map_err(|e| Failure::usage(format!("--ledger: {e}")))?
            {
                pqkit_hbs::ledger::LedgerSpec::Sqlite(p) if p.is_relative() => {
                    std::env::current_dir()
                        .about("the current directory")?
                        .join(p)
                        .display()
                        .to_string()
                }
                spec => spec.to_string(),
            },
        ),
    };
    let path = Config::path();
    let mut config = Config::load_from(&path).about(path.display())?;
    // Two tokens with one label could not be told apart by `pkcs11:token=LABEL`.
    if config.slots.iter().any(|slot| {
        Store::open(&slot.dir)
            .and_then(|s| s.info())
            .is_ok_and(|info| info.label == label)
    }) {
        return Err(Failure::usage(format!(
            "a token labelled {label:?} is configured already ({})",
            path.display()
        )));
    }
    // The store checks the label and the Argon2id values before it creates anything.
    Store::init(
        &dir,
        label,
        so_pin.as_bytes(),
        Some(pin.as_bytes()),
        &options,
    )
    .map_err(|e| match e {
        StoreError::Invalid(why) => Failure::usage(why),
        e => Failure::from(e).about(dir.display()),
    })?;
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
    let m = client::load_module(options.module.as_deref().unwrap_or(Path::new("")))
        .about("PKCS#11 module")?;
    let mut out = std::io::stdout().lock();
    let mut listed = 0;
    for slot in m.get_slots_with_token().about("C_GetSlotList")? {
        let info = m.get_token_info(slot).about("C_GetTokenInfo")?;
        let label = info.label().trim_end().to_owned();
        if token.is_some_and(|t| t != label) {
            continue;
        }
        listed += 1;
        writeln!(
            out,
            "slot {}: token {label:?} ({}, serial {})",
            slot.id(),
            info.model().trim_end(),
            info.serial_number().trim_end()
        )?;
        let uri = Uri {
            token: Some(label.clone()),
            slot_id: Some(slot.id()),
            ..Uri::default()
        };
        // A PIN is tried only on the token asked for: the same PIN on every token would count
        // a failed login (and, repeated, lock the PIN) on each token whose PIN it is not.
        let login = if token.is_some() {
            options.clone()
        } else {
            Options {
                pin_source: Some("none".into()),
                ..options.clone()
            }
        };
        if token.is_none() {
            writeln!(
                out,
                "  (public objects; --token {label:?} logs in and lists its private objects)"
            )?;
        }
        let (_, session) = client::open_session(&uri, &login).about(&label)?;
        let raw =
            client::raw::RawModule::load(options.module.as_deref().unwrap_or(Path::new(""))).ok();
        for h in session.find_objects(&[]).about("C_FindObjects")? {
            // One attribute at a time: a key type cryptoki has no name for (CKK_HSS, …) must
            // not hide the others.
            let mut line = String::from("  ");
            for t in [
                AttributeType::Class,
                AttributeType::Label,
                AttributeType::Id,
                AttributeType::KeyType,
            ] {
                match session
                    .get_attributes(h, &[t])
                    .ok()
                    .and_then(|mut v| v.pop())
                {
                    Some(Attribute::Class(c)) => line += &format!("{c} "),
                    Some(Attribute::Label(l)) => {
                        line += &format!("label={:?} ", String::from_utf8_lossy(&l))
                    }
                    Some(Attribute::Id(id)) if !id.is_empty() => {
                        line += &format!("id={} ", hex::encode(id))
                    }
                    Some(Attribute::KeyType(k)) => line += &format!("type={k} "),
                    None if t == AttributeType::KeyType => {
                        let raw_type = raw
                            .as_ref()
                            .and_then(|r| {
                                r.attribute(slot.id(), h.handle(), cryptoki_sys::CKA_KEY_TYPE)
                                    .ok()
                            })
                            .and_then(|v| v.try_into().ok())
                            .map(u64::from_ne_bytes);
                        match raw_type {
                            Some(cryptoki_sys::CKK_HSS) => line += "type=CKK_HSS ",
                            Some(cryptoki_sys::CKK_XMSS) => line += "type=CKK_XMSS ",
                            Some(cryptoki_sys::CKK_XMSSMT) => line += "type=CKK_XMSSMT ",
                            Some(other) => line += &format!("type={other:#x} "),
                            None => {}
                        }
                    }
                    _ => {}
                }
            }
            writeln!(out, "{}", line.trim_end())?;
        }
        // pqkit's own tokens: what the directory shows wrong beyond what the module lists.
        if let Ok(config) = Config::load() {
            for store in config
                .slots
                .iter()
                .filter_map(|s| Store::open(&s.dir).ok())
                .filter(|s| s.info().is_ok_and(|i| i.label == label))
            {
                for problem in store.problems() {
                    writeln!(out, "  problem: {problem}")?;
                }
            }
        }
    }
    if let Some(t) = token
        && listed == 0
    {
        return Err(Failure::usage(format!("no token labelled {t:?}")));
    }
    Ok(())
}

/// `--id` as bytes.
fn parse_id(id: Option<&str>) -> Result<Option<Vec<u8>>> {
    id.map(hex::decode)
        .transpose()
        .map_err(|_| Failure::usage("--id: hex bytes"))
}

/// A read/write session on `token`, logged in when a PIN is known.
fn token_session(token: &str, options: &Options) -> Result<cryptoki::session::Session> {
    let uri = Uri {
        token: Some(token.to_owned()),
        ..Uri::default()
    };
    Ok(client::open_session(&uri, options).about(token)?.1)
}

/// Refuses a session that is not logged in: private objects are invisible to it, so a delete
/// would leave them, and a new key could not be made.
fn require_login(session: &cryptoki::session::Session, token: &str) -> Result<()> {
    use cryptoki::session::SessionState;
    let state = session
        .get_session_info()
        .about("C_GetSessionInfo")?
        .session_state();
    if matches!(state, SessionState::RoPublic | SessionState::RwPublic) {
        return Err(Failure::usage(format!(
            "token {token:?}: not logged in (give the PIN: --pin-source or PQKIT_PKCS11_PIN)"
        )));
    }
    Ok(())
}

/// Refuses a label or id that an object of the token already has: a `pkcs11:` URI naming it
/// would then match two keys.
fn refuse_taken(
    session: &cryptoki::session::Session,
    label: &str,
    id: Option<&Vec<u8>>,
) -> Result<()> {
    let taken = |a: Attribute| -> Result<bool> {
        Ok(!session
            .find_objects(&[a])
            .about("C_FindObjects")?
            .is_empty())
    };
    if taken(Attribute::Label(label.as_bytes().to_vec()))? {
        return Err(Failure::usage(format!(
            "an object labelled {label:?} exists already; choose another label or delete it first"
        )));
    }
    if let Some(id) = id
        && taken(Attribute::Id(id.clone()))?
    {
        return Err(Failure::usage(format!(
            "an object with id {} exists already",
            hex::encode(id)
        )));
    }
    Ok(())
}

/// `pqkit token keygen`: a key pair generated inside the token (its private key never leaves);
/// prints its URI.
pub(crate) fn keygen(
    token: &str,
    alg: &str,
    label: &str,
    id: Option<&str>,
    options: &Options,
) -> Result<()> {
    let id = parse_id(id)?;
    println!("{}", generate(token, alg, label, id, options)?);
    Ok(())
}

/// Generates a key pair of `alg` in `token`; returns its `pkcs11:` URI.
fn generate(
    token: &str,
    alg: &str,
    label: &str,
    id: Option<Vec<u8>>,
    options: &Options,
) -> Result<String> {
    let session = token_session(token, options)?;
    require_login(&session, token)?;
    refuse_taken(&session, label, id.as_ref())?;
    let template = objects::template(alg).map_err(usage)?;
    let module = options.module.as_deref().unwrap_or(Path::new(""));
    objects::generate(&session, module, template, label, id.as_deref())
        .about("C_GenerateKeyPair")?;
    Ok(objects::uri_of(token, label, id.as_deref()))
}

/// An unsupported algorithm or object is the caller's choice (exit status 2).
fn usage(e: ClientError) -> Failure {
    match e {
        ClientError::Unsupported(m) => Failure::usage(m),
        e => Failure::from(e),
    }
}

/// The keys of `bench boundary --token URI`: `bench-<algorithm>` in that token, generated there
/// the first time. An algorithm the token (or the RPC in front of it) does not offer is
/// skipped. Returns the signer's name and the key source.
pub(crate) fn bench_keys(
    uri: &str,
    options: &Options,
) -> Result<(String, Box<pqkit_bench::boundary::KeySource<'static>>)> {
    let parsed = Uri::parse(uri).about(uri)?;
    let token = parsed
        .token
        .clone()
        .ok_or_else(|| Failure::usage(format!("{uri}: give token=")))?;
    let mut options = options.clone();
    if let Some(m) = parsed.module_path.clone() {
        options.module = Some(m);
    }
    let module = options.module.clone().unwrap_or_default();
    let module_name = module.file_name().map_or_else(
        || module.display().to_string(),
        |f| f.to_string_lossy().into_owned(),
    );
    // pqkit's own module forwarding to `pqkit token serve`: say so, the keys are elsewhere.
    let remote = std::env::var_os("PQKIT_PKCS11_REMOTE")
        .filter(|_| module_name == "libpqkit_pkcs11.so")
        .map(|_| " to pqkit token serve")
        .unwrap_or_default();
    let name = format!("PKCS#11 {token} via {module_name}{remote}");
    let source = move |alg: &'static pqkit_core::sig::SignatureAlgorithm| {
        let label = format!("bench-{}", alg.name);
        let key_uri = format!(
            "pkcs11:token={};object={}",
            client::percent_encode(token.as_bytes()),
            client::percent_encode(label.as_bytes())
        );
        let open = || client::TokenKey::open(&key_uri, &options);
        let key = match open() {
            Ok(k) => k,
            Err(_) => {
                // Generated in the token; where it has no generation mechanism (Falcon), made
                // here and imported — pqkit's token takes any PKCS#8 key.
                let made = generate(&token, alg.name, &label, None, &options).is_ok()
                    || alg
                        .generate()
                        .ok()
                        .and_then(|k| {
                            pqkit_pki::key::signing_key_to_pkcs8(
                                &k,
                                pqkit_pki::key::KeyFormat::Seed,
                            )
                            .ok()
                        })
                        .is_some_and(|der| {
                            import_pkcs8(&token, &der, &label, None, &options).is_ok()
                        });
                if !made {
                    return Ok(None);
                }
                open().map_err(|e| e.to_string())?
            }
        };
        key.into_signing_key().map(Some).map_err(|e| e.to_string())
    };
    Ok((name, Box::new(source)))
}

/// `pqkit token delete`: every object with this label (public and private key, certificate).
pub(crate) fn delete(token: &str, label: &str, options: &Options) -> Result<()> {
    let session = token_session(token, options)?;
    require_login(&session, token)?;
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
    eprintln!("deleted {} objects labelled {label:?}", found.len());
    Ok(())
}

/// `pqkit token import`: a PKCS#8 private key (PEM or DER) into pqkit's token as a
/// non-extractable private key (vendor attribute CKA_PQKIT_PKCS8) with its public key; or, with
/// `cert`, an X.509 certificate (CKO_CERTIFICATE, CKC_X_509), e.g. a chain beside its key.
pub(crate) fn import(
    token: &str,
    file: &Path,
    cert: bool,
    label: &str,
    id: Option<&str>,
    options: &Options,
) -> Result<()> {
    let id = parse_id(id)?;
    let session = token_session(token, options)?;
    if cert {
        for der in pqkit_pki::pem::read_certificates(file)? {
            objects::import_certificate(&session, &der, label, id.as_deref())
                .about(file.display())?;
        }
        eprintln!(
            "imported the certificates of {} as {label:?}",
            file.display()
        );
        return Ok(());
    }
    let der = pqkit_pki::pem::read_private_key(file)?;
    drop(session);
    let uri = import_pkcs8(token, &der, label, id, options).about(file.display())?;
    println!("{uri}");
    Ok(())
}

/// Imports a PKCS#8 signing key into `token` (see [`import`]); returns its URI.
fn import_pkcs8(
    token: &str,
    der: &[u8],
    label: &str,
    id: Option<Vec<u8>>,
    options: &Options,
) -> Result<String> {
    let session = token_session(token, options)?;
    require_login(&session, token)?;
    refuse_taken(&session, label, id.as_ref())?;
    objects::import_signing_key(&session, der, label, id.as_deref()).map_err(usage)?;
    Ok(objects::uri_of(token, label, id.as_deref()))
}

/// `pqkit token serve`: holds the configured tokens in this process and answers modules
/// configured with `"remote"` (or `PQKIT_PKCS11_REMOTE`) on a Unix socket — the keys stay here,
/// their callers elsewhere. Runs until killed.
pub(crate) fn serve(socket: &Path, force: bool) -> Result<()> {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    if let Ok(meta) = std::fs::symlink_metadata(socket) {
        // A socket a server still answers on is never replaced: its clients would lose it.
        let live = std::os::unix::net::UnixStream::connect(socket).is_ok();
        if live {
            return Err(Failure::usage(format!(
                "{}: a token server is running on it",
                socket.display()
            )));
        }
        if !(force && meta.file_type().is_socket()) {
            return Err(Failure::usage(format!(
                "{} exists (--force replaces a stale socket that no server answers on, nothing else)",
                socket.display()
            )));
        }
        std::fs::remove_file(socket).about(socket.display())?;
    }
    let listener = std::os::unix::net::UnixListener::bind(socket).about(socket.display())?;
    std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600))
        .about(socket.display())?;
    eprintln!(
        "pqkit token serve: the tokens of {} on {} (set PQKIT_PKCS11_REMOTE={} for the module)",
        Config::path().display(),
        socket.display(),
        socket.display()
    );
    pqkit_pkcs11::remote::serve(listener).about("pqkit token serve")?;
    Ok(())
}
