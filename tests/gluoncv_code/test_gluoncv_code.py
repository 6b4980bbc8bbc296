"""Optional: GluonCV 0.10.5's model *code* (not exported graphs) runs on gluonport with
``mxnet`` mapped to ``gluonport`` and reproduces MXNet 1.9.1's outputs from the same
``save_parameters`` files, imperatively and hybridized.

Runs when GLUONPORT_GLUONCV_SRC names a gluoncv package directory (e.g. the oracle's
``.../site-packages/gluoncv``) and gen_gluoncv_code.py has written its files; skips otherwise.
GluonCV's code is read from that directory at test time; nothing of it is in this repository.

Tolerances: rtol 1e-4 / atol 1e-5 x the output's magnitude. Detector outputs behind top-k or
NMS are compared where they are stable: scores always; ids and boxes of a detector only for
YOLOv3 on the numpy paths (on onnxruntime, float noise of 1e-7 reorders near-equal scores before
NMS); CenterNet's boxes not at all (its top-k meets exact ties, and MXNet orders ties by
libstdc++'s partial_sort).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import os
import sys
import types

import numpy as np
import pytest

SRC = os.environ.get("GLUONPORT_GLUONCV_SRC", "")
DATA = os.path.join(os.path.dirname(__file__), "..", "golden", "large", "gluoncv_code")
pytestmark = pytest.mark.skipif(
    not (SRC and os.path.isdir(SRC) and os.path.isdir(DATA)),
    reason="set GLUONPORT_GLUONCV_SRC to a gluoncv package dir and run gen_gluoncv_code.py")

# name -> outputs compared on (imperative/numpy paths, onnxruntime)
CHECKS = {"resnet50_v1b": ([0], [0]), "mobilenetv3_small": ([0], [0]),
          "yolo3_mobilenet1.0_voc": ([0, 1, 2], []),
          "center_net_resnet18_v1b_voc": ([1], [1])}
# third-party modules GluonCV imports at package level that these models never use
_UNUSED = ("tqdm", "PIL", "cv2", "matplotlib", "pycocotools", "scipy", "decord", "pandas",
           "yaml", "autocfg", "autogluon", "portalocker", "requests")


class _MxnetIsGluonport(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``import mxnet[.x]`` gives ``gluonport[.x]``; unused third-party modules are empty."""

    def find_spec(self, name, path, target=None):
        top = name.split(".")[0]
        if top == "mxnet" or top in _UNUSED:
            return importlib.util.spec_from_loader(name, self, is_package=top in _UNUSED)
        return None

    def create_module(self, spec):
        top = spec.name.split(".")[0]
        if top == "mxnet":
            return importlib.import_module("gluonport" + spec.name[len("mxnet"):])
        module = types.ModuleType(spec.name)
        module.__path__ = []
        module.__getattr__ = lambda attr: type(attr, (), {})
        return module

    def exec_module(self, module):
        pass


@pytest.fixture(scope="module")
def zoo():
    import gluonport.gluon.data.dataloader as dataloader

    finder = _MxnetIsGluonport()
    sys.meta_path.insert(0, finder)
    # GluonCV subclasses MXNet's private multi-worker iterator for a training loader
    had_iter = hasattr(dataloader, "_MultiWorkerIter")
    if not had_iter:
        dataloader._MultiWorkerIter = object
    for name, sub in (("gluoncv", ""), ("gluoncv.model_zoo", "model_zoo")):
        package = types.ModuleType(name)
        package.__path__ = [os.path.join(SRC, sub)]  # skip the heavy package __init__
        sys.modules[name] = package
    try:
        yield importlib.import_module("gluoncv.model_zoo.model_zoo")
    finally:
        sys.meta_path.remove(finder)
        if not had_iter:
            del dataloader._MultiWorkerIter
        for name in [n for n in sys.modules if n.split(".")[0] in ("gluoncv", "mxnet")]:
            del sys.modules[name]


def _check(got, want, which, tag):
    got = got if isinstance(got, (list, tuple)) else [got]
    for i in which:
        w = want[f"out{i}"]
        np.testing.assert_allclose(got[i].asnumpy(), w, rtol=1e-4,
                                   atol=1e-5 * max(1.0, float(np.abs(w).max())),
                                   err_msg=f"{tag} output {i}")


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_gluoncv_model_code(zoo, name):
    import gluonport as mx

    want = np.load(os.path.join(DATA, name + ".npz"))
    kwargs = {} if name.startswith(("resnet", "mobilenet")) else {"pretrained_base": False}
    net = zoo.get_model(name, pretrained=False, **kwargs)
    net.load_parameters(os.path.join(DATA, name + ".params"))
    x = mx.nd.array(want["x"])
    numpy_outputs, ort_outputs = CHECKS[name]
    _check(net(x), want, numpy_outputs, "imperative")
    net.hybridize(backend="numpy")
    _check(net(x), want, numpy_outputs, "hybridized numpy")
    if ort_outputs:
        net.hybridize(backend="onnxruntime")
        _check(net(x), want, ort_outputs, "hybridized onnxruntime")
