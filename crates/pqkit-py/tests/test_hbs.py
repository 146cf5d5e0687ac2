"""Stateful hash-based signatures (pqkit.hbs): a state file and a ledger (an SQLite file here)
that never hand out a one-time key twice — within a process, across a copy of the state file,
and across processes that share the file."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import sys
from pathlib import Path

import pytest

import pqkit
import pqkit.hbs

StatefulKey = pqkit.hbs.StatefulKey

TESTS_DIR = Path(__file__).resolve().parent

#: 1 level of height 5: 32 one-time keys (LMS_SHA256_M32_H5 / LMOTS_SHA256_N32_W4).
TINY = "L1_H5_W4"
#: 2 levels of height 5: 1024 one-time keys, quick to generate.
SMALL = "L2_H5_W4"
#: The smallest XMSS set: 1024 one-time keys.
XMSS = "XMSS-SHA2_10_256"


@pytest.fixture
def ledger(tmp_path) -> str:
    """An SQLite ledger of the test's own (LedgerSpec accepts a file path or sqlite:PATH)."""
    return str(tmp_path / "ledger.sqlite3")


def test_generate_sign_verify(tmp_path, ledger):
    state = tmp_path / "k.state"
    with StatefulKey.generate(state, TINY, ledger=ledger) as key:
        assert key.capacity == 32
        assert key.remaining == 32
        assert key.used == 0
        assert Path(key.path).resolve() == state.resolve()
        assert isinstance(key.ledger, str) and key.ledger
        pub = key.public_key()
        signed = []
        for i in range(3):
            msg = b"firmware %d" % i
            before = key.remaining
            sig = key.sign(msg)
            assert key.remaining == before - 1, "each signature spends one one-time key"
            assert key.used + key.remaining == key.capacity
            assert len(sig) == key.signature_size
            pub.verify(sig, msg)
            signed.append((msg, sig))
        with pytest.raises(pqkit.InvalidSignature):
            pub.verify(signed[0][1], b"another message")
        with pytest.raises(pqkit.InvalidSignature):
            pub.verify(signed[0][1], signed[1][0])
        indices = [pub.index(sig) for _, sig in signed]
        assert len(set(indices)) == 3 and indices == sorted(indices), indices

        # A reservation: several one-time keys in one write, then signatures from it.
        before = key.remaining
        key.reserve(4)
        more = [key.sign(b"reserved %d" % i) for i in range(4)]
        assert key.remaining == before - 4
        more_indices = [pub.index(sig) for sig in more]
        assert len(set(indices + more_indices)) == 7, indices + more_indices
        assert min(more_indices) > max(indices)
        for i, sig in enumerate(more):
            pub.verify(sig, b"reserved %d" % i)
        pem = pub.to_pem()
        pub_bytes = pub.to_bytes()

    # Opened again: it continues after what was handed out.
    with StatefulKey.open(state, ledger=ledger) as key:
        assert key.used == 7 and key.remaining == 25, (key.used, key.remaining)
        assert key.public_key().to_bytes() == pub_bytes
        sig = key.sign(b"after reopening")
        assert key.public_key().index(sig) > max(more_indices)

    loaded = pqkit.hbs.load_public_key(pem)
    assert loaded.to_bytes() == pub_bytes
    loaded.verify(sig, b"after reopening")
    assert pqkit.hbs.load_public_key(pem.encode()).to_bytes() == pub_bytes
    assert pqkit.hbs.load_public_key(loaded.to_der()).to_bytes() == pub_bytes


def test_xmss(tmp_path, ledger):
    state = tmp_path / "x.state"
    with StatefulKey.generate(state, XMSS, ledger=ledger) as key:
        assert key.capacity == 1024
        pub = key.public_key()
        assert "XMSS" in pub.name.upper(), pub.name
        a, b = key.sign(b"a"), key.sign(b"b")
        pub.verify(a, b"a")
        pub.verify(b, b"b")
        with pytest.raises(pqkit.InvalidSignature):
            pub.verify(a, b"b")
        assert pub.index(a) != pub.index(b)
        assert len(a) == len(b) == key.signature_size
        again = pqkit.hbs.load_public_key(pub.to_pem())
        again.verify(a, b"a")


def test_key_exhausted(tmp_path, ledger):
    state = tmp_path / "tiny.state"
    with StatefulKey.generate(state, TINY, ledger=ledger) as key:
        pub = key.public_key()
        key.reserve(32)
        sigs = [key.sign(b"m%d" % i) for i in range(32)]
        assert key.remaining == 0
        with pytest.raises(pqkit.KeyExhausted):
            key.sign(b"one too many")
        with pytest.raises(pqkit.KeyExhausted):
            key.sign(b"and again")
    indices = sorted(pub.index(s) for s in sigs)
    assert indices == list(range(32)), indices
    for i, sig in enumerate(sigs):
        pub.verify(sig, b"m%d" % i)
    # Still exhausted after reopening: exhaustion is never a wrap-around.
    with StatefulKey.open(state, ledger=ledger) as key:
        assert key.remaining == 0
        with pytest.raises(pqkit.KeyExhausted):
            key.sign(b"after reopening")


