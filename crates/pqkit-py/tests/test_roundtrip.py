"""Every algorithm of the catalogue, through the Python API: key generation, the operation
and its inverse, sizes against the algorithm's attributes, raw / PEM / DER round trips,
context binding, HashML-DSA and external μ; and the stubs checked against the module's
constants so that the two never drift."""

from __future__ import annotations

import functools
import hashlib
import re
from pathlib import Path

import pytest

import pqkit
import pqkit.kem
import pqkit.sig

STUBS_DIR = Path(__file__).resolve().parent.parent / "python" / "pqkit"

KEMS = pqkit.kem.algorithms()
SIGS = pqkit.sig.algorithms()


def _is_exact_size(alg) -> bool:
    """ML-DSA and SLH-DSA signatures have exactly signature_size bytes."""
    return alg.name.startswith(("ML-DSA-", "SLH-DSA-"))


def _flip(data: bytes, index: int, bit: int = 0) -> bytes:
    out = bytearray(data)
    out[index] ^= 1 << bit
    return bytes(out)


@functools.lru_cache(maxsize=None)
def signing_key(name: str):
    """One key per algorithm for the whole module (RSA and SLH-DSA keys are slow to make)."""
    return pqkit.sig.by_name(name).generate()


@functools.lru_cache(maxsize=None)
def decapsulation_key(name: str):
    """One key per KEM for the whole module (Classic McEliece keys are slow to make)."""
    return pqkit.kem.by_name(name).generate()


# --- the catalogue and the stubs -------------------------------------------------------------


def _stub_constants(stub: str, type_name: str) -> dict[str, str]:
    """``NAME: Type`` lines of a stub and the name in the docstring after each:
    ``MLKEM768: Kem`` / ``\"\"\"ML-KEM-768.\"\"\"`` -> {"MLKEM768": "ML-KEM-768"}."""
    text = (STUBS_DIR / stub).read_text(encoding="utf-8")
    pattern = re.compile(
        rf'^([A-Z][A-Z0-9_]*): {type_name}[ \t]*\n[ \t]*"""(.*?)"""', re.MULTILINE
    )
    found = {name: doc.strip().rstrip(".") for name, doc in pattern.findall(text)}
    declared = re.findall(rf"^([A-Z][A-Z0-9_]*): {type_name}\b", text, re.MULTILINE)
    assert sorted(found) == sorted(declared), (
        f"{stub}: every `NAME: {type_name}` line needs a docstring with the algorithm's name "
        f"on the next line; without one: {sorted(set(declared) - set(found))}"
    )
    return found


def _runtime_constants(module, cls) -> dict[str, str]:
    return {
        name: getattr(module, name).name
        for name in dir(module)
        if not name.startswith("_") and isinstance(getattr(module, name), cls)
    }


@pytest.mark.parametrize(
    "stub,module,cls,type_name",
    [
        ("kem.pyi", pqkit.kem, pqkit.kem.Kem, "Kem"),
        ("sig.pyi", pqkit.sig, pqkit.sig.SignatureAlgorithm, "SignatureAlgorithm"),
    ],
    ids=["kem", "sig"],
)
def test_stub_constants_match_the_module(stub, module, cls, type_name):
    stubbed = _stub_constants(stub, type_name)
    runtime = _runtime_constants(module, cls)
    assert stubbed, f"{stub}: no `NAME: {type_name}` constants found"
    missing_at_runtime = sorted(set(stubbed) - set(runtime))
    missing_in_stub = sorted(set(runtime) - set(stubbed))
    assert not missing_at_runtime and not missing_in_stub, (
        f"{stub} and {module.__name__} disagree: in the stub only {missing_at_runtime}, "
        f"in the module only {missing_in_stub}"
    )
    wrong = {k: (stubbed[k], runtime[k]) for k in stubbed if stubbed[k] != runtime[k]}
    assert not wrong, f"{stub}: docstring name vs runtime .name differ: {wrong}"
    # The constants are exactly the catalogue.
    catalogue = sorted(a.name for a in module.algorithms())
    assert sorted(runtime.values()) == catalogue, (
        f"{module.__name__}: constants {sorted(runtime.values())} vs algorithms() {catalogue}"
    )


