#!/usr/bin/env python3
"""Writes the book's Python API reference (docs/src/guide/python-api.md) from the type stubs
(crates/pqkit-py/python/pqkit/*.pyi): every class, method, function and constant with its
signature and docstring. `--check` exits 1 when the page differs from what the stubs give
(tests/test_stubs.py runs it)."""

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
STUBS = ROOT / "crates/pqkit-py/python/pqkit"
PAGE = ROOT / "docs/src/guide/python-api.md"
MODULES = ["__init__", "kem", "sig", "hbs", "x509", "cms", "pkcs11", "hazmat"]


def signature(fn: ast.FunctionDef) -> str:
    args = ast.unparse(fn.args)
    returns = f" -> {ast.unparse(fn.returns)}" if fn.returns else ""
    return f"{fn.name}({args}){returns}"


def doc(node) -> str:
    text = ast.get_docstring(node) or ""
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


def render() -> str:
    out = [
        "# Python API reference",
        "",
        "Generated from the type stubs (`crates/pqkit-py/python/pqkit/*.pyi`) by",
        "`python3 crates/pqkit-py/tools/api_reference.py`; the test suite checks that this page",
        "matches them. The [Python guide](python.md) is the tour.",
        "",
    ]
    for name in MODULES:
        tree = ast.parse((STUBS / f"{name}.pyi").read_text())
        module = "pqkit" if name == "__init__" else f"pqkit.{name}"
        out += [f"## `{module}`", "", doc(tree), ""]
        constants = []
        body = tree.body
        for i, node in enumerate(body):
            if isinstance(node, ast.ClassDef):
                bases = ", ".join(ast.unparse(b) for b in node.bases)
                out += [f"### class `{module}.{node.name}`" + (f"({bases})" if bases else ""), ""]
                if doc(node):
                    out += [doc(node), ""]
                for j, item in enumerate(node.body):
                    if isinstance(item, ast.FunctionDef) and not (
                        item.name.startswith("__") and item.name not in ("__enter__", "__exit__")
                    ):
                        is_property = any(ast.unparse(d) == "property" for d in item.decorator_list)
                        shown = (f"{item.name}: {ast.unparse(item.returns)}" if is_property
                                 else signature(item))
                        out.append(f"- `{shown}`" + (f" — {doc(item)}" if doc(item) else ""))
                    elif isinstance(item, ast.AnnAssign):
                        note = ""
                        nxt = node.body[j + 1] if j + 1 < len(node.body) else None
                        if isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant):
                            note = " — " + " ".join(str(nxt.value.value).split())
                        out.append(f"- `{ast.unparse(item.target)}: {ast.unparse(item.annotation)}`{note}")
                if out[-1]:
                    out.append("")
            elif isinstance(node, ast.FunctionDef):
                out += [f"### `{module}.{signature(node)}`", ""]
                if doc(node):
                    out += [doc(node), ""]
            elif isinstance(node, ast.AnnAssign) and ast.unparse(node.annotation) in ("Kem", "SignatureAlgorithm"):
                nxt = body[i + 1] if i + 1 < len(body) else None
                label = str(nxt.value.value) if isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant) else ""
                constants.append(f"`{ast.unparse(node.target)}` ({label.rstrip('.')})")
        if constants:
            out += [f"### Constants ({len(constants)})", "", ", ".join(constants) + ".", ""]
    return "\n".join(out).rstrip() + "\n"


def main() -> int:
    page = render()
    if "--check" in sys.argv[1:]:
        if not PAGE.exists() or PAGE.read_text() != page:
            print(f"{PAGE}: out of date; run python3 crates/pqkit-py/tools/api_reference.py")
            return 1
        return 0
    PAGE.write_text(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
