//! The module's configuration: which token directories are its slots.
//!
//! The file is `$PQKIT_PKCS11_CONF`, or else `$XDG_CONFIG_HOME/pqkit/pkcs11.json` (by default
//! `~/.config/pqkit/pkcs11.json`):
//!
//! ```json
//! { "slots": [ { "dir": "/home/me/.local/share/pqkit/tokens/ca" } ] }
//! ```
//!
//! Slot ids are the positions in `slots`, from 0. A missing file is a module with no slots.
//! `{ "remote": "/run/pqkit/token.sock" }` makes the module a client of `pqkit token serve`
//! (see [`crate::remote`]).
//! `pqkit token init` creates a token and adds its slot.

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One slot: a token directory (see [`crate::store`]).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct SlotConfig {
    /// The token directory.
    pub dir: PathBuf,
}

/// The configuration file.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Config {
    /// The slots, in slot-id order.
    #[serde(default)]
    pub slots: Vec<SlotConfig>,
    /// A token process to forward every call to (`pqkit token serve --socket PATH`) instead
    /// of opening the slots here; `$PQKIT_PKCS11_REMOTE` overrides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<PathBuf>,
}

impl Config {
    /// The configuration file's path (see the module docs).
    pub fn path() -> PathBuf {
        if let Some(p) = std::env::var_os("PQKIT_PKCS11_CONF") {
            return PathBuf::from(p);
        }
        config_home().join("pqkit").join("pkcs11.json")
    }

    /// Reads the configuration ([`Config::path`]); no file is no slots.
    ///
    /// # Errors
    /// I/O errors other than a missing file; a file that does not parse.
    pub fn load() -> io::Result<Self> {
        Self::load_from(&Self::path())
    }

    /// Reads the configuration in `path`.
    ///
    /// # Errors
    /// As [`Config::load`].
    pub fn load_from(path: &Path) -> io::Result<Self> {
        match std::fs::read(path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{}: {e}", path.display()),
                )
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Self::default()),
            Err(e) => Err(e),
        }
    }

    /// Writes the configuration to `path` atomically (creating its directory).
    ///
    /// # Errors
    /// I/O errors.
    pub fn save_to(&self, path: &Path) -> io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let bytes = serde_json::to_vec_pretty(self).map_err(io::Error::other)?;
        crate::store::write_atomic(path, &bytes).map_err(io::Error::other)
    }
}

/// `$XDG_CONFIG_HOME`, or `~/.config`.
fn config_home() -> PathBuf {
    match std::env::var_os("XDG_CONFIG_HOME") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => home().join(".config"),
    }
}

/// `$XDG_DATA_HOME`, or `~/.local/share`: where `pqkit token init` puts tokens by default.
pub fn data_home() -> PathBuf {
    match std::env::var_os("XDG_DATA_HOME") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => home().join(".local").join("share"),
    }
}

fn home() -> PathBuf {
    std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from)
}
