"""Run every corpus check on every corpus model and print one table with totals.

    python tests/corpus/report.py                 # all models, 2 at a time
    python tests/corpus/report.py -j 1 resnet18_v1 lstm_lm
    python tests/corpus/report.py --markdown --details out.md

Each model runs in its own process (a crash or a runaway op costs one row, not the run), with
``--timeout`` seconds for all its checks. Cells: ``ok``, ``skip(reason)``, or
``FAIL(reason @ first failing node)``; the full reasons follow the table. The corpus is made by
``gen_corpus.py`` (see its docstring); the checks and tolerances are in ``_corpus.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
COLUMNS = [("executor", "executor"), ("infer_shape", "infer_shape"),
           ("onnx_static", "onnx (static)"), ("onnx_dynamic", "onnx (dynamic)"),
           ("roundtrip", "round trip"), ("runtime", "runtime")]


def run_one(name: str) -> dict:
    """Every check of one model, in this process: ``{check: [status, reason, node, secs]}``."""
    warnings.filterwarnings("ignore")
    sys.path.insert(0, ROOT)
    from tests.corpus import _corpus as C

    out = {}
    for check, _ in COLUMNS:
        t0 = time.time()
        try:
            C.CHECK_FUNCS[check](name)
            res = ["ok", "", None]
        except C.CorpusSkip as exc:
            res = ["skip", str(exc), None]
        except C.CorpusFailure as exc:
            res = ["FAIL", exc.reason, exc.node]
        except Exception as exc:  # a harness or library bug: still one cell, not a crash
            res = ["FAIL", f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}", None]
        out[check] = res + [round(time.time() - t0, 1)]
    return out


def _spawn(name: str, timeout: float) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", name]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {c: ["FAIL", f"timed out after {timeout:.0f} s (all checks)", None, timeout]
                for c, _ in COLUMNS}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
    return {c: ["FAIL", f"worker died (rc {proc.returncode}): {tail[0][:200]}", None, 0]
            for c, _ in COLUMNS}


def _cell(res: list, width: int) -> str:
    status, reason, node = res[0], res[1], res[2]
    if status == "ok":
        return "ok"
    text = reason + (f" @ {node}" if node else "")
    text = text if len(text) <= width else text[:width - 3] + "..."
    return f"{status}({text})"


def render(results: dict, skipped: dict, width: int, markdown: bool) -> str:
    heads = ["model"] + [h for _, h in COLUMNS]
    rows = [[n] + [_cell(results[n][c], width) for c, _ in COLUMNS] for n in sorted(results)]
    totals = ["TOTAL ok / run"] + [
        f"{sum(results[n][c][0] == 'ok' for n in results)} / "
        f"{sum(results[n][c][0] != 'skip' for n in results)}" for c, _ in COLUMNS]
    lines = []
    if markdown:
        lines.append("| " + " | ".join(heads) + " |")
        lines.append("|" + "---|" * len(heads))
        lines += ["| " + " | ".join(r) + " |" for r in rows + [totals]]
    else:
        widths = [max(len(r[i]) for r in [heads] + rows + [totals]) for i in range(len(heads))]
        fmt = "  ".join(f"{{:<{w}}}" for w in widths)
        lines.append(fmt.format(*heads))
        lines.append("  ".join("-" * w for w in widths))
        lines += [fmt.format(*r) for r in rows]
        lines.append(fmt.format(*totals))
    all_ok = sum(all(results[n][c][0] == "ok" for c, _ in COLUMNS) for n in results)
    lines.append(f"\n{len(results)} models; {all_ok} pass every check.")
    for n, why in sorted(skipped.items()):
        lines.append(f"not in corpus: {n}: {why}")
    return "\n".join(lines)


def details(results: dict) -> str:
    lines = ["", "Every cell that is not ok, in full:"]
    for n in sorted(results):
        for c, _ in COLUMNS:
            status, reason, node, secs = results[n][c]
            if status != "ok":
                where = f"\n      first failing node: {node}" if node else ""
                lines.append(f"- {n} [{c}] {status}: {reason}{where}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=1200.0, help="seconds per model")
    ap.add_argument("--width", type=int, default=70, help="max reason width in a cell")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--json", help="also write the raw results here")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker:
        print(json.dumps(run_one(a.worker)), flush=True)
        return 0
    sys.path.insert(0, ROOT)
    from tests.corpus import _corpus as C

    names = a.names or C.model_names()
    if not names:
        print(f"no corpus at {C.CORPUS}; make it with the oracle: "
              "~/.cache/gluonport-oracle/bin/python tests/corpus/gen_corpus.py")
        return 2
    t0 = time.time()
    results: dict = {}
    with ThreadPoolExecutor(max_workers=a.jobs) as pool:
        for name, res in zip(names, pool.map(lambda n: _spawn(n, a.timeout), names)):
            results[name] = res
            secs = sum(v[3] for v in res.values())
            fails = [c for c, v in res.items() if v[0] == "FAIL"]
            print(f"[{time.time() - t0:6.0f} s] {name}: {secs:.0f} s, "
                  f"{'FAIL ' + ','.join(fails) if fails else 'ok'}", file=sys.stderr, flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1, sort_keys=True)
    print(render(results, C.skipped_models(), a.width, a.markdown))
    print(details(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
