"""X.509 certificates: loading, RFC 5280 path validation, CSRs (PKCS#10) and issuing."""

from datetime import datetime
from typing import Literal, Sequence

from . import Buffer
from .hbs import StatefulKey, StatefulPublicKey
from .sig import SigningKey, VerifyingKey

Profile = Literal["root-ca", "intermediate-ca", "server", "client", "code-signing",
                  "time-stamping"]
Purpose = Literal["serverAuth", "clientAuth", "codeSigning", "timeStamping", "any"]

class Certificate:
    """One certificate (DER held as read)."""
    subject: str
    """RFC 4514, e.g. "CN=pqkit server,O=pqkit"."""
    issuer: str
    serial: str
    """Hexadecimal."""
    not_before: datetime
    not_after: datetime
    signature_algorithm_oid: str
    """Dotted."""
    def public_key(self) -> VerifyingKey:
        """The subject's key. Raises UnknownAlgorithm (e.g. a stateful HBS key)."""
    def to_der(self) -> bytes: ...
    def to_pem(self) -> str: ...

class CertificateRequest:
    """A CSR whose self-signature verified."""
    subject: str
    dns_names: list[str]
    ip_addresses: list[str]
    def public_key(self) -> VerifyingKey: ...
    def to_der(self) -> bytes: ...
    def to_pem(self) -> str: ...

def load_pem_chain(data: Buffer | str) -> list[Certificate]:
    """Every CERTIFICATE block, in order. Raises InvalidInput (no block, bad DER)."""
def load_der_certificate(data: Buffer) -> Certificate:
    """One certificate from DER. Raises InvalidInput."""
def load_csr(data: Buffer | str) -> CertificateRequest:
    """A CSR from PEM or DER, its signature verified. Raises InvalidSignature, InvalidInput."""

def verify(chain: Sequence[Certificate | bytes], roots: Sequence[Certificate | bytes], *,
           name: str | None = None, purpose: Purpose = "any",
           at: datetime | float | None = None) -> list[Certificate]:
    """Validates chain (the leaf first, then intermediates in any order) up to one of roots
    (RFC 5280 §6) for purpose, name (a DNS name, IP address or e-mail address, RFC 9525) at
    time at (default now; an aware datetime or seconds since 1970). Returns the path, leaf
    first, trust anchor last. Raises ValidationError naming the certificate and the rule it
    broke, InvalidInput for arguments that do not parse (a certificate, name, purpose, time)."""

def create_csr(key: SigningKey, subject: str, *, dns_names: Sequence[str] = (),
               ip_addresses: Sequence[str] = ()) -> CertificateRequest:
    """A CSR signed by key (RFC 2986), as `pqkit csr create`."""

def self_signed(key: SigningKey | StatefulKey, subject: str, *, profile: Profile = "root-ca",
                days: int = 365, dns_names: Sequence[str] = (),
                ip_addresses: Sequence[str] = ()) -> Certificate:
    """A self-signed certificate (a root CA by default), as `pqkit pki`; a stateful key
    (RFC 9802) spends one one-time key. days: 1 to 2 900 000. Raises InvalidInput,
    KeyExhausted, StateError."""

def issue(subject: CertificateRequest | VerifyingKey | StatefulPublicKey, issuer: Certificate,
          issuer_key: SigningKey | StatefulKey, *, profile: Profile = "server", days: int = 365,
          subject_name: str | None = None, dns_names: Sequence[str] = (),
          ip_addresses: Sequence[str] = ()) -> Certificate:
    """A certificate for a CSR (its subject and names) or a public key, a stateful one too
    (subject_name and the names given), signed by issuer_key, whose certificate issuer must
    be a CA that may issue it now. Raises InvalidInput, ValidationError (an issuer that may
    not issue), KeyExhausted and StateError (a stateful issuer key)."""
