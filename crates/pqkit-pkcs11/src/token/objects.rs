//! Object handles, attributes and search (PKCS#11 3.2 §5.7): token objects read from disk at
//! each use, session objects in memory.

use super::keygen::{private_key_from_template, public_key_from_template};
use super::*;

impl Module {
    pub(super) fn handle_for(&mut self, place: Place) -> CK_OBJECT_HANDLE {
        if let Some(h) = self.handles.get(&place) {
            return *h;
        }
        let h = self.next_handle;
        self.next_handle += 1;
        self.places.insert(h, place);
        self.handles.insert(place, h);
        h
    }

    /// The attributes of object `h` as the session may see them: `None` when it does not
    /// exist or is private and the user is not logged in.
    pub(super) fn read(
        &mut self,
        session: CK_SESSION_HANDLE,
        h: CK_OBJECT_HANDLE,
    ) -> Result<Attributes> {
        let slot = self.session(session)?.slot;
        match self.places.get(&h).copied() {
            Some(Place::Token(s, id)) if s == slot => {
                let store = self.slots[slot].store.as_ref().ok_or(CKR_DEVICE_REMOVED)?;
                match store.read_object(id, self.user_key(session)) {
                    Ok(Some((_, attrs))) => Ok(attrs),
                    Ok(None) => Err(CKR_OBJECT_HANDLE_INVALID),
                    Err(StoreError::Io(_, e)) if e.kind() == std::io::ErrorKind::NotFound => {
                        Err(CKR_OBJECT_HANDLE_INVALID)
                    }
                    Err(e) => Err(store_rv(e)),
                }
            }
            Some(Place::Session(s)) if s == slot => {
                let o = self
                    .session_objects
                    .get(&h)
                    .ok_or(CKR_OBJECT_HANDLE_INVALID)?;
                if flag(&o.attrs, CKA_PRIVATE, false) && self.user_key(session).is_none() {
                    return Err(CKR_OBJECT_HANDLE_INVALID);
                }
                Ok(o.attrs.clone())
            }
            _ => Err(CKR_OBJECT_HANDLE_INVALID),
        }
    }

    /// Stores a new object; token objects need a read/write session and a user login (public
    /// ones too: their tag is made with the data key), session objects a login when private.
    pub(super) fn insert(
        &mut self,
        session: CK_SESSION_HANDLE,
        attrs: Attributes,
    ) -> Result<CK_OBJECT_HANDLE> {
        let s = self.session(session)?;
        let (slot, rw) = (s.slot, s.rw);
        let private = flag(&attrs, CKA_PRIVATE, false);
        if private && self.user_key(session).is_none() {
            return Err(CKR_USER_NOT_LOGGED_IN);
        }
        if flag(&attrs, CKA_TOKEN, false) {
            if !rw {
                return Err(CKR_SESSION_READ_ONLY);
            }
            let key = self
                .user_key(session)
                .ok_or(CKR_USER_NOT_LOGGED_IN)?
                .clone();
            let store = self.slots[slot].store.clone().ok_or(CKR_DEVICE_REMOVED)?;
            let id = attrs
                .get(&mech::CKA_PQKIT_STATE_FILE)
                .and_then(|f| {
                    std::str::from_utf8(f)
                        .ok()?
                        .strip_suffix(".state")?
                        .parse()
                        .ok()
                })
                .unwrap_or_else(|| store.new_id());
            store
                .write_object(id, &attrs, private, &key)
                .map_err(store_rv)?;
            Ok(self.handle_for(Place::Token(slot, id)))
        } else {
            let h = self.next_handle;
            self.next_handle += 1;
            self.places.insert(h, Place::Session(slot));
            self.session_objects
                .insert(h, SessionObject { session, attrs });
            Ok(h)
        }
    }

