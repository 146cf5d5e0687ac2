"""Signatures: ML-DSA (FIPS 204: pure, HashML-DSA, external μ), SLH-DSA (FIPS 205), Falcon,
composite ML-DSA, ECDSA, Ed25519, RSA.

One constant per algorithm of the catalogue (MLDSA65, SLHDSA_SHA2_128F, FALCON_512,
MLDSA65_ECDSA_P256_SHA512, ECDSA_P256, ED25519, RSA_PSS_2048, …); by_name() takes any name
or alias.

    key = pqkit.sig.MLDSA65.generate()
    signature = key.sign(b"message", context=b"app v1")
    key.public_key().verify(signature, b"message", context=b"app v1")
"""

from ._names import identifier as _identifier
from ._pqkit import SignatureAlgorithm, SigningKey, VerifyingKey
from ._pqkit import sig_algorithms as algorithms
from ._pqkit import sig_by_name as by_name

__all__ = ["SignatureAlgorithm", "SigningKey", "VerifyingKey", "algorithms", "by_name"]

for _alg in algorithms():
    globals()[_identifier(_alg.name)] = _alg
    __all__.append(_identifier(_alg.name))
del _alg
