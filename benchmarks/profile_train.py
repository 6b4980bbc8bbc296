"""Where a hybridized training step on onnxruntime spends its time: onnxruntime's own per-node
profile of the step's graphs, summed by operator type, at one or more thread counts.

    python benchmarks/profile_train.py [--models resnet18_v1,lstm_lm] [--batch 32]
                                       [--threads 1,2] [--steps 10] [--top 14]

Each (model, threads) runs in its own child process with ``OMP_NUM_THREADS =
OPENBLAS_NUM_THREADS = threads`` (the training sessions' intra-op pool takes that many threads,
as in ``bench_train.py``). The child sets up ``bench_train.py``'s step (its model, loss, data and
SGD update, both blocks hybridized on onnxruntime), runs ``--warmup`` steps, then ``--steps``
steps with onnxruntime's profiler on (``SessionOptions.enable_profiling``),
and reads back the profile of every session: per graph (net forward, loss forward, loss
backward, net backward: the order the last step runs them in) the mean time of
``model_run`` and of each operator type's kernels per step, the warm-up runs left out.

The table gives, per graph and operator type, milliseconds per step at each thread count and
the speed-up of the last count over the first. Profiling adds a few microseconds to every
node, so graphs of many small nodes (an unrolled LSTM: ~1300 nodes) read slower than they run;
use the figures for shares and for how each kind of node scales with threads, and
``bench_train.py`` for step times. On a 2-vCPU Xeon with AVX-512 (onnxruntime 1.32, batch 32)
a second thread made the GEMMs and convolutions 1.5-1.9x faster, most element-wise nodes,
``Concat``, ``Split``, ``Slice``, ``Pad`` and ``ConvTranspose`` no faster, and ``Transpose``
about 2x slower (resnet18_v1: 2.1 -> 5.8 ms in the forward graph, 6.8 -> 12.7 ms in the
backward); resnet18's whole step went from 222 to 200 ms with the profiler on (MXNet's oneDNN
step is about 2x faster at two threads than at one).
"""

from __future__ import annotations

import argparse
import collections
import gc
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


#: the graphs of a hybridized step, in the order a step runs them
GRAPHS = ("net forward", "loss forward", "loss backward", "net backward")


def _read_profile(path: str, skip: int) -> tuple[float, dict, int]:
    """(model_run ms per run, {op type: ms per run}, nodes per run) over the runs after the
    first ``skip``."""
    with open(path) as f:
        events = json.load(f)
    runs = sorted((e for e in events if e.get("cat") == "Session"
                   and e.get("name") == "model_run"), key=lambda e: e["ts"])
    if len(runs) <= skip:
        return 0.0, {}, 0
    start = runs[skip]["ts"]
    runs = runs[skip:]
    nodes = [e for e in events if e.get("cat") == "Node" and e["ts"] >= start
             and e.get("name", "").endswith("_kernel_time")]
    n = len(runs)
    by_op: dict = collections.Counter()
    for e in nodes:
        by_op[e.get("args", {}).get("op_name", "?")] += e["dur"] / n / 1e3
    return sum(e["dur"] for e in runs) / n / 1e3, dict(by_op), len(nodes) // n


def _record_runs() -> list[int]:
    """A list to which every onnxruntime session run appends its session's ``id``."""
    import onnxruntime as ort

    ran: list[int] = []
    for method in ("run", "run_with_iobinding"):
        plain = getattr(ort.InferenceSession, method)

        def run(self, *args, _plain=plain, **kwargs):
            ran.append(id(self))
            return _plain(self, *args, **kwargs)

        setattr(ort.InferenceSession, method, run)
    return ran


