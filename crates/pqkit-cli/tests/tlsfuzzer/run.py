#!/usr/bin/env python3
"""Run tlsfuzzer's TLS 1.3 scripts against `pqkit server` and compare with expectations.

    python3 run.py --pqkit target/debug/pqkit --tlsfuzzer ../shared/peers/tlsfuzzer \
        --expect crates/pqkit-cli/tests/tlsfuzzer/expected.toml [--only ID|SCRIPT ...] [--update]

The expectations file (TOML) lists the PKIs, the server configurations, every script run (its
server, arguments and timeout, or `skip` with the reason) and each run's expected failures with a
category and a one-line reason. This driver creates the PKIs with `pqkit pki init` in a temporary
directory, starts one `pqkit server` per configuration on a free 127.0.0.1 port, runs the scripts
(the runs of one server one after another, so that one script's connections do not race
another's; different servers in parallel, --jobs at once), parses the failing test names, and prints a summary.

Exit status: 0 when every failure is expected and every expected failure that ran still fails;
1 when a failure is not expected, an expected failure now passes (stale entry), a failure's error
no longer contains the expected `error` text, or a script timed out or crashed; 2 on a setup error.

--update rewrites the expectations file from this run: entries that still fail keep their category
and reason, entries that ran and passed are dropped, new failures are added as "unclassified" with
reason "TODO", entries of tests that did not run (sampled with -n) and `flaky` ones are kept.

Needs Python >= 3.11 (tomllib) and, for tlsfuzzer, tlslite-ng 0.9.0b2, ecdsa, kyber-py and
dilithium-py (pip install tlslite-ng==0.9.0b2 ecdsa kyber-py dilithium-py).
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import dataclasses
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from pathlib import Path

CATEGORIES = ("feature-not-offered", "script-expectation", "rustls", "pqkit-defect", "unclassified")
LISTENING = re.compile(r"pqkit server listening on ([0-9.]+):(\d+)")
# A test starts with "NAME ..." or, in the scripts that repeat probes, '"NAME" repeat N...'.
TEST_START = re.compile(r'^(?:"(?P<rep>.*)" repeat \d+\.\.\.|(?P<name>\S.*) \.\.\.)$')
CARET_LINE = re.compile(r"^\s*[\^~]+\s*$")
PY_MODULES = ("tlslite", "ecdsa", "kyber_py", "dilithium_py")


# ---------------------------------------------------------------------------------------------
# tlsfuzzer output


@dataclasses.dataclass
class ScriptResult:
    ran: list[str]  # test names in the order they started (with repeats)
    failed: list[str]  # unique names from the FAILED: summary
    errors: dict[str, str]  # name -> exception text of its (first) failure
    total: int | None
    passed: int | None


def parse_output(text: str) -> ScriptResult:
    """Parses the output of a tlsfuzzer script (any of the TLS 1.3 ones)."""
    counts = {}
    for key in ("TOTAL", "PASS", "FAIL"):
        m = re.search(r"^%s: (\d+)$" % key, text, re.M)
        counts[key] = int(m.group(1)) if m else None
    failed: list[str] = []
    m = re.search(r"^FAILED:\n((?:\t.*(?:\n|$))+)", text, re.M)
    if m:
        for line in m.group(1).splitlines():
            line = line.strip()
            try:
                name = ast.literal_eval(line)
            except (ValueError, SyntaxError):
                name = line
            if name not in failed:
                failed.append(name)
    ran: list[str] = []
    errors: dict[str, str] = {}
    lines = text.splitlines()
    current = None
    i = 0
    while i < len(lines):
        m = TEST_START.match(lines[i])
        if m:
            current = m.group("rep") if m.group("rep") is not None else m.group("name")
            ran.append(current)
        elif lines[i] == "Error while processing" and current is not None:
            j = i + 1
            block = []
            while j < len(lines) and lines[j].strip():
                block.append(lines[j])
                j += 1
            errors.setdefault(current, exception_text(block))
            i = j
            continue
        i += 1
    return ScriptResult(ran, failed, errors, counts["TOTAL"], counts["PASS"])


def exception_text(block: list[str]) -> str:
    """The final exception of a traceback block, on one line."""
    last_file = max((n for n, line in enumerate(block) if line.startswith("  File ")), default=-1)
    if last_file < 0:
        msg = block
    else:
        msg = [b for b in block[last_file + 2 :] if b.strip() and not CARET_LINE.match(b)]
    return " | ".join(s.strip() for s in msg)[:300] or "?"


# ---------------------------------------------------------------------------------------------
# expectations


class ExpectError(Exception):
    pass


def load_expectations(path: Path) -> dict:
    with open(path, "rb") as f:
        data = tomllib.load(f)
    data.setdefault("vars", {})
    data.setdefault("defaults", {})
    data.setdefault("pki", {})
    data.setdefault("server", {})
    data.setdefault("run", [])
    seen = set()
    for run in data["run"]:
        for key in ("id", "script"):
            if key not in run:
                raise ExpectError(f"a [[run]] has no {key}: {run}")
        if run["id"] in seen:
            raise ExpectError(f"duplicate run id {run['id']}")
        seen.add(run["id"])
        if "skip" not in run and run.get("server") not in data["server"]:
            raise ExpectError(f"run {run['id']}: unknown server {run.get('server')!r}")
        for x in run.get("xfail", []):
            if "name" not in x and "regex" not in x:
                raise ExpectError(f"run {run['id']}: xfail entry without name or regex: {x}")
            if x.get("category") not in CATEGORIES:
                raise ExpectError(f"run {run['id']}: bad category in {x}")
    for name, server in data["server"].items():
        if server.get("pki") not in data["pki"]:
            raise ExpectError(f"server {name}: unknown pki {server.get('pki')!r}")
    return data


def toml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, str):
        return toml_str(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    raise TypeError(v)


def write_expectations(path: Path, data: dict, header: str) -> None:
    out = [header.rstrip("\n"), ""]
    for table in ("vars", "defaults"):
        if data.get(table):
            out.append(f"[{table}]")
            out += [f"{k} = {toml_value(v)}" for k, v in data[table].items()]
            out.append("")
    for table in ("pki", "server"):
        for name, body in data[table].items():
            out.append(f"[{table}.{toml_str(name) if not re.match(r'^[A-Za-z0-9_-]+$', name) else name}]")
            out += [f"{k} = {toml_value(v)}" for k, v in body.items()]
            out.append("")
    for run in data["run"]:
        out.append("[[run]]")
        for k, v in run.items():
            if k != "xfail":
                out.append(f"{k} = {toml_value(v)}")
        for x in run.get("xfail", []):
            out.append("[[run.xfail]]")
            out += [f"{k} = {toml_value(v)}" for k, v in x.items()]
        out.append("")
    path.write_text("\n".join(out))


def leading_comments(path: Path) -> str:
    lines = []
    for line in path.read_text().splitlines():
        if line.startswith("#") or not line.strip():
            lines.append(line)
        else:
            break
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# comparison


@dataclasses.dataclass
class Verdict:
    run_id: str
    server: str
    seconds: float
    result: ScriptResult | None
    problem: str | None = None  # timeout / crash / server died
    unexpected: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    changed: list[tuple[str, str, str]] = dataclasses.field(default_factory=list)
    stale: list[str] = dataclasses.field(default_factory=list)
    expected: int = 0

    @property
    def ok(self) -> bool:
        return not (self.problem or self.unexpected or self.changed or self.stale)


def entry_matches(entry: dict, name: str) -> bool:
    if "name" in entry:
        return entry["name"] == name
    return re.search(entry["regex"], name) is not None


def compare(verdict: Verdict, xfails: list[dict]) -> None:
    res = verdict.result
    ran = set(res.ran)
    failed = set(res.failed)
    for name in res.failed:
        entry = next((x for x in xfails if entry_matches(x, name)), None)
        err = res.errors.get(name, "?")
        if entry is None:
            verdict.unexpected.append((name, err))
            continue
        verdict.expected += 1
        if entry.get("error") and entry["error"] not in err:
            verdict.changed.append((name, entry["error"], err))
    for x in xfails:
        if x.get("flaky"):
            continue  # may pass or fail
        if "name" in x:
            if x["name"] in ran and x["name"] not in failed:
                verdict.stale.append(x["name"])
        else:
            matching = [n for n in ran if entry_matches(x, n)]
            if matching and not any(entry_matches(x, n) for n in failed):
                verdict.stale.append("regex: " + x["regex"])


def updated_xfails(verdict: Verdict, xfails: list[dict]) -> list[dict]:
    res = verdict.result
    ran = set(res.ran)
    keep: list[dict] = []
    used: set[int] = set()
    for name in res.failed:
        err = res.errors.get(name, "?")
        idx = next((i for i, x in enumerate(xfails) if entry_matches(x, name)), None)
        if idx is None:
            keep.append({"name": name, "category": "unclassified", "reason": "TODO", "error": short_error(err)})
            continue
        if idx not in used:
            used.add(idx)
            entry = dict(xfails[idx])
            if entry.get("error") and entry["error"] not in err:
                print(f"  note: {verdict.run_id}: error of {name!r} changed; re-check its category", file=sys.stderr)
                entry["error"] = short_error(err)
            keep.append(entry)
    for i, x in enumerate(xfails):
        if i in used:
            continue
        if x.get("flaky"):
            keep.append(x)  # passed this time, may fail the next
        elif "name" in x and x["name"] not in ran:
            keep.append(x)  # not sampled this time
        elif "regex" in x and not any(entry_matches(x, n) for n in ran):
            keep.append(x)
    return keep


def short_error(err: str) -> str:
    """A stable part of an error text: the alert or exception, without object addresses."""
    err = re.sub(r" at 0x[0-9a-f]+", "", err)
    return err.split(" | ")[0][:120]


# ---------------------------------------------------------------------------------------------
# servers


class Server:
    def __init__(self, name: str, bin_: Path, spec: dict, pki_dir: Path, log_dir: Path, groups: str):
        self.name = name
        self.bin = bin_
        self.spec = spec
        self.pki_dir = pki_dir
        self.log = log_dir / f"server-{name}.log"
        self.groups = spec.get("groups", groups)
        self.proc: subprocess.Popen | None = None
        self.port: int | None = None

    def command(self) -> list[str]:
        cmd = [
            str(self.bin), "server",
            "--cert", str(self.pki_dir / "server.pem"),
            "--key", str(self.pki_dir / "server.key"),
            "--host", "127.0.0.1", "--port", "0",
            "--groups", self.groups,
        ]
        if self.spec.get("mutual"):
            cmd += ["--ca", str(self.pki_dir / "ca.pem"), "--mutual"]
        if self.spec.get("reply"):
            cmd += ["--reply", self.spec["reply"]]
        return cmd

    def start(self, timeout: float = 30.0) -> None:
        offset = self.log.stat().st_size if self.log.exists() else 0  # a restart appends
        log = open(self.log, "ab")
        # stdout (one line per connection) and stderr (listening line, failures) go to a file:
        # a pipe nobody drains would block the server.
        self.proc = subprocess.Popen(self.command(), stdout=log, stderr=log, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with open(self.log, "rb") as f:
                f.seek(offset)
                m = LISTENING.search(f.read().decode(errors="replace"))
            if m:
                self.port = int(m.group(2))
                return
            if self.proc.poll() is not None:
                raise RuntimeError(f"server {self.name} exited ({self.proc.returncode}): see {self.log}")
            time.sleep(0.05)
        raise RuntimeError(f"server {self.name} did not print its port within {timeout} s")

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# ---------------------------------------------------------------------------------------------
# running


def module_of(script: str) -> str:
    """scripts/test-tls13-x.py -> tlsfuzzer._apps.test_tls13_x (the copy's scripts are stubs)."""
    return "tlsfuzzer._apps." + Path(script).stem.replace("-", "_")


def expand(arg: str, data: dict, pkis: dict[str, Path]) -> str:
    def sub(m):
        kind, key = m.group(1), m.group(2)
        if kind == "pki":
            return str(pkis[key])
        return str(data["vars"][key])

    return re.sub(r"\{(pki|var)\.([A-Za-z0-9_-]+)\}", sub, arg)


class Runner:
    def __init__(self, args, data):
        self.args = args
        self.data = data
        self.children: set[subprocess.Popen] = set()
        self.lock = threading.Lock()
        self.stopping = False

    def run_script(self, run: dict, server: Server, pkis: dict[str, Path], log_dir: Path) -> Verdict:
        timeout = run.get("timeout", self.data["defaults"].get("timeout", 120))
        if not server.alive():
            print(f"  server {server.name} had died; restarting it", file=sys.stderr)
            server.start()
        cmd = [self.args.python, "-m", module_of(run["script"]), "-h", "127.0.0.1", "-p", str(server.port)]
        cmd += [expand(a, self.data, pkis) for a in run.get("args", [])]
        env = dict(os.environ, PYTHONPATH=str(self.args.tlsfuzzer), PYTHONUNBUFFERED="1")
        out_path = log_dir / f"{re.sub(r'[^A-Za-z0-9_.@-]', '_', run['id'])}.txt"
        start = time.monotonic()
        problem = None
        with open(out_path, "wb") as out:
            proc = subprocess.Popen(cmd, cwd=self.args.tlsfuzzer, env=env, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
            with self.lock:
                self.children.add(proc)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                problem = f"timed out after {timeout} s"
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            finally:
                with self.lock:
                    self.children.discard(proc)
        seconds = time.monotonic() - start
        text = out_path.read_text(errors="replace")
        result = parse_output(text)
        if problem is None and result.total is None:
            tail = " | ".join(text.strip().splitlines()[-3:])[:300]
            problem = f"no summary (exit {proc.returncode}): {tail}"
        if problem is None and not server.alive():
            problem = f"server {server.name} died during the run (exit {server.proc.returncode})"
        verdict = Verdict(run["id"], server.name, seconds, result, problem)
        if problem is None:
            compare(verdict, run.get("xfail", []))
        return verdict

    def kill_children(self):
        with self.lock:
            for proc in list(self.children):
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass


def selected(run: dict, only: list[str] | None) -> bool:
    if not only:
        return True
    names = {run["id"], run["script"], Path(run["script"]).stem, run["id"].split("@")[0]}
    return any(o in names for o in only)


def preflight(args) -> None:
    if not (args.tlsfuzzer / "tlsfuzzer" / "_apps").is_dir():
        raise SystemExit(f"error: {args.tlsfuzzer} has no tlsfuzzer/_apps (not a tlsfuzzer tree)")
    if not os.access(args.pqkit, os.X_OK):
        raise SystemExit(f"error: {args.pqkit} is not an executable")
    code = "import " + ", ".join(PY_MODULES)
    env = dict(os.environ, PYTHONPATH=str(args.tlsfuzzer))
    r = subprocess.run([args.python, "-c", code], env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("error: tlsfuzzer needs Python modules " + ", ".join(PY_MODULES) +
                         " (pip install tlslite-ng==0.9.0b2 ecdsa kyber-py dilithium-py):\n" + r.stderr.strip())


def print_summary(verdicts: list[Verdict], skipped: list[dict], wall: float) -> None:
    w = max([len(v.run_id) for v in verdicts] + [10])
    print(f"{'run':<{w}}  {'server':<13} {'tests':>6} {'pass':>6} {'fail':>5} {'xfail':>5} {'unexp':>5} {'stale':>5} {'secs':>6}")
    for v in verdicts:
        r = v.result
        tests = len(r.ran) if r else 0
        fails = len(r.failed) if r else 0
        passed = r.passed if r and r.passed is not None else "-"
        flag = "" if v.ok else "  <-- " + ("PROBLEM" if v.problem else "UNEXPECTED")
        print(f"{v.run_id:<{w}}  {v.server:<13} {tests:>6} {passed!s:>6} {fails:>5} {v.expected:>5} "
              f"{len(v.unexpected) + len(v.changed):>5} {len(v.stale):>5} {v.seconds:>6.1f}{flag}")
    for s in skipped:
        print(f"{s['id']:<{w}}  skipped: {s['skip']}")
    bad = [v for v in verdicts if not v.ok]
    for v in bad:
        print(f"\n== {v.run_id}")
        if v.problem:
            print(f"  problem: {v.problem}")
        for name, err in v.unexpected:
            print(f"  unexpected failure: {name!r}\n      {err}")
        for name, want, err in v.changed:
            print(f"  failure changed: {name!r}\n      expected error containing {want!r}, got: {err}")
        for name in v.stale:
            print(f"  stale expectation (now passes): {name!r}")
    print(f"\nwall time {wall:.1f} s")
    print(f"tlsfuzzer: {len(verdicts) - len(bad)} passed, {len(bad)} failed, {len(skipped)} skipped")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pqkit", required=True, type=Path, help="pqkit binary")
    ap.add_argument("--tlsfuzzer", required=True, type=Path, help="tlsfuzzer tree (with tlsfuzzer/_apps)")
    ap.add_argument("--expect", required=True, type=Path, help="expectations file (TOML)")
    ap.add_argument("--only", nargs="+", metavar="SCRIPT", help="run ids or script names to run")
    ap.add_argument("--update", action="store_true", help="rewrite the expectations file from this run")
    ap.add_argument("--jobs", type=int, default=2, help="servers exercised at once (default 2)")
    ap.add_argument("--python", default=sys.executable, help="Python for the scripts")
    ap.add_argument("--logs", type=Path, help="keep server and script output in this directory")
    args = ap.parse_args()
    args.pqkit = args.pqkit.resolve()
    args.tlsfuzzer = args.tlsfuzzer.resolve()

    try:
        data = load_expectations(args.expect)
    except (ExpectError, tomllib.TOMLDecodeError, OSError) as e:
        print(f"error: {args.expect}: {e}", file=sys.stderr)
        return 2
    preflight(args)

    runs = [r for r in data["run"] if selected(r, args.only)]
    skipped = [r for r in runs if "skip" in r]
    runs = [r for r in runs if "skip" not in r]
    if args.only and not runs and not skipped:
        print(f"error: --only {args.only} matches no run", file=sys.stderr)
        return 2

    tmp = Path(tempfile.mkdtemp(prefix="pqkit-tlsfuzzer-"))
    log_dir = args.logs.resolve() if args.logs else tmp / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    runner = Runner(args, data)
    servers: dict[str, Server] = {}

    def on_signal(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, on_signal)
    wall_start = time.monotonic()
    verdicts: list[Verdict] = []
    try:
        # PKIs (only those the selected runs need) and servers.
        needed_servers = list(dict.fromkeys(r["server"] for r in runs))
        needed_pkis = list(dict.fromkeys(data["server"][s]["pki"] for s in needed_servers))
        for r in runs:  # PKIs named in arguments ({pki.NAME}/client.key)
            for a in r.get("args", []):
                needed_pkis += [p for p in re.findall(r"\{pki\.([A-Za-z0-9_-]+)\}", a) if p not in needed_pkis]
        pkis: dict[str, Path] = {}
        for name in needed_pkis:
            d = tmp / "pki" / name
            p = subprocess.run([str(args.pqkit), "pki", "init", "--sig", data["pki"][name]["sig"], "--dir", str(d)],
                               capture_output=True, text=True)
            if p.returncode != 0:
                print(f"error: pki init {name}: {p.stderr.strip()}", file=sys.stderr)
                return 2
            pkis[name] = d
        groups = data["defaults"].get("groups", "")
        for name in needed_servers:
            spec = data["server"][name]
            servers[name] = Server(name, args.pqkit, spec, pkis[spec["pki"]], log_dir, groups)
            servers[name].start()

        # One lane per server; lanes in parallel. Longest lanes first.
        lanes: dict[str, list[dict]] = {}
        for r in runs:
            lanes.setdefault(r["server"], []).append(r)
        order = sorted(lanes, key=lambda s: -sum(r.get("timeout", 60) for r in lanes[s]))
        results: dict[str, Verdict] = {}

        def lane(server_name: str):
            for r in lanes[server_name]:
                if runner.stopping:
                    return
                v = runner.run_script(r, servers[server_name], pkis, log_dir)
                results[r["id"]] = v
                status = "ok" if v.ok else "NOT OK"
                print(f"  {r['id']}: {status} ({v.seconds:.1f} s)", file=sys.stderr, flush=True)

        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = [pool.submit(lane, s) for s in order]
            try:
                for f in concurrent.futures.as_completed(futures):
                    f.result()
            except BaseException:
                runner.stopping = True
                runner.kill_children()
                raise
        verdicts = [results[r["id"]] for r in runs if r["id"] in results]
    except KeyboardInterrupt:
        runner.stopping = True
        runner.kill_children()
        print("\ninterrupted", file=sys.stderr)
        return 130
    except RuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    finally:
        runner.kill_children()
        for s in servers.values():
            s.stop()
        shutil.rmtree(tmp, ignore_errors=True)  # the PKIs (and the logs unless --logs)

    print_summary(verdicts, skipped, time.monotonic() - wall_start)

    if args.update:
        by_id = {v.run_id: v for v in verdicts}
        for r in data["run"]:
            v = by_id.get(r["id"])
            if v is None:
                continue
            if v.problem:
                print(f"  note: {r['id']}: not updated ({v.problem})", file=sys.stderr)
                continue
            new = updated_xfails(v, r.get("xfail", []))
            if new:
                r["xfail"] = new
            else:
                r.pop("xfail", None)
        write_expectations(args.expect, data, leading_comments(args.expect))
        print(f"updated {args.expect}")
        return 0
    return 0 if all(v.ok for v in verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
