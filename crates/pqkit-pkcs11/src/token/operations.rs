//! Signing, verification and KEM operations (PKCS#11 3.2 §5.12–§5.14, §5.18): the key taken out
//! for the operation, the message accumulated or streamed, the result finished outside the
//! module's lock.

use super::keygen::{generate, generate_stateful};
use super::*;

impl Module {
    /// Checks the session may use key `h` for `usage` (CKA_SIGN, CKA_VERIFY, …) with `m`, and
    /// returns its attributes and the slot's store.
    pub(super) fn key_for(
        &mut self,
        session: CK_SESSION_HANDLE,
        h: CK_OBJECT_HANDLE,
        m: &Mechanism,
        usage: CK_ATTRIBUTE_TYPE,
    ) -> Result<(Attributes, Store)> {
        let attrs = self.read(session, h).map_err(|e| {
            if e == CKR_OBJECT_HANDLE_INVALID {
                CKR_KEY_HANDLE_INVALID
            } else {
                e
            }
        })?;
        if get_ulong(&attrs, CKA_KEY_TYPE)? != Some(m.key_type) {
            return Err(CKR_KEY_TYPE_INCONSISTENT);
        }
        if !flag(&attrs, usage, false) {
            return Err(CKR_KEY_FUNCTION_NOT_PERMITTED);
        }
        let (_, store) = self.session_store(session)?;
        Ok((attrs, store))
    }

    /// C_SignInit / C_VerifyInit.
    pub(crate) fn operation_init(
        &mut self,
        session: CK_SESSION_HANDLE,
        m: &'static Mechanism,
        params: SignParams,
        h: CK_OBJECT_HANDLE,
        verify: bool,
    ) -> Result<()> {
        let s = self.session(session)?;
        let busy = if verify {
            s.verify.is_some()
        } else {
            s.sign.is_some()
        };
        if busy {
            return Err(CKR_OPERATION_ACTIVE);
        }
        let op = m.sign.ok_or(CKR_MECHANISM_INVALID)?;
        let usage = if verify { CKA_VERIFY } else { CKA_SIGN };
        let (attrs, store) = self.key_for(session, h, m, usage)?;
        let class = get_ulong(&attrs, CKA_CLASS)?;
        let key = match (class, verify) {
            (Some(CKO_PRIVATE_KEY), false) => self.private_op_key(&attrs, &store, session)?,
            (Some(CKO_PUBLIC_KEY), true) => public_op_key(&attrs)?,
            _ => return Err(CKR_KEY_TYPE_INCONSISTENT),
        };
        // Pure ML-DSA starts buffered (C_Sign signs the message in one call); the first
        // C_SignUpdate turns it into μ's hash, so a long message streams (see `update`).
        let acc = match (op, &key) {
            (SignOp::HashThen(hash) | SignOp::EcdsaHash(hash), _) => Acc::Hash(hash.hasher()),
            _ => Acc::Buffer(Zeroizing::new(Vec::new())),
        };
        if op == SignOp::Digest && params.hash.is_none() {
            return Err(CKR_MECHANISM_PARAM_INVALID);
        }
        let operation = Operation {
            mech: m,
            key,
            params,
            acc,
            multi_part: false,
        };
        let s = self.session(session)?;
        if verify {
            s.verify = Some(operation);
        } else {
            s.sign = Some(operation);
        }
        Ok(())
    }

    /// The size of the signature the session's operation will make, in bytes.
    pub(crate) fn signature_len(&mut self, session: CK_SESSION_HANDLE) -> Result<usize> {
        let op = self
            .session(session)?
            .sign
            .as_ref()
            .ok_or(CKR_OPERATION_NOT_INITIALIZED)?;
        Ok(match &op.key {
            OpKey::Sign(k) => {
                let alg = k.algorithm();
                match alg.family {
                    Family::Ecdsa => 2 * alg.signing_key_size,
                    _ => alg.signature_size,
                }
            }
            OpKey::HbsSign(_, len, ..) => *len,
            _ => return Err(CKR_OPERATION_NOT_INITIALIZED),
        })
    }

    /// Ends the session's sign or verify operation, if one is active: a C_Sign, C_SignUpdate,
    /// C_Verify… that fails ends it (PKCS#11 3.2 §5.13, §5.15), CKR_BUFFER_TOO_SMALL aside.
    pub(crate) fn end_operation(&mut self, session: CK_SESSION_HANDLE, verify: bool) {
        if let Ok(s) = self.session(session) {
            if verify {
                s.verify = None;
            } else {
                s.sign = None;
            }
        }
    }

