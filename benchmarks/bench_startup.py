"""Start-up time: ``import gluonport`` and the CLI against ``python -c "import numpy"``.

    python benchmarks/bench_startup.py [--runs 15] [--breakdown] [--as-is]

Each command runs ``--runs`` times in a fresh interpreter, the commands interleaved round-robin
so that a change in machine load hits them all alike; the table gives the median wall time, the
ratio to importing numpy in the same run, and the target (issue 12): ``import gluonport`` and
``gluonport --help`` within 1.5x of ``import numpy``, ``gluonport inspect`` on a symbol file
within 2x. ``python -c pass`` is printed as the interpreter's own floor, and the first use of
the core API (``mx.nd`` + ``mx.sym`` + ``mx.gluon``, which ``import gluonport`` defers) without a
target, so that the cost the lazy import moves to first use stays in view. The CPU time (user +
system) of each run is printed beside the wall time: on a machine busy with other work it moves
less than the wall time does.

Bytecode: every command runs with ``PYTHONPYCACHEPREFIX`` set to a temporary folder (and
``PYTHONDONTWRITEBYTECODE`` removed), after one untimed warm-up run, so gluonport is timed from
cached bytecode, as an installed package is, rather than compiling ~160 modules each time.
``--as-is`` keeps the environment as it is instead (with ``PYTHONDONTWRITEBYTECODE=1`` every run
compiles every gluonport module it imports: the figures users of such an environment see).

``--breakdown`` adds ``python -X importtime`` of that first use summed by top-level package
(gluonport split one level further): where the time goes once the library is actually used.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time

from _oracle import table

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SYMBOL = os.path.join(ROOT, "sample_models", "lenet_bn-symbol.json")
FIRST_USE = "import gluonport as mx; mx.nd.ones(1); mx.sym.var('x'); mx.gluon.nn.Dense"


def cli_command() -> list[str]:
    """The installed ``gluonport`` console script (not a pyenv shim), else ``-m``."""
    script = os.path.join(sysconfig.get_path("scripts"), "gluonport")
    if os.path.isfile(script):
        return [script]
    return [sys.executable, "-m", "gluonport_cli.main"]


def commands() -> list[tuple[str, list[str], float | None]]:
    """(label, argv, target ratio to ``import numpy``) of every timed command."""
    py, cli = sys.executable, cli_command()
    return [("python -c pass", [py, "-c", "pass"], None),
            ("import numpy", [py, "-c", "import numpy"], None),
            ("import gluonport", [py, "-c", "import gluonport"], 1.5),
            ("first use: mx.nd, mx.sym, mx.gluon", [py, "-c", FIRST_USE], None),
            ("gluonport --help", cli + ["--help"], 1.5),
            ("gluonport inspect lenet_bn-symbol.json", cli + ["inspect", SYMBOL], 2.0)]


def bench_env(cache: str | None) -> dict[str, str]:
    if cache is None:
        return dict(os.environ)
    env = dict(os.environ, PYTHONPYCACHEPREFIX=cache)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one run, seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def time_all(runs: int, env: dict[str, str]) -> dict[str, list[tuple[float, float]]]:
    cmds = commands()
    for _, argv, _ in cmds:  # warm-up: writes the bytecode cache, fills the page cache
        run_once(argv, env)
    times: dict[str, list[tuple[float, float]]] = {label: [] for label, _, _ in cmds}
    for _ in range(runs):
        for label, argv, _ in cmds:
            times[label].append(run_once(argv, env))
    return times


def breakdown(env: dict[str, str]) -> list[list[str]]:
    """Self time of the imports of :data:`FIRST_USE` summed by package, largest first."""
    err = subprocess.run([sys.executable, "-X", "importtime", "-c", FIRST_USE],
                         env=env, check=True, capture_output=True, text=True).stderr
    sums: dict[str, int] = {}
    for m in re.finditer(r"import time:\s+(\d+) \|\s+\d+ \|\s*(\S+)", err):
        parts = m.group(2).split(".")
        key = ".".join(parts[:2]) if parts[0] == "gluonport" else parts[0]
        sums[key] = sums.get(key, 0) + int(m.group(1))
    total = sum(sums.values())
    own = sum(v for k, v in sums.items() if k.startswith("gluonport"))
    rows = [[k, f"{v / 1e3:.1f}"] for k, v in sorted(sums.items(), key=lambda kv: -kv[1])[:15]]
    rows.append(["(all gluonport modules)", f"{own / 1e3:.1f}"])
    rows.append(["(total, -X importtime)", f"{total / 1e3:.1f}"])
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--breakdown", action="store_true")
    ap.add_argument("--as-is", action="store_true", help="no bytecode cache of our own")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="gluonport-pyc-") as cache:
        env = bench_env(None if args.as_is else cache)
        times = time_all(args.runs, env)
        rows_breakdown = breakdown(env) if args.breakdown else []
    base = statistics.median(w for w, _ in times["import numpy"])
    base_cpu = statistics.median(c for _, c in times["import numpy"])
    rows = []
    for label, _, target in commands():
        med = statistics.median(w for w, _ in times[label])
        cpu = statistics.median(c for _, c in times[label])
        ratio = med / base
        rows.append([label, f"{med * 1e3:.0f}", f"{min(w for w, _ in times[label]) * 1e3:.0f}",
                     f"{ratio:.2f}x", f"{cpu * 1e3:.0f}", f"{cpu / base_cpu:.2f}x",
                     "-" if target is None else f"<= {target}x",
                     "-" if target is None else ("yes" if ratio <= target else "NO")])
    print(f"{args.runs} runs each, median; load average {os.getloadavg()[0]:.2f} "
          f"on {os.cpu_count()} CPUs; {sys.version.split()[0]}; bytecode "
          f"{'as the environment has it' if args.as_is else 'cached (PYTHONPYCACHEPREFIX)'}")
    print(table(rows, ["command", "wall ms", "min ms", "vs numpy", "cpu ms", "cpu vs numpy",
                       "target (wall)", "met"]))
    if rows_breakdown:
        print()
        print(table(rows_breakdown, ["first use: import self time by package", "ms"]))


if __name__ == "__main__":
    main()
