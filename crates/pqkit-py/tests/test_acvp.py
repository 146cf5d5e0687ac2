"""NIST ACVP known answers (ACVP-Server v1.1.0.43 under ``acvp/``, and the v1.1.0.35 SLH-DSA
sigVer set under ``acvp-legacy/``), through the Python API and ``pqkit.hazmat``.

The Rust suites (``crates/pqkit-core/tests/acvp*.rs``) run every case; this file runs a sample
of the generation groups (the first ``PQKIT_ACVP_SAMPLE`` cases of each group, 3 by default;
``PQKIT_ACVP_FULL=1`` runs all) and every verification and key-check case, which cost little.
What each case checks mirrors the Rust tests:

- ML-KEM keyGen: ``from_seed(d‖z)`` gives ``ek`` and ``dk``.
- ML-KEM encapDecap: ``hazmat.encapsulate(ek, m) == (k, c)``; decapsulation of valid and
  modified ciphertexts (implicit rejection) with the expanded key or, in the ``-tr1`` set, the
  seed; the FIPS 203 §7.2 / §7.3 key checks as ``InvalidKey``.
- ML-DSA keyGen: ``from_seed(ξ)`` gives ``pk``; the expanded ``sk`` gives the same ``pk``.
- ML-DSA sigGen (both sets): external/pure with ``hazmat.sign``, external/preHash with
  ``hazmat.sign_prehashed`` (every ``hashAlg``), internal with ``hazmat.sign_mu`` (``mu`` given,
  or μ computed here from ``message``); rnd = 0³² for deterministic groups. Every signature
  equals the expected bytes, verifies, and is reproduced by ``sign_mu`` over a μ computed here
  from an M′ formatted here.
- ML-DSA sigVer: the verdict equals ``testPassed``.
- SLH-DSA keyGen: ``from_seed(SK.seed‖SK.prf‖PK.seed)`` gives ``pk`` (and ``sk`` in PKCS#8).
- SLH-DSA legacy sigVer: ``hazmat.slh_dsa_verify_internal``; valid cases re-signed byte for byte
  with ``hazmat.slh_dsa_sign_internal``.
- SLH-DSA sigGen (prompt only; expected signatures are not published): length, R =
  PRF_msg(SK.prf, opt_rand, M′) computed here, verification through the API and over M′, a
  modified M′ refused, and the API signature equal to ``slh_dsa_sign_internal`` over M′.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections import Counter

import pytest

import pqkit
import pqkit.hazmat
import pqkit.kem
import pqkit.sig

FULL = os.environ.get("PQKIT_ACVP_FULL", "") == "1"
SAMPLE = int(os.environ.get("PQKIT_ACVP_SAMPLE", "3"))


def h(value) -> bytes:
    """ACVP hex (upper case) as bytes."""
    return bytes.fromhex(value)


def sample(cases):
    """The first SAMPLE cases of each test group (all with PQKIT_ACVP_FULL=1)."""
    if FULL:
        return list(cases)
    seen: Counter = Counter()
    out = []
    for c in cases:
        tg = c.group["tgId"]
        if seen[tg] < SAMPLE:
            out.append(c)
            seen[tg] += 1
    return out


def kem_of(group):
    return pqkit.kem.by_name(group["parameterSet"])


def sig_of(group):
    return pqkit.sig.by_name(group["parameterSet"])


# The pre-hash of HashML-DSA / HashSLH-DSA computed here: hashAlg -> (hashlib name, XOF length,
# last arc of the OID 2.16.840.1.101.3.4.2.x). SHAKE-128 gives 256 bits and SHAKE-256 512 bits
# (FIPS 204 §5.4, FIPS 205 §10.2.2).
PREHASH = {
    "SHA2-224": ("sha224", None, 4),
    "SHA2-256": ("sha256", None, 1),
    "SHA2-384": ("sha384", None, 2),
    "SHA2-512": ("sha512", None, 3),
    "SHA2-512/224": ("sha512_224", None, 5),
    "SHA2-512/256": ("sha512_256", None, 6),
    "SHA3-224": ("sha3_224", None, 7),
    "SHA3-256": ("sha3_256", None, 8),
    "SHA3-384": ("sha3_384", None, 9),
    "SHA3-512": ("sha3_512", None, 10),
    "SHAKE-128": ("shake_128", 32, 11),
    "SHAKE-256": ("shake_256", 64, 12),
}


def prehash(hash_alg: str, msg: bytes) -> tuple[bytes, bytes]:
    """(DER of the hash OID, PH(M)) for an ACVP hashAlg, computed with hashlib."""
    try:
        name, xof_len, arc = PREHASH[hash_alg]
    except KeyError:
        pytest.fail(f"unknown hashAlg {hash_alg!r}")
    try:
        hasher = hashlib.new(name, msg)
    except ValueError:
        # An OpenSSL without SHA-512/t: pyca/cryptography has it.
        from cryptography.hazmat.primitives import hashes

        algo = {"sha512_224": hashes.SHA512_224, "sha512_256": hashes.SHA512_256}[name]()
        ctx = hashes.Hash(algo)
        ctx.update(msg)
        digest = ctx.finalize()
    else:
        digest = hasher.digest(xof_len) if xof_len else hasher.digest()
    oid = bytes([0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, arc])
    return oid, digest


def api_hash_name(hash_alg: str) -> str:
    """The ACVP hashAlg in the spelling the stubs document ("SHA2-256" -> "SHA-256";
    "SHA3-256", "SHAKE-128" unchanged)."""
    return hash_alg.replace("SHA2-", "SHA-")


def shake256(data: bytes, n: int) -> bytes:
    return hashlib.shake_256(data).digest(n)


def ml_dsa_mu(pk: bytes, m_prime: bytes) -> bytes:
    """μ = H(H(pk, 64) ‖ M′, 64) (FIPS 204 Algorithm 7 lines 6-7), computed here."""
    return shake256(shake256(pk, 64) + m_prime, 64)


def ctx_prefix(ctx: bytes, domain: int) -> bytes:
    assert len(ctx) <= 255
    return bytes([domain, len(ctx)]) + ctx


# --- ML-KEM ----------------------------------------------------------------------------------


def test_ml_kem_keygen(vectors):
    cases = sample(vectors.acvp("ML-KEM-keyGen-FIPS203"))
    for c in cases:
        alg = kem_of(c.group)
        seed = h(c.test["d"]) + h(c.test["z"])
        dk = alg.from_seed(seed)
        assert dk.public_key().to_bytes() == h(c.expected["ek"]), f"{c.id}: ek"
        assert dk.to_bytes() == h(c.expected["dk"]), f"{c.id}: dk"
        assert dk.seed() == seed, f"{c.id}: seed"
    print(f"ML-KEM keyGen: {len(cases)} cases passed")
    assert len({c.group["parameterSet"] for c in cases}) == 3


@pytest.mark.parametrize("dir", ["ML-KEM-encapDecap-FIPS203", "ML-KEM-encapDecap-FIPS203-tr1"])
def test_ml_kem_encap_decap(vectors, dir):
    counts: Counter = Counter()
    all_cases = vectors.acvp(dir)
    encap = [c for c in all_cases if c.group["function"] == "encapsulation"]
    others = [c for c in all_cases if c.group["function"] != "encapsulation"]
    for c in sample(encap) + others:
        alg = kem_of(c.group)
        function = c.group["function"]
        if function == "encapsulation":
            ek = alg.encapsulation_key(h(c.test["ek"]))
            k, ct = pqkit.hazmat.encapsulate(ek, h(c.test["m"]))
            assert ct == h(c.expected["c"]), f"{c.id}: c"
            assert k == h(c.expected["k"]), f"{c.id}: k"
        elif function == "decapsulation":
            if c.group.get("keyFormat") == "seed":
                dk = alg.from_seed(h(c.test["d"]) + h(c.test["z"]))
            else:
                dk = alg.decapsulation_key(h(c.test["dk"]))
            # Valid and modified ciphertexts alike: a modified one gives the
            # implicit-rejection key.
            assert dk.decapsulate(h(c.test["c"])) == h(c.expected["k"]), f"{c.id}: k"
        elif function == "encapsulationKeyCheck":
            want = c.expected["testPassed"]
            try:
                alg.encapsulation_key(h(c.test["ek"]))
                ok = True
            except pqkit.InvalidKey:
                ok = False
            assert ok == want, f"{c.id}: encapsulation key check {ok}, testPassed {want}"
        elif function == "decapsulationKeyCheck":
            want = c.expected["testPassed"]
            try:
                alg.decapsulation_key(h(c.test["dk"]))
                ok = True
            except pqkit.InvalidKey:
                ok = False
            assert ok == want, f"{c.id}: decapsulation key check {ok}, testPassed {want}"
        else:
            pytest.fail(f"{c.id}: unknown function {function!r}")
        counts[function] += 1
    print(f"{dir}: {sum(counts.values())} cases passed {dict(counts)}")
    assert set(counts) == {
        "encapsulation", "decapsulation", "encapsulationKeyCheck", "decapsulationKeyCheck"
    }, counts


# --- ML-DSA ----------------------------------------------------------------------------------


def test_ml_dsa_keygen(vectors):
    cases = sample(vectors.acvp("ML-DSA-keyGen-FIPS204"))
    for c in cases:
        alg = sig_of(c.group)
        seed = h(c.test["seed"])
        pk, sk = h(c.expected["pk"]), h(c.expected["sk"])
        key = alg.from_seed(seed)
        assert key.public_key().to_bytes() == pk, f"{c.id}: pk"
        assert key.seed() == seed, f"{c.id}: seed"
        # The expanded key: its PKCS#8 (RFC 9881 §6 expandedKey) ends with sk, and sk read
        # back gives the same public key.
        assert key.to_der("expanded").endswith(sk), f"{c.id}: expanded sk"
        assert alg.signing_key(sk).public_key().to_bytes() == pk, f"{c.id}: pk from sk"
    print(f"ML-DSA keyGen: {len(cases)} cases passed")
    assert len({c.group["parameterSet"] for c in cases}) == 3


def _ml_dsa_mode(c) -> str:
    interface = c.opt("signatureInterface")
    if interface == "external":
        variant = c.opt("preHash")
    else:
        variant = f"externalMu={c.group.get('externalMu')}"
    det = "deterministic" if c.group["deterministic"] else "hedged"
    fmt = f"/keyFormat={c.opt('keyFormat')}" if c.opt("keyFormat") else ""
    return f"{interface}/{variant}/{det}{fmt}"


@pytest.mark.parametrize("dir", ["ML-DSA-sigGen-FIPS204", "ML-DSA-sigGen-FIPS204-tr1"])
def test_ml_dsa_siggen(vectors, dir):
    per_mode: Counter = Counter()
    hashes: Counter = Counter()
    for c in sample(vectors.acvp(dir)):
        cid = f"{c.id} ({_ml_dsa_mode(c)})"
        alg = sig_of(c.group)
        if "seed" in c.test:
            assert c.opt("keyFormat") == "seed", cid
            key = alg.from_seed(h(c.test["seed"]))
        else:
            assert c.opt("keyFormat") in ("", "expanded"), cid
            key = alg.signing_key(h(c.test["sk"]))
        vk = key.public_key()
        pk = vk.to_bytes()
        deterministic = c.group["deterministic"]
        assert deterministic == ("rnd" not in c.test), f"{cid}: deterministic flag and rnd"
        rnd = bytes(32) if deterministic else h(c.test["rnd"])
        want = h(c.expected["signature"])

        interface = c.opt("signatureInterface")
        if interface == "external":
            msg, ctx = h(c.test["message"]), h(c.test["context"])
            if c.opt("preHash") == "pure":
                sig = pqkit.hazmat.sign(key, msg, ctx, randomness=rnd)
                vk.verify(sig, msg, ctx)
                m_prime = ctx_prefix(ctx, 0) + msg
                assert vk.external_mu(msg, ctx) == ml_dsa_mu(pk, m_prime), f"{cid}: external_mu"
                if deterministic:
                    assert key.sign(msg, ctx, deterministic=True) == want, (
                        f"{cid}: sign(deterministic=True) differs from the expected bytes"
                    )
            elif c.opt("preHash") == "preHash":
                hash_alg = c.test["hashAlg"]
                hashes[hash_alg] += 1
                name = api_hash_name(hash_alg)
                oid, digest = prehash(hash_alg, msg)
                sig = pqkit.hazmat.sign_prehashed(key, digest, name, ctx, randomness=rnd)
                vk.verify_prehashed(sig, digest, name, ctx)
                m_prime = ctx_prefix(ctx, 1) + oid + digest
                if deterministic:
                    assert key.sign_prehashed(digest, name, ctx, deterministic=True) == want, (
                        f"{cid}: sign_prehashed(deterministic=True) differs"
                    )
            else:
                pytest.fail(f"{cid}: unknown preHash {c.opt('preHash')!r}")
            # The same signature from μ over the M′ formatted here.
            again = pqkit.hazmat.sign_mu(key, ml_dsa_mu(pk, m_prime), randomness=rnd)
            assert again == want, f"{cid}: sign_mu over the M′ formatted here differs"
        elif interface == "internal":
            if c.group["externalMu"]:
                mu = h(c.test["mu"])
            else:
                mu = ml_dsa_mu(pk, h(c.test["message"]))
            sig = pqkit.hazmat.sign_mu(key, mu, randomness=rnd)
            vk.verify_mu(sig, mu)
            if deterministic:
                assert key.sign_mu(mu, deterministic=True) == want, f"{cid}: sign_mu det"
        else:
            pytest.fail(f"{cid}: unknown signatureInterface {interface!r}")
        assert len(sig) == alg.signature_size, f"{cid}: length"
        assert sig == want, f"{cid}: signature differs from the expected bytes"
        per_mode[_ml_dsa_mode(c)] += 1
    print(f"{dir}: {sum(per_mode.values())} signatures equal the expected bytes")
    for mode, n in sorted(per_mode.items()):
        print(f"  {mode}: {n}")
    print(f"  hashAlg: {dict(sorted(hashes.items()))}")
    # Every mode of the file ran: 8 (interfaces × variants × deterministic/hedged), × 2 key
    # formats in -tr1.
    assert len(per_mode) == (16 if dir.endswith("-tr1") else 8), sorted(per_mode)


def test_ml_dsa_sigver(vectors):
    dir = "ML-DSA-sigVer-FIPS204"
    per_mode: Counter = Counter()
    for c in vectors.acvp(dir):
        interface = c.opt("signatureInterface")
        variant = c.opt("preHash") if interface == "external" else (
            f"externalMu={c.group.get('externalMu')}")
        cid = f"{c.id} ({interface}/{variant})"
        alg = sig_of(c.group)
        want = c.expected["testPassed"]
        assert isinstance(want, bool), cid
        pk, sig = h(c.test["pk"]), h(c.test["signature"])
        try:
            vk = alg.verifying_key(pk)
            if interface == "external":
                msg, ctx = h(c.test["message"]), h(c.test["context"])
                if c.opt("preHash") == "pure":
                    vk.verify(sig, msg, ctx)
                    m_prime = ctx_prefix(ctx, 0) + msg
                else:
                    hash_alg = c.test["hashAlg"]
                    oid, digest = prehash(hash_alg, msg)
                    vk.verify_prehashed(sig, digest, api_hash_name(hash_alg), ctx)
                    m_prime = ctx_prefix(ctx, 1) + oid + digest
                # A valid signature also verifies against μ over the M′ formatted here.
                vk.verify_mu(sig, ml_dsa_mu(pk, m_prime))
            elif interface == "internal":
                if c.group["externalMu"]:
                    mu = h(c.test["mu"])
                else:
                    mu = ml_dsa_mu(pk, h(c.test["message"]))
                vk.verify_mu(sig, mu)
            else:
                pytest.fail(f"{cid}: unknown signatureInterface {interface!r}")
            ok = True
        except pqkit.InvalidSignature:
            ok = False
        except pqkit.InvalidKey:
            assert not want, f"{cid}: a valid case's key was refused"
            ok = False
        assert ok == want, f"{cid}: verified {ok}, testPassed {want}"
        per_mode[(f"{interface}/{variant}", want)] += 1
    print(f"{dir}: {sum(per_mode.values())} cases: {dict(sorted(per_mode.items()))}")
    assert sum(per_mode.values()) == 180
    # Both verdicts in each of the four modes.
    assert len(per_mode) == 8, per_mode


# --- SLH-DSA ---------------------------------------------------------------------------------


def test_slh_dsa_keygen(vectors):
    cases = sample(vectors.acvp("SLH-DSA-keyGen-FIPS205"))
    for c in cases:
        alg = sig_of(c.group)
        seed = h(c.test["skSeed"]) + h(c.test["skPrf"]) + h(c.test["pkSeed"])
        pk, sk = h(c.expected["pk"]), h(c.expected["sk"])
        key = alg.from_seed(seed)
        assert key.public_key().to_bytes() == pk, f"{c.id}: pk"
        # RFC 9909 PKCS#8: the privateKey OCTET STRING is SK.seed‖SK.prf‖PK.seed‖PK.root.
        assert key.to_der().endswith(sk), f"{c.id}: sk in PKCS#8"
        assert alg.signing_key(sk).public_key().to_bytes() == pk, f"{c.id}: pk from sk"
    print(f"SLH-DSA keyGen: {len(cases)} cases passed")
    assert len({c.group["parameterSet"] for c in cases}) == 12


def test_slh_dsa_legacy_sigver_and_resign(vectors):
    dir = "acvp-legacy/v1.1.0.35/SLH-DSA-sigVer-FIPS205"
    cases = vectors.join(dir, "internalProjection.json", "expectedResults.json")
    accepted = rejected = resigned = 0
    resigned_groups = set()
    for c in cases:
        cid = f"{c.id} ({c.test.get('reason')})"
        alg = sig_of(c.group)
        want = c.expected["testPassed"]
        assert c.test["testPassed"] == want, cid
        pk, sk = h(c.test["pk"]), h(c.test["sk"])
        msg, sig = h(c.test["message"]), h(c.test["signature"])
        if want:
            pqkit.hazmat.slh_dsa_verify_internal(alg, pk, msg, sig)
            accepted += 1
            assert alg.signing_key(sk).public_key().to_bytes() == pk, cid
            # The valid cases are sigGen known answers too (one per group: "s" sets are slow).
            if FULL or c.group["tgId"] not in resigned_groups:
                addrnd = h(c.test["additionalRandomness"])
                again = pqkit.hazmat.slh_dsa_sign_internal(alg, sk, msg, addrnd)
                assert again == sig, f"{cid}: re-signed bytes differ"
                resigned_groups.add(c.group["tgId"])
                resigned += 1
        else:
            with pytest.raises(pqkit.InvalidSignature):
                pqkit.hazmat.slh_dsa_verify_internal(alg, pk, msg, sig)
            rejected += 1
    print(f"SLH-DSA legacy sigVer: {accepted} accepted, {rejected} rejected, "
          f"{resigned} valid cases re-signed byte for byte")
    assert (accepted, rejected) == (15, 30)
    assert resigned == (15 if FULL else 5)


def prf_msg(alg, sk_prf: bytes, opt_rand: bytes, m_prime: bytes) -> bytes:
    """PRF_msg(SK.prf, opt_rand, M′), n bytes, computed here: SHAKE256(SK.prf ‖ opt_rand ‖ M′)
    for the SHAKE sets (FIPS 205 §11.1); Trunc_n(HMAC-SHA-256(SK.prf, opt_rand ‖ M′)) for SHA2
    category 1 and HMAC-SHA-512 for categories 3 and 5 (§11.2)."""
    n = alg.verifying_key_size // 2
    if "SHAKE" in alg.name:
        return shake256(sk_prf + opt_rand + m_prime, n)
    digest = hashlib.sha256 if n == 16 else hashlib.sha512
    return hmac.new(sk_prf, opt_rand + m_prime, digest).digest()[:n]


SLH_SMALL_SETS = sorted(
    f"SLH-DSA-{h_}-{b}s" for h_ in ("SHA2", "SHAKE") for b in ("128", "192", "256")
)
SLH_MODES = [
    ("external", "pure", True), ("external", "pure", False),
    ("external", "preHash", True), ("external", "preHash", False),
    ("internal", "", True), ("internal", "", False),
]


def test_slh_dsa_siggen(vectors):
    """The first case of every group of the "f" sets; the "s" sets (slow to sign) one group
    per mode, rotating over the six sets."""
    groups = vectors.prompt_groups("acvp/SLH-DSA-sigGen-FIPS205/prompt.json")
    per_mode: Counter = Counter()
    hashes: Counter = Counter()
    sets = set()
    for group in groups:
        name = group["parameterSet"]
        interface = group["signatureInterface"]
        prehash_mode = group.get("preHash", "")
        det = group["deterministic"]
        mode = SLH_MODES.index((interface, prehash_mode, det))
        if name.endswith("s") and not FULL and SLH_SMALL_SETS.index(name) != mode:
            continue
        tests = group["tests"] if FULL else group["tests"][:1]
        alg = pqkit.sig.by_name(name)
        n = alg.verifying_key_size // 2
        for t in tests:
            cid = f"SLH-DSA-sigGen tgId {group['tgId']} tcId {t['tcId']} {name}"
            sk = h(t["sk"])
            assert len(sk) == 4 * n, cid
            sk_prf, pk_seed, pk = sk[n:2 * n], sk[2 * n:3 * n], sk[2 * n:]
            addrnd = None if det else h(t["additionalRandomness"])
            assert det == ("additionalRandomness" not in t), f"{cid}: deterministic and addrnd"
            opt_rand = pk_seed if addrnd is None else addrnd
            msg = h(t["message"])
            if interface == "external":
                key = alg.signing_key(sk)
                vk = key.public_key()
                assert vk.to_bytes() == pk, cid
                ctx = h(t["context"])
                if prehash_mode == "pure":
                    m_prime = ctx_prefix(ctx, 0) + msg
                    if det:
                        sig = key.sign(msg, ctx, deterministic=True)
                    else:
                        sig = pqkit.hazmat.sign(key, msg, ctx, randomness=addrnd)
                    vk.verify(sig, msg, ctx)
                else:
                    hash_alg = t["hashAlg"]
                    hashes[hash_alg] += 1
                    hname = api_hash_name(hash_alg)
                    oid, digest = prehash(hash_alg, msg)
                    m_prime = ctx_prefix(ctx, 1) + oid + digest
                    if det:
                        sig = key.sign_prehashed(digest, hname, ctx, deterministic=True)
                    else:
                        sig = pqkit.hazmat.sign_prehashed(key, digest, hname, ctx,
                                                          randomness=addrnd)
                    vk.verify_prehashed(sig, digest, hname, ctx)
            else:
                assert "context" not in t, f"{cid}: internal with a context"
                m_prime = msg
                sig = pqkit.hazmat.slh_dsa_sign_internal(alg, sk, msg, addrnd)
            assert len(sig) == alg.signature_size, f"{cid}: length"
            assert sig[:n] == prf_msg(alg, sk_prf, opt_rand, m_prime), (
                f"{cid}: R differs from PRF_msg(SK.prf, opt_rand, M′) computed here"
            )
            pqkit.hazmat.slh_dsa_verify_internal(alg, pk, m_prime, sig)
            modified = m_prime[:-1] + bytes([m_prime[-1] ^ 1])
            with pytest.raises(pqkit.InvalidSignature):
                pqkit.hazmat.slh_dsa_verify_internal(alg, pk, modified, sig)
            if interface == "external":
                again = pqkit.hazmat.slh_dsa_sign_internal(alg, sk, m_prime, addrnd)
                assert again == sig, f"{cid}: API signature differs from sign_internal over M′"
            per_mode[(interface, prehash_mode, det)] += 1
            sets.add(name)
    print(f"SLH-DSA sigGen: {sum(per_mode.values())} signatures checked over {len(sets)} sets")
    for mode, count in sorted(per_mode.items()):
        print(f"  {mode}: {count}")
    print(f"  hashAlg: {dict(sorted(hashes.items()))}")
    assert len(sets) == 12, sorted(sets)
    assert set(per_mode) == set(SLH_MODES), per_mode
