"""Shared helpers of the pqkit Python tests.

The ``vectors`` fixture reads the known-answer files the Rust suites read (see
``crates/pqkit-core/tests/common/mod.rs``): ``$PQKIT_VECTORS``, else ``shared/vectors`` beside
the repository. A file stored gzipped (``.json.gz``) is read through ``gzip``; a plain name that
is missing falls back to its ``.gz`` twin. A missing file fails the test, naming its path: a
suite whose data went away must not pass by checking nothing.
"""

from __future__ import annotations

import gzip
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

#: crates/pqkit-py/tests
TESTS_DIR = Path(__file__).resolve().parent
#: The repository root: crates/pqkit-py/tests -> crates/pqkit-py -> crates -> root.
REPO_ROOT = TESTS_DIR.parents[2]


def vectors_dir() -> Path:
    """``$PQKIT_VECTORS``, else ``<repo>/../shared/vectors``."""
    env = os.environ.get("PQKIT_VECTORS")
    if env:
        return Path(env)
    return REPO_ROOT.parent / "shared" / "vectors"


@dataclass
class Case:
    """One ACVP test case: its group (without ``tests``), its inputs and its expected outputs,
    joined on (tgId, tcId)."""

    dir: str
    group: dict
    test: dict
    expected: dict
    expected_group: dict

    @property
    def id(self) -> str:
        return f"{self.dir} tgId {self.group.get('tgId')} tcId {self.test.get('tcId')}"

    def opt(self, key: str) -> str:
        """A group option as a string ('' when absent)."""
        value = self.group.get(key)
        return value if isinstance(value, str) else ""


def _id_of(value: Any, what: str) -> int:
    """A tgId or tcId: a number, or a number in a string."""
    try:
        return int(value)
    except (TypeError, ValueError):
        pytest.fail(f"bad {what}: {value!r}")


class Vectors:
    """Reader of the vectors directory (plain or gzipped files), with parsed JSON cached for
    the session."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._json: dict[str, Any] = {}

    def path(self, rel: str) -> Path:
        """The file ``<vectors>/<rel>``, or its ``.gz`` twin; fails the test naming the path
        when neither exists."""
        p = self.root / rel
        if p.is_file():
            return p
        if not rel.endswith(".gz"):
            gz = self.root / (rel + ".gz")
            if gz.is_file():
                return gz
        pytest.fail(
            f"vector file {p} (or its .gz twin) is missing; set PQKIT_VECTORS to the "
            f"directory holding acvp/ (looked in {self.root})",
            pytrace=False,
        )

    def read_bytes(self, rel: str) -> bytes:
        """The bytes of ``<vectors>/<rel>``, decompressed when stored gzipped."""
        p = self.path(rel)
        if p.name.endswith(".gz"):
            with gzip.open(p, "rb") as f:
                return f.read()
        return p.read_bytes()

    def json(self, rel: str) -> Any:
        """``<vectors>/<rel>`` parsed as JSON (cached)."""
        if rel not in self._json:
            try:
                self._json[rel] = json.loads(self.read_bytes(rel))
            except ValueError as e:
                pytest.fail(f"{self.path(rel)}: bad JSON: {e}", pytrace=False)
        return self._json[rel]

    def join(self, dir: str, inputs: str = "prompt.json",
             outputs: str = "expectedResults.json") -> list[Case]:
        """Joins ``<dir>/<inputs>`` and ``<dir>/<outputs>`` on (tgId, tcId). Every input case
        must have its expected result (mirrors ``common::join`` of the Rust tests)."""
        prompt = self.json(f"{dir}/{inputs}")
        expected = self.json(f"{dir}/{outputs}")
        results: dict[tuple[int, int], dict] = {}
        groups: dict[int, dict] = {}
        for group in expected["testGroups"]:
            tg = _id_of(group["tgId"], "tgId")
            groups[tg] = {k: v for k, v in group.items() if k != "tests"}
            for test in group["tests"]:
                results[(tg, _id_of(test["tcId"], "tcId"))] = test
        out: list[Case] = []
        for group in prompt["testGroups"]:
            tg = _id_of(group["tgId"], "tgId")
            head = {k: v for k, v in group.items() if k != "tests"}
            for test in group["tests"]:
                tc = _id_of(test["tcId"], "tcId")
                if (tg, tc) not in results:
                    pytest.fail(f"{dir}: no expected result for tgId {tg} tcId {tc}")
                out.append(Case(dir, head, test, results[(tg, tc)], groups.get(tg, {})))
        assert out, f"{dir}: no test cases"
        return out

    def acvp(self, dir: str) -> list[Case]:
        """The cases of ``acvp/<dir>``: prompt joined with expectedResults."""
        return self.join(f"acvp/{dir}")

    def prompt_groups(self, rel: str) -> list[dict]:
        """The test groups of a prompt alone (a set whose expected results are not
        published)."""
        groups = self.json(rel)["testGroups"]
        assert groups, f"{rel}: no test groups"
        return groups


_VECTORS: Vectors | None = None


@pytest.fixture(scope="session")
def vectors() -> Vectors:
    """The vectors directory reader (see the module docstring)."""
    global _VECTORS
    if _VECTORS is None:
        _VECTORS = Vectors(vectors_dir())
    return _VECTORS
