#!/usr/bin/env python3
"""Third-party PKCS#11 consumers driving libpqkit_pkcs11.so: python-pkcs11 (ML-DSA-65,
ML-KEM-768: it speaks C_GetInterface 3.2 and C_EncapsulateKey) and PyKCS11 (SLH-DSA-SHA2-128f:
it takes raw mechanism numbers). Run by tests/consumers.rs, which checks what this prints
with pqkit-core.

Usage: python_consumers.py MODULE TOKEN_LABEL PIN  (stdin: JSON of pqkit-made keys/signatures)
Prints one JSON object per line.
"""
import json
import struct
import sys

import pkcs11
from pkcs11 import Attribute, KeyType, Mechanism, ObjectClass
import PyKCS11

MODULE, LABEL, PIN = sys.argv[1:4]
given = json.load(sys.stdin)
out = lambda **kw: print(json.dumps(kw), flush=True)

# ---- python-pkcs11: ML-DSA-65 and ML-KEM-768 ---------------------------------------------
lib = pkcs11.lib(MODULE)
token = lib.get_token(token_label=LABEL)
with token.open(rw=True, user_pin=PIN) as s:
    pub, priv = s.generate_keypair(KeyType.ML_DSA, mechanism=Mechanism.ML_DSA_KEY_PAIR_GEN,
                                   public_template={Attribute.PARAMETER_SET: 2}, label="py-mldsa")
    message = b"signed by python-pkcs11 in the pqkit token"
    sig = priv.sign(message, mechanism=Mechanism.ML_DSA)
    assert pub.verify(message, sig, mechanism=Mechanism.ML_DSA)
    assert not pub.verify(message + b"!", sig, mechanism=Mechanism.ML_DSA)
    out(kind="ml-dsa", alg="ML-DSA-65", pk=pub[Attribute.VALUE].hex(), msg=message.hex(), sig=sig.hex())
    # The reverse: the token verifies a signature pqkit made.
    theirs = s.create_object({
        Attribute.CLASS: ObjectClass.PUBLIC_KEY, Attribute.KEY_TYPE: KeyType.ML_DSA,
        Attribute.PARAMETER_SET: 2, Attribute.VALUE: bytes.fromhex(given["ml_dsa_pk"]),
        Attribute.VERIFY: True,
    })
    ok = theirs.verify(bytes.fromhex(given["ml_dsa_msg"]), bytes.fromhex(given["ml_dsa_sig"]),
                       mechanism=Mechanism.ML_DSA)
    out(kind="ml-dsa-reverse", ok=bool(ok))

    kpub, kpriv = s.generate_keypair(KeyType.ML_KEM, mechanism=Mechanism.ML_KEM_KEY_PAIR_GEN,
                                     public_template={Attribute.PARAMETER_SET: 2}, label="py-mlkem")
    secret_template = {Attribute.EXTRACTABLE: True, Attribute.SENSITIVE: False}
    ct, a = kpub.encapsulate_key(KeyType.GENERIC_SECRET, key_length=256, template=secret_template)
    b = kpriv.decapsulate_key(ct, KeyType.GENERIC_SECRET, key_length=256, template=secret_template)
    assert a[Attribute.VALUE] == b[Attribute.VALUE] and len(a[Attribute.VALUE]) == 32
    # Encapsulate to pqkit's key: pqkit decapsulates and compares.
    theirs = s.create_object({
        Attribute.CLASS: ObjectClass.PUBLIC_KEY, Attribute.KEY_TYPE: KeyType.ML_KEM,
        Attribute.PARAMETER_SET: 2, Attribute.VALUE: bytes.fromhex(given["ml_kem_ek"]),
        Attribute.ENCAPSULATE: True,
    })
    ct, shared = theirs.encapsulate_key(KeyType.GENERIC_SECRET, key_length=256, template=secret_template)
    out(kind="ml-kem", ct=ct.hex(), ss=shared[Attribute.VALUE].hex())

# ---- PyKCS11: SLH-DSA-SHA2-128f by raw numbers --------------------------------------------
CKK_SLH_DSA, CKM_SLH_DSA_KEY_PAIR_GEN, CKM_SLH_DSA = 0x4B, 0x2D, 0x2E
CKA_PARAMETER_SET, CKP_SLH_DSA_SHA2_128F = 0x61D, 3
ulong = lambda v: struct.pack("=Q", v)
p = PyKCS11.PyKCS11Lib()
p.load(MODULE)
slot = next(sl for sl in p.getSlotList(tokenPresent=True)
            if p.getTokenInfo(sl).label.strip() == LABEL)
s = p.openSession(slot, PyKCS11.CKF_SERIAL_SESSION | PyKCS11.CKF_RW_SESSION)
try:
    s.login(PIN)
except PyKCS11.PyKCS11Error as e:
    if e.value != PyKCS11.CKR_USER_ALREADY_LOGGED_IN:
        raise
pub_t = [(PyKCS11.CKA_CLASS, PyKCS11.CKO_PUBLIC_KEY), (PyKCS11.CKA_KEY_TYPE, CKK_SLH_DSA),
         (PyKCS11.CKA_VERIFY, True), (CKA_PARAMETER_SET, ulong(CKP_SLH_DSA_SHA2_128F))]
priv_t = [(PyKCS11.CKA_CLASS, PyKCS11.CKO_PRIVATE_KEY), (PyKCS11.CKA_KEY_TYPE, CKK_SLH_DSA),
          (PyKCS11.CKA_SIGN, True)]
pub, priv = s.generateKeyPair(pub_t, priv_t, mecha=PyKCS11.Mechanism(CKM_SLH_DSA_KEY_PAIR_GEN))
message = b"signed by PyKCS11 in the pqkit token"
sig = bytes(s.sign(priv, message, PyKCS11.Mechanism(CKM_SLH_DSA)))
assert s.verify(pub, message, sig, PyKCS11.Mechanism(CKM_SLH_DSA))
pk = bytes(s.getAttributeValue(pub, [PyKCS11.CKA_VALUE])[0])
out(kind="slh-dsa", alg="SLH-DSA-SHA2-128f", pk=pk.hex(), msg=message.hex(), sig=sig.hex())
s.closeSession()