    /// Feeds data to the session's sign or verify operation (C_SignUpdate / C_VerifyUpdate).
    /// A message the mechanism must see whole (SLH-DSA, Falcon, LMS/HSS, XMSS: the message is
    /// hashed twice or after a randomizer) is kept in memory up to [`MAX_BUFFERED`] bytes.
    /// An error ends the operation.
    pub(crate) fn update(
        &mut self,
        session: CK_SESSION_HANDLE,
        verify: bool,
        data: &[u8],
    ) -> Result<()> {
        let s = self.session(session)?;
        let slot = if verify { &mut s.verify } else { &mut s.sign };
        let result = Self::feed(slot, data);
        if result.is_err() {
            *slot = None;
        }
        result
    }

    pub(super) fn feed(slot: &mut Option<Operation>, data: &[u8]) -> Result<()> {
        let op = slot.as_mut().ok_or(CKR_OPERATION_NOT_INITIALIZED)?;
        op.multi_part = true;
        if let Acc::Buffer(buffered) = &op.acc
            && op.mech.sign == Some(SignOp::Message)
        {
            // FIPS 204 Algorithm 7 line 6 over the stream: μ = H(tr ‖ M′), M′ as it arrives.
            let mu = match &op.key {
                OpKey::Sign(k) if k.algorithm().family == Family::MlDsa => {
                    Some(k.verifying_key().mu_hasher(&op.params.context))
                }
                OpKey::Verify(k) if k.algorithm().family == Family::MlDsa => {
                    Some(k.mu_hasher(&op.params.context))
                }
                _ => None,
            };
            if let Some(mu) = mu {
                let mut mu = mu.map_err(core_rv)?;
                mu.update(buffered);
                op.acc = Acc::Mu(mu);
            }
        }
        if matches!(
            op.mech.sign,
            Some(SignOp::Digest | SignOp::Mu | SignOp::EcdsaDigest)
        ) {
            // A digest or μ is one value, not a stream (PKCS#11 3.2 §6.67.6).
            return Err(CKR_FUNCTION_NOT_SUPPORTED);
        }
        if let Acc::Buffer(b) = &op.acc
            && b.len().saturating_add(data.len()) > MAX_BUFFERED
        {
            return Err(CKR_DATA_LEN_RANGE);
        }
        op.acc.update(data);
        Ok(())
    }

    /// Takes the session's operation out (it ends here, whatever the outcome), for
    /// [`finish_sign`] / [`finish_verify`] outside the lock.
    pub(crate) fn take_operation(
        &mut self,
        session: CK_SESSION_HANDLE,
        verify: bool,
        single_part: Option<Vec<u8>>,
    ) -> Result<Operation> {
        let s = self.session(session)?;
        let slot = if verify { &mut s.verify } else { &mut s.sign };
        let mut op = slot.take().ok_or(CKR_OPERATION_NOT_INITIALIZED)?;
        if let Some(data) = single_part {
            if op.multi_part {
                return Err(CKR_OPERATION_ACTIVE);
            }
            match &mut op.acc {
                // The whole message in one call: kept as given, not copied (a 10 MiB message
                // is one buffer from the C interface or the socket to the signer).
                Acc::Buffer(b) if b.is_empty() => *b = Zeroizing::new(data),
                acc => acc.update(&data),
            }
        }
        Ok(op)
    }

