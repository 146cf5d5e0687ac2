"""Every class of bad input raises the exception the stubs name — never a crash, never a
bare Exception — and every exception pqkit raises is a pqkit.PqkitError."""

from __future__ import annotations

import random

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import x25519

import pqkit
import pqkit.cms
import pqkit.hazmat
import pqkit.hbs
import pqkit.kem
import pqkit.pkcs11
import pqkit.sig
import pqkit.x509

EXCEPTIONS = [
    pqkit.InvalidSignature,
    pqkit.InvalidKey,
    pqkit.InvalidCiphertext,
    pqkit.InvalidInput,
    pqkit.UnknownAlgorithm,
    pqkit.Unsupported,
    pqkit.KeyExhausted,
    pqkit.StateError,
    pqkit.ValidationError,
    pqkit.TokenError,
]


def _flip(data: bytes, index: int, bit: int = 0) -> bytes:
    out = bytearray(data)
    out[index] ^= 1 << bit
    return bytes(out)


def test_hierarchy():
    assert issubclass(pqkit.PqkitError, Exception)
    for exc in EXCEPTIONS:
        assert issubclass(exc, pqkit.PqkitError), f"{exc.__name__} is not a PqkitError"
    for exc in (pqkit.InvalidKey, pqkit.InvalidCiphertext, pqkit.InvalidInput,
                pqkit.UnknownAlgorithm):
        assert issubclass(exc, ValueError), f"{exc.__name__} is not a ValueError"
    for exc in EXCEPTIONS:
        assert exc.__module__ == "pqkit", f"{exc.__name__} shows as {exc.__module__}"
        assert getattr(pqkit, exc.__name__) is exc
    names = {exc.__name__ for exc in EXCEPTIONS}
    assert len(names) == len(EXCEPTIONS)


# --- keys and ciphertexts of the wrong length ------------------------------------------------


@pytest.mark.parametrize("name", ["ML-DSA-44", "ML-DSA-65", "SLH-DSA-SHA2-128f", "Falcon-512",
                                  "Ed25519", "ECDSA-P256", "MLDSA65-Ed25519-SHA512"])
def test_verifying_key_wrong_length(name):
    alg = pqkit.sig.by_name(name)
    good = alg.generate().public_key().to_bytes()
    for bad in (b"", good[:-1], good + b"\x00", bytes(7)):
        with pytest.raises(pqkit.InvalidKey) as info:
            alg.verifying_key(bad)
        assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("name", ["ML-KEM-512", "ML-KEM-768", "ML-KEM-1024", "HQC-1"])
def test_encapsulation_key_wrong_length(name):
    alg = pqkit.kem.by_name(name)
    good = alg.generate().public_key().to_bytes()
    for bad in (b"", good[:-1], good + b"\x00"):
        with pytest.raises(pqkit.InvalidKey) as info:
            alg.encapsulation_key(bad)
        assert isinstance(info.value, ValueError)
        with pytest.raises(pqkit.InvalidKey):
            alg.encapsulate(bad)


def test_decapsulation_key_and_seed_wrong_length():
    alg = pqkit.kem.MLKEM768
    dk = alg.generate()
    with pytest.raises(pqkit.InvalidKey):
        alg.decapsulation_key(dk.to_bytes()[:-1])
    with pytest.raises(pqkit.InvalidKey):
        alg.from_seed(bytes(63))
    with pytest.raises(pqkit.InvalidKey):
        pqkit.sig.MLDSA65.from_seed(bytes(31))
    with pytest.raises(pqkit.InvalidKey):
        pqkit.sig.MLDSA65.signing_key(bytes(100))


def test_ml_kem_decapsulation_key_hash_check():
    """FIPS 203 §7.3: H(ek) inside dk must match."""
    alg = pqkit.kem.MLKEM768
    dk = alg.generate().to_bytes()
    # dk = dk_PKE (384·k) ‖ ek (384·k + 32) ‖ H(ek) (32) ‖ z (32): change H(ek).
    bad = _flip(dk, len(dk) - 64 + 5)
    with pytest.raises(pqkit.InvalidKey):
        alg.decapsulation_key(bad)


