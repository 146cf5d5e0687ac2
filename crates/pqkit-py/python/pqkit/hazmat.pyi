"""Known-answer-test interfaces: caller-chosen randomness and FIPS 205 internal functions.
A repeated randomness value can leak nothing for ML-DSA/SLH-DSA but breaks a KEM's
ciphertext privacy: use these for vectors only."""

from . import Buffer
from .kem import EncapsulationKey
from .sig import SignatureAlgorithm, SigningKey

def sign(key: SigningKey, data: Buffer, context: Buffer = b"", *, randomness: Buffer) -> bytes:
    """ML-DSA with rnd (32 bytes) or SLH-DSA with addrnd (n bytes) given."""
def sign_prehashed(key: SigningKey, digest: Buffer, hash: str, context: Buffer = b"", *,
                   randomness: Buffer) -> bytes: ...
def sign_mu(key: SigningKey, mu: Buffer, *, randomness: Buffer) -> bytes: ...
def encapsulate(key: EncapsulationKey, randomness: Buffer) -> tuple[bytes, bytes]:
    """ML-KEM.Encaps_internal with m (32 bytes): (shared_secret, ciphertext)."""
def slh_dsa_sign_internal(algorithm: SignatureAlgorithm, private_key: Buffer, m_prime: Buffer,
                          addrnd: Buffer | None = None) -> bytes:
    """FIPS 205 Algorithm 19 over a caller-formatted M′."""
def slh_dsa_verify_internal(algorithm: SignatureAlgorithm, public_key: Buffer, m_prime: Buffer,
                            signature: Buffer) -> None:
    """FIPS 205 Algorithm 20. Raises InvalidSignature."""
