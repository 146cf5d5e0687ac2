"""Stateful hash-based signatures: LMS/HSS (RFC 8554, SP 800-208) and XMSS/XMSS^MT
(RFC 8391), through a state file and a ledger that never hand out a one-time key twice.
The guide: help(pqkit.hbs.StatefulKey)."""

from ._pqkit import StatefulKey, StatefulPublicKey
from ._pqkit import hbs_load_public_key as load_public_key

__all__ = ["StatefulKey", "StatefulPublicKey", "load_public_key"]

# A forked child must not sign with the keys its parent opened (their reservations are the
# parent's): count the fork, so that those keys refuse in the child.
import os as _os

if hasattr(_os, "register_at_fork"):
    from ._pqkit import _after_fork_in_child

    _os.register_at_fork(after_in_child=_after_fork_in_child)
    del _after_fork_in_child
del _os
