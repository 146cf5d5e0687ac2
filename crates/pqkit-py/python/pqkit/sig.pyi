"""Signatures: ML-DSA (FIPS 204: pure, HashML-DSA, external μ), SLH-DSA (FIPS 205), Falcon,
composite ML-DSA, ECDSA, Ed25519, RSA.

One constant per algorithm of the catalogue (MLDSA65, SLHDSA_SHA2_128F, FALCON_512,
MLDSA65_ECDSA_P256_SHA512, ECDSA_P256, ED25519, RSA_PSS_2048, …); by_name() takes any name or
alias."""

from typing import Literal

from . import Buffer

KeyForm = Literal["seed", "expanded", "both"]

class SignatureAlgorithm:
    """One signature algorithm of the catalogue: sizes in bytes and the operations."""
    name: str
    family: str
    category: int
    verifying_key_size: int
    signing_key_size: int
    seed_size: int
    signature_size: int
    """The largest signature in bytes (exact for ML-DSA and SLH-DSA)."""
    oid: str
    standard: str
    has_context: bool
    has_prehash: bool
    has_external_mu: bool
    def generate(self) -> SigningKey:
        """A new signing key from the OS random number generator."""
    def from_seed(self, seed: Buffer) -> SigningKey:
        """The signing key of a seed (ML-DSA ξ, 32 bytes: FIPS 204 Algorithm 6). Raises
        InvalidKey, Unsupported."""
    def verifying_key(self, data: Buffer) -> VerifyingKey:
        """A verifying key from its raw encoding (verifying_key_size bytes). Raises
        InvalidKey."""
    def signing_key(self, data: Buffer) -> SigningKey:
        """A signing key from its expanded encoding (ML-DSA sk, FIPS 204 §7.2; SLH-DSA
        SK.seed‖SK.prf‖PK.seed‖PK.root). Raises InvalidKey, Unsupported."""

class SigningKey:
    """A private key, in memory or in a PKCS#11 token. Zeroized when collected; never
    printed. The GIL is released while it signs."""
    algorithm: SignatureAlgorithm
    def sign(self, data: Buffer, context: Buffer = b"", *, deterministic: bool = False) -> bytes:
        """Signs data (FIPS 204 ML-DSA.Sign / FIPS 205 slh_sign, hedged unless deterministic).
        context: at most 255 bytes, ML-DSA, SLH-DSA and composite only. Raises InvalidInput
        (context too long), Unsupported (context on an algorithm without one)."""
    def sign_prehashed(self, digest: Buffer, hash: str, context: Buffer = b"", *,
                       deterministic: bool = False) -> bytes:
        """HashML-DSA / HashSLH-DSA (FIPS 204 Algorithm 4, FIPS 205 Algorithm 23) over a
        digest already computed with hash ("SHA-256", "SHA-512", "SHAKE-128", …). Raises
        InvalidInput (digest length), Unsupported."""
    def sign_mu(self, mu: Buffer, *, deterministic: bool = False) -> bytes:
        """ML-DSA with external μ (FIPS 204 Algorithm 7, μ 64 bytes from
        VerifyingKey.external_mu). Raises InvalidInput, Unsupported."""
    def public_key(self) -> VerifyingKey:
        """The verifying key."""
    def seed(self) -> bytes | None:
        """The seed (ML-DSA ξ, 32 bytes), or None for a key without one."""
    def to_der(self, form: KeyForm = "seed") -> bytes:
        """PKCS#8 DER (ML-DSA: RFC 9881 §6 seed, expanded or both; SLH-DSA RFC 9909).
        Raises Unsupported for a token key or a form the key lacks."""
    def to_pem(self, form: KeyForm = "seed") -> str:
        """PKCS#8 PEM ("PRIVATE KEY"), as to_der."""

class VerifyingKey:
    """A public key."""
    algorithm: SignatureAlgorithm
    def verify(self, signature: Buffer, data: Buffer, context: Buffer = b"") -> None:
        """Returns None when the signature verifies; raises InvalidSignature otherwise
        (pyca/cryptography's order: signature first)."""
    def verify_prehashed(self, signature: Buffer, digest: Buffer, hash: str,
                         context: Buffer = b"") -> None:
        """HashML-DSA / HashSLH-DSA verification. Raises InvalidSignature."""
    def external_mu(self, data: Buffer, context: Buffer = b"") -> bytes:
        """μ = SHAKE256(tr ‖ 0 ‖ |ctx| ‖ ctx ‖ M, 64) (FIPS 204 Algorithm 7 line 6), for
        signing where the message is: SigningKey.sign_mu."""
    def verify_mu(self, signature: Buffer, mu: Buffer) -> None:
        """Verifies a signature over an external μ. Raises InvalidSignature."""
    def to_bytes(self) -> bytes:
        """The raw encoding, verifying_key_size bytes."""
    def to_der(self) -> bytes:
        """SubjectPublicKeyInfo DER (RFC 9881 §4 for ML-DSA)."""
    def to_pem(self) -> str:
        """SubjectPublicKeyInfo PEM ("PUBLIC KEY")."""

def by_name(name: str) -> SignatureAlgorithm:
    """The algorithm of a name or alias ("ML-DSA-65", "Dilithium3", …). Raises
    UnknownAlgorithm."""

def algorithms() -> list[SignatureAlgorithm]:
    """Every signature algorithm of the catalogue."""

