"""pqkit: post-quantum cryptography for Python — ML-KEM (FIPS 203), ML-DSA (FIPS 204),
SLH-DSA (FIPS 205), Falcon, HQC, BIKE, eFrodoKEM, Classic McEliece, composite ML-DSA, stateful
LMS/HSS and XMSS keys that never reuse a one-time key, X.509 and CMS."""

from typing import Union

from . import cms as cms
from . import hazmat as hazmat
from . import hbs as hbs
from . import kem as kem
from . import pkcs11 as pkcs11
from . import sig as sig
from . import x509 as x509

__version__: str

# Any object with the buffer protocol (array.array, mmap, …) is read as its raw bytes too.
Buffer = Union[bytes, bytearray, memoryview]

class PqkitError(Exception):
    """The base of every exception pqkit raises."""

class InvalidSignature(PqkitError):
    """A signature did not verify (wrong key, message, context, or a damaged signature of any
    length). Carries no detail on purpose."""

class InvalidKey(PqkitError, ValueError):
    """Key bytes of the wrong length, a key that fails its check (FIPS 203 §7.2), a PKCS#8 or
    SPKI that does not decode, or a key of the wrong kind (a KEM key where a signing key is
    needed)."""

class InvalidCiphertext(PqkitError, ValueError):
    """A ciphertext of the wrong length for the KEM."""

class InvalidInput(PqkitError, ValueError):
    """Another argument that is wrong: a context over 255 bytes, a digest or μ of the wrong
    length, a subject that does not parse, a certificate that does not decode."""

class UnknownAlgorithm(PqkitError, ValueError):
    """A name, OID or identifier that matches no algorithm of the catalogue."""

class Unsupported(PqkitError):
    """The algorithm does not offer the operation (HashML-DSA on Falcon, a key file for an
    ephemeral-only KEM, …)."""

class KeyExhausted(PqkitError):
    """A stateful key (or its reserved range) has no one-time key left."""

class StateError(PqkitError):
    """A stateful key's state file was refused: a copy or restored backup, locked by another
    signer, behind its ledger, damaged, or not writable. Nothing was signed."""

class ValidationError(PqkitError):
    """A certificate path or CMS signature was refused; the message names the certificate and
    the RFC 5280 rule it broke."""

class TokenError(PqkitError):
    """A PKCS#11 token or module failed (URI, PIN, missing key, module error)."""

def load_pem_private_key(data: Buffer | str) -> sig.SigningKey | kem.DecapsulationKey:
    """A private key from PKCS#8 PEM ("PRIVATE KEY"): ML-DSA and ML-KEM in any of the three
    forms (seed, expanded, both; RFC 9881 §6, RFC 9935 §6), SLH-DSA (RFC 9909), Falcon,
    composite ML-DSA, ECDSA, Ed25519, RSA. Raises InvalidKey, UnknownAlgorithm."""

def load_der_private_key(data: Buffer) -> sig.SigningKey | kem.DecapsulationKey:
    """As load_pem_private_key, from DER."""

def load_pem_public_key(data: Buffer | str) -> sig.VerifyingKey | kem.EncapsulationKey:
    """A public key from SubjectPublicKeyInfo PEM ("PUBLIC KEY"). For ML-KEM the FIPS 203
    §7.2 check is made. Raises InvalidKey, UnknownAlgorithm."""

def load_der_public_key(data: Buffer) -> sig.VerifyingKey | kem.EncapsulationKey:
    """As load_pem_public_key, from DER."""