    /// C_GenerateKeyPair: (public, private) handles.
    pub(crate) fn generate_key_pair(
        &mut self,
        session: CK_SESSION_HANDLE,
        m: &'static Mechanism,
        public: Attributes,
        private: Attributes,
    ) -> Result<(CK_OBJECT_HANDLE, CK_OBJECT_HANDLE)> {
        if m.flags & CKF_GENERATE_KEY_PAIR == 0 {
            return Err(CKR_MECHANISM_INVALID);
        }
        if public.keys().chain(private.keys()).any(|t| internal(*t)) {
            return Err(CKR_ATTRIBUTE_TYPE_INVALID);
        }
        let (_, store) = self.session_store(session)?;
        if self.user_key(session).is_none() {
            return Err(CKR_USER_NOT_LOGGED_IN);
        }
        let stateful = matches!(m.key_type, CKK_HSS | CKK_XMSS | CKK_XMSSMT);
        // A stateful key's state file and ledger record, removed again when its objects
        // cannot be stored: a key no object names must not be left to sign.
        let (public_attrs, private_attrs, new_key) = if stateful {
            if !self.session(session)?.rw {
                return Err(CKR_SESSION_READ_ONLY);
            }
            let data_key = self
                .user_key(session)
                .ok_or(CKR_USER_NOT_LOGGED_IN)?
                .clone();
            let (a, b, key) = generate_stateful(m, &public, &private, &store, &data_key)?;
            (a, b, Some(key))
        } else {
            let (a, b) = generate(m, &public, &private)?;
            (a, b, None)
        };
        let discard = |key: Option<StatefulKey>| {
            if let Some(key) = key {
                let _ = key.discard();
            }
        };
        let (mut public_attrs, mut private_attrs) =
            (merge(public_attrs, &public), merge(private_attrs, &private));
        if stateful {
            // The state file outlives the process: a stateful key is always a token object,
            // whatever the template says.
            public_attrs.insert(CKA_TOKEN, boolean(true));
            private_attrs.insert(CKA_TOKEN, boolean(true));
        }
        let pub_h = match self.insert(session, public_attrs) {
            Ok(h) => h,
            Err(e) => {
                discard(new_key);
                return Err(e);
            }
        };
        let priv_h = match self.insert(session, private_attrs) {
            Ok(h) => h,
            Err(e) => {
                let _ = self.destroy_object(session, pub_h);
                discard(new_key);
                return Err(e);
            }
        };
        Ok((pub_h, priv_h))
    }

    /// The key of an encapsulation or decapsulation, checked for `usage`.
    pub(crate) fn kem_key(
        &mut self,
        session: CK_SESSION_HANDLE,
        h: CK_OBJECT_HANDLE,
        usage: CK_ATTRIBUTE_TYPE,
    ) -> Result<Attributes> {
        let m = mech::find(CKM_ML_KEM).ok_or(CKR_MECHANISM_INVALID)?;
        Ok(self.key_for(session, h, m, usage)?.0)
    }

    /// Creates the shared-secret object of C_EncapsulateKey / C_DecapsulateKey:
    /// CKO_SECRET_KEY, CKK_GENERIC_SECRET, CKA_VALUE = the 32-byte shared secret.
    pub(crate) fn shared_secret_object(
        &mut self,
        session: CK_SESSION_HANDLE,
        template: Attributes,
        secret: &[u8],
    ) -> Result<CK_OBJECT_HANDLE> {
        if template.keys().any(|t| internal(*t)) {
            return Err(CKR_ATTRIBUTE_TYPE_INVALID);
        }
        let mut attrs: Attributes = [
            (CKA_CLASS, ulong(CKO_SECRET_KEY)),
            (CKA_KEY_TYPE, ulong(CKK_GENERIC_SECRET)),
            (CKA_VALUE_LEN, ulong(secret.len() as CK_ULONG)),
            (CKA_TOKEN, boolean(false)),
            (CKA_PRIVATE, boolean(true)),
            (CKA_SENSITIVE, boolean(false)),
            (CKA_EXTRACTABLE, boolean(true)),
            (CKA_LOCAL, boolean(false)),
            (CKA_DERIVE, boolean(true)),
        ]
        .into();
        for (t, v) in template {
            if !matches!(t, CKA_CLASS | CKA_KEY_TYPE | CKA_VALUE | CKA_VALUE_LEN) {
                attrs.insert(t, v);
            }
        }
        attrs.insert(CKA_VALUE, secret.to_vec());
        self.insert(session, attrs)
    }
}

/// The decapsulation key of a private-key object.
pub(crate) fn decapsulation_key(attrs: &Attributes) -> Result<pqkit_core::kem::DecapsulationKey> {
    let der = attrs
        .get(&mech::CKA_PQKIT_PKCS8)
        .ok_or(CKR_KEY_TYPE_INCONSISTENT)?;
    pqkit_pki::key::decapsulation_key_from_pkcs8(der).map_err(|_| CKR_KEY_TYPE_INCONSISTENT)
}

/// The encapsulation key of a public-key object.
pub(crate) fn encapsulation_key(attrs: &Attributes) -> Result<pqkit_core::kem::EncapsulationKey> {
    let kind = mech::kind_for(CKK_ML_KEM, get_ulong(attrs, CKA_PARAMETER_SET)?, None)
        .ok_or(CKR_KEY_TYPE_INCONSISTENT)?;
    let alg = catalogue::kem(kind.name).map_err(core_rv)?;
    let value = attrs.get(&CKA_VALUE).ok_or(CKR_KEY_TYPE_INCONSISTENT)?;
    alg.encapsulation_key(value)
        .map_err(|_| CKR_KEY_TYPE_INCONSISTENT)
}

