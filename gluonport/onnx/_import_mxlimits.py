"""What of an imported graph MXNet 1.9.1 itself cannot run, found cheaply while importing.

gluonport's numpy executor runs every graph the importer builds, and every op it writes is
one MXNet 1.9.1 registers (the registry is held to MXNet's operator list), so the files always
load by name. A few graphs still cannot run in MXNet 1.9.1 because of what its kernels and
arrays accept; ``tests/golden/onnx/check_backend_in_mxnet.py`` finds them over onnx's backend
suite. Those that can be told from the types and shapes the importer already has are named
here, and :func:`gluonport.onnx.importer.import_graph` warns once per model (``"MXNet 1.9.1
cannot run this graph -- ...; the files load only in gluonport"``):

* **dtypes MXNet 1.9.1 lacks**: int16, uint16, uint32, uint64 tensors (MXNet 1.x's NDArray and
  params files stop at type flag 7; its ``mx.nd.array`` refuses them, ``load`` fails with
  'Unknown type enum 8');
* **float16 products on the CPU**: MXNet 1.9.1's CPU ``dot``/``batch_dot`` ("dot only supports
  float32/float64 for CPU"), ``FullyConnected``, ``Convolution``, ``Deconvolution`` and
  ``RNN`` ("FP16 gemm on cpu not implemented!") refuse float16 (they run on a GPU);
* **zero-size tensors** (a warning that MXNet 1.9.1 *may* not run the graph): MXNet 1.x's
  legacy shapes read a 0 dim as "unknown"; most ops then refuse a zero-size graph input or
  weight ("Shape dim size cannot be a negative value -1"), a few (``sum``) pass;
* **3-D col2im** whose channel count is not known while importing: MXNet 1.9.1's CPU
  ``col2im`` fails on three spatial dims ("TBlob.get_with_shape: ... new and old shape do
  not match"); with known channels the importer writes a grouped Deconvolution instead.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["NO_MXNET_DTYPES", "FP16_REFUSED", "dtype_limits", "zero_size_limit", "fp16_limit",
           "limits_message"]

NO_MXNET_DTYPES = frozenset(np.dtype(t) for t in (np.int16, np.uint16, np.uint32, np.uint64))
FP16_REFUSED = frozenset({"dot", "batch_dot", "FullyConnected", "Convolution",
                          "Deconvolution", "RNN", "_linalg_gemm2", "linalg_gemm2"})


def _dtype(d: Any) -> np.dtype | None:
    try:
        return None if d is None else np.dtype(d)
    except TypeError:
        return None


def dtype_limits(names: list[str], types: dict[str, tuple],
                 params: dict[str, np.ndarray]) -> list[str]:
    """Reasons MXNet 1.9.1 cannot hold the graph's tensors: ``names`` are the tensors the
    written graph computes or reads, ``types`` their ``(dtype, shape)``, ``params`` the
    weights."""
    lacking: dict[str, str] = {}
    for name in names:
        dt = _dtype(types.get(name, (None, None))[0])
        if dt in NO_MXNET_DTYPES:
            lacking.setdefault(dt.name, name)
    for name, value in params.items():
        if value.dtype in NO_MXNET_DTYPES:
            lacking.setdefault(value.dtype.name, name)
    return [f"{dt} tensors (e.g. {name!r}): MXNet 1.9.1 has no {dt} dtype"
            for dt, name in sorted(lacking.items())]


def zero_size_limit(edges: list[str], types: dict[str, tuple],
                    params: dict[str, np.ndarray]) -> str | None:
    """Why MXNet 1.9.1 may not run a graph whose inputs or outputs (``edges``) or weights have
    a zero-size dim. Whether it does depends on the ops: ``sum`` over an empty axis and a bare
    variable pass its shape inference, ``abs`` or ``tril`` do not -- so a warning that says
    "may"."""
    empty = [n for n in edges if any(isinstance(d, (int, np.integer)) and d == 0
                                     for d in types.get(n, (None, None))[1] or ())]
    empty += [n for n, v in params.items() if v.size == 0]
    if not empty:
        return None
    return (f"zero-size tensors ({', '.join(repr(n) for n in empty[:3])}"
            f"{', ...' if len(empty) > 3 else ''}): MXNet 1.x reads a 0 dim as unknown, and "
            "most of its ops then refuse the shape")


def fp16_limit(op_type: str, dtypes: list[Any], created: list[str]) -> str | None:
    """The reason when an ONNX node reading or writing float16 was built with an MXNet op
    whose CPU kernel refuses float16 (``created``: the MXNet ops its handler made)."""
    if not any(_dtype(d) == np.float16 for d in dtypes):
        return None
    refused = sorted(FP16_REFUSED.intersection(created))
    if not refused:
        return None
    return (f"float16 {op_type} (as {'/'.join(refused)}): MXNet 1.9.1's CPU kernels of "
            f"{'/'.join(refused)} refuse float16")


def limits_message(label: str, reasons: list[str], certain: bool = True) -> str:
    """The warning ``import_graph`` gives for a model's ``reasons`` (``certain=False``: MXNet
    1.9.1 *may* not run it)."""
    unique = list(dict.fromkeys(reasons))
    shown = "; ".join(unique[:6]) + ("; ..." if len(unique) > 6 else "")
    if certain:
        return (f"{label}: MXNet 1.9.1 cannot run this graph -- {shown}; the files load only "
                "in gluonport")
    return (f"{label}: MXNet 1.9.1 may not run this graph -- {shown}; the files may load only "
            "in gluonport")