def test_catalogue_sizes():
    assert len(KEMS) == 25, f"{len(KEMS)} KEMs: {[k.name for k in KEMS]}"
    assert len(SIGS) == 45, f"{len(SIGS)} signature algorithms: {[s.name for s in SIGS]}"
    assert len({k.name for k in KEMS}) == len(KEMS), "duplicate KEM names"
    assert len({s.name for s in SIGS}) == len(SIGS), "duplicate signature algorithm names"
    assert isinstance(pqkit.__version__, str) and pqkit.__version__


def test_by_name_aliases():
    assert pqkit.kem.by_name("ML-KEM-768").name == "ML-KEM-768"
    assert pqkit.kem.by_name("Kyber768").name == "ML-KEM-768"
    assert pqkit.kem.by_name("mlkem768").name == "ML-KEM-768"
    assert pqkit.sig.by_name("Dilithium3").name == "ML-DSA-65"
    assert pqkit.sig.by_name("ml_dsa_65").name == "ML-DSA-65"
    assert pqkit.sig.by_name("SLH-DSA-SHA2-128s").name == "SLH-DSA-SHA2-128s"
    for alg in KEMS:
        assert pqkit.kem.by_name(alg.name).name == alg.name
    for alg in SIGS:
        assert pqkit.sig.by_name(alg.name).name == alg.name
    assert pqkit.kem.MLKEM768.name == "ML-KEM-768"
    assert pqkit.sig.MLDSA65.name == "ML-DSA-65"


# --- KEMs ------------------------------------------------------------------------------------


@pytest.mark.parametrize("alg", [pytest.param(a, id=a.name) for a in KEMS])
def test_kem_roundtrip(alg):
    dk = decapsulation_key(alg.name)
    assert dk.algorithm.name == alg.name
    ek = dk.public_key()
    assert ek.algorithm.name == alg.name

    ss, ct = ek.encapsulate()
    assert isinstance(ss, bytes) and isinstance(ct, bytes)
    assert len(ct) == alg.ciphertext_size, f"{alg.name}: ciphertext {len(ct)} bytes"
    assert len(ss) == alg.shared_secret_size, f"{alg.name}: shared secret {len(ss)} bytes"
    assert dk.decapsulate(ct) == ss, f"{alg.name}: decapsulated secret differs"
    ss_again, ct_again = ek.encapsulate()
    assert ct_again != ct, f"{alg.name}: two encapsulations gave the same ciphertext"
    assert dk.decapsulate(ct_again) == ss_again

    ek_bytes = ek.to_bytes()
    assert len(ek_bytes) == alg.encapsulation_key_size, (
        f"{alg.name}: encapsulation key {len(ek_bytes)} bytes, "
        f"expected {alg.encapsulation_key_size}"
    )
    ek2 = alg.encapsulation_key(ek_bytes)
    assert ek2.to_bytes() == ek_bytes
    ss2, ct2 = ek2.encapsulate()
    assert dk.decapsulate(ct2) == ss2, f"{alg.name}: key read from bytes does not agree"

    # The Kem-level functions, with bytes and with a key object.
    ss3, ct3 = alg.encapsulate(ek_bytes)
    assert alg.decapsulate(dk, ct3) == ss3
    ss4, ct4 = alg.encapsulate(ek)
    assert alg.decapsulate(dk, ct4) == ss4

    assert len(dk.to_bytes()) == alg.decapsulation_key_size, (
        f"{alg.name}: decapsulation key {len(dk.to_bytes())} bytes, "
        f"expected {alg.decapsulation_key_size}"
    )
    if alg.seed_size:
        assert dk.seed() is not None and len(dk.seed()) == alg.seed_size
    else:
        assert dk.seed() is None


