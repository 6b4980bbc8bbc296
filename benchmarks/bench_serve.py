"""Serving throughput: Ray Serve (gluonport serve) against ``gluonport.load`` in a loop.

    python benchmarks/bench_serve.py [--requests 300] [--resnet-requests 60] [--concurrency 8]
                                     [--json out.json]

Needs ``pip install "gluonport[serve]"``. For the sample LeNet (batch-1 requests of 1x28x28)
and a resnet18_v1 (random weights, 3x224x224), in one run on one local Ray:

- ``in-process``: ``gluonport.load(model)`` called in a loop, one request at a time (the
  single-process baseline; latency is one call);
- Ray Serve at 1 and 2 replicas, without batching (``max_batch_size=1``) and with Ray Serve's
  dynamic batching (``max_batch_size=8``, ``batch_wait_ms=5``): ``--concurrency`` client
  threads POST ``.npy`` bodies over HTTP on localhost, each request timed from send to the
  whole response read. ``mean batch`` is the mean of the ``X-Gluonport-Batch`` response header:
how many requests ran together in the call that served each one.

Requests per second is requests / wall time; p50/p99 are per-request latencies. Every
configuration's responses are checked against the in-process output first (a benchmark of
error responses measures nothing); failed requests are counted in the table. The client threads
run in this process and share its CPUs with Ray, as a load balancer on the same machine would.
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import os
import socket
import sys
import tempfile
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _oracle import table  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _percentiles(lat: list[float]) -> tuple[float, float]:
    q = np.percentile(np.asarray(lat) * 1000, [50, 99])
    return float(q[0]), float(q[1])


def _resnet18(folder: str) -> str:
    import gluonport as mx
    from gluonport.gluon.model_zoo import vision

    net = vision.resnet18_v1()
    net.initialize(mx.init.Xavier())
    net.hybridize()
    net(mx.nd.zeros((1, 3, 224, 224)))
    prefix = os.path.join(folder, "resnet18_v1")
    net.export(prefix)
    return prefix


def bench_in_process(prefix: str, x: np.ndarray, n: int) -> dict:
    import gluonport

    model = gluonport.load(prefix)
    for _ in range(5):
        model(x)
    lat = []
    start = time.perf_counter()
    for _ in range(n):
        t = time.perf_counter()
        model(x)
        lat.append(time.perf_counter() - t)
    wall = time.perf_counter() - start
    p50, p99 = _percentiles(lat)
    return {"rps": n / wall, "p50_ms": p50, "p99_ms": p99, "failed": 0, "mean_batch": 1.0}


def _post(url: str, body: bytes, joined: list | None = None) -> tuple[int, bytes]:
    req = urllib.request.Request(url, data=body, method="POST",
                                 headers={"Content-Type": "application/x-npy"})
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            if joined is not None:
                joined.append(int(resp.headers.get("X-Gluonport-Batch", 1)))
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def bench_http(url: str, body: bytes, n: int, concurrency: int) -> dict:
    lat: list[float] = []
    joined: list[int] = []
    failed = 0

    def client(count: int) -> None:
        nonlocal failed
        for _ in range(count):
            t = time.perf_counter()
            status, _ = _post(url, body, joined)
            lat.append(time.perf_counter() - t)
            failed += status != 200

    per = [n // concurrency + (i < n % concurrency) for i in range(concurrency)]
    start = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(client, per))
    wall = time.perf_counter() - start
    p50, p99 = _percentiles(lat)
    return {"rps": n / wall, "p50_ms": p50, "p99_ms": p99, "failed": failed,
            "mean_batch": float(np.mean(joined)) if joined else 0.0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=300, help="requests per LeNet config")
    ap.add_argument("--resnet-requests", type=int, default=60,
                    help="requests per resnet18 config")
    ap.add_argument("--concurrency", type=int, default=8, help="client threads")
    ap.add_argument("--max-batch-size", type=int, default=8)
    ap.add_argument("--batch-wait-ms", type=float, default=5.0)
    ap.add_argument("--json", default=None, help="also write the rows here")
    args = ap.parse_args()

    import ray
    from ray import serve

    import gluonport
    from gluonport.serve import deployment, prepare_model

    tmp = tempfile.mkdtemp(prefix="bench_serve_")
    models = [("lenet_bn", os.path.join(ROOT, "sample_models", "lenet_bn"), (1, 1, 28, 28),
               args.requests),
              ("resnet18_v1", _resnet18(tmp), (1, 3, 224, 224), args.resnet_requests)]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ray.init(address="local", num_cpus=os.cpu_count(), include_dashboard=False,
             log_to_driver=False, logging_level=logging.ERROR)
    serve.start(http_options={"host": "127.0.0.1", "port": port})
    rows = []
    print(f"load average at the start: {os.getloadavg()}", flush=True)
    try:
        for name, prefix, shape, n in models:
            x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
            buf = io.BytesIO()
            np.save(buf, x)
            body = buf.getvalue()
            want = gluonport.load(prefix)(x)
            res = bench_in_process(prefix, x, n)
            rows.append({"model": name, "engine": "gluonport.load loop", "replicas": "-",
                         "batching": "-", **res})
            print(rows[-1], flush=True)
            sm = prepare_model(prefix, input_shapes={"data": shape})
            for replicas in (1, 2):
                for batched in (False, True):
                    app = deployment(sm, replicas=replicas,
                                     max_batch_size=args.max_batch_size if batched else 1,
                                     batch_wait_ms=args.batch_wait_ms, num_cpus=0.5)
                    serve.run(app, name="bench", route_prefix="/bench")
                    url = f"http://127.0.0.1:{port}/bench"
                    status, data = _post(url, body)
                    assert status == 200, data
                    np.testing.assert_allclose(np.load(io.BytesIO(data)), want, rtol=1e-4,
                                               atol=1e-4)
                    bench_http(url, body, 4 * args.concurrency, args.concurrency)  # warm-up
                    res = bench_http(url, body, n, args.concurrency)
                    rows.append({"model": name, "engine": "Ray Serve", "replicas": replicas,
                                 "batching": f"max {args.max_batch_size}" if batched else "off",
                                 **res})
                    print(rows[-1], flush=True)
                    serve.delete("bench")
    finally:
        serve.shutdown()
        ray.shutdown()
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    print(f"\n{os.cpu_count()} CPUs (load average {load} at the end), {args.concurrency} client "
          "threads, batch-1 requests (.npy over HTTP); in-process: one call at a time")
    print(table([[r["model"], r["engine"], str(r["replicas"]), r["batching"],
                  f"{r['rps']:.1f}", f"{r['p50_ms']:.1f}", f"{r['p99_ms']:.1f}",
                  f"{r['mean_batch']:.1f}", str(r["failed"])] for r in rows],
                ["model", "engine", "replicas", "batching", "req/s", "p50 ms", "p99 ms",
                 "mean batch", "failed"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
