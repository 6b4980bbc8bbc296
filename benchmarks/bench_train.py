"""Training step time: gluonport (imperative, hybridized numpy, hybridized onnxruntime) against
MXNet 1.9.1 (imperative, hybridized) measured in the same run.

    python benchmarks/bench_train.py [--quick] [--models mlp,lenet] [--threads 1] [--steps 30]
                                     [--json out.json]   (--tables out.json re-prints a run)
    python benchmarks/bench_train.py --cuda --no-mxnet --modes hybrid_ort,hybrid_ort_cuda \
        --models resnet18_v1 --batches 32,1,128 --threads 16     (on a GPU machine)

``--cuda`` adds gluonport hybridized on onnxruntime's CUDA execution provider (``ctx=gpu(0)``:
parameters, data and labels there; needs onnxruntime-gpu) and a table of it against the CPU
configurations of the same run. gluonport's rows also print the step in three phases (forward
and loss under ``autograd.record()``, ``backward()``, ``trainer.step()``), which show where a
GPU step's time goes: its arrays live on the host, so each step sends the parameters to the
GPU, brings the gradients back, and updates on the CPU.

Batch-1 resnet18 is degenerate on 32x32 inputs: training-mode BatchNorm over one 1x1 sample
zeroes the last stage, so its loss stays log(10) on both sides; it is still a fair timing.

One step is ``forward + loss`` under ``autograd.record()``, ``loss.backward()`` and
``trainer.step(batch)`` (SGD, momentum 0.9, wd 1e-4), then ``mx.nd.waitall()`` (MXNet is
asynchronous). Models, at batch 32 and batch 1: an MLP 784-256-128-10, a LeNet
(conv-pool-conv-pool-dense-dense, with and without BatchNorm), model_zoo ``resnet18_v1``
(classes=10) on 3x32x32 inputs, and a language model (Embedding 1000x256 -> 2-layer LSTM(256)
-> Dense(1000), sequence 35). The loss is ``SoftmaxCrossEntropyLoss``; in hybridized modes the
net and the loss are both hybridized (``static_alloc``/``static_shape`` on both sides).

Every (side, model, batch, mode) runs in its own child process (this file with ``--worker``,
under the oracle's Python 3.8 for MXNet), so each child's peak RSS (``VmHWM`` of
``/proc/<pid>/status``: a fresh address space after exec, unlike ``ru_maxrss``) is that net's
training step alone plus the interpreter and library imports. Both sides load the same initial
parameters (written once by gluonport, seed 0, Xavier) and make the same data from numpy's
RandomState; the first step's loss of each child is printed so a mismatch shows. Threads: each
child gets ``OMP_NUM_THREADS = MKL_NUM_THREADS = OPENBLAS_NUM_THREADS = --threads`` (default 2)
and ``OMP_WAIT_POLICY=PASSIVE`` (unless ``--spin``): MXNet's operators (OpenMP, oneDNN), numpy's
OpenBLAS and gluonport's onnxruntime training sessions (intra-op pool of OMP_NUM_THREADS, not
spinning) all use that many. On a machine whose cores other processes keep busy use
``--threads 1``: a second BLAS/OpenMP thread then waits for a core (small GEMMs took 50-110 ms
instead of 0.5 ms with OpenBLAS at 2 threads and load 7 on 2 cores). Warm-up steps are
excluded; the median of the timed steps is reported, and the fastest step (less sensitive to
other processes).

The five configurations of a model and batch (MXNet imperative and hybridized, gluonport
imperative, hybridized numpy and onnxruntime) run in lockstep: all five children are resident
at once and take ``ceil(--steps / --turn)`` turns each, the order rotating each turn. On a
shared virtual machine whose speed drifts by 30-80% over tens of seconds (the same GEMM: 99
to 155 GFLOP/s within an hour, every part of a step slower together), configurations timed
one after another compare different machines; in lockstep a slow spell hits all of them. A
child waits on a pipe between its turns (it uses no CPU); the others' turns evict its data
from the caches, so each turn starts with one untimed step. A turn is ``--turn`` timed steps
(3) or as many as last about ``--turn-s`` seconds (0.3; from the child's warm step time),
whichever is more: a training loop runs step after step, and turns of three 3 ms steps
measured how each process recovers from the others' evictions instead (LeNet-BN batch 1 on
onnxruntime: 3.6 ms a step in 3-step turns, 3.0-3.2 ms in 60-step turns and alone; MXNet
5.0 and 3.3 ms). ``--sequential`` times one configuration after another (``--rounds R``
then alternates the sides R times and pools the steps).

The compute floor is 3 x the forward multiply-adds (Convolution, FullyConnected and RNN nodes
of the traced graph: forward, data gradient, weight gradient) x 2 flops at this machine's fp32
GEMM peak (the best numpy matmul rate over a few sizes, measured in a child with the same
thread settings in the same run); "floor %" is floor / step time. Targets (issue 14):
imperative <= 1.5x MXNet's imperative step, hybridized onnxruntime <= 1.0x MXNet's hybridized
step, resnet18 step peak RSS <= 1.5x MXNet's. A model whose gradient rules are missing reports
``n/a (no gradient for <op>)``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import selectors
import subprocess
import sys
import tempfile
import time

import numpy as np
from _oracle import ORACLE, cpu_model, table

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "_data")
MODELS = ("mlp", "lenet", "lenet_bn", "resnet18_v1", "lstm_lm")
MODES = {"gluonport": ("imperative", "hybrid_numpy", "hybrid_ort"),
         "mxnet": ("imperative", "hybrid")}
CUDA_MODE = "hybrid_ort_cuda"  # --cuda: gluonport hybridized on onnxruntime's CUDA provider
SEQ, VOCAB, HIDDEN = 35, 1000, 256


# ---------------------------------------------------------------- models (both sides' code)

def build(mx, name: str):
    """The model ``name`` written against MXNet 1.x's Gluon API (``mx`` is mxnet or
    gluonport)."""
    gluon = mx.gluon
    nn = gluon.nn
    if name == "mlp":
        net = nn.HybridSequential(prefix="mlp_")
        with net.name_scope():
            net.add(nn.Dense(256, activation="relu"), nn.Dense(128, activation="relu"),
                    nn.Dense(10))
        return net
    if name in ("lenet", "lenet_bn"):
        bn = name == "lenet_bn"
        net = nn.HybridSequential(prefix=name + "_")
        with net.name_scope():
            for channels in (20, 50):
                if bn:
                    net.add(nn.Conv2D(channels, kernel_size=5, use_bias=False), nn.BatchNorm(),
                            nn.Activation("relu"))
                else:
                    net.add(nn.Conv2D(channels, kernel_size=5, activation="relu"))
                net.add(nn.MaxPool2D(pool_size=2, strides=2))
            net.add(nn.Dense(500, activation="relu"), nn.Dense(10))
        return net
    if name == "resnet18_v1":
        return gluon.model_zoo.vision.resnet18_v1(classes=10, prefix="resnet18_")
    if name == "lstm_lm":
        class LanguageModel(gluon.HybridBlock):
            def __init__(self, **kwargs):
                super().__init__(**kwargs)
                with self.name_scope():
                    self.embedding = nn.Embedding(VOCAB, HIDDEN)
                    self.lstm = gluon.rnn.LSTM(HIDDEN, num_layers=2, input_size=HIDDEN)
                    self.decoder = nn.Dense(VOCAB, flatten=False, in_units=HIDDEN)

            def hybrid_forward(self, F, x, h, c):
                out, _ = self.lstm(self.embedding(x), [h, c])
                return self.decoder(out)

        return LanguageModel(prefix="lm_")
    raise ValueError(name)


def make_loss(mx, kind: str, classes: int):
    """``SoftmaxCrossEntropyLoss`` (``kind='sce'``), or the same cross-entropy written as
    ``-sum(log_softmax(pred) * one_hot(label))`` (``'onehot'``: no ``pick``, for when pick's
    gradient is missing)."""
    if kind == "sce":
        return mx.gluon.loss.SoftmaxCrossEntropyLoss()

    class OneHotCE(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, pred, label):
            return F.negative(F.sum(F.log_softmax(pred) * F.one_hot(label, classes), axis=-1))

    return OneHotCE()


def input_shapes(name: str, batch: int) -> dict:
    """Input name -> shape (the label is extra)."""
    if name == "mlp":
        return {"data": (batch, 784)}
    if name in ("lenet", "lenet_bn"):
        return {"data": (batch, 1, 28, 28)}
    if name == "resnet18_v1":
        return {"data": (batch, 3, 32, 32)}
    return {"data": (SEQ, batch), "h": (2, batch, HIDDEN), "c": (2, batch, HIDDEN)}


def make_data(name: str, batch: int) -> tuple[list, np.ndarray]:
    """(inputs, labels) as float32 numpy arrays, the same on both sides."""
    rs = np.random.RandomState(1000 + batch)
    if name == "lstm_lm":
        tokens = rs.randint(0, VOCAB, (SEQ + 1, batch)).astype("float32")
        zeros = np.zeros((2, batch, HIDDEN), "float32")
        return [tokens[:-1], zeros, zeros.copy()], tokens[1:]
    shape = input_shapes(name, batch)["data"]
    x = rs.uniform(-1, 1, shape).astype("float32")
    return [x], rs.randint(0, 10, (batch,)).astype("float32")


def params_file(name: str) -> str:
    return os.path.join(DATA, f"train_{name}.params")


# ---------------------------------------------------------------- the child

def _vm_mb(field: str = "VmHWM") -> float:
    """``field`` of /proc/<pid>/status in MB (VmHWM: peak RSS of this address space)."""
    with open(f"/proc/{os.getpid()}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def _no_gradient(exc: BaseException) -> str | None:
    m = re.search(r"Operator (\S+) is non-differentiable", str(exc))
    return m.group(1) if m else None


def _backends(block) -> list:
    """Where a gluonport block's recorded cached graphs ran (training graphs)."""
    op = getattr(block, "_cached_op", None)
    graphs = getattr(op, "_train_graphs", {}) if op is not None else {}
    return sorted({getattr(g, "backend", "error") for g in graphs.values()})


