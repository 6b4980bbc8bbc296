"""Ray Serve: a deployment serving a gluonport model over HTTP, batched by Ray Serve.

Ray is imported inside these functions only (``pip install "gluonport[serve]"``). The model is
prepared once in the driver (:func:`gluonport.serve.prepare_model`): errors about the model
(unsupported ops, a missing GPU, shapes) come at deploy time, and the replicas receive the
exported ONNX bytes, so they need no access to the model's files (a remote cluster works).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping
from typing import Any

from ..errors import ArgumentError, GluonportError
from ._codec import DEFAULT_MAX_REQUEST_BYTES
from ._model import ServeModel, check_device, prepare_model

__all__ = ["deployment", "import_serve", "start", "serve_model"]

log = logging.getLogger("gluonport.serve")


def import_serve() -> Any:
    """``ray.serve``, or an error saying how to install it."""
    try:
        from ray import serve
    except ImportError as exc:
        raise GluonportError(f"Ray Serve is not installed ({exc}); install it with: pip install "
                             "\"gluonport[serve]\"") from None
    return serve


class _Replica:
    """One Ray Serve replica: decodes a request, runs it (alone or in a batch), encodes the
    response. Bad requests get a 4xx and a one-line JSON error; the replica keeps serving. The
    response header ``X-Gluonport-Batch`` says how many requests ran in the same call."""

    def __init__(self, sm: ServeModel, device: str, batched: bool, max_batch_size: int,
                 batch_wait_s: float, max_request_bytes: int):
        from .batch import Engine

        self.sm = sm
        self.engine = Engine(sm, device)
        self.batched = batched
        self.max_request_bytes = max_request_bytes

    async def run_batch(self, feeds: list[dict]) -> list[Any]:
        """Requests batched by Ray Serve: those of equal shapes run as one call."""
        import numpy as np

        from ._codec import split_batch

        groups: dict[tuple, list[int]] = {}
        for i, feed in enumerate(feeds):
            key = tuple(feed[n].shape[1:] for n in self.sm.input_names)
            groups.setdefault(key, []).append(i)
        results: list[Any] = [None] * len(feeds)
        for idx in groups.values():
            joined = {n: np.concatenate([feeds[i][n] for i in idx]) for n in self.sm.input_names}
            sizes = [feeds[i][self.sm.input_names[0]].shape[0] for i in idx]
            try:
                outs = await asyncio.to_thread(self.engine.run, joined)
            except Exception as exc:  # noqa: BLE001 - every request of the group gets it
                for i in idx:
                    results[i] = exc
                continue
            names = list(outs)
            for i, parts in zip(idx, split_batch([outs[n] for n in names], sizes)):
                results[i] = (dict(zip(names, parts)), len(idx))
        return results

    async def __call__(self, request: Any) -> Any:
        from starlette.responses import Response

        from ._codec import JSON, decode_request, encode_response, error_body, http_status

        try:
            body = await _read_body(request, self.max_request_bytes)
            arrays, enc = decode_request(body, request.headers.get("content-type"),
                                         self.sm.inputs, batched=self.batched,
                                         max_bytes=self.max_request_bytes)
            joined = 1
            if self.batched:
                outs = await self.run_batch(arrays)
                if isinstance(outs, BaseException):
                    raise outs
                outs, joined = outs
            else:
                outs = await asyncio.to_thread(self.engine.run, arrays)
            data, ctype = encode_response(outs, enc)
            # how many requests ran together in the call that served this one
            return Response(data, media_type=ctype, headers={"X-Gluonport-Batch": str(joined)})
        except GluonportError as exc:
            return Response(error_body(exc), status_code=http_status(exc), media_type=JSON)


async def _read_body(request: Any, limit: int) -> bytes:
    """The body, refused (413) as soon as it passes ``limit`` bytes."""
    from ..errors import ResourceLimitError

    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise ResourceLimitError(f"request: body of {declared} bytes is over the limit of "
                                 f"{limit} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ResourceLimitError(f"request: body is over the limit of {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def deployment(model: str | os.PathLike | ServeModel, *, replicas: int = 1,
               max_batch_size: int = 8, batch_wait_ms: float = 5.0, device: Any = "cpu",
               input_shapes: Mapping[str, Any] | None = None, params: str | None = None,
               epoch: int | None = None, max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
               name: str | None = None, num_cpus: float = 1.0,
               check_device_here: bool = True) -> Any:
    """A Ray Serve application serving ``model`` over HTTP.

    Run it with ``ray.serve.run(app, route_prefix="/lenet")``; ``POST`` a request (see
    :mod:`gluonport.serve._codec` for the format) and get the outputs back.

    Parameters
    ----------
    model:
        Anything :func:`gluonport.load` accepts (prefix, ``*-symbol.json``, ``.onnx``), or a
        prepared :class:`ServeModel`.
    replicas:
        Ray Serve replicas (``num_replicas``).
    max_batch_size, batch_wait_ms:
        Ray Serve's dynamic batching: at most ``max_batch_size`` requests joined along axis 0,
        waiting at most ``batch_wait_ms`` for a batch to fill. Used only when the model's batch
        axis is dynamic (:func:`gluonport.serve.prepare_model`); ``max_batch_size=1`` turns it
        off. A fixed-batch model is served unbatched, with a warning.
    device:
        ``cpu`` or ``cuda:N``: each replica asks Ray for one GPU. ``check_device_here``: check
        now that onnxruntime can use it (turn off when the driver has no GPU but the cluster
        has).
    max_request_bytes:
        Larger bodies get HTTP 413.
    num_cpus:
        CPUs Ray reserves per replica.

    Returns
    -------
    ray.serve.Application
    """
    serve = import_serve()
    if not isinstance(replicas, int) or replicas < 1:
        raise ArgumentError(f"replicas={replicas!r}: give an integer of at least 1")
    if not isinstance(max_batch_size, int) or max_batch_size < 1:
        raise ArgumentError(f"max_batch_size={max_batch_size!r}: give an integer of at least 1")
    if not 0 <= batch_wait_ms <= 60000:
        raise ArgumentError(f"batch_wait_ms={batch_wait_ms!r}: give 0 to 60000")
    if not isinstance(max_request_bytes, int) or max_request_bytes < 1:
        raise ArgumentError(f"max_request_bytes={max_request_bytes!r}: give a positive integer")
    on_gpu = str(device).lower().startswith(("cuda", "gpu")) or getattr(
        device, "device_type", "") == "gpu"
    ctx = check_device(device) if check_device_here or not on_gpu else None
    sm = model if isinstance(model, ServeModel) else prepare_model(
        model, input_shapes=input_shapes, params=params, epoch=epoch, ctx=ctx)
    batched = sm.batch_dynamic and max_batch_size > 1
    if not sm.batch_dynamic:
        log.warning("%s: serving unbatched: %s", sm.name, sm.why_fixed)
    dev = str(device) if ctx is None else ("cpu" if ctx.device_type == "cpu"
                                          else f"cuda:{ctx.device_id}")
    options = {"num_cpus": num_cpus}
    if on_gpu:
        options["num_gpus"] = 1
    cls = type("GluonportModel", (_Replica,), {})
    if batched:
        cls.run_batch = serve.batch(max_batch_size=max_batch_size,
                                    batch_wait_timeout_s=batch_wait_ms / 1000.0)(
            _Replica.run_batch)
    dep = serve.deployment(cls, name=name or sm.name, num_replicas=replicas,
                           ray_actor_options=options,
                           max_ongoing_requests=max(8, 2 * max_batch_size))
    return dep.bind(sm, dev, batched, max_batch_size, batch_wait_ms / 1000.0, max_request_bytes)


def start(address: str | None = None, *, host: str = "127.0.0.1", port: int = 8000,
          num_cpus: int | None = None) -> None:
    """Connect to a Ray cluster (``address``: ``auto``, ``ray://HOST:10001``) or start a new
    local Ray (``address=None``: never another process's cluster by accident), then Ray Serve's
    HTTP proxy on ``host:port``."""
    import ray

    serve = import_serve()
    if not ray.is_initialized():
        kwargs: dict[str, Any] = {"address": address or "local", "log_to_driver": False,
                                  "logging_level": logging.WARNING}
        if not address:
            kwargs["include_dashboard"] = False
            if num_cpus:
                kwargs["num_cpus"] = num_cpus
        ray.init(**kwargs)
    serve.start(http_options={"host": host, "port": port})


def serve_model(app: Any, route: str = "/", name: str = "gluonport") -> Any:
    """Deploy ``app`` under ``route`` (blocking until its replicas are up)."""
    serve = import_serve()
    return serve.run(app, name=name, route_prefix=route)