MLDSA44: SignatureAlgorithm
"""ML-DSA-44."""
MLDSA65: SignatureAlgorithm
"""ML-DSA-65."""
MLDSA87: SignatureAlgorithm
"""ML-DSA-87."""
FALCON_512: SignatureAlgorithm
"""Falcon-512."""
FALCON_1024: SignatureAlgorithm
"""Falcon-1024."""
SLHDSA_SHA2_128S: SignatureAlgorithm
"""SLH-DSA-SHA2-128s."""
SLHDSA_SHA2_128F: SignatureAlgorithm
"""SLH-DSA-SHA2-128f."""
SLHDSA_SHA2_192S: SignatureAlgorithm
"""SLH-DSA-SHA2-192s."""
SLHDSA_SHA2_192F: SignatureAlgorithm
"""SLH-DSA-SHA2-192f."""
SLHDSA_SHA2_256S: SignatureAlgorithm
"""SLH-DSA-SHA2-256s."""
SLHDSA_SHA2_256F: SignatureAlgorithm
"""SLH-DSA-SHA2-256f."""
SLHDSA_SHAKE_128S: SignatureAlgorithm
"""SLH-DSA-SHAKE-128s."""
SLHDSA_SHAKE_128F: SignatureAlgorithm
"""SLH-DSA-SHAKE-128f."""
SLHDSA_SHAKE_192S: SignatureAlgorithm
"""SLH-DSA-SHAKE-192s."""
SLHDSA_SHAKE_192F: SignatureAlgorithm
"""SLH-DSA-SHAKE-192f."""
SLHDSA_SHAKE_256S: SignatureAlgorithm
"""SLH-DSA-SHAKE-256s."""
SLHDSA_SHAKE_256F: SignatureAlgorithm
"""SLH-DSA-SHAKE-256f."""
ECDSA_P256: SignatureAlgorithm
"""ECDSA-P256."""
ECDSA_P384: SignatureAlgorithm
"""ECDSA-P384."""
ECDSA_P521: SignatureAlgorithm
"""ECDSA-P521."""
ED25519: SignatureAlgorithm
"""Ed25519."""
RSA_PSS_2048: SignatureAlgorithm
"""RSA-PSS-2048."""
RSA_PSS_3072: SignatureAlgorithm
"""RSA-PSS-3072."""
RSA_PSS_4096: SignatureAlgorithm
"""RSA-PSS-4096."""
RSA_PKCS1_2048: SignatureAlgorithm
"""RSA-PKCS1-2048."""
RSA_PKCS1_3072: SignatureAlgorithm
"""RSA-PKCS1-3072."""
RSA_PKCS1_4096: SignatureAlgorithm
"""RSA-PKCS1-4096."""
MLDSA44_RSA2048_PSS_SHA256: SignatureAlgorithm
"""MLDSA44-RSA2048-PSS-SHA256."""
MLDSA44_RSA2048_PKCS15_SHA256: SignatureAlgorithm
"""MLDSA44-RSA2048-PKCS15-SHA256."""
MLDSA44_ED25519_SHA512: SignatureAlgorithm
"""MLDSA44-Ed25519-SHA512."""
MLDSA44_ECDSA_P256_SHA256: SignatureAlgorithm
"""MLDSA44-ECDSA-P256-SHA256."""
MLDSA65_RSA3072_PSS_SHA512: SignatureAlgorithm
"""MLDSA65-RSA3072-PSS-SHA512."""
MLDSA65_RSA3072_PKCS15_SHA512: SignatureAlgorithm
"""MLDSA65-RSA3072-PKCS15-SHA512."""
MLDSA65_RSA4096_PSS_SHA512: SignatureAlgorithm
"""MLDSA65-RSA4096-PSS-SHA512."""
MLDSA65_RSA4096_PKCS15_SHA512: SignatureAlgorithm
"""MLDSA65-RSA4096-PKCS15-SHA512."""
MLDSA65_ECDSA_P256_SHA512: SignatureAlgorithm
"""MLDSA65-ECDSA-P256-SHA512."""
MLDSA65_ECDSA_P384_SHA512: SignatureAlgorithm
"""MLDSA65-ECDSA-P384-SHA512."""
MLDSA65_ECDSA_BRAINPOOLP256R1_SHA512: SignatureAlgorithm
"""MLDSA65-ECDSA-brainpoolP256r1-SHA512."""
MLDSA65_ED25519_SHA512: SignatureAlgorithm
"""MLDSA65-Ed25519-SHA512."""
MLDSA87_ECDSA_P384_SHA512: SignatureAlgorithm
"""MLDSA87-ECDSA-P384-SHA512."""
MLDSA87_ECDSA_BRAINPOOLP384R1_SHA512: SignatureAlgorithm
"""MLDSA87-ECDSA-brainpoolP384r1-SHA512."""
MLDSA87_ED448_SHAKE256: SignatureAlgorithm
"""MLDSA87-Ed448-SHAKE256."""
MLDSA87_RSA3072_PSS_SHA512: SignatureAlgorithm
"""MLDSA87-RSA3072-PSS-SHA512."""
MLDSA87_RSA4096_PSS_SHA512: SignatureAlgorithm
"""MLDSA87-RSA4096-PSS-SHA512."""
MLDSA87_ECDSA_P521_SHA512: SignatureAlgorithm
"""MLDSA87-ECDSA-P521-SHA512."""
