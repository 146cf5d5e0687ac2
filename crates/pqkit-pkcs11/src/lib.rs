//! pqkit-pkcs11: pqkit as a PKCS#11 3.2 token, and pqkit as a client of any PKCS#11 token.
//!
//! The token (`libpqkit_pkcs11.so`, OASIS PKCS#11 3.2):
//! - [`config`]: which token directories are the module's slots.
//! - [`store`]: a token on disk — private objects sealed with AES-256-GCM under a data key
//!   that the SO and user PINs unseal (Argon2id), atomic writes, PIN lockout.
//! - [`mech`]: key types and mechanisms as data (ML-DSA, HashML-DSA, external μ, SLH-DSA,
//!   HashSLH-DSA, ML-KEM, HSS, XMSS, XMSS^MT, Falcon, ECDSA, EdDSA).
//! - `token`: slots, sessions, logins, objects and operations behind the C interface.
//! - `abi`: the C interface — `C_GetFunctionList`, `C_GetInterfaceList`, `C_GetInterface` —
//!   with `client::raw` (the raw function list of another module), the only modules with
//!   `unsafe`; nothing unwinds across it.
//!
//! The client ([`client`]): RFC 7512 `pkcs11:` URIs resolved through any module (pqkit's,
//! SoftHSM, a hardware token), giving a [`pqkit_core::sig::SigningKey`] whose private key never
//! leaves the token — so every pqkit tool that signs (sign, csr, pki, hbs, server, client)
//! takes one.

pub mod abi;
mod call;
pub mod client;
pub mod config;
pub mod mech;
pub mod remote;
pub mod store;
mod token;

pub use token::{MAX_BUFFERED, ecdsa_raw_to_der};
