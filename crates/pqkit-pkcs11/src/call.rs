//! Every token operation the C interface performs, as data: `abi` turns a C call into a
//! [`Call`], [`crate::remote::execute`] runs it — on this process's token state, or, when the module is
//! configured with a remote token (`"remote": "/run/pqkit.sock"`, see [`crate::config`]), in
//! the `pqkit token serve` process that holds the keys ([`crate::remote`]). Either way the same
//! [`dispatch`] runs the call, so a remote token behaves exactly like a local one.

use cryptoki_sys::*;
use serde::{Deserialize, Serialize};

use crate::mech;
use crate::store::Attributes;
use crate::token::{self, Hedge, Result, SignParams};

/// A mechanism's decoded parameters on the wire.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct WireParams {
    deterministic: bool,
    context: Vec<u8>,
    /// The pre-hash's name (pqkit_core::prehash::PreHash::name).
    hash: Option<String>,
}

impl From<&SignParams> for WireParams {
    fn from(p: &SignParams) -> Self {
        Self {
            deterministic: matches!(p.hedge, Hedge::Deterministic),
            context: p.context.clone(),
            hash: p.hash.map(|h| h.name().to_owned()),
        }
    }
}

impl WireParams {
    fn params(&self) -> Result<SignParams> {
        Ok(SignParams {
            hedge: if self.deterministic {
                Hedge::Deterministic
            } else {
                Hedge::Hedged
            },
            context: self.context.clone(),
            hash: self
                .hash
                .as_deref()
                .map(pqkit_core::prehash::PreHash::from_name)
                .transpose()
                .map_err(|_| CKR_MECHANISM_PARAM_INVALID)?,
        })
    }
}

/// One token operation (byte strings as bytes on the wire: a 10 MiB message is one copy). Not
/// `Debug`: calls carry PINs.
#[derive(Serialize, Deserialize)]
pub(crate) enum Call {
    SlotList {
        present: bool,
    },
    SlotInfo {
        slot: u64,
    },
    TokenInfo {
        slot: u64,
    },
    InitToken {
        slot: u64,
        #[serde(with = "serde_bytes")]
        so_pin: Vec<u8>,
        label: String,
    },
    InitPin {
        session: u64,
        #[serde(with = "serde_bytes")]
        pin: Vec<u8>,
    },
    SetPin {
        session: u64,
        #[serde(with = "serde_bytes")]
        old: Vec<u8>,
        #[serde(with = "serde_bytes")]
        new: Vec<u8>,
    },
    OpenSession {
        slot: u64,
        flags: u64,
    },
    CloseSession {
        session: u64,
    },
    CloseAllSessions {
        slot: u64,
    },
    SessionInfo {
        session: u64,
    },
    Login {
        session: u64,
        user: u64,
        #[serde(with = "serde_bytes")]
        pin: Vec<u8>,
    },
    Logout {
        session: u64,
    },
    CreateObject {
        session: u64,
        template: Attributes,
    },
    DestroyObject {
        session: u64,
        object: u64,
    },
    GetAttributes {
        session: u64,
        object: u64,
        types: Vec<u64>,
    },
    SetAttributes {
        session: u64,
        object: u64,
        template: Attributes,
    },
    FindInit {
        session: u64,
        template: Attributes,
    },
    FindNext {
        session: u64,
        max: u64,
    },
    FindFinal {
        session: u64,
    },
    OperationInit {
        session: u64,
        mechanism: u64,
        params: WireParams,
        key: u64,
        verify: bool,
    },
    SignatureLen {
        session: u64,
    },
    Update {
        session: u64,
        verify: bool,
        #[serde(with = "serde_bytes")]
        data: Vec<u8>,
    },
    Sign {
        session: u64,
        #[serde(with = "serde_bytes")]
        data: Option<Vec<u8>>,
    },
    /// Ends the sign (or verify) operation after an error (PKCS#11 3.2 §5.13, §5.15).
    EndOperation {
        session: u64,
        verify: bool,
    },
    Verify {
        session: u64,
        #[serde(with = "serde_bytes")]
        data: Option<Vec<u8>>,
        #[serde(with = "serde_bytes")]
        signature: Vec<u8>,
    },
    GenerateKeyPair {
        session: u64,
        mechanism: u64,
        public: Attributes,
        private: Attributes,
    },
    CiphertextLen {
        session: u64,
        key: u64,
    },
    Encapsulate {
        session: u64,
        key: u64,
        template: Attributes,
    },
    Decapsulate {
        session: u64,
        key: u64,
        template: Attributes,
        #[serde(with = "serde_bytes")]
        ciphertext: Vec<u8>,
    },
}