def _setup(side: str, name: str, batch: int, mode: str, warmup: int, loss: str):
    """``(step, res, blocks)``: one training step of this configuration as a function
    returning the loss, and the row's fields so far (an ``na`` field when the warm-up steps
    failed)."""
    if side == "mxnet":
        import mxnet as mx
    else:
        import gluonport as mx
    ctx = mx.gpu(0) if mode == CUDA_MODE else mx.cpu()

    def from_np(a):
        return mx.nd.array(a, ctx=ctx)

    net = build(mx, name)
    net.load_parameters(params_file(name), ctx=ctx)
    loss_fn = make_loss(mx, loss, VOCAB if name == "lstm_lm" else 10)
    if mode != "imperative":
        kw = {"static_alloc": True, "static_shape": True}
        if side == "gluonport":
            kw["backend"] = "numpy" if mode == "hybrid_numpy" else "onnxruntime"
        net.hybridize(**kw)
        loss_fn.hybridize(**kw)
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd",
                               {"learning_rate": 0.01, "momentum": 0.9, "wd": 1e-4})
    xs, y = make_data(name, batch)
    inputs = [from_np(x) for x in xs]
    label = from_np(y)
    autograd = mx.autograd

    def step() -> float:
        t0 = time.perf_counter()
        with autograd.record():
            loss = loss_fn(net(*inputs), label)
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        trainer.step(batch)
        mx.nd.waitall()
        # (forward + loss, backward, update) seconds of this step
        step.phases = (t1 - t0, t2 - t1, time.perf_counter() - t2)  # type: ignore[attr-defined]
        return float(loss.mean().asscalar())

    res = {"side": side, "model": name, "batch": batch, "mode": mode,
           "rss_before_mb": _vm_mb("VmRSS")}
    try:
        t0 = time.perf_counter()
        res["first_loss"] = step()
        res["first_step_ms"] = (time.perf_counter() - t0) * 1e3
        for _ in range(warmup - 1):
            step()
    except Exception as exc:  # noqa: BLE001 -- reported as the row's result
        op = _no_gradient(exc)
        res["na"] = f"n/a (no gradient for {op})" if op else \
            f"error: {type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
        res["vm_hwm_mb"] = _vm_mb()
    return step, res, (net, loss_fn)