def test_generate_never_overwrites(tmp_path, ledger):
    state = tmp_path / "k.state"
    with StatefulKey.generate(state, TINY, ledger=ledger) as key:
        pub = key.public_key().to_bytes()
    with pytest.raises(pqkit.StateError):
        StatefulKey.generate(state, TINY, ledger=ledger)
    with StatefulKey.open(state, ledger=ledger) as key:
        assert key.public_key().to_bytes() == pub


def test_copied_state_file_is_refused(tmp_path, ledger):
    state = tmp_path / "k.state"
    with StatefulKey.generate(state, TINY, ledger=ledger) as key:
        key.sign(b"one")
    copy = tmp_path / "elsewhere" / "copy.state"
    copy.parent.mkdir()
    shutil.copy(state, copy)
    with pytest.raises(pqkit.StateError):
        StatefulKey.open(copy, ledger=ledger)
    # The original still opens, and goes on where it was.
    with StatefulKey.open(state, ledger=ledger) as key:
        key.sign(b"two")
        assert key.used == 2


def test_second_open_is_refused_while_open(tmp_path, ledger):
    state = tmp_path / "k.state"
    key = StatefulKey.generate(state, TINY, ledger=ledger)
    try:
        with pytest.raises(pqkit.StateError) as info:
            StatefulKey.open(state, ledger=ledger)
        text = str(info.value).lower()
        assert "in use" in text or "lock" in text, info.value
        key.sign(b"still mine")
    finally:
        key.close()
    key.close()  # idempotent
    with StatefulKey.open(state, ledger=ledger) as again:
        assert again.used == 1


def test_no_api_takes_an_index(tmp_path, ledger):
    """A caller can never choose the one-time key: no method or property of StatefulKey takes
    or sets an index. Only a public key reads the index a signature names."""
    forbidden = [
        "index", "sign_at", "sign_index", "sign_with_index", "set_index", "next_index",
        "seek", "set_next", "skip_to", "rewind", "reset",
    ]
    present = [name for name in forbidden if hasattr(StatefulKey, name)]
    assert not present, f"StatefulKey has {present}"
    with StatefulKey.generate(tmp_path / "k.state", TINY, ledger=ledger) as key:
        present = [name for name in forbidden if hasattr(key, name)]
        assert not present, f"a StatefulKey instance has {present}"
        assert hasattr(key.public_key(), "index")
    assert hasattr(pqkit.hbs.StatefulPublicKey, "index")


def test_several_processes_share_one_state_file(tmp_path, ledger):
    """Four processes try to open the same state file at the same moment (a barrier); the
    lock lets one in at a time — the others are refused and retry — and each signs its
    messages: every signature verifies, no index repeats, and the lock was seen held."""
    processes, per_process = 4, 6
    state = tmp_path / "shared.state"
    with StatefulKey.generate(state, SMALL, ledger=ledger) as key:
        pub = key.public_key()
        capacity = key.capacity

    if str(TESTS_DIR) not in sys.path:
        sys.path.insert(0, str(TESTS_DIR))
    import _hbs_worker  # noqa: PLC0415 - importable by name in the spawned processes

    ctx = multiprocessing.get_context("spawn")
    with ctx.Manager() as manager:
        start = manager.Barrier(processes)
        args = [(str(state), ledger, per_process, f"process {i}", start, 0.3)
                for i in range(processes)]
        with ctx.Pool(processes) as pool:
            results = pool.starmap_async(_hbs_worker.sign_many, args).get(timeout=180)

    errors = [r["error"] for r in results if not r["ok"]]
    assert not errors, f"worker failures: {errors}"
    signed = [pair for r in results for pair in r["signed"]]
    assert len(signed) == processes * per_process
    indices = []
    for message, sig in signed:
        pub.verify(sig, message)
        indices.append(pub.index(sig))
    assert len(set(indices)) == len(indices), f"an index was used twice: {sorted(indices)}"
    retries = [r["retries"] for r in results]
    assert sum(retries) > 0, f"no process found the key in use: the test proved no exclusion {retries}"
    with StatefulKey.open(state, ledger=ledger) as key:
        assert key.used == processes * per_process, key.used
        assert key.remaining == capacity - processes * per_process
        assert pub.index(key.sign(b"last")) > max(indices)
    print(f"{processes} processes, {len(signed)} signatures, indices "
          f"{min(indices)}..{max(indices)}, retries {[r['retries'] for r in results]}")