impl Acc {
    pub(super) fn update(&mut self, data: &[u8]) {
        match self {
            Self::Buffer(b) => b.extend_from_slice(data),
            Self::Hash(h) => h.update(data),
            Self::Mu(h) => h.update(data),
        }
    }
}

/// ECDSA's DER signature (RFC 3279 §2.2.3) as PKCS#11's r ‖ s, each `n` bytes.
fn ecdsa_der_to_raw(der_sig: &[u8], n: usize) -> Result<Vec<u8>> {
    let mut reader = der::SliceReader::new(der_sig).map_err(|_| CKR_FUNCTION_FAILED)?;
    let (r, s) = der::Reader::sequence(&mut reader, |seq| {
        let r: der::asn1::UintRef<'_> = der::Decode::decode(seq)?;
        let s: der::asn1::UintRef<'_> = der::Decode::decode(seq)?;
        Ok((r.as_bytes().to_vec(), s.as_bytes().to_vec()))
    })
    .map_err(|_| CKR_FUNCTION_FAILED)?;
    let mut out = vec![0u8; 2 * n];
    if r.len() > n || s.len() > n {
        return Err(CKR_FUNCTION_FAILED);
    }
    out[n - r.len()..n].copy_from_slice(&r);
    out[2 * n - s.len()..].copy_from_slice(&s);
    Ok(out)
}

/// PKCS#11's ECDSA r ‖ s as DER (RFC 3279 §2.2.3).
pub fn ecdsa_raw_to_der(raw: &[u8]) -> Option<Vec<u8>> {
    if raw.is_empty() || !raw.len().is_multiple_of(2) {
        return None;
    }
    let (r, s) = raw.split_at(raw.len() / 2);
    let r = der::asn1::UintRef::new(r).ok()?;
    let s = der::asn1::UintRef::new(s).ok()?;
    let body = [der::Encode::to_der(&r).ok()?, der::Encode::to_der(&s).ok()?].concat();
    let mut out = vec![0x30];
    let len = der::Length::try_from(body.len()).ok()?;
    out.extend(der::Encode::to_der(&len).ok()?);
    out.extend(body);
    Some(out)
}

/// Makes the signature of an operation taken out of its session.
pub(crate) fn finish_sign(op: Operation) -> Result<Vec<u8>> {
    let Operation {
        mech,
        key,
        params,
        acc,
        ..
    } = op;
    let rnd = params.hedge.randomness();
    let op = mech.sign.ok_or(CKR_MECHANISM_INVALID)?;
    match key {
        OpKey::HbsSign(path, _, seal, store) => {
            let Acc::Buffer(message) = acc else {
                return Err(CKR_GENERAL_ERROR);
            };
            sign_stateful(&path, &message, &SealKey::new(*seal), &store)
        }
        OpKey::Sign(key) => {
            let alg = key.algorithm();
            let sig = match (op, acc) {
                (SignOp::Message, Acc::Mu(h)) => key.sign_mu(&h.finalize(), rnd),
                (SignOp::Message, Acc::Buffer(m)) => key.sign_with(&m, &params.context, rnd),
                (SignOp::Digest, Acc::Buffer(d)) => {
                    let hash = params.hash.ok_or(CKR_MECHANISM_PARAM_INVALID)?;
                    key.sign_prehashed(hash, &d, &params.context, rnd)
                }
                (SignOp::HashThen(hash), Acc::Hash(h)) => {
                    key.sign_prehashed(hash, &h.finalize(), &params.context, rnd)
                }
                (SignOp::Mu, Acc::Buffer(mu)) => {
                    let mu: &[u8; 64] = mu.as_slice().try_into().map_err(|_| CKR_DATA_LEN_RANGE)?;
                    key.sign_mu(mu, rnd)
                }
                (SignOp::EcdsaDigest, Acc::Buffer(d)) => {
                    let hash = mech::ecdsa_hash(alg).ok_or(CKR_KEY_TYPE_INCONSISTENT)?;
                    if d.len() != hash.digest_size() {
                        return Err(CKR_DATA_LEN_RANGE);
                    }
                    key.sign_prehashed(hash, &d, &[], rnd)
                }
                (SignOp::EcdsaHash(hash), Acc::Hash(h)) => {
                    if Some(hash) != mech::ecdsa_hash(alg) {
                        // pqkit's ECDSA signs with the curve's own hash (P-256/SHA-256, …).
                        return Err(CKR_KEY_TYPE_INCONSISTENT);
                    }
                    key.sign_prehashed(hash, &h.finalize(), &[], rnd)
                }
                _ => return Err(CKR_MECHANISM_INVALID),
            }
            .map_err(core_rv)?;
            if alg.family == Family::Ecdsa {
                ecdsa_der_to_raw(&sig, alg.signing_key_size)
            } else {
                Ok(sig)
            }
        }
        _ => Err(CKR_KEY_TYPE_INCONSISTENT),
    }
}