@pytest.mark.parametrize("alg", [pytest.param(a, id=a.name) for a in KEMS])
def test_kem_expanded_decapsulation_key(alg):
    dk = decapsulation_key(alg.name)
    ss, ct = dk.public_key().encapsulate()
    try:
        again = alg.decapsulation_key(dk.to_bytes())
    except pqkit.Unsupported:
        # Only a KEM whose decapsulation key does not hold its encapsulation key.
        assert "McEliece" in alg.name, (
            f"{alg.name}: decapsulation_key(to_bytes()) raised Unsupported"
        )
        return
    assert again.decapsulate(ct) == ss
    assert again.public_key().to_bytes() == dk.public_key().to_bytes()
    assert again.to_bytes() == dk.to_bytes()
    assert again.seed() is None, "a key read from its expanded form has no seed"


@pytest.mark.parametrize("alg", [pytest.param(a, id=a.name) for a in KEMS])
def test_kem_pem_der(alg):
    dk = decapsulation_key(alg.name)
    ek = dk.public_key()
    ss, ct = ek.encapsulate()
    if alg.ephemeral:
        with pytest.raises(pqkit.Unsupported):
            dk.to_pem()
        with pytest.raises(pqkit.Unsupported):
            dk.to_der()
        return
    # A KEM without a seed form (Classic McEliece) writes its expanded key.
    form = "seed" if dk.seed() is not None else "expanded"
    pem = dk.to_pem(form)
    assert isinstance(pem, str)
    assert pem.startswith("-----BEGIN PRIVATE KEY-----"), pem[:40]
    for loaded in (pqkit.load_pem_private_key(pem), pqkit.load_pem_private_key(pem.encode())):
        assert isinstance(loaded, pqkit.kem.DecapsulationKey), type(loaded)
        assert loaded.algorithm.name == alg.name
        assert loaded.decapsulate(ct) == ss, f"{alg.name}: PEM-loaded key disagrees"
        assert loaded.public_key().to_bytes() == ek.to_bytes()
    der = dk.to_der(form)
    loaded = pqkit.load_der_private_key(der)
    assert isinstance(loaded, pqkit.kem.DecapsulationKey)
    assert loaded.decapsulate(ct) == ss
    assert loaded.to_der(form) == der, f"{alg.name}: PKCS#8 not reproduced byte for byte"

    pub_pem = ek.to_pem()
    assert pub_pem.startswith("-----BEGIN PUBLIC KEY-----"), pub_pem[:40]
    pub = pqkit.load_pem_public_key(pub_pem)
    assert isinstance(pub, pqkit.kem.EncapsulationKey), type(pub)
    assert pub.algorithm.name == alg.name
    assert pub.to_bytes() == ek.to_bytes()
    ss2, ct2 = pub.encapsulate()
    assert dk.decapsulate(ct2) == ss2
    pub_der = ek.to_der()
    assert pqkit.load_der_public_key(pub_der).to_bytes() == ek.to_bytes()
    assert pqkit.load_pem_public_key(pub_pem.encode()).to_der() == pub_der


@pytest.mark.parametrize(
    "alg", [pqkit.kem.MLKEM512, pqkit.kem.MLKEM768, pqkit.kem.MLKEM1024], ids=lambda a: a.name
)
def test_ml_kem_key_forms(alg):
    seed = bytes(range(64))
    dk = alg.from_seed(seed)
    assert dk.seed() == seed
    assert alg.from_seed(bytearray(seed)).to_bytes() == dk.to_bytes(), "same seed, same key"
    ss, ct = dk.public_key().encapsulate()
    for form in ("seed", "expanded", "both"):
        der = dk.to_der(form)
        loaded = pqkit.load_der_private_key(der)
        assert loaded.decapsulate(ct) == ss, f"{alg.name} {form}"
        assert loaded.to_bytes() == dk.to_bytes(), f"{alg.name} {form}"
        pem_loaded = pqkit.load_pem_private_key(dk.to_pem(form))
        assert pem_loaded.to_bytes() == dk.to_bytes(), f"{alg.name} {form} (PEM)"
        if form == "expanded":
            assert loaded.seed() is None, "a key read from its expanded form has no seed"
            with pytest.raises(pqkit.Unsupported):
                loaded.to_pem("seed")
            with pytest.raises(pqkit.Unsupported):
                loaded.to_der("both")
            assert loaded.to_der("expanded") == der
        else:
            assert loaded.seed() == seed, f"{alg.name} {form}"
    # RFC 9935 §6 seed form: SEQUENCE { 0, AlgorithmIdentifier, OCTET STRING { [0] d‖z } }.
    assert len(dk.to_der("seed")) == 86
    assert seed.hex() not in repr(dk) and seed.hex() not in str(dk), "a key is never printed"


