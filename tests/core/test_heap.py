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


#: numpy's madvise(MADV_HUGEPAGE) off, so that fresh memory's faults count 4 KB pages
_SMALL_PAGES = """
try:
    from numpy._core.multiarray import _set_madvise_hugepage
except ImportError:  # numpy 1.x
    from numpy.core.multiarray import _set_madvise_hugepage
_set_madvise_hugepage(False)
"""

_STEP_SCRIPT = _SMALL_PAGES + """
import resource
import numpy as np
import gluonport as mx
from gluonport import autograd, gluon

class LM(gluon.HybridBlock):  # bench_train.py's language model
    def __init__(self):
        super().__init__()
        self.embed = gluon.nn.Embedding(1000, 256)
        self.rnn = gluon.rnn.LSTM(256, num_layers=2, input_size=256)
        self.out = gluon.nn.Dense(1000, flatten=False, in_units=256)

    def hybrid_forward(self, F, tokens):
        return self.out(self.rnn(self.embed(tokens)))

def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt

net = LM()
net.initialize(mx.init.Xavier())
net.hybridize(backend="numpy")
loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
rs = np.random.RandomState(0)
tokens = mx.nd.array(rs.randint(0, 1000, (35, 32)))
labels = mx.nd.array(rs.randint(0, 1000, (35, 32)))
for step in range(5):
    before = faults()
    with autograd.record():
        loss = loss_fn(net(tokens), labels)
    loss.backward()
    net.out.weight.grad().wait_to_read()
    print(faults() - before)
from gluonport._core import heap
print(heap.keep_step_memory())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc (Linux)")
def test_numpy_executor_training_steps_keep_their_memory():
    # a step of this model frees 64-128 MB once its backward graph has run, more than the 64 MB
    # keep_freed_memory keeps at the heap's top: without keep_step_memory every step
    # page-faulted ~10,800 times (checked by removing its call from _train_graph._Numpy)
    out = subprocess.run([sys.executable, "-c", _STEP_SCRIPT], capture_output=True, text=True,
                         check=True)
    *counts, changed = out.stdout.split()
    if changed != "True":
        pytest.skip("not glibc's malloc, or its tuning is the user's")
    first, *later = (int(v) for v in counts)
    assert first > 5000  # the first step really takes its memory from the system
    assert max(later) < 1000, out.stdout


_LARGE_SCRIPT = _SMALL_PAGES + """
import resource
import numpy as np
from gluonport._core import heap

print(heap.keep_step_memory())
for _ in range(3):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    block = np.ones(40 << 20, np.uint8)  # above glibc's largest mmap threshold (32 MB)
    del block
    print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc (Linux)")
def test_training_steps_reuse_arrays_above_32_mb():
    # such arrays (im2col columns of a 224x224 convolution) were fresh mappings each time:
    # ~10,000 faults a round without the mmap maximum of 0 (checked)
    out = subprocess.run([sys.executable, "-c", _LARGE_SCRIPT], capture_output=True, text=True,
                         check=True)
    changed, first, *later = out.stdout.split()
    if changed != "True":
        pytest.skip("not glibc's malloc, or its tuning is the user's")
    assert int(first) > 5000
    assert max(int(v) for v in later) < 500, out.stdout


_TUNED_SCRIPT = """
from gluonport._core import heap
print(heap.keep_step_memory())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc (Linux)")
@pytest.mark.parametrize("env", [{"MALLOC_TRIM_THRESHOLD_": "131072"},
                                 {"MALLOC_TOP_PAD_": "0"},
                                 {"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=131072"}])
def test_user_malloc_tuning_stands(env):
    import os

    clean = {k: v for k, v in os.environ.items()
             if not k.startswith("MALLOC_") and k != "GLIBC_TUNABLES"}
    plain = subprocess.run([sys.executable, "-c", _TUNED_SCRIPT], capture_output=True,
                           text=True, check=True, env=clean)
    tuned = subprocess.run([sys.executable, "-c", _TUNED_SCRIPT], capture_output=True,
                           text=True, check=True, env={**clean, **env})
    assert tuned.stdout.split() == ["False"]
    if os.confstr("CS_GNU_LIBC_VERSION"):
        assert plain.stdout.split() == ["True"]