    /// C_CreateObject: certificates, public keys, private keys (by CKA_SEED / CKA_VALUE for
    /// ML-DSA, ML-KEM and SLH-DSA, or by CKA_PQKIT_PKCS8 for any key pqkit reads), data and
    /// secret keys.
    pub(crate) fn create_object(
        &mut self,
        session: CK_SESSION_HANDLE,
        template: Attributes,
    ) -> Result<CK_OBJECT_HANDLE> {
        let class = get_ulong(&template, CKA_CLASS)?.ok_or(CKR_TEMPLATE_INCOMPLETE)?;
        if template.keys().any(|t| *t == mech::CKA_PQKIT_STATE_FILE) {
            return Err(CKR_ATTRIBUTE_TYPE_INVALID);
        }
        let attrs = match class {
            CKO_CERTIFICATE => {
                let ty =
                    get_ulong(&template, CKA_CERTIFICATE_TYPE)?.ok_or(CKR_TEMPLATE_INCOMPLETE)?;
                if ty != CKC_X_509 {
                    return Err(CKR_ATTRIBUTE_VALUE_INVALID);
                }
                let der = template.get(&CKA_VALUE).ok_or(CKR_TEMPLATE_INCOMPLETE)?;
                <x509_cert::Certificate as der::Decode>::from_der(der)
                    .map_err(|_| CKR_ATTRIBUTE_VALUE_INVALID)?;
                let mut a = template.clone();
                a.entry(CKA_PRIVATE).or_insert_with(|| boolean(false));
                a
            }
            CKO_PRIVATE_KEY => private_key_from_template(&template)?,
            CKO_PUBLIC_KEY => public_key_from_template(&template)?,
            CKO_DATA | CKO_SECRET_KEY => {
                let mut a = template.clone();
                a.entry(CKA_PRIVATE)
                    .or_insert_with(|| boolean(class == CKO_SECRET_KEY));
                a
            }
            _ => return Err(CKR_ATTRIBUTE_VALUE_INVALID),
        };
        self.insert(session, attrs)
    }

    /// C_DestroyObject (a stateful key's state file goes with it).
    pub(crate) fn destroy_object(
        &mut self,
        session: CK_SESSION_HANDLE,
        h: CK_OBJECT_HANDLE,
    ) -> Result<()> {
        let attrs = self.read(session, h)?;
        match self.places.get(&h).copied() {
            Some(Place::Token(slot, id)) => {
                if !self.session(session)?.rw {
                    return Err(CKR_SESSION_READ_ONLY);
                }
                let store = self.slots[slot].store.clone().ok_or(CKR_DEVICE_REMOVED)?;
                store.delete_object(id).map_err(store_rv)?;
                if let Some(file) = attrs.get(&mech::CKA_PQKIT_STATE_FILE) {
                    let path = store.hbs_dir().join(String::from_utf8_lossy(file).as_ref());
                    for p in std::iter::once(path.clone())
                        .chain(pqkit_hbs::state::companion_files(&path))
                    {
                        let _ = std::fs::remove_file(p);
                    }
                }
            }
            _ => {
                self.session_objects.remove(&h);
            }
        }
        if let Some(p) = self.places.remove(&h) {
            self.handles.remove(&p);
        }
        Ok(())
    }

    /// C_GetAttributeValue for one attribute: `Ok(Some(value))`, `Ok(None)` for an attribute
    /// the object does not have, or CKR_ATTRIBUTE_SENSITIVE.
    pub(crate) fn attributes(
        &mut self,
        session: CK_SESSION_HANDLE,
        h: CK_OBJECT_HANDLE,
    ) -> Result<ObjectView> {
        let attrs = self.read(session, h)?;
        let slot = self.session(session)?.slot;
        let state_file = attrs.get(&mech::CKA_PQKIT_STATE_FILE).map(|f| {
            self.slots[slot]
                .store
                .as_ref()
                .map(|s| s.hbs_dir().join(String::from_utf8_lossy(f).as_ref()))
        });
        Ok(ObjectView {
            attrs,
            state_file: state_file.flatten(),
        })
    }

    /// C_SetAttributeValue: CKA_LABEL, CKA_ID, CKA_SUBJECT and CKA_APPLICATION may change.
    pub(crate) fn set_attributes(
        &mut self,
        session: CK_SESSION_HANDLE,
        h: CK_OBJECT_HANDLE,
        changes: Attributes,
    ) -> Result<()> {
        let mut attrs = self.read(session, h)?;
        for (t, v) in changes {
            if !matches!(t, CKA_LABEL | CKA_ID | CKA_SUBJECT | CKA_APPLICATION) {
                return Err(CKR_ATTRIBUTE_READ_ONLY);
            }
            if !flag(&attrs, CKA_MODIFIABLE, true) {
                return Err(CKR_ACTION_PROHIBITED);
            }
            attrs.insert(t, v);
        }
        match self.places.get(&h).copied() {
            Some(Place::Token(slot, id)) => {
                if !self.session(session)?.rw {
                    return Err(CKR_SESSION_READ_ONLY);
                }
                let store = self.slots[slot].store.clone().ok_or(CKR_DEVICE_REMOVED)?;
                let private = flag(&attrs, CKA_PRIVATE, false);
                let key = self
                    .user_key(session)
                    .ok_or(CKR_USER_NOT_LOGGED_IN)?
                    .clone();
                store
                    .write_object(id, &attrs, private, &key)
                    .map_err(store_rv)
            }
            _ => {
                if let Some(o) = self.session_objects.get_mut(&h) {
                    o.attrs = attrs;
                }
                Ok(())
            }
        }
    }

