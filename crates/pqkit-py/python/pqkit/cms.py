"""CMS SignedData (RFC 5652) with every signature algorithm of pqkit, stateful keys too."""

from ._pqkit import SignerResult, Verified
from ._pqkit import cms as _cms

sign = _cms.sign
verify = _cms.verify

__all__ = ["sign", "verify", "SignerResult", "Verified"]