@pytest.mark.parametrize("name", ["ML-KEM-512", "ML-KEM-768", "ML-KEM-1024", "HQC-1"])
def test_ciphertext_wrong_length(name):
    alg = pqkit.kem.by_name(name)
    dk = alg.generate()
    _, ct = dk.public_key().encapsulate()
    for bad in (b"", ct[:-1], ct + b"\x00"):
        with pytest.raises(pqkit.InvalidCiphertext) as info:
            dk.decapsulate(bad)
        assert isinstance(info.value, ValueError)
        with pytest.raises(pqkit.InvalidCiphertext):
            alg.decapsulate(dk, bad)


def test_ml_kem_modified_ciphertext_is_implicitly_rejected():
    dk = pqkit.kem.MLKEM768.generate()
    ss, ct = dk.public_key().encapsulate()
    other = dk.decapsulate(_flip(ct, 10))
    assert isinstance(other, bytes) and len(other) == 32
    assert other != ss, "a modified ciphertext must give the implicit-rejection secret"
    assert dk.decapsulate(_flip(ct, 10)) == other, "implicit rejection is deterministic"


def test_ml_kem_modulus_check():
    """FIPS 203 §7.2: a coefficient 0xFFF >= q in the encapsulation key is refused, from raw
    bytes and from an SPKI."""
    alg = pqkit.kem.MLKEM768
    ek = alg.generate().public_key()
    raw = bytearray(ek.to_bytes())
    # ByteEncode12: coefficient 0 is byte 0 and the low nibble of byte 1.
    raw[0], raw[1] = 0xFF, (raw[1] & 0xF0) | 0x0F
    with pytest.raises(pqkit.InvalidKey):
        alg.encapsulation_key(bytes(raw))
    with pytest.raises(pqkit.InvalidKey):
        alg.encapsulate(bytes(raw))
    der = bytearray(ek.to_der())
    start = len(der) - alg.encapsulation_key_size
    assert bytes(der[start:]) == ek.to_bytes(), "the SPKI ends with the raw key"
    der[start:] = raw
    with pytest.raises(pqkit.InvalidKey):
        pqkit.load_der_public_key(bytes(der))


# --- signatures ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["ML-DSA-65", "SLH-DSA-SHAKE-128f", "Falcon-512", "Ed25519",
                                  "ECDSA-P384", "MLDSA44-ECDSA-P256-SHA256"])
