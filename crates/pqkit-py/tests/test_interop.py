"""pqkit against pyca/cryptography (OpenSSL), both ways: ML-KEM-768/1024 (pyca has no
ML-KEM-512) and ML-DSA-44/65/87 — raw keys, seeds, PKCS#8 and SPKI PEM, encapsulation and
signatures. Each check is its own test; ``pytest -s`` prints the table."""

from __future__ import annotations

import functools

import pytest
from cryptography.exceptions import InvalidSignature as PycaInvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import mldsa, mlkem

import pqkit
import pqkit.kem
import pqkit.sig

RAW = (serialization.Encoding.Raw, serialization.PublicFormat.Raw)
PKCS8_PEM = (
    serialization.Encoding.PEM,
    serialization.PrivateFormat.PKCS8,
    serialization.NoEncryption(),
)
PKCS8_DER = (
    serialization.Encoding.DER,
    serialization.PrivateFormat.PKCS8,
    serialization.NoEncryption(),
)
SPKI_PEM = (serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
SPKI_DER = (serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)

PYCA_KEM = {
    "ML-KEM-768": (mlkem.MLKEM768PrivateKey, mlkem.MLKEM768PublicKey),
    "ML-KEM-1024": (mlkem.MLKEM1024PrivateKey, mlkem.MLKEM1024PublicKey),
}
PYCA_SIG = {
    "ML-DSA-44": (mldsa.MLDSA44PrivateKey, mldsa.MLDSA44PublicKey),
    "ML-DSA-65": (mldsa.MLDSA65PrivateKey, mldsa.MLDSA65PublicKey),
    "ML-DSA-87": (mldsa.MLDSA87PrivateKey, mldsa.MLDSA87PublicKey),
}

KEM_SEED = bytes(range(64))
SIG_SEED = bytes(range(100, 132))
MESSAGE = b"pqkit <-> pyca/cryptography"
CONTEXT = b"interop context"

TABLE: list[tuple[str, str]] = []


@pytest.fixture(scope="module", autouse=True)
def interop_table():
    yield
    if TABLE:
        width = max(len(check) for _, check in TABLE)
        print("\n\nalgorithm    | " + "check".ljust(width) + " | result")
        print("-------------+-" + "-" * width + "-+-------")
        for alg, check in TABLE:
            print(f"{alg:<12} | {check.ljust(width)} | ok")


def passed(alg: str, check: str) -> None:
    TABLE.append((alg, check))
    print(f"{alg} | {check} | ok")


# --- ML-KEM ----------------------------------------------------------------------------------


def kem_pqkit_to_pyca(name):
    """pqkit's encapsulation key -> pyca encapsulates -> pqkit decapsulates."""
    _, pyca_pub = PYCA_KEM[name]
    dk = pqkit.kem.by_name(name).generate()
    pub = pyca_pub.from_public_bytes(dk.public_key().to_bytes())
    ss, ct = pub.encapsulate()
    assert dk.decapsulate(ct) == ss, "pqkit decapsulated another secret than pyca encapsulated"


def kem_pyca_to_pqkit(name):
    """pyca's encapsulation key -> pqkit encapsulates -> pyca decapsulates."""
    pyca_priv, _ = PYCA_KEM[name]
    priv = pyca_priv.generate()
    ek = pqkit.kem.by_name(name).encapsulation_key(priv.public_key().public_bytes(*RAW))
    ss, ct = ek.encapsulate()
    assert priv.decapsulate(ct) == ss, "pyca decapsulated another secret than pqkit encapsulated"


def kem_same_seed(name):
    """The same d‖z gives the same keys."""
    pyca_priv, _ = PYCA_KEM[name]
    ours = pqkit.kem.by_name(name).from_seed(KEM_SEED)
    theirs = pyca_priv.from_seed_bytes(KEM_SEED)
    assert ours.public_key().to_bytes() == theirs.public_key().public_bytes(*RAW)
    assert theirs.private_bytes_raw() == ours.seed()
    ss, ct = theirs.public_key().encapsulate()
    assert ours.decapsulate(ct) == ss


def kem_private_pem_pqkit_to_pyca(name):
    """pqkit's seed-form PKCS#8 read by pyca; byte-identical to pyca's own."""
    ours = pqkit.kem.by_name(name).from_seed(KEM_SEED)
    theirs = serialization.load_pem_private_key(ours.to_pem("seed").encode(), password=None)
    assert isinstance(theirs, PYCA_KEM[name][0]), type(theirs)
    assert theirs.public_key().public_bytes(*RAW) == ours.public_key().to_bytes()
    assert theirs.private_bytes(*PKCS8_DER) == ours.to_der("seed"), "PKCS#8 DER differs"


def kem_private_pem_pyca_to_pqkit(name):
    """pyca's PKCS#8 read by pqkit."""
    theirs = PYCA_KEM[name][0].generate()
    ours = pqkit.load_pem_private_key(theirs.private_bytes(*PKCS8_PEM))
    assert isinstance(ours, pqkit.kem.DecapsulationKey), type(ours)
    assert ours.algorithm.name == name
    assert ours.public_key().to_bytes() == theirs.public_key().public_bytes(*RAW)
    assert ours.seed() == theirs.private_bytes_raw()
    ss, ct = theirs.public_key().encapsulate()
    assert ours.decapsulate(ct) == ss


def kem_public_pem_both_ways(name):
    """SPKI PEM: pqkit -> pyca and pyca -> pqkit, byte-identical DER."""
    ours = pqkit.kem.by_name(name).generate().public_key()
    theirs = serialization.load_pem_public_key(ours.to_pem().encode())
    assert theirs.public_bytes(*RAW) == ours.to_bytes()
    assert theirs.public_bytes(*SPKI_DER) == ours.to_der(), "SPKI DER differs"
    other = PYCA_KEM[name][0].generate().public_key()
    back = pqkit.load_pem_public_key(other.public_bytes(*SPKI_PEM))
    assert isinstance(back, pqkit.kem.EncapsulationKey), type(back)
    assert back.algorithm.name == name
    assert back.to_bytes() == other.public_bytes(*RAW)


KEM_CHECKS = [
    kem_pqkit_to_pyca,
    kem_pyca_to_pqkit,
    kem_same_seed,
    kem_private_pem_pqkit_to_pyca,
    kem_private_pem_pyca_to_pqkit,
    kem_public_pem_both_ways,
]


@pytest.mark.parametrize("name", sorted(PYCA_KEM))
@pytest.mark.parametrize("check", KEM_CHECKS, ids=lambda f: f.__name__)
def test_ml_kem(name, check):
    check(name)
    passed(name, check.__name__)


# --- ML-DSA ----------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def pqkit_key(name):
    return pqkit.sig.by_name(name).generate()


@functools.lru_cache(maxsize=None)
def pyca_key(name):
    return PYCA_SIG[name][0].generate()


def sig_pqkit_signs_pyca_verifies(name):
    key = pqkit_key(name)
    pub = PYCA_SIG[name][1].from_public_bytes(key.public_key().to_bytes())
    pub.verify(key.sign(MESSAGE), MESSAGE)
    with pytest.raises(PycaInvalidSignature):
        pub.verify(key.sign(MESSAGE), MESSAGE + b"!")


def sig_pqkit_signs_pyca_verifies_context(name):
    key = pqkit_key(name)
    pub = PYCA_SIG[name][1].from_public_bytes(key.public_key().to_bytes())
    sig = key.sign(MESSAGE, CONTEXT)
    pub.verify(sig, MESSAGE, CONTEXT)
    with pytest.raises(PycaInvalidSignature):
        pub.verify(sig, MESSAGE)


def sig_pqkit_deterministic_pyca_verifies(name):
    key = pqkit_key(name)
    pub = PYCA_SIG[name][1].from_public_bytes(key.public_key().to_bytes())
    pub.verify(key.sign(MESSAGE, CONTEXT, deterministic=True), MESSAGE, CONTEXT)


def sig_pqkit_external_mu_pyca_verifies(name):
    key = pqkit_key(name)
    vk = key.public_key()
    pub = PYCA_SIG[name][1].from_public_bytes(vk.to_bytes())
    pub.verify(key.sign_mu(vk.external_mu(MESSAGE, CONTEXT)), MESSAGE, CONTEXT)


def sig_pyca_signs_pqkit_verifies(name):
    theirs = pyca_key(name)
    vk = pqkit.sig.by_name(name).verifying_key(theirs.public_key().public_bytes(*RAW))
    vk.verify(theirs.sign(MESSAGE), MESSAGE)
    with pytest.raises(pqkit.InvalidSignature):
        vk.verify(theirs.sign(MESSAGE), MESSAGE + b"!")


def sig_pyca_signs_pqkit_verifies_context(name):
    theirs = pyca_key(name)
    vk = pqkit.sig.by_name(name).verifying_key(theirs.public_key().public_bytes(*RAW))
    sig = theirs.sign(MESSAGE, CONTEXT)
    vk.verify(sig, MESSAGE, CONTEXT)
    with pytest.raises(pqkit.InvalidSignature):
        vk.verify(sig, MESSAGE)
    # And pqkit's external μ over the same message and context.
    vk.verify_mu(sig, vk.external_mu(MESSAGE, CONTEXT))


def sig_same_seed(name):
    """The same ξ gives the same key."""
    ours = pqkit.sig.by_name(name).from_seed(SIG_SEED)
    theirs = PYCA_SIG[name][0].from_seed_bytes(SIG_SEED)
    assert ours.public_key().to_bytes() == theirs.public_key().public_bytes(*RAW)
    assert theirs.private_bytes_raw() == ours.seed()


def sig_private_pem_pqkit_to_pyca(name):
    """pqkit's seed-form PKCS#8 read by pyca (byte-identical DER); pyca signs, pqkit's key
    verifies."""
    ours = pqkit_key(name)
    theirs = serialization.load_pem_private_key(ours.to_pem("seed").encode(), password=None)
    assert isinstance(theirs, PYCA_SIG[name][0]), type(theirs)
    assert theirs.public_key().public_bytes(*RAW) == ours.public_key().to_bytes()
    assert theirs.private_bytes(*PKCS8_DER) == ours.to_der("seed"), "PKCS#8 DER differs"
    ours.public_key().verify(theirs.sign(MESSAGE, CONTEXT), MESSAGE, CONTEXT)


def sig_private_pem_pyca_to_pqkit(name):
    """pyca's PKCS#8 read by pqkit; pqkit signs, pyca's key verifies."""
    theirs = pyca_key(name)
    ours = pqkit.load_pem_private_key(theirs.private_bytes(*PKCS8_PEM))
    assert isinstance(ours, pqkit.sig.SigningKey), type(ours)
    assert ours.algorithm.name == name
    assert ours.public_key().to_bytes() == theirs.public_key().public_bytes(*RAW)
    assert ours.seed() == theirs.private_bytes_raw()
    theirs.public_key().verify(ours.sign(MESSAGE, CONTEXT), MESSAGE, CONTEXT)


def sig_public_pem_both_ways(name):
    """SPKI PEM: pqkit -> pyca and pyca -> pqkit, byte-identical DER."""
    ours = pqkit_key(name).public_key()
    theirs = serialization.load_pem_public_key(ours.to_pem().encode())
    assert theirs.public_bytes(*RAW) == ours.to_bytes()
    assert theirs.public_bytes(*SPKI_DER) == ours.to_der(), "SPKI DER differs"
    other = pyca_key(name).public_key()
    back = pqkit.load_pem_public_key(other.public_bytes(*SPKI_PEM))
    assert isinstance(back, pqkit.sig.VerifyingKey), type(back)
    assert back.algorithm.name == name
    assert back.to_bytes() == other.public_bytes(*RAW)
    back.verify(pyca_key(name).sign(MESSAGE), MESSAGE)


SIG_CHECKS = [
    sig_pqkit_signs_pyca_verifies,
    sig_pqkit_signs_pyca_verifies_context,
    sig_pqkit_deterministic_pyca_verifies,
    sig_pqkit_external_mu_pyca_verifies,
    sig_pyca_signs_pqkit_verifies,
    sig_pyca_signs_pqkit_verifies_context,
    sig_same_seed,
    sig_private_pem_pqkit_to_pyca,
    sig_private_pem_pyca_to_pqkit,
    sig_public_pem_both_ways,
]


@pytest.mark.parametrize("name", sorted(PYCA_SIG))
@pytest.mark.parametrize("check", SIG_CHECKS, ids=lambda f: f.__name__)
def test_ml_dsa(name, check):
    check(name)
    passed(name, check.__name__)