# --- signatures ------------------------------------------------------------------------------


@pytest.mark.parametrize("alg", [pytest.param(a, id=a.name) for a in SIGS])
def test_sign_verify(alg):
    sk = signing_key(alg.name)
    assert sk.algorithm.name == alg.name
    vk = sk.public_key()
    assert vk.algorithm.name == alg.name
    msg = b"pqkit round trip: " + alg.name.encode()

    sig = sk.sign(msg)
    assert isinstance(sig, bytes)
    if _is_exact_size(alg):
        assert len(sig) == alg.signature_size, f"{alg.name}: signature {len(sig)} bytes"
    else:
        assert 0 < len(sig) <= alg.signature_size, (
            f"{alg.name}: signature {len(sig)} bytes, at most {alg.signature_size}"
        )
    assert vk.verify(sig, msg) is None

    with pytest.raises(pqkit.InvalidSignature):
        vk.verify(_flip(sig, len(sig) // 2), msg)
    with pytest.raises(pqkit.InvalidSignature):
        vk.verify(_flip(sig, 0, 7), msg)
    with pytest.raises(pqkit.InvalidSignature):
        vk.verify(sig, msg + b"!")
    with pytest.raises(pqkit.InvalidSignature):
        vk.verify(sig, b"another message")
    with pytest.raises(pqkit.InvalidSignature):
        vk.verify(sig[:-1], msg)
    with pytest.raises(pqkit.InvalidSignature):
        vk.verify(b"", msg)

    raw = vk.to_bytes()
    assert len(raw) == alg.verifying_key_size, (
        f"{alg.name}: verifying key {len(raw)} bytes, expected {alg.verifying_key_size}"
    )
    again = alg.verifying_key(raw)
    assert again.to_bytes() == raw
    again.verify(sig, msg)

    # Another key does not verify it.
    other = alg.generate() if not alg.name.startswith(("RSA", "MLDSA")) else None
    if other is not None:
        with pytest.raises(pqkit.InvalidSignature):
            other.public_key().verify(sig, msg)


@pytest.mark.parametrize("alg", [pytest.param(a, id=a.name) for a in SIGS])
def test_pkcs8_spki_pem(alg):
    sk = signing_key(alg.name)
    vk = sk.public_key()
    msg = b"reloaded " + alg.name.encode()

    pem = sk.to_pem()
    assert isinstance(pem, str)
    assert pem.startswith("-----BEGIN PRIVATE KEY-----"), pem[:40]
    loaded = pqkit.load_pem_private_key(pem)
    assert isinstance(loaded, pqkit.sig.SigningKey), type(loaded)
    assert loaded.public_key().to_bytes() == vk.to_bytes(), f"{alg.name}: PEM key differs"

    pub_pem = vk.to_pem()
    assert pub_pem.startswith("-----BEGIN PUBLIC KEY-----"), pub_pem[:40]
    pub = pqkit.load_pem_public_key(pub_pem)
    assert isinstance(pub, pqkit.sig.VerifyingKey), type(pub)
    assert pub.to_bytes() == vk.to_bytes()

    sig = loaded.sign(msg)
    if loaded.algorithm.name == alg.name:
        # Signed by the reloaded key, verified by the original public key and the reloaded
        # SPKI.
        vk.verify(sig, msg)
        assert pub.algorithm.name == alg.name
        pub.verify(sig, msg)
    else:
        # PKCS#8 and SPKI rsaEncryption do not say which padding: an RSA PKCS#1 v1.5 key reads
        # back as the RSA-PSS algorithm of its size. Nothing else may change algorithm.
        assert alg.name.startswith("RSA-PKCS1-"), (
            f"{alg.name} read back as {loaded.algorithm.name}"
        )
        assert loaded.algorithm.name == alg.name.replace("PKCS1", "PSS")
        loaded.public_key().verify(sig, msg)
        assert pub.algorithm.name in (alg.name, loaded.algorithm.name)
        if pub.algorithm.name == loaded.algorithm.name:
            pub.verify(sig, msg)

    der = sk.to_der()
    from_der = pqkit.load_der_private_key(der)
    assert from_der.public_key().to_bytes() == vk.to_bytes()
    assert pqkit.load_pem_private_key(pem.encode()).public_key().to_bytes() == vk.to_bytes()

    pub_der = vk.to_der()
    assert pqkit.load_der_public_key(pub_der).to_bytes() == vk.to_bytes()
    assert pqkit.load_pem_public_key(pub_pem.encode()).to_der() == pub_der


@pytest.mark.parametrize("alg", [pytest.param(a, id=a.name) for a in SIGS])
def test_context(alg):
    sk = signing_key(alg.name)
    vk = sk.public_key()
    msg = b"context binding"
    if not alg.has_context:
        with pytest.raises(pqkit.Unsupported):
            sk.sign(msg, b"ctx")
        # The empty context is no context.
        vk.verify(sk.sign(msg, b""), msg)
        return
    sig = sk.sign(msg, b"ctx-A")
    vk.verify(sig, msg, b"ctx-A")
    with pytest.raises(pqkit.InvalidSignature):
        vk.verify(sig, msg, b"ctx-B")
    with pytest.raises(pqkit.InvalidSignature):
        vk.verify(sig, msg)
    plain = sk.sign(msg)
    with pytest.raises(pqkit.InvalidSignature):
        vk.verify(plain, msg, b"ctx-A")
    with pytest.raises(ValueError):
        sk.sign(msg, bytes(256))
    with pytest.raises(ValueError):
        sk.sign(msg, context=bytes(256))


@pytest.mark.parametrize(
    "name", ["ML-DSA-65", "SLH-DSA-SHA2-128f", "MLDSA65-ECDSA-P256-SHA512"]
)
def test_longest_context(name):
    sk = signing_key(name)
    ctx = bytes(range(255))
    sig = sk.sign(b"m", ctx)
    sk.public_key().verify(sig, b"m", ctx)
    with pytest.raises(pqkit.InvalidSignature):
        sk.public_key().verify(sig, b"m", ctx[:-1])


@pytest.mark.parametrize(
    "alg", [pqkit.sig.MLDSA44, pqkit.sig.MLDSA65, pqkit.sig.MLDSA87], ids=lambda a: a.name
)
def test_ml_dsa_key_forms(alg):
    sk = alg.generate()
    vk = sk.public_key()
    seed = sk.seed()
    assert seed is not None and len(seed) == 32 == alg.seed_size
    assert alg.from_seed(seed).public_key().to_bytes() == vk.to_bytes(), "same ξ, same key"
    msg = b"three forms"
    det = sk.sign(msg, deterministic=True)
    assert sk.sign(msg, deterministic=True) == det, "deterministic signing repeats"
    for form in ("seed", "expanded", "both"):
        pem = sk.to_pem(form)
        der = sk.to_der(form)
        for loaded in (pqkit.load_pem_private_key(pem), pqkit.load_der_private_key(der)):
            assert isinstance(loaded, pqkit.sig.SigningKey)
            assert loaded.algorithm.name == alg.name
            assert loaded.public_key().to_bytes() == vk.to_bytes(), f"{alg.name} {form}"
            vk.verify(loaded.sign(msg), msg)
            assert loaded.sign(msg, deterministic=True) == det, (
                f"{alg.name} {form}: deterministic signature differs from the original key's"
            )
            if form == "expanded":
                assert loaded.seed() is None, "a key read from its expanded form has no seed"
                with pytest.raises(pqkit.Unsupported):
                    loaded.to_pem("seed")
                with pytest.raises(pqkit.Unsupported):
                    loaded.to_der("seed")
                with pytest.raises(pqkit.Unsupported):
                    loaded.to_pem("both")
                assert loaded.to_der("expanded") == der
            else:
                assert loaded.seed() == seed, f"{alg.name} {form}"
                assert loaded.to_der(form) == der
    # RFC 9881 §6 seed form: 54 bytes, as pyca/cryptography and OpenSSL write it.
    assert len(sk.to_der("seed")) == 54
    # expanded sk from its FIPS 204 encoding.
    expanded_der = sk.to_der("expanded")
    sk_bytes = expanded_der[-alg.signing_key_size:]
    assert alg.signing_key(sk_bytes).public_key().to_bytes() == vk.to_bytes()
    assert seed.hex() not in repr(sk) and seed.hex() not in str(sk), "a key is never printed"


@pytest.mark.parametrize(
    "alg", [pqkit.sig.MLDSA44, pqkit.sig.MLDSA65, pqkit.sig.MLDSA87], ids=lambda a: a.name
)
def test_hash_ml_dsa(alg):
    assert alg.has_prehash
    sk = signing_key(alg.name)
    vk = sk.public_key()
    msg = b"a long document " * 100
    digest = hashlib.sha512(msg).digest()
    sig = sk.sign_prehashed(digest, "SHA-512")
    assert len(sig) == alg.signature_size
    vk.verify_prehashed(sig, digest, "SHA-512")
    with pytest.raises(pqkit.InvalidSignature):
        vk.verify(sig, msg)
    with pytest.raises(pqkit.InvalidSignature):
        vk.verify(sig, digest)
    with pytest.raises(pqkit.InvalidSignature):
        vk.verify_prehashed(sig, digest, "SHA-512", b"ctx")
    with pytest.raises(pqkit.InvalidSignature):
        vk.verify_prehashed(sig, _flip(digest, 3), "SHA-512")
    # With a context, and another hash.
    sig_ctx = sk.sign_prehashed(digest, "SHA-512", b"ctx")
    vk.verify_prehashed(sig_ctx, digest, "SHA-512", b"ctx")
    d256 = hashlib.sha3_256(msg).digest()
    vk.verify_prehashed(sk.sign_prehashed(d256, "SHA3-256"), d256, "SHA3-256")
    with pytest.raises(pqkit.InvalidSignature):
        vk.verify_prehashed(sk.sign_prehashed(d256, "SHA3-256"), d256, "SHA-256")
    # A digest of the wrong length for its hash.
    with pytest.raises(ValueError):
        sk.sign_prehashed(digest[:32], "SHA-512")
    # A pure signature is not a HashML-DSA one.
    with pytest.raises(pqkit.InvalidSignature):
        vk.verify_prehashed(sk.sign(msg), digest, "SHA-512")


def test_hash_slh_dsa():
    sk = signing_key("SLH-DSA-SHA2-128f")
    vk = sk.public_key()
    digest = hashlib.sha256(b"document").digest()
    sig = sk.sign_prehashed(digest, "SHA-256")
    vk.verify_prehashed(sig, digest, "SHA-256")
    with pytest.raises(pqkit.InvalidSignature):
        vk.verify(sig, b"document")


@pytest.mark.parametrize(
    "alg", [pqkit.sig.MLDSA44, pqkit.sig.MLDSA65, pqkit.sig.MLDSA87], ids=lambda a: a.name
)
def test_external_mu(alg):
    assert alg.has_external_mu
    sk = signing_key(alg.name)
    vk = sk.public_key()
    msg, ctx = b"signed where the message is not", b"app"
    mu = vk.external_mu(msg, ctx)
    assert isinstance(mu, bytes) and len(mu) == 64
    # μ = SHAKE256(SHAKE256(pk, 64) ‖ 0 ‖ |ctx| ‖ ctx ‖ M, 64), computed here.
    tr = hashlib.shake_256(vk.to_bytes()).digest(64)
    here = hashlib.shake_256(tr + bytes([0, len(ctx)]) + ctx + msg).digest(64)
    assert mu == here, "external_mu differs from FIPS 204 Algorithm 7 line 6 computed here"
    sig = sk.sign_mu(mu)
    assert len(sig) == alg.signature_size
    vk.verify(sig, msg, ctx)
    vk.verify_mu(sig, mu)
    with pytest.raises(pqkit.InvalidSignature):
        vk.verify(sig, msg)
    with pytest.raises(pqkit.InvalidSignature):
        vk.verify_mu(sig, _flip(mu, 0))
    assert vk.external_mu(msg) == hashlib.shake_256(tr + b"\x00\x00" + msg).digest(64)
    assert sk.sign_mu(mu, deterministic=True) == sk.sign(msg, ctx, deterministic=True)
    with pytest.raises(ValueError):
        sk.sign_mu(mu[:63])


@pytest.mark.parametrize("name", ["Falcon-512", "Ed25519", "SLH-DSA-SHA2-128f"])
def test_external_mu_unsupported(name):
    sk = signing_key(name)
    assert not sk.algorithm.has_external_mu
    with pytest.raises(pqkit.Unsupported):
        sk.sign_mu(bytes(64))


@pytest.mark.parametrize("name", ["Falcon-512", "Ed25519", "MLDSA65-Ed25519-SHA512"])
def test_prehash_unsupported(name):
    sk = signing_key(name)
    assert not sk.algorithm.has_prehash
    with pytest.raises(pqkit.Unsupported):
        sk.sign_prehashed(hashlib.sha512(b"x").digest(), "SHA-512")


# --- bytes-like inputs -----------------------------------------------------------------------


def test_bytes_like_inputs_signatures():
    sk = signing_key("ML-DSA-65")
    vk = sk.public_key()
    msg = b"bytes-like"
    for data in (bytearray(msg), memoryview(msg), memoryview(b"xx" + msg)[2:]):
        sig = sk.sign(data)
        vk.verify(sig, msg)
        vk.verify(bytearray(sig), data)
        vk.verify(memoryview(sig), data)
    sig = sk.sign(msg, bytearray(b"ctx"))
    vk.verify(sig, msg, memoryview(b"ctx"))
    assert pqkit.sig.MLDSA65.verifying_key(bytearray(vk.to_bytes())).to_bytes() == vk.to_bytes()
    assert pqkit.sig.MLDSA65.from_seed(memoryview(sk.seed())).seed() == sk.seed()
    for bad in ("text", 123, None):
        with pytest.raises(TypeError):
            sk.sign(bad)
        with pytest.raises(TypeError):
            vk.verify(sig, bad)
    with pytest.raises(TypeError):
        vk.verify("signature", msg)
    with pytest.raises(TypeError):
        sk.sign(msg, "ctx")


def test_bytes_like_inputs_kem():
    dk = decapsulation_key("ML-KEM-768")
    ek = dk.public_key()
    alg = pqkit.kem.MLKEM768
    ek2 = alg.encapsulation_key(bytearray(ek.to_bytes()))
    ss, ct = ek2.encapsulate()
    assert dk.decapsulate(bytearray(ct)) == ss
    assert dk.decapsulate(memoryview(ct)) == ss
    assert alg.encapsulation_key(memoryview(ek.to_bytes())).to_bytes() == ek.to_bytes()
    for bad in ("text", 123, None):
        with pytest.raises(TypeError):
            dk.decapsulate(bad)
        with pytest.raises(TypeError):
            alg.encapsulation_key(bad)
    # A PEM is bytes or str; anything else is a TypeError.
    with pytest.raises(TypeError):
        pqkit.load_pem_private_key(123)
