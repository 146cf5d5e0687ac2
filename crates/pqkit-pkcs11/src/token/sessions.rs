//! Slots and their tokens, sessions, logins and PINs (PKCS#11 3.2 §5.4–§5.6).

use super::*;

impl Module {
    /// The number of slots (slot ids are 0..n).
    pub(crate) fn slot_count(&self) -> usize {
        self.slots.len()
    }

    pub(super) fn slot(&self, id: CK_SLOT_ID) -> Result<&Slot> {
        usize::try_from(id)
            .ok()
            .and_then(|i| self.slots.get(i))
            .ok_or(CKR_SLOT_ID_INVALID)
    }

    /// Whether slot `id` holds a token, and the directory it is configured with.
    pub(crate) fn slot_info(&self, id: CK_SLOT_ID) -> Result<(bool, PathBuf)> {
        let slot = self.slot(id)?;
        Ok((slot.store.is_some(), slot.dir.clone()))
    }

    pub(super) fn store(&self, id: CK_SLOT_ID) -> Result<&Store> {
        self.slot(id)?.store.as_ref().ok_or(CKR_TOKEN_NOT_PRESENT)
    }

    /// C_GetTokenInfo.
    pub(crate) fn token_info(&self, id: CK_SLOT_ID) -> Result<TokenFacts> {
        let info = self.store(id)?.info().map_err(store_rv)?;
        let mut flags = CKF_RNG | CKF_LOGIN_REQUIRED | CKF_TOKEN_INITIALIZED;
        if info.user_pin_initialized {
            flags |= CKF_USER_PIN_INITIALIZED;
        }
        let left = |failed: u32| info.max_pin_attempts.saturating_sub(failed);
        if left(info.failed_user) == 0 {
            flags |= CKF_USER_PIN_LOCKED;
        } else if left(info.failed_user) == 1 {
            flags |= CKF_USER_PIN_FINAL_TRY;
        } else if info.failed_user > 0 {
            flags |= CKF_USER_PIN_COUNT_LOW;
        }
        if left(info.failed_so) == 0 {
            flags |= CKF_SO_PIN_LOCKED;
        } else if left(info.failed_so) == 1 {
            flags |= CKF_SO_PIN_FINAL_TRY;
        } else if info.failed_so > 0 {
            flags |= CKF_SO_PIN_COUNT_LOW;
        }
        let slot = usize::try_from(id).map_err(|_| CKR_SLOT_ID_INVALID)?;
        let mine = self.sessions.values().filter(|s| s.slot == slot);
        Ok(TokenFacts {
            label: info.label,
            serial: info.serial,
            flags,
            sessions: mine.clone().count(),
            rw_sessions: mine.filter(|s| s.rw).count(),
            min_pin_len: u64::from(info.min_pin_len),
        })
    }

    /// C_InitToken: erases the token and sets its SO PIN and label.
    pub(crate) fn init_token(&mut self, id: CK_SLOT_ID, so_pin: &[u8], label: &str) -> Result<()> {
        let slot_index = usize::try_from(id).map_err(|_| CKR_SLOT_ID_INVALID)?;
        if self.sessions.values().any(|s| s.slot == slot_index) {
            return Err(CKR_SESSION_EXISTS);
        }
        self.store(id)?
            .reinitialize(so_pin, label)
            .map_err(store_rv)?;
        self.forget_slot_objects(slot_index);
        if let Some(slot) = self.slots.get_mut(slot_index) {
            slot.logins.clear();
        }
        Ok(())
    }

    pub(super) fn forget_slot_objects(&mut self, slot: usize) {
        let gone: Vec<CK_OBJECT_HANDLE> = self
            .places
            .iter()
            .filter(|(_, p)| matches!(p, Place::Token(s, _) | Place::Session(s) if *s == slot))
            .map(|(h, _)| *h)
            .collect();
        for h in gone {
            if let Some(p) = self.places.remove(&h) {
                self.handles.remove(&p);
            }
            self.session_objects.remove(&h);
        }
    }

