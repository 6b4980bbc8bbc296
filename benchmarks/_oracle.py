"""Bridge to the MXNet 1.9.1 oracle for benchmarks: make model files, time MXNet on them.

The oracle is the Python 3.8 virtualenv with MXNet 1.9.1 described in the README ("Golden
fixtures and the oracle"; default ``~/.cache/gluonport-oracle``; override with
``GLUONPORT_ORACLE``). Everything here is optional: without the oracle, benchmarks print
gluonport's numbers and say the MXNet column is missing.
Model files are cached under ``benchmarks/_data/`` (git-ignored).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "_data")
ORACLE = os.environ.get("GLUONPORT_ORACLE",
                        os.path.expanduser("~/.cache/gluonport-oracle/bin/python"))


def have_oracle() -> bool:
    return os.path.exists(ORACLE)


def _run(code: str, timeout: int = 1200) -> str:
    out = subprocess.run([ORACLE, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                         timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError(f"oracle failed:\n{out.stderr[-3000:]}")
    return out.stdout


def model_files(name: str, shape: tuple[int, ...]) -> str:
    """Export MXNet model-zoo ``name`` (random weights, seed 0) once; returns the prefix.

    Without the oracle the files must already exist (e.g. copied from another machine).
    """
    os.makedirs(DATA, exist_ok=True)
    prefix = os.path.join(DATA, name)
    if os.path.exists(prefix + "-0000.params"):
        return prefix
    if not have_oracle():
        raise FileNotFoundError(f"{prefix}-symbol.json is missing and the MXNet oracle is not "
                                "installed (README: 'Golden fixtures and the oracle') to make it")
    _run(f"""
        import mxnet as mx, numpy as np
        from mxnet.gluon.model_zoo import vision
        mx.random.seed(0)
        net = vision.get_model({name!r})
        net.initialize(mx.init.Xavier())
        net.hybridize()
        x = mx.nd.array(np.random.RandomState(0).uniform(-1, 1, {shape!r}).astype('float32'))
        net(x)
        net.export({prefix!r}, 0)
        np.save({prefix!r} + '-input.npy', x.asnumpy())
    """)
    return prefix


def time_mxnet(prefix: str, shape: tuple[int, ...], iters: int = 20, warmup: int = 3,
               raw: bool = False) -> dict | list[float] | None:
    """MXNet 1.9.1 hybridized (static_alloc/static_shape) latency on the same files:
    ``{"median_ms": .., "p90_ms": ..}`` (``raw``: the list of per-call ms), or None without
    the oracle."""
    if not have_oracle():
        return None
    out = _run(f"""
        import json, time, mxnet as mx, numpy as np
        net = mx.gluon.SymbolBlock.imports({prefix!r} + '-symbol.json', ['data'],
                                           {prefix!r} + '-0000.params')
        net.hybridize(static_alloc=True, static_shape=True)
        x = mx.nd.array(np.random.RandomState(1).uniform(-1, 1, {shape!r}).astype('float32'))
        for _ in range({warmup}):
            net(x).wait_to_read()
        ts = []
        for _ in range({iters}):
            t0 = time.perf_counter(); net(x).wait_to_read(); ts.append(time.perf_counter() - t0)
        print(json.dumps({{"median_ms": float(np.median(ts) * 1e3),
                          "p90_ms": float(np.percentile(ts, 90) * 1e3),
                          "all_ms": [t * 1e3 for t in ts]}}))
    """)
    res = json.loads(out.strip().splitlines()[-1])
    return res.pop("all_ms") if raw else res


def time_mxnet_gluon(name: str, shape: tuple[int, ...], iters: int = 10) -> dict | None:
    """MXNet 1.9.1's own model-zoo ``name`` forward, imperative and hybridized
    (static_alloc/static_shape), median ms: ``{"imperative_ms": .., "hybridized_ms": ..}``, or
    None without the oracle. Puts gluonport's imperative-vs-hybridized ratio next to MXNet's."""
    if not have_oracle():
        return None
    out = _run(f"""
        import json, time, mxnet as mx, numpy as np
        from mxnet.gluon.model_zoo import vision
        net = vision.get_model({name!r})
        net.initialize(mx.init.Xavier())
        x = mx.nd.array(np.random.RandomState(0).uniform(-1, 1, {shape!r}).astype('float32'))
        def timed():
            for _ in range(3):
                net(x).wait_to_read()
            ts = []
            for _ in range({iters}):
                t0 = time.perf_counter(); net(x).wait_to_read()
                ts.append(time.perf_counter() - t0)
            return float(np.median(ts) * 1e3)
        imperative = timed()
        net.hybridize(static_alloc=True, static_shape=True)
        print(json.dumps({{"imperative_ms": imperative, "hybridized_ms": timed()}}))
    """)
    return json.loads(out.strip().splitlines()[-1])


def time_mxnet_export(prefix: str, shape: tuple[int, ...], repeat: int = 3) -> float | None:
    """Seconds MXNet 1.9.1's ``mxnet.onnx.export_model`` takes on the same files (median)."""
    if not have_oracle():
        return None
    out = _run(f"""
        import json, time, tempfile, os, numpy as np
        import mxnet as mx
        from mxnet import onnx as mxonnx
        ts = []
        d = tempfile.mkdtemp()
        for _ in range({repeat}):
            t0 = time.perf_counter()
            mxonnx.export_model({prefix!r} + '-symbol.json', {prefix!r} + '-0000.params',
                                [{shape!r}], np.float32, os.path.join(d, 'm.onnx'))
            ts.append(time.perf_counter() - t0)
        print(json.dumps(float(np.median(ts))))
    """)
    return float(out.strip().splitlines()[-1])


def cpu_model() -> str:
    """The processor's name (``model name`` of /proc/cpuinfo, else ``platform.processor()``).

    Ratios against MXNet depend on it, not only on speed: MXNet 1.9.1's oneDNN kernels gained
    more on a 2-vCPU Intel Xeon VM than on a 2-vCPU AMD EPYC VM (README, "Training steps"), so
    every table records the processor it was measured on."""
    fields: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if not key.strip():  # the first processor's block ends here
                    break
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    if "model name" in fields:  # a VM may name only the vendor: family and model say more
        return fields["model name"] + "".join(
            f", {k} {fields[k]}" for k in ("cpu family", "model") if k in fields)
    import platform

    return platform.processor() or platform.machine() or "unknown processor"


def table(rows: list[list[str]], header: list[str]) -> str:
    """A plain aligned text table."""
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths))
    out = [line, "-" * len(line)]
    out += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(out)


if __name__ == "__main__":  # pragma: no cover
    print("oracle:", ORACLE, "present" if have_oracle() else "missing", file=sys.stderr)