def test_a_forked_child_cannot_sign_with_the_parents_reservation(tmp_path, ledger):
    """os.fork() copies the open key, its reserved one-time keys and its lock: the child
    is refused (StateError) and leaves the parent's key alone; the parent signs on."""
    key = StatefulKey.generate(tmp_path / "fork.state", SMALL, ledger=ledger)
    pub = key.public_key()
    key.reserve(4)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report what happened, exit without Python's cleanup
        os.close(read)
        try:
            key.sign(b"child")
            outcome = b"signed"
        except pqkit.StateError as e:
            outcome = b"refused" if b"forked" in str(e).encode() else b"other: " + str(e).encode()
        except BaseException as e:  # noqa: BLE001
            outcome = b"other: " + repr(e).encode()
        try:
            key.close()
        except pqkit.StateError:
            pass
        del key
        os.write(write, outcome)
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as r:
        outcome = r.read()
    os.waitpid(pid, 0)
    assert outcome == b"refused", f"the forked child: {outcome!r}"
    # The parent's key still works, its lock file still held (a third opener is refused).
    signatures = [key.sign(b"parent %d" % i) for i in range(5)]
    for i, s in enumerate(signatures):
        pub.verify(s, b"parent %d" % i)
    assert len({pub.index(s) for s in signatures}) == 5
    with pytest.raises(pqkit.StateError, match="in use"):
        StatefulKey.open(tmp_path / "fork.state", ledger=ledger)
    key.close()


def test_reserve_counts_must_be_positive(tmp_path, ledger):
    with StatefulKey.generate(tmp_path / "r.state", SMALL, ledger=ledger) as key:
        for bad in (0, -1):
            with pytest.raises(pqkit.InvalidInput, match="count"):
                key.reserve(bad)
        assert key.used == 0, "a refused reserve() spent one-time keys"
        with pytest.raises(pqkit.InvalidInput, match="threads"):
            StatefulKey.open(tmp_path / "r.state", ledger=ledger, threads=-1)


def test_a_closed_key_refuses_everything(tmp_path, ledger):
    key = StatefulKey.generate(tmp_path / "c.state", SMALL, ledger=ledger)
    key.close()
    key.close()  # twice: nothing
    for call in (lambda: key.sign(b"x"), lambda: key.reserve(1), lambda: key.remaining,
                 key.public_key, key.__enter__):
        with pytest.raises(pqkit.StateError, match="closed"):
            call()


