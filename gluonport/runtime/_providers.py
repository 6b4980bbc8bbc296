"""Execution providers: which onnxruntime providers a Context needs, and why one is missing.

``cpu()`` runs on ``CPUExecutionProvider``; ``gpu(i)`` on ``CUDAExecutionProvider`` with
``device_id=i`` (``TensorrtExecutionProvider`` first when asked), with the CPU provider last for
nodes CUDA has no kernel for. A provider that is not available, or that onnxruntime quietly drops
while building a session, is a :class:`~gluonport.errors.DeviceError` naming the installed
onnxruntime distribution and the fix: never a silent run on the CPU.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from .._core.ortsession import inference_session
from ..context import Context, current_context
from ..errors import DeviceError, GluonportError

__all__ = ["providers_for", "installed_onnxruntime", "check_session_providers",
           "provider_names", "install_fix", "ProviderList", "onnxruntime_module",
           "inference_session"]

CPU_EP = "CPUExecutionProvider"
CUDA_EP = "CUDAExecutionProvider"
TENSORRT_EP = "TensorrtExecutionProvider"
# Distributions that install the `onnxruntime` module; checked when packages_distributions()
# cannot tell (an egg-link or a vendored copy).
_ORT_DISTRIBUTIONS = ("onnxruntime", "onnxruntime-gpu", "onnxruntime-directml",
                      "onnxruntime-openvino", "onnxruntime-qnn", "onnxruntime-training",
                      "ort-nightly", "ort-nightly-gpu")
_PROVIDER_LIBS = {CUDA_EP: "onnxruntime_providers_cuda",
                  TENSORRT_EP: "onnxruntime_providers_tensorrt"}
_CUDA_REQUIREMENTS = ("https://onnxruntime.ai/docs/execution-providers/"
                      "CUDA-ExecutionProvider.html#requirements")

ProviderList = list[str | tuple[str, dict[str, Any]]]


def onnxruntime_module() -> Any:
    """The ``onnxruntime`` module, imported on first use.

    Importing it lazily keeps ``import gluonport`` fast and never loads CUDA libraries.
    """
    import onnxruntime

    return onnxruntime


def provider_names(providers: ProviderList) -> list[str]:
    """The names in a provider list that may hold (name, options) pairs."""
    return [p if isinstance(p, str) else p[0] for p in providers]


def installed_onnxruntime() -> list[tuple[str, str]]:
    """The installed distributions that provide the ``onnxruntime`` module, as (name, version).

    More than one means they overwrite each other's files (``onnxruntime`` and
    ``onnxruntime-gpu`` both install the package ``onnxruntime``).
    """
    from importlib import metadata

    try:
        names = list(dict.fromkeys(metadata.packages_distributions().get("onnxruntime", [])))
    except Exception:  # a broken metadata entry must not hide the real error
        names = []
    found = []
    for name in names or _ORT_DISTRIBUTIONS:
        try:
            found.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            continue
    return found


def install_fix(missing: Sequence[str]) -> str:
    dists = installed_onnxruntime()
    installed = ", ".join(f"{n} {v}" for n, v in dists) or "no onnxruntime distribution found"
    names = {n.lower().replace("_", "-") for n, _ in dists}
    uninstall = " ".join(sorted(names)) or "onnxruntime"
    fix = (f'pip uninstall -y {uninstall} && pip install "gluonport[gpu]" (onnxruntime-gpu; the '
           "CPU-only onnxruntime package must not stay installed beside it: both provide the "
           "same `onnxruntime` module and one shadows the other), with CUDA and cuDNN versions "
           f"that match that onnxruntime-gpu release ({_CUDA_REQUIREMENTS})")
    if TENSORRT_EP in missing:
        fix += ("; TensorrtExecutionProvider also needs TensorRT's libraries on the library "
                "path, or pass tensorrt=False")
    return f"installed: {installed}; fix: {fix}"


def providers_for(ctx: Context | None = None, *, tensorrt: bool = False,
                  provider_options: Mapping[str, Mapping[str, Any]] | None = None
                  ) -> ProviderList:
    """onnxruntime's execution providers for a context, most preferred first.

    Parameters
    ----------
    ctx:
        ``cpu()`` (also ``cpu_pinned``/``cpu_shared``) gives ``["CPUExecutionProvider"]``;
        ``gpu(i)`` gives ``[("CUDAExecutionProvider", {"device_id": i, "use_tf32": 0}),
        "CPUExecutionProvider"]`` (CPU runs the nodes CUDA has no kernel for, as MXNet ran such
        ops on the host). Default: the current context.

        TF32 is off, so convolutions and GEMMs on Ampere and later GPUs compute in float32 and
        agree with the CPU and the numpy executor to float32 rounding; onnxruntime's own
        default is on, which put a 7x4 by 4x3 GEMM 7e-3 (relative) off on an H200. Pass
        ``provider_options={"CUDAExecutionProvider": {"use_tf32": 1}}`` to trade that for
        speed.
    tensorrt:
        Put ``TensorrtExecutionProvider`` first (gpu only).
    provider_options:
        Extra options per provider name, merged over the defaults, e.g.
        ``{"CUDAExecutionProvider": {"arena_extend_strategy": "kSameAsRequested"}}``.

    Raises
    ------
    DeviceError
        A provider is not in ``onnxruntime.get_available_providers()``; the message names the
        installed onnxruntime distribution, its version, the available providers and the fix.

    >>> from gluonport.context import cpu
    >>> providers_for(cpu())
    ['CPUExecutionProvider']
    """
    ctx = current_context() if ctx is None else ctx
    on_gpu = ctx.device_type == "gpu"
    if tensorrt and not on_gpu:
        raise DeviceError(f"{ctx}: tensorrt=True needs a gpu context; use gpu(i) or drop it")
    chain = [TENSORRT_EP] if tensorrt else []
    chain += [CUDA_EP, CPU_EP] if on_gpu else [CPU_EP]
    available = list(onnxruntime_module().get_available_providers())
    missing = [p for p in chain if p not in available]
    if missing:
        raise DeviceError(
            f"{ctx} needs onnxruntime's {', '.join(missing)}, which this onnxruntime "
            f"{onnxruntime_module().__version__} does not have "
            f"(available providers: {', '.join(available)}); "
            + install_fix(missing))
    extra = dict(provider_options or {})
    unknown = sorted(set(extra) - set(chain))
    if unknown:
        raise GluonportError(f"provider_options for {unknown}, which {ctx} does not use; "
                             f"its providers are {chain}")
    defaults = {p: {"device_id": ctx.device_id} for p in chain if p != CPU_EP}
    if CUDA_EP in defaults:
        defaults[CUDA_EP]["use_tf32"] = 0
    return [(p, {**defaults.get(p, {}), **extra.get(p, {})}) if p in extra or p in defaults else p
            for p in chain]


def provider_load_error(provider: str) -> str:
    """Why onnxruntime may have dropped ``provider``: load its library and report dlopen's error."""
    import ctypes

    lib = _PROVIDER_LIBS.get(provider)
    if lib is None:
        return "onnxruntime gave no reason"
    capi = os.path.join(os.path.dirname(onnxruntime_module().__file__), "capi")
    fname = f"{lib}.dll" if os.name == "nt" else f"lib{lib}.so"
    path = os.path.join(capi, fname)
    if not os.path.exists(path):
        return f"{fname} is not in {capi}, so this onnxruntime build has no {provider}"
    try:
        ctypes.CDLL(path)
    except OSError as err:
        return f"loading {fname} failed: {err}"
    return (f"{fname} loads, so the device itself failed; run with "
            "RuntimeOptions(log_severity=0) to see onnxruntime's log")


def check_session_providers(ctx: Context, providers: ProviderList, session: Any) -> None:
    """Refuse a session that onnxruntime quietly moved off a provider it was asked to use."""
    got = session.get_providers()
    lost = [p for p in provider_names(providers) if p not in got]
    if lost:
        why = "; ".join(f"{p}: {provider_load_error(p)}" for p in lost)
        raise DeviceError(f"{ctx}: onnxruntime could not start {', '.join(lost)} and would run "
                          f"on {got} instead ({why}); " + install_fix(lost))
