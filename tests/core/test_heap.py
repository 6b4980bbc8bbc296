"""gluonport._core.heap: freed array memory is reused instead of being page-faulted in again
(glibc's dynamic mmap/trim thresholds raised once when ``gluonport.ndarray`` is imported)."""

from __future__ import annotations

import subprocess
import sys

import pytest

_SCRIPT = """
import resource
import numpy as np
import gluonport.ndarray  # noqa: F401

def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt

for _ in range(3):
    before = faults()
    arrays = [np.ones(2 << 20, np.uint8) for _ in range(20)]  # 40 MB in 2 MB arrays
    del arrays
    print(faults() - before)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc (Linux)")
def test_freed_arrays_are_reused_without_page_faults():
    # without the raised thresholds every 2 MB array is a fresh mapping: ~10,000 faults in each
    # round (checked: the same script without the gluonport import); with them the first
    # round grows the heap and the next ones reuse it
    out = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True,
                         check=True)
    first, *later = (int(v) for v in out.stdout.split())
    assert first > 5000  # the script really touches 40 MB of fresh memory once
    assert max(later) < 500, out.stdout