def _finish(res: dict, times: list, last: float, side: str, mode: str, blocks,
            phases: list) -> dict:
    res.update(median_ms=float(np.median(times)), min_ms=float(min(times)), n=len(times),
               last_loss=last, vm_hwm_mb=_vm_mb(), times_ms=times)
    if side == "gluonport":  # MXNet's phases are asynchronous: only its whole step is timed
        res["phases_ms"] = [float(np.median(p)) * 1e3 for p in zip(*phases)]
        if mode != "imperative":
            res["backend"] = " / loss ".join("+".join(_backends(b)) for b in blocks)
    return res


def _timed(step, phases: list | None = None) -> tuple[float, float]:
    """(ms, loss) of one step; its phases are appended to ``phases`` when given."""
    t0 = time.perf_counter()
    last = step()
    ms = (time.perf_counter() - t0) * 1e3
    if phases is not None:
        phases.append(step.phases)
    return ms, last


def worker(side: str, name: str, batch: int, mode: str, steps: int, warmup: int,
           budget: float, loss: str) -> dict:
    """Time ``steps`` training steps (after ``warmup``) in this process."""
    step, res, blocks = _setup(side, name, batch, mode, warmup, loss)
    if "na" in res:
        return res
    times: list = []
    phases: list = []
    start = time.perf_counter()
    while len(times) < steps and (len(times) < 3 or time.perf_counter() - start < budget):
        ms, last = _timed(step, phases)
        times.append(ms)
    return _finish(res, times, last, side, mode, blocks, phases)


