//! Raw calls through a module's function list, for the mechanisms the `cryptoki` crate has no
//! type for (CKM_HSS, CKM_XMSS, CKM_XMSSMT and their key-pair generators, PKCS#11 3.2 §6.64,
//! §6.65). Each call opens its own session on the slot: a login is per application and slot
//! (PKCS#11 3.2 §5.6.9), so the caller's login through `cryptoki` covers it.

#![allow(unsafe_code)]

use std::path::Path;

use cryptoki_sys::*;

/// An attribute of a raw template: type and value bytes.
pub type RawAttribute = (CK_ATTRIBUTE_TYPE, Vec<u8>);

/// A loaded module's function list.
pub struct RawModule {
    functions: *const CK_FUNCTION_LIST,
    // Keeps the library mapped while `functions` is used.
    _library: libloading::Library,
}

// SAFETY: PKCS#11 function lists are immutable tables of thread-safe entry points once the
// module is initialised with CKF_OS_LOCKING_OK (as `super::load_module` does).
unsafe impl Send for RawModule {}
// SAFETY: as above.
unsafe impl Sync for RawModule {}

fn check(rv: CK_RV) -> Result<(), CK_RV> {
    if rv == CKR_OK { Ok(()) } else { Err(rv) }
}

/// Closes a session when dropped.
struct RawSession<'a>(&'a CK_FUNCTION_LIST, CK_SESSION_HANDLE);

impl Drop for RawSession<'_> {
    fn drop(&mut self) {
        if let Some(close) = self.0.C_CloseSession {
            // SAFETY: a session this module opened, closed once.
            unsafe { close(self.1) };
        }
    }
}

fn template(attrs: &mut [RawAttribute]) -> Vec<CK_ATTRIBUTE> {
    attrs
        .iter_mut()
        .map(|(t, v)| CK_ATTRIBUTE {
            type_: *t,
            pValue: v.as_mut_ptr().cast(),
            ulValueLen: v.len() as CK_ULONG,
        })
        .collect()
}

impl RawModule {
    /// Loads `path` (already initialised by `cryptoki` in this process) and gets its list.
    ///
    /// # Errors
    /// CKR_GENERAL_ERROR when the library or its C_GetFunctionList is missing.
    pub fn load(path: &Path) -> Result<Self, CK_RV> {
        // SAFETY: loading a PKCS#11 module runs its initialisers, as any PKCS#11 consumer does.
        let library = unsafe { libloading::Library::new(path) }.map_err(|_| CKR_GENERAL_ERROR)?;
        let mut functions: *mut CK_FUNCTION_LIST = std::ptr::null_mut();
        // SAFETY: C_GetFunctionList has this signature in every PKCS#11 module.
        let rv = unsafe {
            let get: libloading::Symbol<
                '_,
                unsafe extern "C" fn(*mut *mut CK_FUNCTION_LIST) -> CK_RV,
            > = library
                .get(b"C_GetFunctionList\0")
                .map_err(|_| CKR_GENERAL_ERROR)?;
            get(&raw mut functions)
        };
        check(rv)?;
        if functions.is_null() {
            return Err(CKR_GENERAL_ERROR);
        }
        Ok(Self {
            functions,
            _library: library,
        })
    }

    fn list(&self) -> &CK_FUNCTION_LIST {
        // SAFETY: non-null, returned by the module, valid while the library is loaded.
        unsafe { &*self.functions }
    }

