"""Key encapsulation: ML-KEM (FIPS 203), HQC, BIKE, eFrodoKEM, Classic McEliece.

One constant per KEM of the catalogue (MLKEM768, HQC_1, BIKE_L1, EFRODOKEM_640_AES,
CLASSIC_MCELIECE_348864, …); by_name() takes any name or alias."""

from typing import Literal

from . import Buffer

KeyForm = Literal["seed", "expanded", "both"]

class Kem:
    """One KEM of the catalogue: sizes in bytes and the operations."""
    name: str
    family: str
    category: int
    encapsulation_key_size: int
    decapsulation_key_size: int
    seed_size: int
    ciphertext_size: int
    shared_secret_size: int
    oid: str
    standard: str
    ephemeral: bool
    def generate(self) -> DecapsulationKey:
        """A new key pair from the OS random number generator (FIPS 203 Algorithm 19)."""
    def from_seed(self, seed: Buffer) -> DecapsulationKey:
        """The key pair of a seed (ML-KEM: d‖z, 64 bytes; FIPS 203 Algorithm 16).
        Raises InvalidKey (wrong length), Unsupported (no seed form)."""
    def encapsulation_key(self, data: Buffer) -> EncapsulationKey:
        """An encapsulation key from its encoding (encapsulation_key_size bytes; ML-KEM:
        FIPS 203 §7.2 checked). Raises InvalidKey."""
    def decapsulation_key(self, data: Buffer) -> DecapsulationKey:
        """A decapsulation key from its expanded encoding (decapsulation_key_size bytes;
        ML-KEM: FIPS 203 §7.3 hash check). Raises InvalidKey."""
    def encapsulate(self, encapsulation_key: Buffer | EncapsulationKey) -> tuple[bytes, bytes]:
        """(shared_secret, ciphertext) for an encapsulation key (FIPS 203 Algorithm 20)."""
    def decapsulate(self, decapsulation_key: DecapsulationKey, ciphertext: Buffer) -> bytes:
        """The shared secret (FIPS 203 Algorithm 21). Raises InvalidCiphertext."""

class EncapsulationKey:
    """A KEM's public key."""
    algorithm: Kem
    def encapsulate(self) -> tuple[bytes, bytes]:
        """(shared_secret, ciphertext): shared_secret_size and ciphertext_size bytes, with fresh
        randomness (FIPS 203 Algorithm 20). The order is pyca/cryptography's."""
    def to_bytes(self) -> bytes:
        """The raw encoding, encapsulation_key_size bytes."""
    def to_der(self) -> bytes:
        """SubjectPublicKeyInfo DER (RFC 9935 §4 for ML-KEM)."""
    def to_pem(self) -> str:
        """SubjectPublicKeyInfo PEM ("PUBLIC KEY")."""

class DecapsulationKey:
    """A KEM's private key. Zeroized when collected; never printed."""
    algorithm: Kem
    def public_key(self) -> EncapsulationKey:
        """The encapsulation key."""
    def decapsulate(self, ciphertext: Buffer) -> bytes:
        """The shared secret (shared_secret_size bytes). ML-KEM rejects a damaged ciphertext
        implicitly (a pseudo-random secret, FIPS 203 §6.3). Raises InvalidCiphertext for a
        wrong length."""
    def seed(self) -> bytes | None:
        """The seed (ML-KEM d‖z, 64 bytes), or None for a key loaded without it."""
    def to_bytes(self) -> bytes:
        """The expanded decapsulation key, decapsulation_key_size bytes."""
    def to_der(self, form: KeyForm = "seed") -> bytes:
        """PKCS#8 DER (ML-KEM: RFC 9935 §6 seed, expanded or both). Raises Unsupported for an
        ephemeral-only KEM (BIKE, eFrodoKEM) or a form the key lacks."""
    def to_pem(self, form: KeyForm = "seed") -> str:
        """PKCS#8 PEM ("PRIVATE KEY"), as to_der."""

def by_name(name: str) -> Kem:
    """The KEM of a name or alias ("ML-KEM-768", "Kyber768", "HQC-1", …). Raises
    UnknownAlgorithm."""

def algorithms() -> list[Kem]:
    """Every KEM of the catalogue."""

MLKEM512: Kem
"""ML-KEM-512."""
MLKEM768: Kem
"""ML-KEM-768."""
MLKEM1024: Kem
"""ML-KEM-1024."""
HQC_1: Kem
"""HQC-1."""
HQC_3: Kem
"""HQC-3."""
HQC_5: Kem
"""HQC-5."""
BIKE_L1: Kem
"""BIKE-L1."""
BIKE_L3: Kem
"""BIKE-L3."""
BIKE_L5: Kem
"""BIKE-L5."""
EFRODOKEM_640_AES: Kem
"""eFrodoKEM-640-AES."""
EFRODOKEM_640_SHAKE: Kem
"""eFrodoKEM-640-SHAKE."""
EFRODOKEM_976_AES: Kem
"""eFrodoKEM-976-AES."""
EFRODOKEM_976_SHAKE: Kem
"""eFrodoKEM-976-SHAKE."""
EFRODOKEM_1344_AES: Kem
"""eFrodoKEM-1344-AES."""
EFRODOKEM_1344_SHAKE: Kem
"""eFrodoKEM-1344-SHAKE."""
CLASSIC_MCELIECE_348864: Kem
"""Classic-McEliece-348864."""
CLASSIC_MCELIECE_348864F: Kem
"""Classic-McEliece-348864f."""
CLASSIC_MCELIECE_460896: Kem
"""Classic-McEliece-460896."""
CLASSIC_MCELIECE_460896F: Kem
"""Classic-McEliece-460896f."""
CLASSIC_MCELIECE_6688128: Kem
"""Classic-McEliece-6688128."""
CLASSIC_MCELIECE_6688128F: Kem
"""Classic-McEliece-6688128f."""
CLASSIC_MCELIECE_6960119: Kem
"""Classic-McEliece-6960119."""
CLASSIC_MCELIECE_6960119F: Kem
"""Classic-McEliece-6960119f."""
CLASSIC_MCELIECE_8192128: Kem
"""Classic-McEliece-8192128."""
CLASSIC_MCELIECE_8192128F: Kem
"""Classic-McEliece-8192128f."""
