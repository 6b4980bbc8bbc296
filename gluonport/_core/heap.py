"""Freed array memory stays in the process for the next arrays, as MXNet's pooled storage
manager keeps it (``keep_freed_memory``, done once when ``gluonport.ndarray`` is imported).

glibc's malloc serves a request of at least its mmap threshold (128 KB at start) with fresh
pages from the system and unmaps them on free; it raises the threshold to the size of a freed
mapped block (at most 32 MB) and trims the top of its heap once more than twice that is free.
A training step allocates and frees arrays of many sizes between 100 KB and 10 MB, so at batch
32 most steps took fresh pages and page-faulted on each 4 KB of them: 1,080 faults per LeNet
(BatchNorm) step and 7,900 per resnet18 step, several microseconds each on a virtual machine
(10-15% of the step). Freeing one block just under 32 MB puts glibc in the state it reaches by
itself after a large array is freed: arrays up to 32 MB come from the heap, and freed memory
is kept until 64 MB lie free at its top; both steps then fault almost never. Nothing is set
with ``mallopt`` for that (which would switch glibc's own adaptation off), the block is never
touched (no resident memory), and other C libraries just allocate and free it.

Training on the numpy executor frees more than 64 MB at once at the end of a larger step;
``keep_step_memory``, done when the numpy executor's training graphs are first built, sets
glibc's trim threshold (1 GiB) and mmap maximum (none) with ``mallopt``.
"""

from __future__ import annotations

import os

import numpy as np

__all__ = ["keep_freed_memory", "keep_step_memory"]

_BLOCK = (32 << 20) - (1 << 16)  # just under glibc's largest dynamic mmap threshold
_done = False
_M_TRIM_THRESHOLD, _M_MMAP_MAX = -1, -4  # mallopt's parameter numbers (glibc's malloc.h)
_STEP_TRIM = 1 << 30
#: a user who tuned glibc's malloc through its environment keeps that tuning
_USER_TUNING = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_THRESHOLD_",
                "MALLOC_MMAP_MAX_")
_step_done: bool | None = None


def keep_freed_memory() -> None:
    """Raise glibc's dynamic mmap and trim thresholds to their largest values (once)."""
    global _done
    if not _done:
        _done = True
        block = np.empty(_BLOCK, np.uint8)
        del block


def keep_step_memory() -> bool:
    """Keep a training step's freed memory for the next step (once; whether it did).

    For training on the numpy executor (``hybridize(backend='numpy')`` or its fallback): a
    step's graphs keep their saved values until the backward graph has run and then free them
    all at once. Past :func:`keep_freed_memory`'s 64 MB glibc gave that memory back to the
    system, and arrays above 32 MB (im2col columns at 224x224) are always fresh mappings; both
    were page-faulted in again in every step. This sets glibc's trim threshold to 1 GiB and its
    mmap maximum to 0 with ``mallopt``, so every array comes from the heap and up to 1 GiB
    freed at its top stays there, as MXNet's pooled storage manager keeps freed memory for the
    next step. Measured (AMD EPYC VM, two threads, against the tree without this): the
    language model of ``benchmarks/bench_train.py`` (batch 32) 10,000-11,600 faults a step ->
    0 and 106-158 -> 81-133 ms a step (10 pairs of runs, ratio 0.62-0.92); resnet18_v1 on
    224x224 at batch 8, 3,200 -> 0 faults, peak RSS 743 -> 712 MB. Not done where the
    allocator is not glibc's, or where ``MALLOC_TRIM_THRESHOLD_``, ``MALLOC_TOP_PAD_``,
    ``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_MMAP_MAX_`` or a ``glibc.malloc`` tunable in
    ``GLIBC_TUNABLES`` is set: the user's own tuning stands."""
    global _step_done
    if _step_done is None:
        _step_done = _retain_heap()
    return _step_done


def _retain_heap() -> bool:
    if any(name in os.environ for name in _USER_TUNING) or \
            "glibc.malloc" in os.environ.get("GLIBC_TUNABLES", ""):
        return False
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return False
    except (ValueError, OSError, AttributeError):  # not glibc (macOS, Windows, musl)
        return False
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return mallopt(_M_TRIM_THRESHOLD, _STEP_TRIM) == 1 and mallopt(_M_MMAP_MAX, 0) == 1