    fn session(&self, slot: CK_SLOT_ID) -> Result<RawSession<'_>, CK_RV> {
        let f = self.list();
        let open = f.C_OpenSession.ok_or(CKR_FUNCTION_NOT_SUPPORTED)?;
        let mut h: CK_SESSION_HANDLE = 0;
        // SAFETY: valid out pointer; no notification callback.
        check(unsafe {
            open(
                slot,
                CKF_SERIAL_SESSION | CKF_RW_SESSION,
                std::ptr::null_mut(),
                None,
                &raw mut h,
            )
        })?;
        Ok(RawSession(f, h))
    }

    /// C_SignInit + C_Sign with mechanism `ty` (no parameter) and key `key`.
    ///
    /// # Errors
    /// The module's CK_RV.
    pub fn sign(
        &self,
        slot: CK_SLOT_ID,
        key: CK_OBJECT_HANDLE,
        ty: CK_MECHANISM_TYPE,
        data: &[u8],
    ) -> Result<Vec<u8>, CK_RV> {
        let s = self.session(slot)?;
        let f = self.list();
        let (init, sign) = (
            f.C_SignInit.ok_or(CKR_FUNCTION_NOT_SUPPORTED)?,
            f.C_Sign.ok_or(CKR_FUNCTION_NOT_SUPPORTED)?,
        );
        let mut m = CK_MECHANISM {
            mechanism: ty,
            pParameter: std::ptr::null_mut(),
            ulParameterLen: 0,
        };
        // SAFETY: valid mechanism structure, our session.
        check(unsafe { init(s.1, &raw mut m, key) })?;
        let mut len: CK_ULONG = 0;
        // SAFETY: size query: null output, valid length pointer; data valid for its length.
        check(unsafe {
            sign(
                s.1,
                data.as_ptr().cast_mut(),
                data.len() as CK_ULONG,
                std::ptr::null_mut(),
                &raw mut len,
            )
        })?;
        let mut out = vec![0u8; usize::try_from(len).map_err(|_| CKR_GENERAL_ERROR)?];
        // SAFETY: `out` holds `len` bytes.
        check(unsafe {
            sign(
                s.1,
                data.as_ptr().cast_mut(),
                data.len() as CK_ULONG,
                out.as_mut_ptr(),
                &raw mut len,
            )
        })?;
        out.truncate(usize::try_from(len).map_err(|_| CKR_GENERAL_ERROR)?);
        Ok(out)
    }

    /// C_VerifyInit + C_Verify with mechanism `ty` (no parameter).
    ///
    /// # Errors
    /// The module's CK_RV (CKR_SIGNATURE_INVALID for a bad signature).
    pub fn verify(
        &self,
        slot: CK_SLOT_ID,
        key: CK_OBJECT_HANDLE,
        ty: CK_MECHANISM_TYPE,
        data: &[u8],
        signature: &[u8],
    ) -> Result<(), CK_RV> {
        let s = self.session(slot)?;
        let f = self.list();
        let (init, verify) = (
            f.C_VerifyInit.ok_or(CKR_FUNCTION_NOT_SUPPORTED)?,
            f.C_Verify.ok_or(CKR_FUNCTION_NOT_SUPPORTED)?,
        );
        let mut m = CK_MECHANISM {
            mechanism: ty,
            pParameter: std::ptr::null_mut(),
            ulParameterLen: 0,
        };
        // SAFETY: valid mechanism, our session.
        check(unsafe { init(s.1, &raw mut m, key) })?;
        // SAFETY: both buffers valid for their lengths.
        check(unsafe {
            verify(
                s.1,
                data.as_ptr().cast_mut(),
                data.len() as CK_ULONG,
                signature.as_ptr().cast_mut(),
                signature.len() as CK_ULONG,
            )
        })
    }

    /// One attribute's value (C_GetAttributeValue, two calls).
    ///
    /// # Errors
    /// The module's CK_RV (CKR_ATTRIBUTE_TYPE_INVALID, CKR_ATTRIBUTE_SENSITIVE, …).
    pub fn attribute(
        &self,
        slot: CK_SLOT_ID,
        object: CK_OBJECT_HANDLE,
        ty: CK_ATTRIBUTE_TYPE,
    ) -> Result<Vec<u8>, CK_RV> {
        let s = self.session(slot)?;
        let get = self
            .list()
            .C_GetAttributeValue
            .ok_or(CKR_FUNCTION_NOT_SUPPORTED)?;
        let mut a = CK_ATTRIBUTE {
            type_: ty,
            pValue: std::ptr::null_mut(),
            ulValueLen: 0,
        };
        // SAFETY: one attribute, null value: a size query.
        check(unsafe { get(s.1, object, &raw mut a, 1) })?;
        let mut out = vec![0u8; usize::try_from(a.ulValueLen).map_err(|_| CKR_GENERAL_ERROR)?];
        a.pValue = out.as_mut_ptr().cast();
        // SAFETY: `out` holds ulValueLen bytes.
        check(unsafe { get(s.1, object, &raw mut a, 1) })?;
        Ok(out)
    }

    /// C_GenerateKeyPair with mechanism `ty` (no parameter): (public, private) handles.
    ///
    /// # Errors
    /// The module's CK_RV.
    pub fn generate_key_pair(
        &self,
        slot: CK_SLOT_ID,
        ty: CK_MECHANISM_TYPE,
        mut public: Vec<RawAttribute>,
        mut private: Vec<RawAttribute>,
    ) -> Result<(CK_OBJECT_HANDLE, CK_OBJECT_HANDLE), CK_RV> {
        let s = self.session(slot)?;
        let generate = self
            .list()
            .C_GenerateKeyPair
            .ok_or(CKR_FUNCTION_NOT_SUPPORTED)?;
        let mut m = CK_MECHANISM {
            mechanism: ty,
            pParameter: std::ptr::null_mut(),
            ulParameterLen: 0,
        };
        let (mut pt, mut st) = (template(&mut public), template(&mut private));
        let (mut ph, mut sh) = (0, 0);
        // SAFETY: templates point into `public` / `private`, alive for the call.
        check(unsafe {
            generate(
                s.1,
                &raw mut m,
                pt.as_mut_ptr(),
                pt.len() as CK_ULONG,
                st.as_mut_ptr(),
                st.len() as CK_ULONG,
                &raw mut ph,
                &raw mut sh,
            )
        })?;
        Ok((ph, sh))
    }
}
