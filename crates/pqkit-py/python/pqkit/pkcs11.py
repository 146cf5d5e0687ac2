"""Keys in a PKCS#11 token, by RFC 7512 URI."""

from ._pqkit import pkcs11 as _pkcs11

load_key = _pkcs11.load_key

__all__ = ["load_key"]
