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
``keep_step_memory``, done when such a step first runs, raises the trim threshold to 1 GiB
with ``mallopt`` (once the mmap threshold is at its largest, so freezing it costs nothing).
"""

from __future__ import annotations

import os

import numpy as np

__all__ = ["keep_freed_memory", "keep_step_memory"]

_BLOCK = (32 << 20) - (1 << 16)  # just under glibc's largest dynamic mmap threshold
_done = False
_M_TRIM_THRESHOLD = -1  # mallopt's parameter number (glibc's malloc.h)
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
    """Keep up to 1 GiB of freed memory at the top of glibc's heap (once; whether it did).

    For training on the numpy executor (``hybridize(backend='numpy')`` or its fallback): a
    step's graphs keep their saved values until the backward graph has run and then free them
    all at once, and past :func:`keep_freed_memory`'s 64 MB glibc gave that memory back to the
    system and page-faulted it in again in the next step. The LSTM language model of
    ``benchmarks/bench_train.py`` (batch 32) took 10,000-10,500 faults a step, none with this,
    and its step went from 107-109 ms to 86-96 ms (AMD EPYC VM, two threads). MXNet's pooled
    storage manager keeps all freed memory for the next step in the same way. This sets
    glibc's trim threshold with ``mallopt``, which also fixes its mmap threshold where
    :func:`keep_freed_memory` left it (just under 32 MB, the largest it adapts to). Not done
    where the allocator is not glibc's, or where ``MALLOC_TRIM_THRESHOLD_``,
    ``MALLOC_TOP_PAD_``, ``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_MMAP_MAX_`` or a
    ``glibc.malloc`` tunable in ``GLIBC_TUNABLES`` is set: the user's own tuning stands."""
    global _step_done
    if _step_done is None:
        _step_done = _raise_trim_threshold()
    return _step_done


def _raise_trim_threshold() -> bool:
    if any(name in os.environ for name in _USER_TUNING) or \
            "glibc.malloc" in os.environ.get("GLIBC_TUNABLES", ""):
        return False
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return False
    except (ValueError, OSError, AttributeError):  # not glibc (macOS, Windows, musl)
        return False
    import ctypes

    keep_freed_memory()  # the mmap threshold first: mallopt freezes it where it is
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return mallopt(_M_TRIM_THRESHOLD, _STEP_TRIM) == 1