    /// C_OpenSession.
    pub(crate) fn open_session(
        &mut self,
        id: CK_SLOT_ID,
        flags: CK_FLAGS,
    ) -> Result<CK_SESSION_HANDLE> {
        if flags & CKF_SERIAL_SESSION == 0 {
            return Err(CKR_SESSION_PARALLEL_NOT_SUPPORTED);
        }
        self.store(id)?;
        let slot = usize::try_from(id).map_err(|_| CKR_SLOT_ID_INVALID)?;
        let rw = flags & CKF_RW_SESSION != 0;
        let app = current_app();
        if !rw
            && matches!(
                self.slots[slot].logins.get(&app),
                Some((Role::SecurityOfficer, _))
            )
        {
            return Err(CKR_SESSION_READ_WRITE_SO_EXISTS);
        }
        let handle = self.next_session;
        self.next_session += 1;
        self.sessions.insert(
            handle,
            Session {
                slot,
                app,
                rw,
                find: None,
                sign: None,
                verify: None,
            },
        );
        Ok(handle)
    }

    pub(super) fn session(&mut self, h: CK_SESSION_HANDLE) -> Result<&mut Session> {
        self.sessions.get_mut(&h).ok_or(CKR_SESSION_HANDLE_INVALID)
    }

    /// C_CloseSession: its session objects go with it; the last session of a slot logs out.
    pub(crate) fn close_session(&mut self, h: CK_SESSION_HANDLE) -> Result<()> {
        let session = self.sessions.remove(&h).ok_or(CKR_SESSION_HANDLE_INVALID)?;
        let mine: Vec<_> = self
            .session_objects
            .iter()
            .filter(|(_, o)| o.session == h)
            .map(|(k, _)| *k)
            .collect();
        for k in mine {
            self.session_objects.remove(&k);
            if let Some(p) = self.places.remove(&k) {
                self.handles.remove(&p);
            }
        }
        if !self
            .sessions
            .values()
            .any(|s| s.slot == session.slot && s.app == session.app)
        {
            self.slots[session.slot].logins.remove(&session.app);
            self.keys.clear();
        }
        Ok(())
    }

    /// C_CloseAllSessions.
    pub(crate) fn close_all_sessions(&mut self, id: CK_SLOT_ID) -> Result<()> {
        self.slot(id)?;
        let slot = usize::try_from(id).map_err(|_| CKR_SLOT_ID_INVALID)?;
        let mine: Vec<_> = self
            .sessions
            .iter()
            .filter(|(_, s)| s.slot == slot)
            .map(|(h, _)| *h)
            .collect();
        for h in mine {
            self.close_session(h)?;
        }
        Ok(())
    }

    /// C_GetSessionInfo: (slot, state, flags).
    pub(crate) fn session_info(
        &mut self,
        h: CK_SESSION_HANDLE,
    ) -> Result<(CK_SLOT_ID, CK_STATE, CK_FLAGS)> {
        let s = self.session(h)?;
        let (slot, rw, app) = (s.slot, s.rw, s.app);
        let state = match (self.slots[slot].logins.get(&app), rw) {
            (Some((Role::SecurityOfficer, _)), _) => CKS_RW_SO_FUNCTIONS,
            (Some((Role::User, _)), true) => CKS_RW_USER_FUNCTIONS,
            (Some((Role::User, _)), false) => CKS_RO_USER_FUNCTIONS,
            (None, true) => CKS_RW_PUBLIC_SESSION,
            (None, false) => CKS_RO_PUBLIC_SESSION,
        };
        let flags = CKF_SERIAL_SESSION | if rw { CKF_RW_SESSION } else { 0 };
        Ok((slot as CK_SLOT_ID, state, flags))
    }

    /// The slot and the store of a session.
    pub(super) fn session_store(&mut self, h: CK_SESSION_HANDLE) -> Result<(usize, Store)> {
        let slot = self.session(h)?.slot;
        let store = self.slots[slot].store.clone().ok_or(CKR_DEVICE_REMOVED)?;
        Ok((slot, store))
    }