/// An attribute's answer: its value, absent, or a CK_RV (CKR_ATTRIBUTE_SENSITIVE).
pub(crate) type Answer = std::result::Result<Option<Vec<u8>>, u64>;

/// What a call returns.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum Reply {
    Unit,
    Ulong(u64),
    Ulongs(Vec<u64>),
    Bytes(#[serde(with = "serde_bytes")] Vec<u8>),
    Pair(u64, u64),
    SlotInfo {
        present: bool,
        dir: String,
    },
    TokenInfo {
        label: String,
        serial: String,
        flags: u64,
        sessions: u64,
        rw_sessions: u64,
        #[serde(default)]
        min_pin_len: u64,
    },
    SessionInfo {
        slot: u64,
        state: u64,
        flags: u64,
    },
    Attributes(Vec<Answer>),
    Encapsulated {
        #[serde(with = "serde_bytes")]
        ciphertext: Vec<u8>,
        secret: u64,
    },
}

impl Call {
    /// The session a call acts in, if any.
    pub(crate) fn session(&self) -> Option<u64> {
        use Call as C;
        match self {
            C::InitPin { session, .. }
            | C::SetPin { session, .. }
            | C::CloseSession { session }
            | C::SessionInfo { session }
            | C::Login { session, .. }
            | C::Logout { session }
            | C::CreateObject { session, .. }
            | C::DestroyObject { session, .. }
            | C::GetAttributes { session, .. }
            | C::SetAttributes { session, .. }
            | C::FindInit { session, .. }
            | C::FindNext { session, .. }
            | C::FindFinal { session }
            | C::OperationInit { session, .. }
            | C::SignatureLen { session }
            | C::Update { session, .. }
            | C::Sign { session, .. }
            | C::EndOperation { session, .. }
            | C::Verify { session, .. }
            | C::GenerateKeyPair { session, .. }
            | C::CiphertextLen { session, .. }
            | C::Encapsulate { session, .. }
            | C::Decapsulate { session, .. } => Some(*session),
            C::SlotList { .. }
            | C::SlotInfo { .. }
            | C::TokenInfo { .. }
            | C::InitToken { .. }
            | C::OpenSession { .. }
            | C::CloseAllSessions { .. } => None,
        }
    }
}

impl Reply {
    pub(crate) fn unit(self) -> Result<()> {
        match self {
            Self::Unit => Ok(()),
            _ => Err(CKR_DEVICE_ERROR),
        }
    }

    pub(crate) fn ulong(self) -> Result<u64> {
        match self {
            Self::Ulong(v) => Ok(v),
            _ => Err(CKR_DEVICE_ERROR),
        }
    }

    pub(crate) fn ulongs(self) -> Result<Vec<u64>> {
        match self {
            Self::Ulongs(v) => Ok(v),
            _ => Err(CKR_DEVICE_ERROR),
        }
    }

    pub(crate) fn bytes(self) -> Result<Vec<u8>> {
        match self {
            Self::Bytes(v) => Ok(v),
            _ => Err(CKR_DEVICE_ERROR),
        }
    }
}

