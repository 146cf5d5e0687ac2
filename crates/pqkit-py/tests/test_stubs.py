"""The type stubs (python/pqkit/*.pyi) are the API's reference: they must list exactly what
the installed package has — every module's public names, every class's public methods and
attributes — and the book's API page must be the one they generate."""

import ast
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import pqkit

STUBS = Path(__file__).resolve().parents[1] / "python" / "pqkit"
TOOL = Path(__file__).resolve().parents[1] / "tools" / "api_reference.py"
MODULES = ["__init__", "kem", "sig", "hbs", "x509", "cms", "pkcs11", "hazmat"]
# Names a stub declares for typing only.
TYPING_ONLY = {"Buffer", "KeyForm", "StrPath", "Profile", "Purpose", "Union", "Literal",
               "Sequence", "PathLike", "TracebackType", "datetime"}


def stub_tree(name):
    return ast.parse((STUBS / f"{name}.pyi").read_text())


def runtime(name):
    return pqkit if name == "__init__" else getattr(pqkit, name)


def stub_names(tree):
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            names.add(ast.unparse(node.target))
        elif isinstance(node, ast.ImportFrom) and node.module is None:
            names.update(a.asname or a.name for a in node.names)
    return names - TYPING_ONLY


@pytest.mark.parametrize("name", MODULES)
def test_module_names_match_stub(name):
    module = runtime(name)
    public = {n for n in dir(module) if not n.startswith("_")}
    if name == "__init__":
        public.add("__version__")
    else:
        public = {n for n in public if not inspect.ismodule(getattr(module, n))}
    declared = stub_names(stub_tree(name))
    if name == "__init__":
        declared.add("__version__")
    assert public - TYPING_ONLY == declared, (
        f"pqkit.{name}: only at run time: {sorted(public - declared - TYPING_ONLY)}; "
        f"only in the stub: {sorted(declared - public)}"
    )


@pytest.mark.parametrize("name", MODULES)
def test_class_members_match_stub(name):
    module = runtime(name)
    for node in stub_tree(name).body:
        if not isinstance(node, ast.ClassDef):
            continue
        cls = getattr(module, node.name)
        if issubclass(cls, BaseException):
            continue
        declared = {
            item.name if isinstance(item, ast.FunctionDef) else ast.unparse(item.target)
            for item in node.body
            if isinstance(item, (ast.FunctionDef, ast.AnnAssign))
        }
        declared = {n for n in declared if not n.startswith("__") or n in ("__enter__", "__exit__")}
        actual = {n for n in dir(cls) if not n.startswith("_")}
        actual |= {n for n in ("__enter__", "__exit__") if hasattr(cls, n)}
        assert actual == declared, (
            f"pqkit.{name}.{node.name}: only at run time: {sorted(actual - declared)}; "
            f"only in the stub: {sorted(declared - actual)}"
        )


def test_every_public_callable_has_a_docstring():
    for name in MODULES:
        module = runtime(name)
        for attr in dir(module):
            if attr.startswith("_"):
                continue
            obj = getattr(module, attr)
            if inspect.isclass(obj) or callable(obj):
                assert (obj.__doc__ or "").strip(), f"pqkit.{name}.{attr} has no docstring"
            if inspect.isclass(obj) and not issubclass(obj, BaseException):
                for member in dir(obj):
                    if not member.startswith("_"):
                        assert (getattr(obj, member).__doc__ or "").strip(), (
                            f"pqkit.{name}.{attr}.{member} has no docstring")


def test_book_api_page_is_generated_from_the_stubs():
    out = subprocess.run([sys.executable, str(TOOL), "--check"], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_help_of_stateful_key_reads_as_a_guide():
    import pydoc

    text = pydoc.render_doc(pqkit.hbs.StatefulKey, renderer=pydoc.plaintext)
    for words in ("state file", "ledger", "with pqkit.hbs.StatefulKey.open", "never",
                  "KeyExhausted", "StateError", "reserve", "remaining", "a copy"):
        assert words in text, f"help(pqkit.hbs.StatefulKey) does not say {words!r}"