    /// C_Login. The PIN check runs Argon2id (a fraction of a second) under the module lock.
    pub(crate) fn login(
        &mut self,
        h: CK_SESSION_HANDLE,
        user: CK_USER_TYPE,
        pin: &[u8],
    ) -> Result<()> {
        let (slot, store) = self.session_store(h)?;
        let app = self.session(h)?.app;
        let role = match user {
            CKU_SO => Role::SecurityOfficer,
            CKU_USER => Role::User,
            CKU_CONTEXT_SPECIFIC => return Err(CKR_OPERATION_NOT_INITIALIZED),
            _ => return Err(CKR_USER_TYPE_INVALID),
        };
        match self.slots[slot].logins.get(&app) {
            Some((r, _)) if *r == role => return Err(CKR_USER_ALREADY_LOGGED_IN),
            Some(_) => return Err(CKR_USER_ANOTHER_ALREADY_LOGGED_IN),
            None => {}
        }
        if role == Role::SecurityOfficer
            && self
                .sessions
                .values()
                .any(|s| s.slot == slot && s.app == app && !s.rw)
        {
            return Err(CKR_SESSION_READ_ONLY_EXISTS);
        }
        let key = store.login(role, pin).map_err(store_rv)?;
        self.slots[slot].logins.insert(app, (role, key));
        Ok(())
    }

    /// The signing key of a private-key object (decoded once while logged in).
    pub(super) fn private_op_key(
        &mut self,
        attrs: &Attributes,
        store: &Store,
        session: CK_SESSION_HANDLE,
    ) -> Result<OpKey> {
        if let Some(file) = attrs.get(&mech::CKA_PQKIT_STATE_FILE) {
            let path = store.hbs_dir().join(String::from_utf8_lossy(file).as_ref());
            let status = pqkit_hbs::state::status(&path).map_err(state_rv)?;
            let data_key = self.user_key(session).ok_or(CKR_USER_NOT_LOGGED_IN)?;
            let seal = Zeroizing::new(data_key.derive(&state_seal_label(file)));
            return Ok(OpKey::HbsSign(
                path,
                status.signature_len,
                seal,
                store.clone(),
            ));
        }
        let der = attrs
            .get(&mech::CKA_PQKIT_PKCS8)
            .ok_or(CKR_KEY_TYPE_INCONSISTENT)?;
        let digest: [u8; 32] = sha2::Sha256::digest(der).into();
        if let Some(key) = self.keys.get(&digest) {
            return Ok(OpKey::Sign(key.clone()));
        }
        let key = Arc::new(
            pqkit_pki::key::signing_key_from_pkcs8(der).map_err(|_| CKR_KEY_TYPE_INCONSISTENT)?,
        );
        if self.keys.len() >= KEY_CACHE {
            self.keys.clear();
        }
        self.keys.insert(digest, key.clone());
        Ok(OpKey::Sign(key))
    }

    /// C_Logout.
    pub(crate) fn logout(&mut self, h: CK_SESSION_HANDLE) -> Result<()> {
        self.keys.clear();
        let (slot, app) = {
            let s = self.session(h)?;
            (s.slot, s.app)
        };
        self.slots[slot]
            .logins
            .remove(&app)
            .map(|_| ())
            .ok_or(CKR_USER_NOT_LOGGED_IN)
    }

    /// C_InitPIN: the SO sets the user PIN.
    pub(crate) fn init_pin(&mut self, h: CK_SESSION_HANDLE, pin: &[u8]) -> Result<()> {
        let (slot, store) = self.session_store(h)?;
        let app = self.session(h)?.app;
        let Some((Role::SecurityOfficer, key)) = self.slots[slot].logins.get(&app) else {
            return Err(CKR_USER_NOT_LOGGED_IN);
        };
        store.set_pin(Role::User, key, pin).map_err(store_rv)
    }

    /// C_SetPIN: the logged-in role (the user when none is) changes its own PIN.
    pub(crate) fn set_pin(&mut self, h: CK_SESSION_HANDLE, old: &[u8], new: &[u8]) -> Result<()> {
        let (slot, store) = self.session_store(h)?;
        if !self.session(h)?.rw {
            return Err(CKR_SESSION_READ_ONLY);
        }
        let app = self.session(h)?.app;
        let role = self.slots[slot]
            .logins
            .get(&app)
            .map_or(Role::User, |(r, _)| *r);
        let key = store.login(role, old).map_err(store_rv)?;
        store.set_pin(role, &key, new).map_err(store_rv)
    }

    /// The data key of the user logged in for `session`'s application, if one is.
    pub(super) fn user_key(&self, session: CK_SESSION_HANDLE) -> Option<&DataKey> {
        let s = self.sessions.get(&session)?;
        match self.slots.get(s.slot)?.logins.get(&s.app) {
            Some((Role::User, key)) => Some(key),
            _ => None,
        }
    }
}
