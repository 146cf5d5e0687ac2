"""Stateful hash-based signatures: LMS/HSS (RFC 8554, SP 800-208) and XMSS/XMSS^MT (RFC 8391),
through a state file and a ledger that never hand out a one-time key twice. See
help(pqkit.hbs.StatefulKey)."""

from os import PathLike
from types import TracebackType
from typing import Union

from . import Buffer

StrPath = Union[str, PathLike[str]]

class StatefulKey:
    """A stateful signing key: its state file, held under the file's lock, and its ledger.
    (The full guide is this class's docstring at run time: help(pqkit.hbs.StatefulKey).)"""
    @staticmethod
    def generate(path: StrPath, parameters: str, *, ledger: str | None = None,
                 threads: int = 0) -> StatefulKey:
        """A new key in a new state file (never overwritten): parameters an HSS shape
        ("L2_H10_W4") or an XMSS / XMSS^MT name ("XMSS-SHA2_10_256"); threads 0 (one per
        CPU) to 1024. Raises StateError (the file exists, the ledger), InvalidInput."""
    @staticmethod
    def open(path: StrPath, *, ledger: str | None = None, threads: int = 0) -> StatefulKey:
        """Opens a key's state file, taking its lock, and checks it against its ledger.
        Raises StateError (locked, a copy, a restored backup, …)."""
    def __enter__(self) -> StatefulKey: ...
    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> bool:
        """Closes the key; never swallows the exception."""
    def sign(self, data: Buffer) -> bytes:
        """Signs with the next one-time key, persisted as used before the signature exists.
        Raises KeyExhausted, StateError."""
    def reserve(self, count: int) -> None:
        """Reserves count (at least 1) one-time keys in one write, for a batch to come: they
        sign from this object; what is unsigned at close() is skipped. Raises InvalidInput,
        KeyExhausted, StateError."""
    def public_key(self) -> StatefulPublicKey:
        """The public key (HSS: RFC 8554 §6.1; XMSS: RFC 8391 §4.1.7)."""
    def close(self) -> None:
        """Releases the lock and saves the tree cache; closing a closed key does nothing. After
        it, every other call raises StateError — as every call does, close() too, in a
        process forked from the one that opened the key."""
    @property
    def remaining(self) -> int:
        """One-time keys neither used nor reserved."""
    @property
    def used(self) -> int:
        """One-time keys used, reserved or skipped."""
    @property
    def capacity(self) -> int:
        """All one-time keys of the key (of its range, for a split key)."""
    @property
    def signature_size(self) -> int:
        """Bytes of each signature."""
    @property
    def path(self) -> str:
        """The state file."""
    @property
    def ledger(self) -> str:
        """The ledger that records it."""

class StatefulPublicKey:
    """An HSS, XMSS or XMSS^MT public key."""
    name: str
    def verify(self, signature: Buffer, data: Buffer) -> None:
        """Raises InvalidSignature unless the signature verifies."""
    def index(self, signature: Buffer) -> int:
        """The one-time key index a signature names (HSS q path, XMSS idx)."""
    def to_bytes(self) -> bytes: ...
    def to_der(self) -> bytes:
        """SubjectPublicKeyInfo DER (RFC 9708 / RFC 9802)."""
    def to_pem(self) -> str: ...

def load_public_key(data: Buffer | str) -> StatefulPublicKey:
    """An HSS / XMSS / XMSS^MT public key from SPKI PEM or DER. Raises InvalidKey."""
