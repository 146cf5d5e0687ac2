"""Certificates (a root, an intermediate, a server leaf through a CSR), RFC 5280 path
validation and its refusals, and CMS SignedData signed and verified."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

import pqkit
import pqkit.cms
import pqkit.sig
import pqkit.x509

x509 = pqkit.x509


@pytest.fixture(scope="module")
def pki():
    root_key = pqkit.sig.MLDSA65.generate()
    root = x509.self_signed(root_key, "CN=Test Root,O=pqkit")
    inter_key = pqkit.sig.MLDSA65.generate()
    inter = x509.issue(inter_key.public_key(), root, root_key, profile="intermediate-ca",
                       subject_name="CN=Test Intermediate,O=pqkit")
    leaf_key = pqkit.sig.MLDSA44.generate()
    csr = x509.create_csr(leaf_key, "CN=leaf", dns_names=["example.test"])
    leaf = x509.issue(csr, inter, inter_key, profile="server")
    return {
        "root": root, "root_key": root_key,
        "inter": inter, "inter_key": inter_key,
        "leaf": leaf, "leaf_key": leaf_key, "csr": csr,
    }


def _same(a, b) -> bool:
    return a.to_der() == b.to_der()


# --- certificates ----------------------------------------------------------------------------


def test_certificates(pki):
    root, inter, leaf = pki["root"], pki["inter"], pki["leaf"]
    assert "CN=Test Root" in root.subject and "O=pqkit" in root.subject, root.subject
    assert root.issuer == root.subject, "a self-signed certificate is its own issuer"
    assert "CN=Test Intermediate" in inter.subject, inter.subject
    assert inter.issuer == root.subject
    assert "CN=leaf" in leaf.subject, leaf.subject
    assert leaf.issuer == inter.subject
    for cert in (root, inter, leaf):
        assert cert.not_before < cert.not_after
        lifetime = cert.not_after - cert.not_before
        assert timedelta(days=364) <= lifetime <= timedelta(days=367), lifetime
        int(cert.serial, 16)  # hexadecimal
        assert cert.to_pem().startswith("-----BEGIN CERTIFICATE-----")
        assert x509.load_der_certificate(cert.to_der()).to_der() == cert.to_der()
    assert len({root.serial, inter.serial, leaf.serial}) == 3
    # Signed by the intermediate's ML-DSA-65 key: the catalogue name (or the OID).
    assert leaf.signature_algorithm_oid == "2.16.840.1.101.3.4.3.18", (
        leaf.signature_algorithm_oid
    )
    assert leaf.public_key().to_bytes() == pki["leaf_key"].public_key().to_bytes()
    assert root.public_key().to_bytes() == pki["root_key"].public_key().to_bytes()


def test_csr(pki):
    csr = pki["csr"]
    assert "CN=leaf" in csr.subject
    assert csr.dns_names == ["example.test"]
    assert csr.ip_addresses == []
    assert csr.public_key().to_bytes() == pki["leaf_key"].public_key().to_bytes()
    for data in (csr.to_pem(), csr.to_pem().encode(), csr.to_der()):
        again = x509.load_csr(data)
        assert again.subject == csr.subject
        assert again.dns_names == ["example.test"]
    der = bytearray(csr.to_der())
    der[-1000] ^= 0x01  # inside the ML-DSA-44 signature (its last 2420 bytes), in z
    with pytest.raises(pqkit.InvalidSignature):
        x509.load_csr(bytes(der))
    with_ip = x509.create_csr(pki["leaf_key"], "CN=ip", ip_addresses=["192.0.2.7"])
    assert with_ip.ip_addresses == ["192.0.2.7"]


def test_load_pem_chain(pki):
    certs = [pki["leaf"], pki["inter"], pki["root"]]
    text = "".join(c.to_pem() for c in certs)
    for data in (text, text.encode()):
        chain = x509.load_pem_chain(data)
        assert len(chain) == 3
        assert all(_same(a, b) for a, b in zip(chain, certs)), "order or bytes changed"


# --- path validation -------------------------------------------------------------------------


def test_verify(pki):
    path = x509.verify([pki["leaf"], pki["inter"]], [pki["root"]], name="example.test",
                       purpose="serverAuth")
    assert len(path) == 3
    assert _same(path[0], pki["leaf"]) and _same(path[1], pki["inter"])
    assert _same(path[2], pki["root"])
    # DER bytes work as well as Certificate objects.
    path = x509.verify([pki["leaf"].to_der(), pki["inter"].to_der()], [pki["root"].to_der()],
                       name="example.test")
    assert len(path) == 3
    # A time inside the validity period, as a datetime and as a POSIX timestamp.
    soon = datetime.now(timezone.utc) + timedelta(days=30)
    assert len(x509.verify([pki["leaf"], pki["inter"]], [pki["root"]], at=soon)) == 3
    assert len(x509.verify([pki["leaf"], pki["inter"]], [pki["root"]],
                           at=soon.timestamp())) == 3


def test_verify_wrong_name(pki):
    with pytest.raises(pqkit.ValidationError) as info:
        x509.verify([pki["leaf"], pki["inter"]], [pki["root"]], name="other.test",
                    purpose="serverAuth")
    text = str(info.value)
    assert "other.test" in text, text
    assert "RFC 9525" in text or "subjectAltName" in text, f"the rule is not named: {text}"


def test_verify_expired(pki):
    later = datetime.now(timezone.utc) + timedelta(days=3650)
    with pytest.raises(pqkit.ValidationError) as info:
        x509.verify([pki["leaf"], pki["inter"]], [pki["root"]], name="example.test",
                    at=later)
    text = str(info.value)
    assert "expired" in text.lower(), text
    assert "RFC 5280" in text, text


def test_verify_wrong_purpose(pki):
    with pytest.raises(pqkit.ValidationError) as info:
        x509.verify([pki["leaf"], pki["inter"]], [pki["root"]], name="example.test",
                    purpose="clientAuth")
    text = str(info.value)
    assert "clientAuth" in text, text
    assert "extendedKeyUsage" in text or "RFC 5280" in text, text


def test_verify_missing_intermediate(pki):
    with pytest.raises(pqkit.ValidationError) as info:
        x509.verify([pki["leaf"]], [pki["root"]], name="example.test")
    text = str(info.value)
    assert "Test Intermediate" in text or "issuer" in text.lower(), text


def test_verify_untrusted_root(pki):
    other_key = pqkit.sig.MLDSA65.generate()
    other_root = x509.self_signed(other_key, "CN=Other Root,O=pqkit")
    with pytest.raises(pqkit.ValidationError):
        x509.verify([pki["leaf"], pki["inter"]], [other_root], name="example.test")
    # A root of the same name but another key: the signature does not verify.
    impostor = x509.self_signed(other_key, "CN=Test Root,O=pqkit")
    with pytest.raises(pqkit.ValidationError):
        x509.verify([pki["leaf"], pki["inter"]], [impostor], name="example.test")


# --- CMS -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def signer(pki):
    key = pqkit.sig.MLDSA65.generate()
    cert = x509.issue(key.public_key(), pki["inter"], pki["inter_key"], profile="code-signing",
                      subject_name="CN=Firmware Signer,O=pqkit")
    return cert, key


def test_cms_attached(pki, signer):
    signed = pqkit.cms.sign(b"firmware", [signer])
    assert isinstance(signed, bytes)
    result = pqkit.cms.verify(signed, [pki["root"]], certificates=[pki["inter"]])
    assert result.content == b"firmware"
    assert len(result.signers) == 1
    one = result.signers[0]
    assert "Firmware Signer" in one.signer, one.signer
    assert len(one.path) == 3
    assert _same(one.path[0], signer[0]) and _same(one.path[-1], pki["root"])
    assert one.signature_algorithm and one.digest_algorithm
    # The content given as well as attached is refused.
    with pytest.raises(pqkit.InvalidInput, match="do not give it separately"):
        pqkit.cms.verify(signed, [pki["root"]], certificates=[pki["inter"]],
                         content=b"firmware")
    # Without the intermediate there is no path; with another root neither.
    with pytest.raises(pqkit.ValidationError):
        pqkit.cms.verify(signed, [pki["root"]])
    other = x509.self_signed(pqkit.sig.MLDSA44.generate(), "CN=Other Root")
    with pytest.raises(pqkit.ValidationError):
        pqkit.cms.verify(signed, [other], certificates=[pki["inter"]])


def test_cms_detached(pki, signer):
    signed = pqkit.cms.sign(b"firmware", [signer], detached=True)
    with pytest.raises(pqkit.InvalidInput) as info:
        pqkit.cms.verify(signed, [pki["root"]], certificates=[pki["inter"]])
    assert "content" in str(info.value).lower() or "detached" in str(info.value).lower(), (
        str(info.value)
    )
    result = pqkit.cms.verify(signed, [pki["root"]], certificates=[pki["inter"]],
                              content=b"firmware")
    assert result.content is None
    assert len(result.signers) == 1
    with pytest.raises(pqkit.ValidationError):
        pqkit.cms.verify(signed, [pki["root"]], certificates=[pki["inter"]],
                         content=b"firmwarE")
    with pytest.raises(pqkit.ValidationError):
        pqkit.cms.verify(signed, [pki["root"]], certificates=[pki["inter"]],
                         content=bytearray(b"firmware!"))


def test_cms_without_signed_attributes_and_bundled_certificates(pki, signer):
    cert, key = signer
    signed = pqkit.cms.sign(memoryview(b"image"), [(cert.to_der(), key)],
                            signed_attributes=False, certificates=[pki["inter"]])
    result = pqkit.cms.verify(signed, [pki["root"].to_der()])
    assert result.content == b"image"


def test_cms_key_not_the_certificates(pki, signer):
    cert, _ = signer
    with pytest.raises(pqkit.InvalidInput):
        pqkit.cms.sign(b"firmware", [(cert, pki["leaf_key"])])


def test_cms_two_signers(pki, signer):
    ed_key = pqkit.sig.ED25519.generate()
    ed_cert = x509.issue(ed_key.public_key(), pki["inter"], pki["inter_key"],
                         profile="code-signing", subject_name="CN=Classical Signer,O=pqkit")
    signed = pqkit.cms.sign(b"both", [signer, (ed_cert, ed_key)])
    result = pqkit.cms.verify(signed, [pki["root"]], certificates=[pki["inter"]])
    assert result.content == b"both"
    names = sorted(s.signer for s in result.signers)
    assert len(names) == 2 and any("Classical Signer" in n for n in names), names


def test_cms_wrong_purpose(pki):
    """A server certificate is not a code-signing one."""
    signed = pqkit.cms.sign(b"firmware", [(pki["leaf"], pki["leaf_key"])])
    with pytest.raises(pqkit.ValidationError) as info:
        pqkit.cms.verify(signed, [pki["root"]], certificates=[pki["inter"]])
    assert "codeSigning" in str(info.value), str(info.value)
    result = pqkit.cms.verify(signed, [pki["root"]], certificates=[pki["inter"]],
                              purpose="serverAuth")
    assert result.content == b"firmware"


def test_cms_signer_expired(pki, signer):
    signed = pqkit.cms.sign(b"firmware", [signer])
    later = datetime.now(timezone.utc) + timedelta(days=3650)
    with pytest.raises(pqkit.ValidationError) as info:
        pqkit.cms.verify(signed, [pki["root"]], certificates=[pki["inter"]], at=later)
    assert "expired" in str(info.value).lower(), str(info.value)