def child(name: str, batch: int, steps: int, warmup: int, out_dir: str) -> None:
    """Run in the child: profile ``steps`` training steps and print a JSON summary."""
    import bench_train as b

    from gluonport.runtime.ort import RuntimeOptions

    plain = RuntimeOptions.session_options
    made = [0]

    def session_options(self, dim_overrides=None):
        so = plain(self, dim_overrides)
        so.enable_profiling = True
        so.profile_file_prefix = os.path.join(out_dir, f"ort{made[0]:03d}")  # creation order
        made[0] += 1
        return so

    RuntimeOptions.session_options = session_options  # type: ignore[method-assign]
    ran = _record_runs()
    # bench_train's step (warm-up steps run there: profiled too, left out by _read_profile)
    step, res, _ = b._setup("gluonport", name, batch, "hybrid_ort", warmup, "sce")
    if "na" in res:
        raise SystemExit(f"{name}: {res['na']}")
    phases = []
    for _ in range(steps):
        ran.clear()
        step()
        phases.append(step.phases)
    # every onnxruntime session of the process, in the order the last step ran them (a
    # session is remade when the reuse pairing adds outputs, so creation order is not it)
    rank = {sid: k for k, sid in enumerate(dict.fromkeys(ran))}
    sessions = [obj for obj in gc.get_objects() if type(obj).__name__ == "InferenceSession"]
    sessions.sort(key=lambda sess: rank.get(id(sess), len(rank)))
    named = len(rank) == len(GRAPHS)
    graphs = []
    for k, sess in enumerate(sessions):
        path = sess.end_profiling()
        if not path or not os.path.exists(path):
            continue
        run_ms, by_op, n_nodes = _read_profile(path, max(warmup, 1))  # _setup runs >= 1
        if id(sess) not in rank:
            kind = f"graph {k} (not run in the last step)"
        else:
            kind = GRAPHS[k] if named else f"graph {k}"
        graphs.append({"graph": kind, "run_ms": run_ms, "ops": by_op, "nodes": n_nodes})
    med = [sorted(p[i] for p in phases)[len(phases) // 2] * 1e3 for i in range(3)]
    print(json.dumps({"graphs": graphs, "phases_ms": med}))


def _run_child(name: str, batch: int, threads: int, steps: int, warmup: int) -> dict:
    import bench_train as b

    env = b._env(threads, spin=False)  # bench_train's thread settings and PYTHONPATH
    with tempfile.TemporaryDirectory() as tmp:
        argv = [sys.executable, os.path.abspath(__file__), "--child", name, str(batch),
                str(steps), str(warmup), tmp]
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=1800)
        if done.returncode != 0:
            raise SystemExit(f"{name} at {threads} threads failed:\n{done.stderr[-3000:]}")
        return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="resnet18_v1,lstm_lm")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--top", type=int, default=14, help="operator types shown per graph")
    ap.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        name, batch, steps, warmup, out_dir = args.child
        child(name, int(batch), int(steps), int(warmup), out_dir)
        return
    threads = [int(t) for t in args.threads.split(",")]
    print(f"{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f} at start; "
          f"batch {args.batch}; {args.steps} profiled steps after {args.warmup} warm-up")
    for name in args.models.split(","):
        runs = {t: _run_child(name, args.batch, t, args.steps, args.warmup) for t in threads}
        print(f"\n{name} b{args.batch}: step phases (forward / backward / update, ms, "
              "profiler on): " + "; ".join(
                  f"{t} thr {' / '.join(f'{v:.1f}' for v in runs[t]['phases_ms'])}"
                  for t in threads))
        kinds = list(dict.fromkeys(g["graph"] for t in threads for g in runs[t]["graphs"]))
        for kind in kinds:
            per = {t: next((g for g in runs[t]["graphs"] if g["graph"] == kind), None)
                   for t in threads}
            first = per[threads[0]]
            if first is None:
                continue
            head = "  ".join(f"{t:>2} thr ms" for t in threads)
            print(f"  {kind} ({first['nodes']} nodes a run): model_run "
                  + ", ".join(f"{per[t]['run_ms']:.2f} ms at {t} thr" for t in threads
                              if per[t]))
            print(f"    {'op type':24s} {head}  speed-up {threads[-1]} vs {threads[0]}")
            ops = sorted(first["ops"], key=lambda k: -first["ops"][k])[:args.top]
            for op in ops:
                vals = [per[t]["ops"].get(op, 0.0) if per[t] else 0.0 for t in threads]
                gain = vals[0] / vals[-1] if vals[-1] else float("nan")
                print(f"    {op:24s} " + "  ".join(f"{v:9.2f}" for v in vals)
                      + f"  {gain:8.2f}x")


if __name__ == "__main__":
    main()