def serve(side: str, name: str, batch: int, mode: str, warmup: int, loss: str) -> None:
    """The lockstep child: warm up, print the row so far, then run ``step K`` commands from
    stdin -- one untimed step, then K timed ones, whose times it prints -- until ``done``,
    which prints the finished row."""
    step, res, blocks = _setup(side, name, batch, mode, warmup, loss)
    if "na" not in res:  # the steady step time, which sets the length of this child's turns
        res["warm_ms"] = _timed(step)[0]
    print(json.dumps(res), flush=True)
    if "na" in res:
        return
    times: list = []
    phases: list = []
    last = float("nan")
    for line in sys.stdin:
        cmd = line.split()
        if not cmd or cmd[0] == "done":
            break
        step()  # untimed: the other children's turns evicted this one's data from the caches
        got = [_timed(step, phases) for _ in range(int(cmd[1]))]
        times.extend(ms for ms, _ in got)
        last = got[-1][1]
        print(json.dumps({"times_ms": [ms for ms, _ in got]}), flush=True)
    print(json.dumps(_finish(res, times, last, side, mode, blocks, phases)), flush=True)


def gemm_peak(sizes=(1024, 2048), repeat: int = 8) -> dict:
    """Best fp32 numpy matmul rate, GFLOP/s, per size and overall."""
    out = {}
    for n in sizes:
        a = np.random.RandomState(0).rand(n, n).astype(np.float32)
        b = np.random.RandomState(1).rand(n, n).astype(np.float32)
        a @ b
        best = float("inf")
        for _ in range(repeat):
            t0 = time.perf_counter()
            a @ b
            best = min(best, time.perf_counter() - t0)
        out[str(n)] = 2 * n ** 3 / best / 1e9
    out["peak"] = max(out.values())
    return out


# ---------------------------------------------------------------- the parent

def _env(threads: int, spin: bool) -> dict:
    env = dict(os.environ)
    for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[k] = str(threads)
    if not spin:
        env["OMP_WAIT_POLICY"] = "PASSIVE"
    env["PYTHONPATH"] = os.path.dirname(HERE) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _child(python: str, argv: list, env: dict, timeout: float) -> dict:
    try:
        out = subprocess.run([python, os.path.abspath(__file__), *argv], capture_output=True,
                             text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"na": f"error: timed out after {timeout:.0f} s"}
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if out.returncode != 0 or not lines:
        tail = (out.stderr.strip().splitlines() or ["?"])[-1]
        return {"na": f"error: child exited {out.returncode}: {tail[:160]}"}
    return json.loads(lines[-1])