def test_threads_sign_and_read_one_key_without_deadlock(tmp_path, ledger):
    """Signers and readers of one key in several threads (the key's lock is never waited for
    with the GIL held): all finish, every index once."""
    import threading

    key = StatefulKey.generate(tmp_path / "t.state", SMALL, ledger=ledger)
    pub = key.public_key()
    signatures, failures = [], []

    def signer(n):
        try:
            for i in range(n):
                signatures.append(key.sign(b"m"))
        except BaseException as e:  # noqa: BLE001
            failures.append(e)

    def reader():
        try:
            for _ in range(200):
                key.remaining, key.used, repr(key)
        except BaseException as e:  # noqa: BLE001
            failures.append(e)

    threads = [threading.Thread(target=signer, args=(10,)) for _ in range(3)]
    threads += [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a thread is stuck: deadlock"
    assert not failures, failures
    indices = [pub.index(s) for s in signatures]
    assert len(indices) == 30 and len(set(indices)) == 30
    key.close()


def test_stateful_key_signs_certificates_and_cms(tmp_path, ledger):
    """A stateful key as a CA (RFC 9802) and as a CMS signer: each certificate and each
    SignedData spends one one-time key; the same key twice in one SignedData is refused."""
    with StatefulKey.generate(tmp_path / "ca.state", SMALL, ledger=ledger) as ca:
        root = pqkit.x509.self_signed(ca, "CN=HSS Root,O=pqkit")
        assert ca.used == 1
        # A code-signing certificate for another stateful key, issued by the HSS root.
        with StatefulKey.generate(tmp_path / "signer.state", SMALL, ledger=ledger) as signer:
            cert = pqkit.x509.issue(signer.public_key(), root, ca, profile="code-signing",
                                    subject_name="CN=HSS signer")
            assert ca.used == 2
            assert pqkit.x509.verify([cert], [root], purpose="codeSigning")[-1] == root
            signed = pqkit.cms.sign(b"firmware", [(cert, signer)])
            assert signer.used == 1
            verified = pqkit.cms.verify(signed, [root])
            assert verified.content == b"firmware"
            assert verified.signers[0].path[-1] == root
            with pytest.raises(pqkit.InvalidInput, match="two signers"):
                pqkit.cms.sign(b"x", [(cert, signer), (cert, signer)])
            assert signer.used == 1, "a refused SignedData spent a one-time key"
            with pytest.raises(pqkit.InvalidInput, match="not the CA certificate|holds|key"):
                pqkit.cms.sign(b"x", [(root, signer)])
            assert signer.used == 1, "a certificate of another key spent a one-time key"
        # A stateful key of the certificate's that is closed: StateError, nothing signed.
        with pytest.raises(pqkit.StateError, match="closed"):
            pqkit.cms.sign(b"x", [(cert, signer)])


def test_exhausted_stateful_cms_signer_is_key_exhausted(tmp_path, ledger):
    with StatefulKey.generate(tmp_path / "x.state", "L1_H5_W4", ledger=ledger) as key:
        cert = pqkit.x509.self_signed(key, "CN=tiny", profile="code-signing")
        key.reserve(key.remaining)
        for _ in range(key.capacity - 2):
            key.sign(b"spend")
        pqkit.cms.sign(b"last", [(cert, key)])
        with pytest.raises(pqkit.KeyExhausted):
            pqkit.cms.sign(b"one too many", [(cert, key)])


def test_an_ml_dsa_ca_certifies_a_stateful_signer(tmp_path, ledger):
    """A stateful public key in a certificate from an ML-DSA CA (RFC 9802 SPKI): its
    SignedData verify up to that CA."""
    ca_key = pqkit.sig.MLDSA65.generate()
    root = pqkit.x509.self_signed(ca_key, "CN=ML-DSA Root,O=pqkit")
    with StatefulKey.generate(tmp_path / "s.state", XMSS, ledger=ledger) as signer:
        cert = pqkit.x509.issue(signer.public_key(), root, ca_key, profile="code-signing",
                                subject_name="CN=XMSS signer")
        with pytest.raises(pqkit.UnknownAlgorithm):
            cert.public_key()  # not a catalogue key: pqkit.hbs handles it
        signed = pqkit.cms.sign(b"image", [(cert, signer)])
        verified = pqkit.cms.verify(signed, [root])
        assert verified.content == b"image"
        assert verified.signers[0].path[-1] == root


def test_cms_signers_and_readers_in_threads(tmp_path, ledger):
    """cms.sign with stateful keys in several threads — two keys, in both orders — while other
    threads read the keys: nothing waits for a key with the GIL held, so all finish."""
    import threading

    a = StatefulKey.generate(tmp_path / "a.state", SMALL, ledger=ledger)
    b = StatefulKey.generate(tmp_path / "b.state", SMALL, ledger=ledger)
    cert_a = pqkit.x509.self_signed(a, "CN=a", profile="code-signing")
    cert_b = pqkit.x509.self_signed(b, "CN=b", profile="code-signing")
    failures, made = [], []

    def signer(pairs):
        try:
            for i in range(4):
                made.append(pqkit.cms.sign(b"doc %d" % i, pairs))
        except BaseException as e:  # noqa: BLE001
            failures.append(e)

    def reader():
        try:
            for _ in range(100):
                a.remaining, b.used
        except BaseException as e:  # noqa: BLE001
            failures.append(e)

    threads = [threading.Thread(target=signer, args=([(cert_a, a), (cert_b, b)],)),
               threading.Thread(target=signer, args=([(cert_b, b), (cert_a, a)],)),
               threading.Thread(target=reader), threading.Thread(target=reader)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a thread is stuck: deadlock"
    assert not failures, failures
    assert len(made) == 8
    for signed in made:
        pqkit.cms.verify(signed, [cert_a, cert_b])
    assert a.used == b.used == 1 + 8
    a.close()
    b.close()


def test_a_stateful_ca_keeps_the_csr_subject_as_encoded(tmp_path, ledger):
    """A CSR's subject (PrintableString, IA5String emailAddress) is copied as its requester
    encoded it, by a stateful CA as by any other."""
    from cryptography import x509 as pyca
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.name import _ASN1Type
    from cryptography.x509.oid import NameOID

    requester = ec.generate_private_key(ec.SECP256R1())
    name = pyca.Name([
        pyca.NameAttribute(NameOID.COMMON_NAME, "sub CA", _type=_ASN1Type.PrintableString),
        pyca.NameAttribute(NameOID.EMAIL_ADDRESS, "ca@example.test"),
    ])
    request = pyca.CertificateSigningRequestBuilder().subject_name(name).sign(
        requester, hashes.SHA256())
    csr = pqkit.x509.load_csr(request.public_bytes(serialization.Encoding.DER))
    with StatefulKey.generate(tmp_path / "ca.state", SMALL, ledger=ledger) as ca:
        root = pqkit.x509.self_signed(ca, "CN=HSS Root")
        issued = pqkit.x509.issue(csr, root, ca, profile="client")
    subject = pyca.load_der_x509_certificate(issued.to_der()).subject
    assert subject.public_bytes() == name.public_bytes(), "the CSR's subject was re-encoded"
