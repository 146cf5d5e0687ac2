"""Stateful hash-based signatures: LMS/HSS (RFC 8554, SP 800-208) and XMSS/XMSS^MT
(RFC 8391), through a state file and a ledger that never hand out a one-time key twice.
The guide: help(pqkit.hbs.StatefulKey)."""

from ._pqkit import StatefulKey, StatefulPublicKey
from ._pqkit import hbs_load_public_key as load_public_key

__all__ = ["StatefulKey", "StatefulPublicKey", "load_public_key"]