class _Resident:
    """A lockstep child (``--worker SIDE --serve``): one configuration, warmed up, timing
    ``step K`` commands on demand."""

    def __init__(self, python: str, argv: list, env: dict, timeout: float):
        self.timeout = timeout
        # stderr to a file, not a pipe: nobody reads a pipe while the child runs, and warnings
        # filling its buffer would block the child
        self.err = tempfile.TemporaryFile("w+")
        self.proc = subprocess.Popen([python, os.path.abspath(__file__), *argv, "--serve"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.err, text=True, env=env)
        self.row = self._reply() or {"na": self.failure}

    def _reply(self) -> dict | None:
        """The child's next JSON line (None when it exited or timed out: it is killed)."""
        deadline = time.monotonic() + self.timeout
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            while time.monotonic() < deadline:
                if not sel.select(max(0.0, deadline - time.monotonic())):
                    break
                line = self.proc.stdout.readline()
                if not line:
                    break
                if line.startswith("{"):
                    return json.loads(line)
        self.proc.kill()
        self.proc.wait()
        self.err.seek(0)
        err = self.err.read().strip().splitlines()
        self.failure = f"error: child exited: {(err or ['?'])[-1][:160]}"
        return None

    @property
    def alive(self) -> bool:
        return "na" not in self.row and self.proc.poll() is None

    def steps(self, k: int) -> None:
        self.proc.stdin.write(f"step {k}\n")
        self.proc.stdin.flush()
        if self._reply() is None:
            self.row = {"na": self.failure}

    def finish(self) -> dict:
        if self.alive:
            self.proc.stdin.write("done\n")
            self.proc.stdin.flush()
            self.row = self._reply() or {"na": self.failure}
        self.proc.wait()
        self.err.close()
        return self.row


def turn_steps(warm_ms: float | None, per_turn: int, turn_s: float) -> int:
    """Timed steps in a child's turn: ``per_turn``, or as many as last ``turn_s`` seconds at
    its warm step time ``warm_ms``, whichever is more."""
    if not warm_ms or warm_ms <= 0:
        return per_turn
    return max(per_turn, int(turn_s * 1e3 / warm_ms))


def lockstep(children: list, turns: int, per_turn: int, turn_s: float = 0.0) -> list:
    """Take turns: each live child runs its turn's steps (:func:`turn_steps`), ``turns``
    times, the order rotating by one each turn, so that every configuration's steps are
    spread over the same stretch of time (a slower spell of the machine hits all of them
    alike)."""
    ks = [turn_steps(c.row.get("warm_ms"), per_turn, turn_s) for c in children]
    for t in range(turns):
        r = t % len(children)
        for child, k in zip(children[r:] + children[:r], ks[r:] + ks[:r]):
            if child.alive:
                child.steps(k)
    return [child.finish() for child in children]


def init_params(name: str) -> None:
    """Seeded Xavier parameters for ``name``, written once by gluonport (MXNet loads them)."""
    import gluonport as mx

    os.makedirs(DATA, exist_ok=True)
    if os.path.exists(params_file(name)):
        return
    mx.random.seed(0)
    net = build(mx, name)
    net.initialize(mx.init.Xavier())
    net(*[mx.nd.zeros(s) for s in input_shapes(name, 1).values()])
    net.save_parameters(params_file(name))


def forward_macs(name: str, batch: int) -> int:
    """Multiply-adds of the Convolution / Deconvolution / FullyConnected / RNN nodes of the
    traced forward graph at batch ``batch``."""
    import gluonport as mx

    shapes = input_shapes(name, batch)
    net = build(mx, name)
    sym = net(*[mx.sym.var(n) for n in shapes])
    if isinstance(sym, (list, tuple)):
        sym = sym[0]
    internals = sym.get_internals()
    arg_shapes, out_shapes, _ = internals.infer_shape(**shapes)
    args = dict(zip(internals.list_arguments(), arg_shapes))
    outs = dict(zip(internals.list_outputs(), out_shapes))
    nodes = json.loads(sym.tojson())["nodes"]
    macs = 0
    for node in nodes:
        op = node["op"]
        if op in ("Convolution", "Deconvolution", "FullyConnected"):
            weight = args[nodes[node["inputs"][1][0]]["name"]]
            macs += int(np.prod(outs[node["name"] + "_output"])) * int(np.prod(weight[1:]))
        elif op == "RNN":
            attrs = node.get("attrs", {})
            gates = {"lstm": 4, "gru": 3}.get(attrs.get("mode"), 1)
            hidden, layers = int(attrs["state_size"]), int(attrs["num_layers"])
            steps, rows, width = outs[node["name"] + "_output"][0], batch, None
            src = nodes[node["inputs"][0][0]]
            src_key = src["name"] if src["op"] == "null" else src["name"] + "_output"
            width = (args.get(src_key) or outs[src_key])[-1]
            for layer in range(layers):
                isize = width if layer == 0 else hidden
                macs += steps * rows * gates * hidden * (isize + hidden)
    return macs


def _progress(r: dict) -> str:
    line = f"  {r['side']:9s} {r['model']:11s} b{r['batch']:<3d} {r['mode']:12s} {_fmt(r):>10s}"
    if "n" in r:
        line += (f" ms  (min {r['min_ms']:.2f}, n={r['n']}, VmHWM {r['vm_hwm_mb']:.0f} MB, "
                 f"RSS before the first step {r['rss_before_mb']:.0f} MB, first loss "
                 f"{r['first_loss']:.5f}" + (f", {r['backend']}" if "backend" in r else "") + ")")
    return line


def _fmt(row: dict | None) -> str:
    if row is None:
        return "-"
    return row["na"] if "na" in row else f"{row['median_ms']:.2f}"


def _ratio(a: dict | None, b: dict | None) -> str:
    """Median ratio (and, in brackets, the ratio of the fastest steps: less sensitive to other
    processes on the machine)."""
    if not a or not b or "na" in a or "na" in b:
        return "-"
    return f"{a['median_ms'] / b['median_ms']:.2f}x ({a['min_ms'] / b['min_ms']:.2f}x)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="mlp and lenet only, 3 steps")
    ap.add_argument("--models", default=None, help="comma-separated subset of " + ",".join(MODELS))
    ap.add_argument("--batches", default="32,1")
    ap.add_argument("--steps", type=int, default=20,
                    help="timed steps (at most; in lockstep: ceil(steps / --turn) turns, and "
                         "a turn of short steps runs more, see --turn-s)")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--budget", type=float, default=30.0,
                    help="seconds of timed steps per configuration (at least 3 steps)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=1,
                    help="--sequential: run each configuration's children this many times, "
                         "alternating sides, and pool their steps (--steps and --budget are "
                         "split)")
    ap.add_argument("--sequential", action="store_true",
                    help="one configuration at a time (each child times all its steps in "
                         "one go) instead of the configurations of a model and batch in "
                         "lockstep")
    ap.add_argument("--turn", type=int, default=3,
                    help="lockstep: timed steps a configuration runs per turn (at least)")
    ap.add_argument("--turn-s", type=float, default=0.3,
                    help="lockstep: or as many as last about this many seconds, if more")
    ap.add_argument("--loss", choices=("sce", "onehot"), default="sce",
                    help="sce: gluon.loss.SoftmaxCrossEntropyLoss; onehot: the same loss as "
                         "-sum(log_softmax * one_hot) (no pick)")
    ap.add_argument("--spin", action="store_true",
                    help="leave OMP_WAIT_POLICY unset (OpenMP threads spin after each region)")
    ap.add_argument("--cuda", action="store_true",
                    help="also time gluonport hybridized on onnxruntime's CUDA execution "
                         "provider (ctx=gpu(0); needs onnxruntime-gpu)")
    ap.add_argument("--modes", default=None,
                    help="run only these modes (comma-separated, of MXNet's imperative, hybrid "
                         "and gluonport's imperative, hybrid_numpy, hybrid_ort, "
                         f"{CUDA_MODE})")
    ap.add_argument("--no-mxnet", action="store_true",
                    help="leave MXNet out even when the oracle is there")
    ap.add_argument("--json", default=None, help="write all results there")
    ap.add_argument("--tables", default=None, metavar="JSON",
                    help="print the tables of a run saved with --json, and exit")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--model", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--batch", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--mode", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.tables:
        with open(args.tables) as f:
            print_tables(json.load(f))
        return
    if args.worker == "peak":
        print(json.dumps(gemm_peak()))
        return
    if args.worker and args.serve:
        serve(args.worker, args.model, args.batch, args.mode, args.warmup, args.loss)
        return
    if args.worker:
        print(json.dumps(worker(args.worker, args.model, args.batch, args.mode, args.steps,
                                args.warmup, args.budget, args.loss)))
        return

    models = args.models.split(",") if args.models else \
        (["mlp", "lenet"] if args.quick else list(MODELS))
    steps, warmup = (3, 1) if args.quick else (args.steps, args.warmup)
    batches = [int(b) for b in args.batches.split(",")]
    env = _env(args.threads, args.spin)
    have_mx = os.path.exists(ORACLE) and not args.no_mxnet
    load0 = os.getloadavg()
    peak = _child(sys.executable, ["--worker", "peak"], env, 300)
    print(f"threads: OMP/MKL/OPENBLAS_NUM_THREADS={args.threads} on both sides"
          f"{'' if args.spin else ', OMP_WAIT_POLICY=PASSIVE'}; gluonport's onnxruntime "
          f"training sessions: intra-op pool of OMP_NUM_THREADS threads, not spinning; "
          f"{os.cpu_count()} CPUs ({cpu_model()}); load average {load0[0]:.2f} "
          f"{load0[1]:.2f} {load0[2]:.2f} at start")
    print("fp32 GEMM peak (numpy matmul): " + ", ".join(
        f"{k}^3 {v:.0f}" for k, v in peak.items() if k != "peak") +
        f" GFLOP/s -> {peak['peak']:.0f}")
    if not have_mx and not args.no_mxnet:
        print(f"MXNet oracle missing ({ORACLE}): MXNet columns are '-'")
    results = []
    rounds = max(1, args.rounds)
    for name in models:
        init_params(name)
        for batch in batches:
            if not args.sequential:
                results.extend(_run_lockstep(name, batch, steps, warmup, args, env, have_mx))
                continue
            got: dict = {}
            for _ in range(rounds):  # the sides alternate, so load changes hit both
                for side, python, mode in _configs(have_mx, args.cuda, args.modes):
                    argv = _worker_argv(side, name, batch, mode, warmup, args.loss) + [
                        "--steps", str(-(-steps // rounds)), "--budget",
                        str(args.budget / rounds)]
                    r = _child(python, argv, env, 600 + args.budget)
                    r.update(side=side, model=name, batch=batch, mode=mode)
                    print(_progress(r), flush=True)
                    got[side, mode] = _merge(got.get((side, mode)), r)
            results.extend(got.values())
    load1 = os.getloadavg()
    run = {"peak_gflops": peak, "threads": args.threads, "cpu": cpu_model(),
           "load_start": load0,
           "load_end": load1, "results": results}
    if args.cuda:
        run["gpu"] = _gpu_name()
    print()
    print_tables(run)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(run, f, indent=1)


def _configs(have_mx: bool, cuda: bool = False, modes: str | None = None):
    """``(side, python, mode)`` of every configuration, MXNet's first (when the oracle is
    there), gluonport's CUDA one last (``--cuda``); only ``modes`` (comma-separated) if given."""
    keep = set(modes.split(",")) if modes else None
    for side in ("mxnet", "gluonport"):
        if side == "mxnet" and not have_mx:
            continue
        for mode in MODES[side] + ((CUDA_MODE,) if cuda and side == "gluonport" else ()):
            if keep is None or mode in keep:
                yield side, ORACLE if side == "mxnet" else sys.executable, mode


def _gpu_name() -> str:
    """The GPU's name as nvidia-smi gives it, or why not."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version",
                              "--format=csv,noheader"], capture_output=True, text=True,
                             timeout=30)
        return out.stdout.strip() or out.stderr.strip()
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"nvidia-smi: {err}"


def _worker_argv(side: str, name: str, batch: int, mode: str, warmup: int, loss: str) -> list:
    return ["--worker", side, "--model", name, "--batch", str(batch), "--mode", mode,
            "--warmup", str(warmup), "--loss", loss]


def _run_lockstep(name: str, batch: int, steps: int, warmup: int, args, env: dict,
                  have_mx: bool) -> list:
    """Every configuration of ``name`` at ``batch`` resident at once (one child each), taking
    turns (:func:`lockstep`)."""
    children, keys = [], []
    for side, python, mode in _configs(have_mx, args.cuda, args.modes):
        children.append(_Resident(python, _worker_argv(side, name, batch, mode, warmup,
                                                       args.loss), env, 600 + args.budget))
        keys.append((side, mode))
    per_turn = max(1, min(args.turn, steps))
    rows = lockstep(children, -(-steps // per_turn), per_turn, args.turn_s)
    for (side, mode), r in zip(keys, rows):
        r.update(side=side, model=name, batch=batch, mode=mode)
        print(_progress(r), flush=True)
    return rows


def _merge(a: dict | None, b: dict) -> dict:
    """One configuration's rounds pooled: all timed steps, the highest peak RSS."""
    if a is None or "na" in a or "na" in b:
        return b if a is None or "na" in b else a
    times = a["times_ms"] + b["times_ms"]
    return dict(a, times_ms=times, median_ms=float(np.median(times)), n=len(times),
                min_ms=min(a["min_ms"], b["min_ms"]),
                vm_hwm_mb=max(a["vm_hwm_mb"], b["vm_hwm_mb"]),
                rss_before_mb=max(a["rss_before_mb"], b["rss_before_mb"]))


def print_tables(run: dict) -> None:
    """The step-time, compute-floor and memory tables of a run (``main`` or ``--tables``)."""
    peak = run["peak_gflops"]["peak"]
    got = {(r["side"], r["model"], r["batch"], r["mode"]): r for r in run["results"]}
    configs = list(dict.fromkeys((r["model"], r["batch"]) for r in run["results"]))
    rows, floor_rows, mem_rows = [], [], []
    for name, batch in configs:
        mi, mh = (got.get(("mxnet", name, batch, m)) for m in MODES["mxnet"])
        gi, gn, go = (got.get(("gluonport", name, batch, m)) for m in MODES["gluonport"])
        label = f"{name} b{batch}"
        rows.append([label, _fmt(mi), _fmt(mh), _fmt(gi), _fmt(gn), _fmt(go),
                     _ratio(gi, mi), _ratio(gn, mh), _ratio(go, mh)])
        macs = forward_macs(name, batch)
        floor_ms = 3 * 2 * macs / (peak * 1e9) * 1e3
        pct = [("-" if not r or "na" in r else f"{100 * floor_ms / r['median_ms']:.1f}%")
               for r in (mi, mh, gi, gn, go)]
        floor_rows.append([label, f"{macs / 1e6:.1f}", f"{floor_ms:.3f}", *pct])
        mem_rows.append([label] + [_mem(r) for r in (mi, mh, gi, gn, go)]
                        + [_mem_ratio(gi, mi), _mem_ratio(go, mh)])
    print("step ms: median of the timed steps; ratios: of the medians (of the fastest steps); "
          f"{run.get('threads', '?')} threads on {run.get('cpu', 'an unrecorded processor')}")
    print(table(rows, ["model", "MXNet imp", "MXNet hyb", "gp imp", "gp hyb-numpy",
                       "gp hyb-ort", "imp/MX imp (<=1.5)", "hyb-numpy/MX hyb",
                       "hyb-ort/MX hyb (<=1.0)"]))
    print()
    print(f"compute floor: 3 x forward MACs x 2 flops at {peak:.0f} GFLOP/s; "
          "% = floor / step time")
    print(table(floor_rows, ["model", "fwd MMAC", "floor ms", "MX imp", "MX hyb", "gp imp",
                             "gp hyb-numpy", "gp hyb-ort"]))
    print()
    print("peak RSS: VmHWM of each child, MB, imports and parameters included (in brackets: "
          "growth over the RSS before the first step, i.e. the training step's own memory)")
    print(table(mem_rows, ["model", "MX imp", "MX hyb", "gp imp", "gp hyb-numpy", "gp hyb-ort",
                           "gp imp/MX imp", "gp hyb-ort/MX hyb (resnet18 <=1.5)"]))
    phase_rows = []
    for name, batch in configs:
        for mode in (*MODES["gluonport"], CUDA_MODE):
            r = got.get(("gluonport", name, batch, mode))
            if r and "phases_ms" in r:
                phase_rows.append([f"{name} b{batch}", mode, _fmt(r),
                                   *(f"{ms:.2f}" for ms in r["phases_ms"])])
    if phase_rows:
        print()
        print("gluonport's step in phases, ms (medians over the timed steps): forward + loss "
              "under autograd.record(), loss.backward(), trainer.step()")
        print(table(phase_rows, ["model", "mode", "step", "forward", "backward", "update"]))
    cuda_rows = []
    for name, batch in configs:
        gc = got.get(("gluonport", name, batch, CUDA_MODE))
        if gc is None:
            continue
        go = got.get(("gluonport", name, batch, "hybrid_ort"))
        mh = got.get(("mxnet", name, batch, "hybrid"))
        cuda_rows.append([f"{name} b{batch}", _fmt(gc), _fmt(go), _ratio(go, gc), _fmt(mh),
                          _ratio(mh, gc), gc.get("backend", "-")])
    if cuda_rows:
        print()
        print(f"onnxruntime CUDA execution provider ({run.get('gpu', '?')}) against the CPU "
              f"(hybridized steps, ms; speed-ups: CPU median / CUDA median)")
        print(table(cuda_rows, ["model", "gp hyb-ort CUDA", "gp hyb-ort CPU",
                                "CPU/CUDA", "MXNet hyb CPU", "MX CPU/CUDA", "CUDA backend"]))
    load0, load1 = run["load_start"], run["load_end"]
    print(f"\nload average (1, 5, 15 min) at start {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}, "
          f"at end {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}")


def _mem(r: dict | None) -> str:
    """Peak RSS (MB) and, in brackets, its growth over the RSS before the first step."""
    if not r or "vm_hwm_mb" not in r:
        return "-"
    if "rss_before_mb" not in r:
        return f"{r['vm_hwm_mb']:.0f}"
    return f"{r['vm_hwm_mb']:.0f} (+{r['vm_hwm_mb'] - r['rss_before_mb']:.0f})"


def _mem_ratio(a: dict | None, b: dict | None) -> str:
    if not a or not b or "vm_hwm_mb" not in a or "vm_hwm_mb" not in b:
        return "-"
    return f"{a['vm_hwm_mb'] / b['vm_hwm_mb']:.2f}x"


if __name__ == "__main__":
    main()
