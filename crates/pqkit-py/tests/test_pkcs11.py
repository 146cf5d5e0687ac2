"""A key in a PKCS#11 token, by RFC 7512 URI: pqkit's own token (libpqkit_pkcs11.so), set up
with `pqkit token init` / `keygen` as a user does. tests/wheel.rs passes the two paths:
PQKIT_TEST_PQKIT (the pqkit binary) and PQKIT_TEST_PKCS11_MODULE (the module)."""

import os
import subprocess

import pytest

import pqkit


def _paths():
    pqkit_bin = os.environ.get("PQKIT_TEST_PQKIT")
    module = os.environ.get("PQKIT_TEST_PKCS11_MODULE")
    if not pqkit_bin or not os.path.exists(pqkit_bin):
        pytest.fail(f"PQKIT_TEST_PQKIT names no pqkit binary: {pqkit_bin!r} (cargo build -p pqkit-cli)")
    if not module or not os.path.exists(module):
        pytest.fail(f"PQKIT_TEST_PKCS11_MODULE names no module: {module!r} (cargo build -p pqkit-pkcs11)")
    return pqkit_bin, module


@pytest.fixture(scope="module")
def token(tmp_path_factory):
    """A pqkit token "py" with an ML-DSA-65 key "release" and an SLH-DSA key "slh"."""
    pqkit_bin, module = _paths()
    home = tmp_path_factory.mktemp("token")
    saved = {k: os.environ.get(k) for k in ("XDG_DATA_HOME", "XDG_CONFIG_HOME")}
    # The module reads its store's place from the environment when this process loads it.
    os.environ["XDG_DATA_HOME"] = str(home / "data")
    os.environ["XDG_CONFIG_HOME"] = str(home / "config")
    env = dict(os.environ, PQKIT_PKCS11_MODULE=module)
    pin = home / "pin.txt"
    pin.write_text("12345678\n")

    def run(*args):
        out = subprocess.run([pqkit_bin, *args], env=env, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, f"pqkit {' '.join(args)}: {out.stderr}"
        return out.stdout.strip()

    run("token", "init", "--label", "py", "--so-pin", "so-secret-1", "--pin", "12345678")
    uris = {}
    for alg, label in (("ML-DSA-65", "release"), ("SLH-DSA-SHA2-128f", "slh")):
        uris[alg] = run("token", "keygen", "--token", "py", "--alg", alg, "--label", label,
                        "--pin-source", f"file:{pin}")
    yield module, f"file:{pin}", uris
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.mark.parametrize("alg", ["ML-DSA-65", "SLH-DSA-SHA2-128f"])
def test_token_key_signs(token, alg):
    module, pin_source, uris = token
    key = pqkit.pkcs11.load_key(uris[alg], module=module, pin_source=pin_source)
    assert isinstance(key, pqkit.sig.SigningKey)
    assert key.algorithm == pqkit.sig.by_name(alg)
    signature = key.sign(b"release 1.2.3", b"ctx")
    key.public_key().verify(signature, b"release 1.2.3", b"ctx")
    with pytest.raises(pqkit.InvalidSignature):
        key.public_key().verify(signature, b"release 1.2.4", b"ctx")
    # The key never leaves the token.
    with pytest.raises(pqkit.Unsupported):
        key.to_pem()
    assert key.seed() is None


def test_token_key_issues_and_signs_cms(token):
    module, pin_source, uris = token
    key = pqkit.pkcs11.load_key(uris["ML-DSA-65"], module=module, pin_source=pin_source)
    root = pqkit.x509.self_signed(key, "CN=Token Root,O=pqkit")
    pqkit.x509.verify([root], [root])
    signer_key = pqkit.sig.MLDSA44.generate()
    cert = pqkit.x509.issue(signer_key.public_key(), root, key, profile="code-signing",
                            subject_name="CN=signer")
    signed = pqkit.cms.sign(b"image", [(cert, signer_key)])
    assert pqkit.cms.verify(signed, [root]).content == b"image"


def test_token_errors(token):
    module, pin_source, uris = token
    with pytest.raises(pqkit.TokenError, match="no-such-key|not found|no private key|matches"):
        pqkit.pkcs11.load_key("pkcs11:token=py;object=no-such-key", module=module,
                              pin_source=pin_source)
    with pytest.raises(pqkit.TokenError):
        pqkit.pkcs11.load_key("not a uri", module=module, pin_source=pin_source)
    with pytest.raises(pqkit.TokenError):
        pqkit.pkcs11.load_key(uris["ML-DSA-65"], module=module, pin_source="env:PQKIT_NO_SUCH_VAR")
