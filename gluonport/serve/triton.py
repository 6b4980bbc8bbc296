"""A Triton Inference Server model repository for any model :func:`gluonport.load` accepts.

:func:`write_triton_repo` writes ``DIR/<name>/config.pbtxt`` and ``DIR/<name>/1/model.onnx``
(platform ``onnxruntime_onnx``). The batch axis is folded into ``max_batch_size`` only when it
is dynamic for every input and output (see :func:`gluonport.serve._model.prepare_model`);
otherwise ``max_batch_size: 0`` and the dims are the model's full shapes, with no dynamic
batching.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import ArgumentError, DTypeError
from ._model import ServeModel, TensorSpec, check_device, prepare_model

__all__ = ["write_triton_repo", "triton_config", "TRITON_DTYPES"]

# numpy dtype -> Triton's DataType enum name (model_config.proto)
TRITON_DTYPES = {
    "bool": "TYPE_BOOL", "uint8": "TYPE_UINT8", "uint16": "TYPE_UINT16",
    "uint32": "TYPE_UINT32", "uint64": "TYPE_UINT64", "int8": "TYPE_INT8",
    "int16": "TYPE_INT16", "int32": "TYPE_INT32", "int64": "TYPE_INT64",
    "float16": "TYPE_FP16", "float32": "TYPE_FP32", "float64": "TYPE_FP64",
}


def _triton_type(spec: TensorSpec) -> str:
    try:
        return TRITON_DTYPES[np.dtype(spec.dtype).name]
    except KeyError:
        raise DTypeError(f"{spec.name!r} has dtype {spec.dtype}, which Triton has no type for"
                         ) from None


def _tensor_block(specs: list[TensorSpec], batched: bool) -> str:
    rows = []
    for s in specs:
        dims = s.dims[1:] if batched else s.dims
        rows.append("  {\n"
                    f"    name: \"{_escape(s.name)}\"\n"
                    f"    data_type: {_triton_type(s)}\n"
                    f"    dims: [ {', '.join(str(d) for d in dims)} ]\n"
                    "  }")
    return "[\n" + ",\n".join(rows) + "\n]"


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def triton_config(sm: ServeModel, max_batch_size: int = 8, instance_count: int = 1,
                  device: Any = "cpu", max_queue_delay_us: int = 100) -> str:
    """The text of ``config.pbtxt`` for a prepared model (see :func:`write_triton_repo`)."""
    from ..context import Context

    _check_counts(max_batch_size, instance_count)
    ctx = device if isinstance(device, Context) else None
    on_gpu = (ctx.device_type == "gpu") if ctx is not None else \
        str(device).lower().startswith(("cuda", "gpu"))
    batched = sm.batch_dynamic and max_batch_size > 0
    lines = [f"name: \"{_escape(sm.name)}\"", "platform: \"onnxruntime_onnx\"",
             f"max_batch_size: {max_batch_size if batched else 0}",
             f"input {_tensor_block(sm.inputs, batched)}",
             f"output {_tensor_block(sm.outputs, batched)}"]
    if batched:
        lines.append("dynamic_batching {\n"
                     f"  max_queue_delay_microseconds: {int(max_queue_delay_us)}\n}}")
    if on_gpu:
        index = ctx.device_id if ctx is not None else int(str(device).rpartition(":")[2] or 0)
        group = f"    count: {instance_count}\n    kind: KIND_GPU\n    gpus: [ {index} ]\n"
    else:
        group = f"    count: {instance_count}\n    kind: KIND_CPU\n"
    lines.append("instance_group [\n  {\n" + group + "  }\n]")
    return "\n".join(lines) + "\n"


def _check_counts(max_batch_size: int, instance_count: int) -> None:
    if not isinstance(max_batch_size, int) or not 0 <= max_batch_size <= 1 << 20:
        raise ArgumentError(f"max_batch_size={max_batch_size!r}: give an integer from 0 "
                            "(no batching) to 1048576")
    if not isinstance(instance_count, int) or not 1 <= instance_count <= 1024:
        raise ArgumentError(f"instance_count={instance_count!r}: give an integer from 1 to 1024")


def write_triton_repo(model: str | os.PathLike | ServeModel, repo_dir: str | os.PathLike, *,
                      max_batch_size: int = 8, instance_count: int = 1, device: Any = "cpu",
                      name: str | None = None, input_shapes: Mapping[str, Any] | None = None,
                      params: str | None = None, epoch: int | None = None,
                      opset: int | None = None) -> str:
    """Write a Triton model repository entry for ``model``; returns ``repo_dir/<name>``.

    Parameters
    ----------
    model:
        A ``.onnx`` file, ``*-symbol.json`` file or ``PREFIX`` (anything
        :func:`gluonport.load` accepts), or a prepared :class:`ServeModel`.
    repo_dir:
        The repository folder (created if missing). ``<name>/`` inside it is replaced as a
        whole: it is written beside, under a temporary name, and renamed into place.
    max_batch_size:
        Triton's ``max_batch_size`` when the batch axis is dynamic everywhere (0 disables
        batching); a fixed-batch model always gets 0.
    instance_count:
        Model instances (``instance_group.count``).
    device:
        ``cpu`` (``KIND_CPU``) or ``cuda:N`` (``KIND_GPU`` on GPU N). The device is not checked
        here: the repository is usually written on another machine than Triton's.
    name:
        The model's name in Triton (default: the file's base name).
    input_shapes:
        Sample shapes of inputs the model records none for (MXNet files exported by Gluon).

    Returns
    -------
    str
        The model's folder, holding ``config.pbtxt`` and ``1/model.onnx``.
    """
    _check_counts(max_batch_size, instance_count)
    if str(device).lower().startswith("cpu"):
        device = check_device(device)
    sm = model if isinstance(model, ServeModel) else prepare_model(
        model, input_shapes=input_shapes, params=params, epoch=epoch, name=name, opset=opset)
    if name:
        sm.name = name
    if sm.name in ("", ".", "..") or "/" in sm.name or "\\" in sm.name:
        raise ArgumentError(f"{sm.name!r} cannot name a Triton model folder")
    text = triton_config(sm, max_batch_size, instance_count, device)
    repo = os.fspath(repo_dir)
    os.makedirs(repo, exist_ok=True)
    final = os.path.join(repo, sm.name)
    tmp = tempfile.mkdtemp(prefix=f".{sm.name}.", suffix=".tmp", dir=repo)
    try:
        os.chmod(tmp, 0o755)  # mkdtemp makes it 0700; Triton often runs as another user
        os.makedirs(os.path.join(tmp, "1"))
        with open(os.path.join(tmp, "1", "model.onnx"), "wb") as f:
            f.write(sm.onnx)
        with open(os.path.join(tmp, "config.pbtxt"), "w", encoding="utf-8") as f:
            f.write(text)
        old = None
        if os.path.lexists(final):
            old = tempfile.mkdtemp(prefix=f".{sm.name}.", suffix=".old", dir=repo)
            os.replace(final, os.path.join(old, "x"))
        os.replace(tmp, final)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final
