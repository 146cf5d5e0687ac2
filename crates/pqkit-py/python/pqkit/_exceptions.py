"""pqkit's exceptions: every one a PqkitError; the input's fault also a ValueError."""


class PqkitError(Exception):
    """The base of every exception pqkit raises."""


class InvalidSignature(PqkitError):
    """A signature did not verify: wrong key, message or context, or a damaged signature of
    any length. Carries no detail on purpose."""


class InvalidKey(PqkitError, ValueError):
    """Key bytes of the wrong length, a key that fails its check (FIPS 203 §7.2), a PKCS#8 or
    SPKI that does not decode, or a key of another algorithm."""


class InvalidCiphertext(PqkitError, ValueError):
    """A ciphertext of the wrong length for the KEM."""


class InvalidInput(PqkitError, ValueError):
    """Another argument that is wrong: a context over 255 bytes, a digest or μ of the wrong
    length, a subject that does not parse, a certificate that does not decode."""


class UnknownAlgorithm(PqkitError, ValueError):
    """A name, OID or identifier that matches no algorithm of the catalogue."""


class Unsupported(PqkitError):
    """The algorithm or key does not offer the operation: HashML-DSA on Falcon, a context on
    ECDSA, a key file for an ephemeral-only KEM, PKCS#8 out of a token key."""


class KeyExhausted(PqkitError):
    """A stateful key has no one-time key left."""


class StateError(PqkitError):
    """A stateful key's state file was refused — a copy, a restored backup, in use by another
    signer, behind its ledger, damaged — or could not be written. Nothing was signed."""


class ValidationError(PqkitError):
    """A certificate path or a CMS signer was refused; the message names the certificate and
    the rule it broke (RFC 5280 §6)."""


class TokenError(PqkitError):
    """A PKCS#11 token or module failed: URI, PIN, a key not found, a module error."""


# Shown as pqkit.StateError (where users catch them), not pqkit._exceptions.StateError.
for _cls in (PqkitError, InvalidSignature, InvalidKey, InvalidCiphertext, InvalidInput,
             UnknownAlgorithm, Unsupported, KeyExhausted, StateError, ValidationError,
             TokenError):
    _cls.__module__ = "pqkit"
del _cls