def test_damaged_signatures(name):
    sk = pqkit.sig.by_name(name).generate()
    vk = sk.public_key()
    msg = b"damaged"
    sig = sk.sign(msg)
    damaged = [b"", sig[:1], sig[:-1], sig[: len(sig) // 2], sig + b"\x00", sig + sig,
               bytes(len(sig)), b"\xff" * len(sig)]
    rng = random.Random(1)
    damaged += [_flip(sig, rng.randrange(len(sig)), rng.randrange(8)) for _ in range(24)]
    damaged += [_flip(sig, 0, b) for b in range(8)] + [_flip(sig, len(sig) - 1, b) for b in range(8)]
    for bad in damaged:
        if bad == sig:
            continue
        with pytest.raises(pqkit.InvalidSignature):
            vk.verify(bad, msg)


def test_context_errors():
    sk = pqkit.sig.MLDSA65.generate()
    with pytest.raises(ValueError):
        sk.sign(b"m", bytes(256))
    with pytest.raises(ValueError):
        pqkit.hazmat.sign(sk, b"m", bytes(256), randomness=bytes(32))
    with pytest.raises(pqkit.Unsupported):
        pqkit.sig.ECDSA_P256.generate().sign(b"m", b"ctx")
    with pytest.raises(pqkit.Unsupported):
        pqkit.sig.FALCON_512.generate().sign(b"m", b"ctx")


def test_hazmat_randomness_length():
    sk = pqkit.sig.MLDSA65.generate()
    for bad in (b"", bytes(31), bytes(33)):
        with pytest.raises(ValueError):
            pqkit.hazmat.sign(sk, b"m", randomness=bad)
        with pytest.raises(ValueError):
            pqkit.hazmat.sign_mu(sk, bytes(64), randomness=bad)
    ek = pqkit.kem.MLKEM768.generate().public_key()
    for bad in (b"", bytes(31), bytes(33)):
        with pytest.raises(ValueError):
            pqkit.hazmat.encapsulate(ek, bad)


# --- names -----------------------------------------------------------------------------------


def test_unknown_algorithm():
    for call in (
        lambda: pqkit.kem.by_name("ML-KEM-769"),
        lambda: pqkit.kem.by_name(""),
        lambda: pqkit.kem.by_name("ML-DSA-65"),
        lambda: pqkit.sig.by_name("ML-DSA-66"),
        lambda: pqkit.sig.by_name("ML-KEM-768"),
        lambda: pqkit.sig.by_name("no such algorithm"),
    ):
        with pytest.raises(pqkit.UnknownAlgorithm) as info:
            call()
        assert isinstance(info.value, ValueError)
    sk = pqkit.sig.MLDSA65.generate()
    with pytest.raises(ValueError):
        sk.sign_prehashed(bytes(16), "MD5")


def test_key_of_an_unknown_algorithm():
    """An X25519 key (no pqkit algorithm) in PKCS#8 and SPKI."""
    key = x25519.X25519PrivateKey.generate()
    private_pem = key.private_bytes(serialization.Encoding.PEM,
                                    serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
    public_pem = key.public_key().public_bytes(serialization.Encoding.PEM,
                                               serialization.PublicFormat.SubjectPublicKeyInfo)
    with pytest.raises(pqkit.UnknownAlgorithm):
        pqkit.load_pem_private_key(private_pem)
    with pytest.raises(pqkit.UnknownAlgorithm):
        pqkit.load_pem_public_key(public_pem)


# --- key files -------------------------------------------------------------------------------


GARBAGE_PEM = [
    "",
    "hello",
    b"\x00\x01\x02",
    "-----BEGIN PRIVATE KEY-----\n-----END PRIVATE KEY-----\n",
    "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
    "-----BEGIN PRIVATE KEY-----\n!!!notbase64!!!\n-----END PRIVATE KEY-----\n",
    "-----BEGIN PRIVATE KEY-----\nMAA=\n-----END PRIVATE KEY-----\n",
]


@pytest.mark.parametrize("data", GARBAGE_PEM, ids=range(len(GARBAGE_PEM)))
def test_garbage_pem(data):
    with pytest.raises(pqkit.InvalidKey):
        pqkit.load_pem_private_key(data)
    public = data.replace("PRIVATE", "PUBLIC") if isinstance(data, str) else data
    with pytest.raises(pqkit.InvalidKey):
        pqkit.load_pem_public_key(public)


def test_garbage_der():
    for data in (b"", b"\x30", b"\x30\x00", b"\x30\x80\x00\x00", bytes(100), b"\xff" * 64):
        with pytest.raises(pqkit.InvalidKey):
            pqkit.load_der_private_key(data)
        with pytest.raises(pqkit.InvalidKey):
            pqkit.load_der_public_key(data)


def test_public_key_pem_is_not_a_private_key():
    vk = pqkit.sig.MLDSA65.generate().public_key()
    with pytest.raises(pqkit.InvalidKey):
        pqkit.load_pem_private_key(vk.to_pem())
    with pytest.raises(pqkit.InvalidKey):
        pqkit.load_der_private_key(vk.to_der())


def _load_or_error(loader, data):
    """Loads data; a refusal must be a PqkitError or ValueError (never anything else)."""
    try:
        return loader(data)
    except (pqkit.PqkitError, ValueError):
        return None


def _damaged_copies(data: bytes, samples: int, seed: int):
    """Every bit of the first 48 bytes flipped, random flips elsewhere, and truncations."""
    rng = random.Random(seed)
    for i in range(min(48, len(data))):
        for bit in range(8):
            yield _flip(data, i, bit)
    for _ in range(samples):
        yield _flip(data, rng.randrange(len(data)), rng.randrange(8))
    for cut in sorted({0, 1, 2, len(data) // 2, len(data) - 1} | {rng.randrange(len(data))
                                                                   for _ in range(8)}):
        yield data[:cut]
    yield data + b"\x00"


KEYS_FOR_FLIPS = [
    ("ML-DSA-65 seed", lambda: pqkit.sig.MLDSA65.generate(), "seed"),
    ("ML-DSA-44 expanded", lambda: pqkit.sig.MLDSA44.generate(), "expanded"),
    ("ML-DSA-44 both", lambda: pqkit.sig.MLDSA44.generate(), "both"),
    ("ML-KEM-768 seed", lambda: pqkit.kem.MLKEM768.generate(), "seed"),
    ("ML-KEM-512 expanded", lambda: pqkit.kem.MLKEM512.generate(), "expanded"),
    ("SLH-DSA-SHA2-128f", lambda: pqkit.sig.SLHDSA_SHA2_128F.generate(), None),
    ("Falcon-512", lambda: pqkit.sig.FALCON_512.generate(), None),
    ("Ed25519", lambda: pqkit.sig.ED25519.generate(), None),
    ("ECDSA-P256", lambda: pqkit.sig.ECDSA_P256.generate(), None),
    ("MLDSA65-ECDSA-P256-SHA512", lambda: pqkit.sig.MLDSA65_ECDSA_P256_SHA512.generate(), None),
]


@pytest.mark.parametrize("label,make,form", KEYS_FOR_FLIPS, ids=[k[0] for k in KEYS_FOR_FLIPS])
def test_bit_flips_in_private_keys_never_crash(label, make, form):
    key = make()
    der = key.to_der(form) if form else key.to_der()
    pem = key.to_pem(form) if form else key.to_pem()
    loaded = refused = 0
    for damaged in _damaged_copies(der, samples=64, seed=len(der)):
        if _load_or_error(pqkit.load_der_private_key, damaged) is None:
            refused += 1
        else:
            loaded += 1
    pem_bytes = pem.encode()
    rng = random.Random(7)
    for _ in range(64):
        damaged = _flip(pem_bytes, rng.randrange(len(pem_bytes)), rng.randrange(8))
        _load_or_error(pqkit.load_pem_private_key, damaged)
    assert refused > 0, f"{label}: no damaged copy was refused"
    print(f"{label}: {refused} damaged copies refused, {loaded} still decode")


def test_bit_flips_in_public_keys_never_crash():
    for key in (pqkit.sig.MLDSA65.generate(), pqkit.sig.ED25519.generate(),
                pqkit.kem.MLKEM768.generate()):
        der = key.public_key().to_der()
        for damaged in _damaged_copies(der, samples=32, seed=3):
            _load_or_error(pqkit.load_der_public_key, damaged)


# --- keys of the wrong kind ------------------------------------------------------------------


def test_kem_key_where_a_signing_key_is_needed():
    dk = pqkit.load_pem_private_key(pqkit.kem.MLKEM768.generate().to_pem())
    assert isinstance(dk, pqkit.kem.DecapsulationKey), type(dk)
    ek = pqkit.load_pem_public_key(dk.public_key().to_pem())
    assert isinstance(ek, pqkit.kem.EncapsulationKey), type(ek)
    with pytest.raises(TypeError):
        pqkit.x509.create_csr(dk, "CN=kem")
    with pytest.raises(TypeError):
        pqkit.x509.self_signed(dk, "CN=kem")
    root_key = pqkit.sig.MLDSA65.generate()
    root = pqkit.x509.self_signed(root_key, "CN=Errors Root")
    with pytest.raises(TypeError):
        pqkit.x509.issue(ek, root, root_key, subject_name="CN=kem")
    with pytest.raises(TypeError):
        pqkit.x509.issue(root_key.public_key(), root, dk, subject_name="CN=x")
    with pytest.raises(TypeError):
        pqkit.cms.sign(b"content", [(root, dk)])
    with pytest.raises(TypeError):
        pqkit.hazmat.sign(dk, b"m", randomness=bytes(32))
    with pytest.raises(TypeError):
        pqkit.hazmat.encapsulate(root_key.public_key(), bytes(32))


# --- certificates, CMS, tokens ---------------------------------------------------------------


def test_bad_certificates_and_cms():
    with pytest.raises(ValueError):
        pqkit.x509.load_pem_chain("no certificate here")
    with pytest.raises(ValueError):
        pqkit.x509.load_pem_chain(
            "-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n")
    with pytest.raises(pqkit.InvalidInput):
        pqkit.x509.load_der_certificate(b"\x30\x03\x02\x01\x00")
    with pytest.raises(pqkit.InvalidInput):
        pqkit.x509.load_csr(b"garbage")
    with pytest.raises(pqkit.InvalidInput):
        pqkit.x509.load_csr(b"\x30\x03\x02\x01\x00")
    root_key = pqkit.sig.MLDSA65.generate()
    root = pqkit.x509.self_signed(root_key, "CN=Errors Root")
    with pytest.raises(pqkit.InvalidInput):
        pqkit.cms.verify(b"garbage", [root])
    with pytest.raises(pqkit.InvalidInput):
        pqkit.x509.self_signed(root_key, "not a distinguished name")
    with pytest.raises(pqkit.InvalidInput):
        pqkit.x509.verify([b"junk"], [root])
    # Times and lifetimes out of range: refused, never a Rust panic.
    for at in (1e20, 2**64, 1.8e19, 253402300800, -1, float("nan"), float("inf"), True):
        with pytest.raises(pqkit.InvalidInput, match="at"):
            pqkit.x509.verify([root], [root], at=at)
        with pytest.raises(pqkit.InvalidInput, match="at"):
            pqkit.cms.verify(b"garbage", [root], at=at)
    for days in (0, -1, 2**31, 2**70):
        with pytest.raises((pqkit.InvalidInput, OverflowError), match="days|int"):
            pqkit.x509.self_signed(root_key, "CN=x", days=days)


def test_token_errors(tmp_path):
    with pytest.raises(pqkit.TokenError):
        pqkit.pkcs11.load_key("pkcs11:token=none;object=none",
                              module=str(tmp_path / "no-such-module.so"),
                              pin_source="env:PQKIT_TEST_NO_SUCH_PIN")
    with pytest.raises(pqkit.TokenError):
        pqkit.pkcs11.load_key("not a pkcs11 uri", module=str(tmp_path / "no-such-module.so"))


def test_state_errors(tmp_path):
    ledger = str(tmp_path / "ledger.sqlite3")
    # A missing file: refused.
    with pytest.raises(pqkit.StateError):
        pqkit.hbs.StatefulKey.open(tmp_path / "missing.state", ledger=ledger)
    garbage = tmp_path / "garbage.state"
    garbage.write_bytes(b"not a state file" * 10)
    with pytest.raises(pqkit.StateError):
        pqkit.hbs.StatefulKey.open(garbage, ledger=ledger)
    with pytest.raises(pqkit.InvalidInput):
        pqkit.hbs.StatefulKey.generate(tmp_path / "bad.state", "L1_H6_W4", ledger=ledger)
    with pytest.raises(pqkit.InvalidKey):
        pqkit.hbs.load_public_key(b"garbage")


# --- bytes-like inputs ------------------------------------------------------------------------


def test_buffers_are_read_as_their_raw_bytes():
    """A memoryview or array of wider items is its raw bytes (as hashlib reads it); sequences
    of ints and str are refused."""
    import array

    key = pqkit.sig.MLDSA44.generate()
    vk = key.public_key()
    wide = array.array("I", [1, 2, 300])
    raw = bytes(memoryview(wide))
    assert len(raw) == 12
    vk.verify(key.sign(memoryview(wide)), raw)
    vk.verify(key.sign(wide), raw)
    vk.verify(key.sign(bytearray(raw)), raw)
    two_d = memoryview(bytes(range(6))).cast("B", shape=[2, 3])
    vk.verify(key.sign(two_d), bytes(range(6)))
    for bad in ([104, 105], range(10), (1, 2), "text", 5, None, 3.5):
        with pytest.raises(TypeError, match="bytes-like"):
            key.sign(bad)


def test_hazmat_randomness_only_where_it_decides_the_signature():
    for name in ("Falcon-512", "Ed25519", "ECDSA-P256", "MLDSA65-Ed25519-SHA512"):
        key = pqkit.sig.by_name(name).generate()
        with pytest.raises(pqkit.Unsupported):
            pqkit.hazmat.sign(key, b"m", randomness=bytes(32))