/// Runs `call` on this process's token state (long operations outside its lock).
pub(crate) fn dispatch(call: Call) -> Result<Reply> {
    use Call as C;
    let unit = |r: Result<()>| r.map(|()| Reply::Unit);
    match call {
        C::SlotList { present } => token::with(|m| {
            Ok(Reply::Ulongs(
                (0..m.slot_count() as u64)
                    .filter(|id| !present || m.slot_info(*id).is_ok_and(|(p, _)| p))
                    .collect(),
            ))
        }),
        C::SlotInfo { slot } => {
            token::with(|m| m.slot_info(slot)).map(|(present, dir)| Reply::SlotInfo {
                present,
                dir: dir.display().to_string(),
            })
        }
        C::TokenInfo { slot } => token::with(|m| m.token_info(slot)).map(|f| Reply::TokenInfo {
            label: f.label,
            serial: f.serial,
            flags: f.flags,
            sessions: f.sessions as u64,
            rw_sessions: f.rw_sessions as u64,
            min_pin_len: f.min_pin_len,
        }),
        C::InitToken {
            slot,
            so_pin,
            label,
        } => unit(token::with(|m| m.init_token(slot, &so_pin, &label))),
        C::InitPin { session, pin } => unit(token::with(|m| m.init_pin(session, &pin))),
        C::SetPin { session, old, new } => unit(token::with(|m| m.set_pin(session, &old, &new))),
        C::OpenSession { slot, flags } => {
            token::with(|m| m.open_session(slot, flags)).map(Reply::Ulong)
        }
        C::CloseSession { session } => unit(token::with(|m| m.close_session(session))),
        C::CloseAllSessions { slot } => unit(token::with(|m| m.close_all_sessions(slot))),
        C::SessionInfo { session } => token::with(|m| m.session_info(session))
            .map(|(slot, state, flags)| Reply::SessionInfo { slot, state, flags }),
        C::Login { session, user, pin } => unit(token::with(|m| m.login(session, user, &pin))),
        C::Logout { session } => unit(token::with(|m| m.logout(session))),
        C::CreateObject { session, template } => {
            token::with(|m| m.create_object(session, template)).map(Reply::Ulong)
        }
        C::DestroyObject { session, object } => {
            unit(token::with(|m| m.destroy_object(session, object)))
        }
        C::GetAttributes {
            session,
            object,
            types,
        } => {
            let view = token::with(|m| m.attributes(session, object))?;
            Ok(Reply::Attributes(
                types.iter().map(|t| view.get(*t)).collect(),
            ))
        }
        C::SetAttributes {
            session,
            object,
            template,
        } => unit(token::with(|m| m.set_attributes(session, object, template))),
        C::FindInit { session, template } => unit(token::with(|m| m.find_init(session, template))),
        C::FindNext { session, max } => {
            token::with(|m| m.find_next(session, usize::try_from(max).unwrap_or(usize::MAX)))
                .map(Reply::Ulongs)
        }
        C::FindFinal { session } => unit(token::with(|m| m.find_final(session))),
        C::OperationInit {
            session,
            mechanism,
            params,
            key,
            verify,
        } => {
            let found = mech::find(mechanism).ok_or(CKR_MECHANISM_INVALID)?;
            let params = params.params()?;
            unit(token::with(|m| {
                m.operation_init(session, found, params, key, verify)
            }))
        }
        C::SignatureLen { session } => {
            token::with(|m| m.signature_len(session)).map(|n| Reply::Ulong(n as u64))
        }
        C::Update {
            session,
            verify,
            data,
        } => unit(token::with(|m| m.update(session, verify, &data))),
        C::Sign { session, data } => {
            let op = token::with(|m| m.take_operation(session, false, data))?;
            token::finish_sign(op).map(Reply::Bytes)
        }
        C::EndOperation { session, verify } => unit(token::with(|m| {
            m.end_operation(session, verify);
            Ok(())
        })),
        C::Verify {
            session,
            data,
            signature,
        } => {
            let op = token::with(|m| m.take_operation(session, true, data))?;
            unit(token::finish_verify(op, &signature))
        }
        C::GenerateKeyPair {
            session,
            mechanism,
            public,
            private,
        } => {
            let found = mech::find(mechanism).ok_or(CKR_MECHANISM_INVALID)?;
            token::with(|m| m.generate_key_pair(session, found, public, private))
                .map(|(p, s)| Reply::Pair(p, s))
        }
        C::CiphertextLen { session, key } => {
            let attrs = token::with(|m| m.kem_key(session, key, CKA_ENCAPSULATE))?;
            let ek = token::encapsulation_key(&attrs)?;
            Ok(Reply::Ulong(ek.algorithm().ciphertext_size as u64))
        }
        C::Encapsulate {
            session,
            key,
            template,
        } => {
            let attrs = token::with(|m| m.kem_key(session, key, CKA_ENCAPSULATE))?;
            let ek = token::encapsulation_key(&attrs)?;
            let (ciphertext, shared) = ek.encapsulate().map_err(|_| CKR_FUNCTION_FAILED)?;
            let secret =
                token::with(|m| m.shared_secret_object(session, template, shared.as_bytes()))?;
            Ok(Reply::Encapsulated { ciphertext, secret })
        }
        C::Decapsulate {
            session,
            key,
            template,
            ciphertext,
        } => {
            let attrs = token::with(|m| m.kem_key(session, key, CKA_DECAPSULATE))?;
            let dk = token::decapsulation_key(&attrs)?;
            let shared = dk
                .decapsulate(&ciphertext)
                .map_err(|_| CKR_ENCRYPTED_DATA_LEN_RANGE)?;
            token::with(|m| m.shared_secret_object(session, template, shared.as_bytes()))
                .map(Reply::Ulong)
        }
    }
}