/// Verifies a signature of an operation taken out of its session.
pub(crate) fn finish_verify(op: Operation, signature: &[u8]) -> Result<()> {
    let Operation {
        mech,
        key,
        params,
        acc,
        ..
    } = op;
    let op = mech.sign.ok_or(CKR_MECHANISM_INVALID)?;
    let bad = |_| CKR_SIGNATURE_INVALID;
    match key {
        OpKey::HbsVerify(pk) => {
            let Acc::Buffer(message) = acc else {
                return Err(CKR_GENERAL_ERROR);
            };
            pk.verify(&message, signature)
                .map_err(|_| CKR_SIGNATURE_INVALID)
        }
        OpKey::Verify(vk) => {
            let alg = vk.algorithm();
            let ecdsa_der;
            let signature = if alg.family == Family::Ecdsa {
                if signature.len() != 2 * alg.signing_key_size {
                    return Err(CKR_SIGNATURE_LEN_RANGE);
                }
                ecdsa_der = ecdsa_raw_to_der(signature).ok_or(CKR_SIGNATURE_INVALID)?;
                &ecdsa_der[..]
            } else {
                signature
            };
            match (op, acc) {
                (SignOp::Message, Acc::Mu(h)) => {
                    vk.verify_mu(&h.finalize(), signature).map_err(bad)
                }
                (SignOp::Message, Acc::Buffer(m)) => {
                    vk.verify(&m, &params.context, signature).map_err(bad)
                }
                (SignOp::Digest, Acc::Buffer(d)) => {
                    let hash = params.hash.ok_or(CKR_MECHANISM_PARAM_INVALID)?;
                    vk.verify_prehashed(hash, &d, &params.context, signature)
                        .map_err(bad)
                }
                (SignOp::HashThen(hash), Acc::Hash(h)) => vk
                    .verify_prehashed(hash, &h.finalize(), &params.context, signature)
                    .map_err(bad),
                (SignOp::Mu, Acc::Buffer(mu)) => {
                    let mu: &[u8; 64] = mu.as_slice().try_into().map_err(|_| CKR_DATA_LEN_RANGE)?;
                    vk.verify_mu(mu, signature).map_err(bad)
                }
                (SignOp::EcdsaDigest, Acc::Buffer(d)) => {
                    let hash = mech::ecdsa_hash(alg).ok_or(CKR_KEY_TYPE_INCONSISTENT)?;
                    vk.verify_prehashed(hash, &d, &[], signature).map_err(bad)
                }
                (SignOp::EcdsaHash(hash), Acc::Hash(h)) => vk
                    .verify_prehashed(hash, &h.finalize(), &[], signature)
                    .map_err(bad),
                _ => Err(CKR_MECHANISM_INVALID),
            }
        }
        _ => Err(CKR_KEY_TYPE_INCONSISTENT),
    }
}

/// Signs with a stateful key: opens its state file (waiting while another signer, in this
/// process or another, holds it), reserves the next index on disk, signs, and releases it.
fn sign_stateful(
    path: &std::path::Path,
    message: &[u8],
    seal: &SealKey,
    store: &Store,
) -> Result<Vec<u8>> {
    static IN_PROCESS: Mutex<()> = Mutex::new(());
    let _one = IN_PROCESS.lock().unwrap_or_else(|p| p.into_inner());
    let deadline = Instant::now() + STATE_LOCK_PATIENCE;
    let mut key = loop {
        let ledger = store.ledger().map_err(store_rv)?;
        match StatefulKey::open_sealed(path, ledger, 1, seal) {
            Ok(k) => break k,
            Err(StateError::Locked(..)) if Instant::now() < deadline => continue,
            Err(e) => return Err(state_rv(e)),
        }
    };
    key.sign(message).map_err(state_rv)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    pub(super) fn ecdsa_signatures_convert_both_ways() {
        let alg = catalogue::signature("ECDSA-P256").unwrap();
        let key = alg.generate().unwrap();
        for _ in 0..32 {
            let sig = key.sign(b"m", &[]).unwrap();
            let raw = ecdsa_der_to_raw(&sig, 32).unwrap();
            assert_eq!(raw.len(), 64);
            assert_eq!(ecdsa_raw_to_der(&raw).unwrap(), sig);
        }
    }
}
