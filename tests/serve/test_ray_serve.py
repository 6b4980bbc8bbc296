"""Ray Serve: the bundled LeNet deployed with 2 replicas on a local Ray, queried over HTTP.

Skipped when Ray Serve is not installed (``pip install "gluonport[serve]"``; CI installs it).
Every response is checked against ``gluonport.load`` run in this process.
"""

from __future__ import annotations

import io
import json
import socket
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

serve = pytest.importorskip("ray.serve")
ray = pytest.importorskip("ray")

import gluonport  # noqa: E402
from tests.serve._samples import prefix  # noqa: E402

PREFIX = prefix("lenet_bn")
LIMIT = 256 * 1024
TIMEOUT = 30
JOINED: list[int] = []  # X-Gluonport-Batch of each answered request


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def url():
    from gluonport.serve import deployment

    port = _free_port()
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
             logging_level="ERROR", configure_logging=False)
    try:
        serve.start(http_options={"host": "127.0.0.1", "port": port})
        app = deployment(PREFIX, replicas=2, max_batch_size=4, batch_wait_ms=20,
                         input_shapes={"data": (1, 1, 28, 28)}, max_request_bytes=LIMIT,
                         num_cpus=0.5)  # one of the 2 CPUs stays free for the Ray Data test
        serve.run(app, name="lenet", route_prefix="/lenet")
        yield f"http://127.0.0.1:{port}/lenet"
    finally:
        serve.shutdown()
        ray.shutdown()


def _post(url: str, body: bytes, ctype: str) -> tuple[int, bytes, str]:
    req = urllib.request.Request(url, data=body, headers={"Content-Type": ctype}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT) as resp:
            JOINED.append(int(resp.headers["X-Gluonport-Batch"]))
            return resp.status, resp.read(), resp.headers.get("content-type", "")
    except urllib.error.HTTPError as err:
        return err.code, err.read(), err.headers.get("content-type", "")


def _npy(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


def test_concurrent_requests_match_in_process(url):
    model = gluonport.load(PREFIX)
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((1 + i % 3, 1, 28, 28)).astype(np.float32) for i in range(24)]

    def one(i):
        x = xs[i]
        if i % 2:
            status, body, ctype = _post(url, _npy(x), "application/x-npy")
            assert status == 200, body
            assert ctype.startswith("application/x-npy")
            return np.load(io.BytesIO(body), allow_pickle=False)
        doc = {"inputs": {"data": {"data": x.tolist(), "dtype": "float32"}}}
        status, body, _ = _post(url, json.dumps(doc).encode(), "application/json")
        assert status == 200, body
        (out,) = json.loads(body)["outputs"].values()
        assert out["dtype"] == "float32" and out["shape"] == [x.shape[0], 10]
        return np.asarray(out["data"], np.float32)

    JOINED.clear()
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(one, range(len(xs))))
    assert len(JOINED) == len(xs) and all(1 <= j <= 4 for j in JOINED), JOINED
    for x, y in zip(xs, got):
        want = model(x)
        assert y.shape == want.shape
        np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-5)
    status = serve.status().applications["lenet"].deployments["lenet_bn"]
    assert status.replica_states.get("RUNNING") == 2


@pytest.mark.parametrize("body, ctype, code, words", [
    (b"{not json", "application/json", 400, "not valid JSON"),
    (b'{"inputs": {}}', "application/json", 400, "missing ['data']"),
    (b'{"inputs": {"data": {"data": [[[[1]]]], "dtype": "int64"}}}', "application/json", 400,
     "int64"),
    (json.dumps({"inputs": {"data": [[[0.0] * 28] * 28]}}).encode(), "application/json", 400,
     "shape (1, 28, 28)"),
    (b"\x93NUMPY garbage", "application/x-npy", 400, "not a valid .npy"),
    (b"0" * (LIMIT + 1), "application/json", 413, "over the limit"),
    (b"x", "image/png", 400, "not served"),
])
def test_bad_requests_get_4xx_and_the_replicas_keep_serving(url, body, ctype, code, words):
    status, data, rctype = _post(url, body, ctype)
    assert status == code, data
    assert rctype.startswith("application/json")
    msg = json.loads(data)["error"]
    assert words in msg and "\n" not in msg
    x = np.zeros((1, 1, 28, 28), np.float32)
    status, data, _ = _post(url, _npy(x), "application/x-npy")
    assert status == 200
    np.testing.assert_allclose(np.load(io.BytesIO(data)), gluonport.load(PREFIX)(x),
                               rtol=1e-4, atol=1e-5)


def test_ray_data_map_batches_with_batch_predictor(url):
    """Offline inference over a dataset with the engine the replicas run."""
    ray_data = pytest.importorskip("ray.data")  # ray[data]: pandas, pyarrow

    from gluonport.serve import BatchPredictor, prepare_model

    sm = prepare_model(PREFIX, input_shapes={"data": (1, 1, 28, 28)})
    rng = np.random.default_rng(1)
    x = rng.standard_normal((10, 1, 28, 28)).astype(np.float32)
    ds = ray_data.from_items([{"id": i, "data": x[i]} for i in range(len(x))])
    out = ds.map_batches(BatchPredictor, fn_constructor_kwargs={"model": sm}, batch_size=4,
                         batch_format="numpy", concurrency=1, num_cpus=0.5)
    rows = out.take_all()
    assert sorted(r["id"] for r in rows) == list(range(len(x)))
    want = gluonport.load(PREFIX)(x)
    for r in rows:
        np.testing.assert_allclose(r[sm.output_names[0]], want[r["id"]], rtol=1e-4, atol=1e-5)
