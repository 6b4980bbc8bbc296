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
with ``mallopt`` (which would switch glibc's own adaptation off), the block is never touched
(no resident memory), and other C libraries just allocate and free it.
"""

from __future__ import annotations

import numpy as np

__all__ = ["keep_freed_memory"]

_BLOCK = (32 << 20) - (1 << 16)  # just under glibc's largest dynamic mmap threshold
_done = False


def keep_freed_memory() -> None:
    """Raise glibc's dynamic mmap and trim thresholds to their largest values (once)."""
    global _done
    if not _done:
        _done = True
        block = np.empty(_BLOCK, np.uint8)
        del block