    /// C_FindObjectsInit: every visible object whose attributes equal the template's.
    pub(crate) fn find_init(
        &mut self,
        session: CK_SESSION_HANDLE,
        template: Attributes,
    ) -> Result<()> {
        let s = self.session(session)?;
        if s.find.is_some() {
            return Err(CKR_OPERATION_ACTIVE);
        }
        let slot = s.slot;
        if template.keys().any(|t| internal(*t)) {
            self.session(session)?.find = Some(Vec::new());
            return Ok(());
        }
        let store = self.slots[slot].store.clone().ok_or(CKR_DEVICE_REMOVED)?;
        let mut found = Vec::new();
        // A damaged object is skipped: the others stay usable.
        for id in store.object_ids().map_err(store_rv)? {
            if let Ok(Some((_, attrs))) = store.read_object(id, self.user_key(session))
                && matches(&attrs, &template)
            {
                found.push(self.handle_for(Place::Token(slot, id)));
            }
        }
        let logged_in = self.user_key(session).is_some();
        let mut session_found: Vec<_> = self
            .session_objects
            .iter()
            .filter(|(h, o)| {
                self.places.get(h) == Some(&Place::Session(slot))
                    && (logged_in || !flag(&o.attrs, CKA_PRIVATE, false))
                    && matches(&o.attrs, &template)
            })
            .map(|(h, _)| *h)
            .collect();
        session_found.sort_unstable();
        found.extend(session_found);
        found.reverse();
        self.session(session)?.find = Some(found);
        Ok(())
    }

    /// C_FindObjects: up to `max` more handles.
    pub(crate) fn find_next(
        &mut self,
        session: CK_SESSION_HANDLE,
        max: usize,
    ) -> Result<Vec<CK_OBJECT_HANDLE>> {
        let found = self
            .session(session)?
            .find
            .as_mut()
            .ok_or(CKR_OPERATION_NOT_INITIALIZED)?;
        let n = max.min(found.len());
        Ok((0..n).filter_map(|_| found.pop()).collect())
    }

    /// C_FindObjectsFinal.
    pub(crate) fn find_final(&mut self, session: CK_SESSION_HANDLE) -> Result<()> {
        self.session(session)?
            .find
            .take()
            .map(|_| ())
            .ok_or(CKR_OPERATION_NOT_INITIALIZED)
    }
}

/// An object's attributes, and its state file if it is a stateful private key.
pub(crate) struct ObjectView {
    attrs: Attributes,
    state_file: Option<PathBuf>,
}

impl ObjectView {
    /// One attribute's value for the caller: `Ok(None)` when the object has none,
    /// `Err(CKR_ATTRIBUTE_SENSITIVE)` for a secret.
    pub(crate) fn get(&self, t: CK_ATTRIBUTE_TYPE) -> Result<Option<Vec<u8>>> {
        if internal(t) {
            return Ok(None);
        }
        let class = get_ulong(&self.attrs, CKA_CLASS)?.unwrap_or(CKO_DATA);
        if t == CKA_HSS_KEYS_REMAINING
            && let Some(path) = &self.state_file
        {
            let status = pqkit_hbs::state::status(path).map_err(state_rv)?;
            return Ok(Some(ulong(status.remaining as CK_ULONG)));
        }
        if secret_attribute(class, t) {
            let hidden = flag(&self.attrs, CKA_SENSITIVE, true)
                || !flag(&self.attrs, CKA_EXTRACTABLE, false);
            if hidden {
                return Err(CKR_ATTRIBUTE_SENSITIVE);
            }
        }
        match self.attrs.get(&t) {
            Some(v) => Ok(Some(v.clone())),
            None => Ok(default_attribute(class, t)),
        }
    }
}
