"""Known-answer-test interfaces: caller-chosen randomness and FIPS 205's internal functions.
For vectors only: a repeated encapsulation randomness gives two parties the same shared
secret, and these functions format no message for the caller."""

from ._pqkit import hazmat as _hazmat

sign = _hazmat.sign
sign_prehashed = _hazmat.sign_prehashed
sign_mu = _hazmat.sign_mu
encapsulate = _hazmat.encapsulate
slh_dsa_sign_internal = _hazmat.slh_dsa_sign_internal
slh_dsa_verify_internal = _hazmat.slh_dsa_verify_internal

__all__ = [
    "sign",
    "sign_prehashed",
    "sign_mu",
    "encapsulate",
    "slh_dsa_sign_internal",
    "slh_dsa_verify_internal",
]
