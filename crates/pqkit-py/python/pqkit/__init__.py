"""pqkit: post-quantum cryptography — ML-KEM (FIPS 203), ML-DSA (FIPS 204), SLH-DSA
(FIPS 205), Falcon, HQC, BIKE, eFrodoKEM, Classic McEliece, composite ML-DSA; stateful LMS/HSS
and XMSS keys that never reuse a one-time key; X.509, CSRs and CMS; keys in PKCS#11 tokens.

Modules: pqkit.kem, pqkit.sig, pqkit.hbs, pqkit.x509, pqkit.cms, pqkit.pkcs11, and
pqkit.hazmat (known-answer-test interfaces). Key files: load_pem_private_key and friends.
"""

from ._exceptions import (
    InvalidCiphertext,
    InvalidInput,
    InvalidKey,
    InvalidSignature,
    KeyExhausted,
    PqkitError,
    StateError,
    TokenError,
    UnknownAlgorithm,
    Unsupported,
    ValidationError,
)
from ._pqkit import (
    __version__,
    load_der_private_key,
    load_der_public_key,
    load_pem_private_key,
    load_pem_public_key,
)
from . import cms, hazmat, hbs, kem, pkcs11, sig, x509

__all__ = [
    "PqkitError",
    "InvalidSignature",
    "InvalidKey",
    "InvalidCiphertext",
    "InvalidInput",
    "UnknownAlgorithm",
    "Unsupported",
    "KeyExhausted",
    "StateError",
    "ValidationError",
    "TokenError",
    "load_pem_private_key",
    "load_der_private_key",
    "load_pem_public_key",
    "load_der_public_key",
    "cms",
    "hazmat",
    "hbs",
    "kem",
    "pkcs11",
    "sig",
    "x509",
    "__version__",
]
