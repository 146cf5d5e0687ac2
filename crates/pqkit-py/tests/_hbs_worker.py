"""The worker of test_hbs.py's multi-process test, in a module of its own so that processes
started with the "spawn" method import it by name (not collected by pytest)."""

from __future__ import annotations

import time


def sign_many(state: str, ledger: str, count: int, tag: str, start=None, hold_s: float = 0.0,
              patience_s: float = 60.0):
    """Waits at ``start`` (a barrier shared by the workers) so that all try at once, opens the
    state file (retrying while another process holds it), signs ``count`` messages, holds the
    key ``hold_s`` seconds more and closes it. Returns ``{"ok": True, "signed": [(message, signature), ...],
    "retries": n}``, or ``{"ok": False, "error": "..."}``: exceptions are returned as text,
    so that a failure reads the same whatever pickling the exception classes allow."""
    try:
        import pqkit
        import pqkit.hbs

        if start is not None:
            start.wait(timeout=60)
        deadline = time.monotonic() + patience_s
        retries = 0
        while True:
            try:
                key = pqkit.hbs.StatefulKey.open(state, ledger=ledger)
                break
            except pqkit.StateError as e:
                text = str(e).lower()
                busy = "in use" in text or "lock" in text
                if not busy or time.monotonic() > deadline:
                    return {"ok": False, "error": f"open: {type(e).__name__}: {e}"}
                retries += 1
                time.sleep(0.05)
        signed = []
        with key:
            for i in range(count):
                message = f"{tag} message {i}".encode()
                signed.append((message, key.sign(message)))
            time.sleep(hold_s)
        return {"ok": True, "signed": signed, "retries": retries}
    except BaseException as e:  # noqa: BLE001 - reported to the parent as text
        return {"ok": False, "error": f"{type(e).__name__}: {e}"}
