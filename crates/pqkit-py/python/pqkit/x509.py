"""X.509 certificates: loading, RFC 5280 path validation, CSRs (RFC 2986) and issuing."""

from ._pqkit import (
    Certificate,
    CertificateRequest,
    create_csr,
    issue,
    load_csr,
    load_der_certificate,
    load_pem_chain,
    self_signed,
    verify,
)

__all__ = [
    "Certificate",
    "CertificateRequest",
    "create_csr",
    "issue",
    "load_csr",
    "load_der_certificate",
    "load_pem_chain",
    "self_signed",
    "verify",
]
