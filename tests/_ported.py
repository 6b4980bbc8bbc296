"""Scripts written for MXNet, run here with only their imports changed: the porting story.

Each such script (``tests/golden/*/<name>_script.py`` and ``custom_op/custom_ops.py``) has
exactly one ``import mxnet as mx``; its generator runs it in MXNet 1.9.1 and records what it
returns, and the test runs the same text through :func:`load_ported`.
"""

from __future__ import annotations

import os
import sys
import types


def load_ported(path: str) -> types.ModuleType:
    """Execute ``path`` with ``import mxnet as mx`` -> ``import gluonport as mx``,
    ``from mxnet import`` / ``from mxnet.`` -> ``from gluonport import`` / ``from gluonport.``;
    returns the module (also put in sys.modules, so its
    classes can be found by name)."""
    with open(path, encoding="utf-8") as f:
        source = f.read()
    assert source.count("import mxnet as mx\n") == 1, f"{path}: needs one 'import mxnet as mx'"
    ported = source.replace("import mxnet as mx\n", "import gluonport as mx\n")
    ported = ported.replace("from mxnet.", "from gluonport.")
    ported = ported.replace("from mxnet import ", "from gluonport import ")
    name = os.path.splitext(os.path.basename(path))[0] + "_ported"
    module = types.ModuleType(name)
    module.__file__ = path
    sys.modules[name] = module
    exec(compile(ported, os.path.basename(path), "exec"), module.__dict__)
    return module


def load_golden(prefix: str) -> tuple[dict, dict]:
    """``(arrays, rest)`` a generator wrote as ``<prefix>.npz`` and ``<prefix>.json``."""
    import json

    import numpy as np

    with np.load(prefix + ".npz") as z:
        arrays = {k: z[k] for k in z.files}
    with open(prefix + ".json", encoding="utf-8") as f:
        return arrays, json.load(f)
