"""How much of onnx's backend test suite gluonport's importer passes, by exclusion category.

    python benchmarks/onnx_backend_coverage.py [--run none|included|all] [-k REGEX] [--list CAT]
                                               [--timeout 30]

The runnable tests are the node and model tests of the installed onnx that run on the CPU
(``*_cpu``), less the real models whose weights onnx downloads at test time (no network).
Each one belongs to the first category of ``tests/onnx/test_onnx_backend.py``'s ``EXCLUDE``
whose pattern matches it, or to ``(included)``. ``--run included`` runs the included tests
(what the test module does) and ``--run all`` every runnable test, excluded ones too, to show
which exclusions no longer hold; each test runs under a ``--timeout`` in seconds. The table
gives, per category, the tests, those that ran and passed, and the suite's pass rate:
passed / runnable. ``--list CAT`` prints the outcome of each test of the categories whose
name contains CAT.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import signal
import sys
import time
import unittest
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLUDED = "(included)"
if ROOT not in sys.path:  # run from a checkout: this tree's gluonport, installed or not
    sys.path.insert(0, ROOT)


def _suite_module():
    path = os.path.join(ROOT, "tests", "onnx", "test_onnx_backend.py")
    spec = importlib.util.spec_from_file_location("_gp_onnx_backend_suite", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def runnable_tests() -> list[tuple[str, unittest.TestCase]]:
    """``(name, test)`` of every runnable CPU test, in name order."""
    import onnx.backend.test

    from gluonport.onnx.backend import GluonportBackend

    suite = _suite_module()
    real = re.compile(r"^test_(" + "|".join(suite.REAL_MODELS) + ")_")
    runner = onnx.backend.test.BackendTest(GluonportBackend, "_gp_coverage")
    out = []
    for cls in runner.test_cases.values():
        for name in sorted(n for n in dir(cls) if n.startswith("test_")):
            if name.endswith("_cpu") and not real.search(name):
                out.append((name, cls(name)))
    return sorted(out, key=lambda t: t[0])


def category_of(name: str, exclude: dict[str, list[str]]) -> str:
    for category, patterns in exclude.items():
        if any(re.search(p, name) for p in patterns):
            return category
    return INCLUDED


class _Timeout(Exception):
    pass


def _on_alarm(signum, frame):  # noqa: ARG001
    raise _Timeout


def run_one(test: unittest.TestCase, timeout: int) -> str:
    """'pass', 'fail', 'error', 'skip' or 'timeout'."""
    result = unittest.TestResult()
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(timeout)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            test.run(result)
    except _Timeout:
        return "timeout"
    finally:
        signal.alarm(0)
    if result.skipped:
        return "skip"
    if any(isinstance(e[1], str) and "_Timeout" in e[1] for e in result.errors):
        return "timeout"
    if result.failures:
        return "fail"
    if result.errors:
        return "error"
    return "pass"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", choices=["none", "included", "all"], default="included")
    ap.add_argument("-k", default="", help="only tests whose name matches this regex")
    ap.add_argument("--list", default=None, help="print each test of matching categories")
    ap.add_argument("--timeout", type=int, default=30)
    args = ap.parse_args(argv)
    exclude = _suite_module().EXCLUDE
    tests = [t for t in runnable_tests() if re.search(args.k, t[0])]
    rows: dict[str, dict[str, int]] = {}
    listing = []
    start = time.perf_counter()
    for name, test in tests:
        cat = category_of(name, exclude)
        row = rows.setdefault(cat, {"tests": 0, "ran": 0, "pass": 0})
        row["tests"] += 1
        if args.run == "all" or (args.run == "included" and cat == INCLUDED):
            outcome = run_one(test, args.timeout)
            row["ran"] += 1
            row["pass"] += outcome == "pass"
        else:
            outcome = "not run"
        if args.list is not None and args.list in cat:
            listing.append(f"{outcome:8s} {name}  [{cat[:40]}]")
    elapsed = time.perf_counter() - start
    for line in listing:
        print(line)
    width = 78
    print(f"{'category':{width}s} {'tests':>6s} {'ran':>6s} {'passed':>6s}")
    order = [INCLUDED] + [c for c in exclude if c in rows]
    for cat in order:
        if cat in rows:
            r = rows[cat]
            label = cat if len(cat) <= width else cat[:width - 3] + "..."
            print(f"{label:{width}s} {r['tests']:6d} {r['ran']:6d} {r['pass']:6d}")
    total = sum(r["tests"] for r in rows.values())
    passed = sum(r["pass"] for r in rows.values())
    print(f"{'runnable (node + model tests on the CPU, no downloads)':{width}s} {total:6d}")
    if args.run != "none":
        print(f"passed: {passed} of {total} = {100.0 * passed / max(total, 1):.1f}% "
              f"({elapsed:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
