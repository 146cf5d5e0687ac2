"""Keys in a PKCS#11 token, by RFC 7512 URI."""

from .sig import SigningKey

def load_key(uri: str, *, module: str | None = None, pin_source: str | None = None) -> SigningKey:
    """The private key a pkcs11: URI names (object= or id=), logged in. module: the PKCS#11
    module (else the URI's module-path, else $PQKIT_PKCS11_MODULE); pin_source: "file:PATH"
    or "env:NAME" (else $PQKIT_PKCS11_PIN). The key never leaves the token. Raises
    TokenError."""
