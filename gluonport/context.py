"""Device contexts, mirroring ``mxnet.context``.

gluonport computes with numpy on the host, so a :class:`Context` is a label: it travels with
arrays (``x.context``), is written into ``.params`` files, and picks the onnxruntime execution
providers when a graph runs there (``cpu()`` -> CPUExecutionProvider, ``gpu(i)`` ->
CUDAExecutionProvider with ``device_id=i``).
"""

from __future__ import annotations

import threading

from .errors import DeviceError

__all__ = ["Context", "cpu", "gpu", "cpu_pinned", "current_context", "num_gpus"]

_DEVTYPE2STR = {1: "cpu", 2: "gpu", 3: "cpu_pinned", 5: "cpu_shared"}
_STR2DEVTYPE = {v: k for k, v in _DEVTYPE2STR.items()}


class Context:
    """A device label, ``Context('cpu', 0)`` or ``Context('gpu', 1)``.

    Like MXNet's, a Context is a context manager that sets the default device inside a ``with``
    block, and compares equal by ``(device_type, device_id)``.

    >>> Context("gpu", 1)
    gpu(1)
    >>> cpu() == Context("cpu", 0)
    True
    """

    _local = threading.local()

    def __init__(self, device_type: str | Context, device_id: int = 0):
        if isinstance(device_type, Context):
            self.device_typeid = device_type.device_typeid
            self.device_id = device_type.device_id
            return
        if device_type not in _STR2DEVTYPE:
            raise DeviceError(
                f"unknown device type {device_type!r}; use one of {sorted(_STR2DEVTYPE)}")
        if not isinstance(device_id, int) or device_id < 0:
            raise DeviceError(f"device id must be a non-negative int, got {device_id!r}")
        self.device_typeid = _STR2DEVTYPE[device_type]
        self.device_id = device_id
        self._old_ctx: Context | None = None

    @classmethod
    def from_devtype(cls, dev_type: int, dev_id: int = 0) -> Context:
        """The context for an MXNet ``dev_type`` code (1 cpu, 2 gpu, 3 cpu_pinned, 5 cpu_shared)."""
        if dev_type not in _DEVTYPE2STR:
            raise DeviceError(f"unknown MXNet dev_type code {dev_type}")
        return cls(_DEVTYPE2STR[dev_type], dev_id)

    @property
    def device_type(self) -> str:
        """``'cpu'``, ``'gpu'``, ``'cpu_pinned'`` or ``'cpu_shared'``."""
        return _DEVTYPE2STR[self.device_typeid]

    def __hash__(self) -> int:
        return hash((self.device_typeid, self.device_id))

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Context) and self.device_typeid == other.device_typeid
                and self.device_id == other.device_id)

    def __repr__(self) -> str:
        return f"{self.device_type}({self.device_id})"

    __str__ = __repr__

    def __enter__(self) -> Context:
        self._old_ctx = current_context()
        Context._local.value = self
        return self

    def __exit__(self, *exc: object) -> None:
        Context._local.value = self._old_ctx


def cpu(device_id: int = 0) -> Context:
    """The CPU context. ``device_id`` is kept for MXNet compatibility and has no effect."""
    return Context("cpu", device_id)


def cpu_pinned(device_id: int = 0) -> Context:
    """MXNet's pinned host memory context; here the same as ``cpu``."""
    return Context("cpu_pinned", device_id)


def gpu(device_id: int = 0) -> Context:
    """The GPU context ``gpu(i)``; graphs run there on onnxruntime's CUDA execution provider."""
    return Context("gpu", device_id)


def current_context() -> Context:
    """The default context: ``cpu(0)`` unless a ``with ctx:`` block set another."""
    ctx = getattr(Context._local, "value", None)
    return ctx if ctx is not None else Context("cpu", 0)


def num_gpus() -> int:
    """How many GPUs onnxruntime's CUDA provider can use (0 without onnxruntime-gpu)."""
    try:
        import onnxruntime as ort
    except ImportError:  # pragma: no cover - onnxruntime is a dependency
        return 0
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        return 0
    try:
        import ctypes

        lib = ctypes.CDLL("libcudart.so")
        count = ctypes.c_int()
        if lib.cudaGetDeviceCount(ctypes.byref(count)) == 0:
            return count.value
    except OSError:
        pass
    return 0
