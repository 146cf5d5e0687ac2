"""CMS SignedData (RFC 5652) with every signature algorithm of pqkit, stateful keys too."""

from datetime import datetime
from typing import Sequence

from . import Buffer
from .hbs import StatefulKey
from .sig import SigningKey
from .x509 import Certificate, Purpose

class SignerResult:
    """One signer's verdict."""
    signer: str
    signature_algorithm: str
    digest_algorithm: str
    path: list[Certificate]

class Verified:
    """A SignedData whose signers verified."""
    content: bytes | None
    """The attached content; None when detached."""
    signers: list[SignerResult]

def sign(content: Buffer, signers: Sequence[tuple[Certificate | bytes, SigningKey | StatefulKey]],
         *, detached: bool = False, signed_attributes: bool = True,
         certificates: Sequence[Certificate | bytes] = (), deterministic: bool = False) -> bytes:
    """A SignedData (DER) by every signer: (its certificate, its key). A stateful key spends
    one one-time key per signature, after every other check. Raises InvalidInput (a
    certificate not of the key, one stateful key twice), KeyExhausted, StateError."""

def verify(signed: Buffer, roots: Sequence[Certificate | bytes], *, content: Buffer | None = None,
           purpose: Purpose = "codeSigning", at: datetime | float | None = None,
           certificates: Sequence[Certificate | bytes] = (), require: str = "all") -> Verified:
    """Verifies every signer (require="any": at least one) and its path to roots. Raises
    ValidationError with every signer's reason, InvalidInput for a malformed SignedData."""
