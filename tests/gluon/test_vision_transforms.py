"""``mx.image`` and ``gluon.data.vision.transforms`` against MXNet 1.9.1.

tests/golden/image/image_script.py is pre-processing written for MXNet; it runs here with only
its imports changed (``mxnet`` -> ``gluonport``) and must return what it returned in MXNet
(gen_image.py): ``imresize`` over 23 size changes x interpolations 0-4 (uint8 with 1-4
channels, float32), ``resize_short``, ``center_crop`` (also larger than the image),
``fixed_crop``, seeded ``random_crop``/``random_size_crop``, ``color_normalize``,
``copyMakeBorder``, ``imrotate``, every deterministic transform and full ``Compose`` pipelines
(one on a 375x500 photo-sized image, kept as a digest) and ``CreateAugmenter`` lists (eval, and a
seeded training list: Python and numpy random draw as in MXNet).

Tolerances: uint8 results are bit-exact (``assert_array_equal``, sha256 for digests); float32
results within ``5e-7 * max(1, max|MXNet|)`` (a few float32 ulps: OpenCV sums some 2x2 blocks
in another order). The ``_image_*`` operator kernels (brightness, contrast, saturation, hue,
lighting, flips) are checked against MXNet's operators run with a fixed factor (ops.npz); the
random transforms are checked for wiring (their factors come from gluonport's generator).
"""

import doctest
import hashlib
import json
import os
import random

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import (
    DTypeError,
    GluonportError,
    ShapeError,
    UnsupportedOpError,
)
from gluonport.gluon import nn
from gluonport.gluon.data.vision import transforms
from gluonport.ops.vision import image as ops
from tests._ported import load_ported

HERE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "golden", "image")
FLOAT_ATOL = 5e-7  # times max(1, max|expected|)

with np.load(os.path.join(HERE, "script.npz")) as _z:
    SCRIPT_ARRAYS = {k: _z[k] for k in _z.files}
with open(os.path.join(HERE, "script.json"), encoding="utf-8") as _f:
    SCRIPT_OTHER = json.load(_f)
with np.load(os.path.join(HERE, "ops.npz")) as _z:
    OPS = {k: _z[k] for k in _z.files}


@pytest.fixture(scope="module")
def results() -> dict:
    return load_ported(os.path.join(HERE, "image_script.py")).run()


def assert_matches(got: np.ndarray, want: np.ndarray, name: str) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype, name
    if want.dtype.kind in "uib":
        np.testing.assert_array_equal(got, want, err_msg=name)
    else:
        scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
        np.testing.assert_allclose(got, want, rtol=0, atol=FLOAT_ATOL * scale, err_msg=name)


@pytest.mark.parametrize("name", sorted(SCRIPT_ARRAYS))
def test_script_array_matches_mxnet(results, name):
    assert_matches(np.asarray(results[name]), SCRIPT_ARRAYS[name], name)


@pytest.mark.parametrize("name", sorted(SCRIPT_OTHER))
def test_script_result_matches_mxnet(results, name):
    want, got = SCRIPT_OTHER[name], results[name]
    if isinstance(want, dict) and "digest" in want:
        d, a = want["digest"], np.ascontiguousarray(got)
        assert list(a.shape) == d["shape"] and str(a.dtype) == d["dtype"]
        if d["dtype"] == "uint8":
            assert hashlib.sha256(a.tobytes()).hexdigest() == d["sha256"]
        else:
            sample = np.array(d["sample"])
            scale = max(1.0, float(np.abs(sample).max()))
            np.testing.assert_allclose(a.reshape(-1)[::1009], sample, rtol=0,
                                       atol=FLOAT_ATOL * scale)
        return
    assert json.loads(json.dumps(got)) == want


# --- the _image_* operator kernels ----------------------------------------------------------
_ADJUST = {"random_brightness": ops.adjust_brightness, "random_contrast": ops.adjust_contrast,
           "random_saturation": ops.adjust_saturation, "random_hue": ops.adjust_hue}


@pytest.mark.parametrize("key", sorted(k for k in OPS if not k.startswith("in/")))
def test_image_op_matches_mxnet(key):
    image, op, *arg = key.split("/")
    if op.startswith("flip"):
        got = ops.flip(OPS["in/even/" + image], 1 if op == "flip_left_right" else 0, op)
    elif op == "adjust_lighting":
        got = ops.adjust_lighting(OPS["in/" + image], [float(v) for v in arg[0].split(",")])
    else:
        got = _ADJUST[op](OPS["in/" + image], float(arg[0]))
    assert_matches(got, OPS[key], key)


# --- random transforms: wiring, ranges, reproducibility -------------------------------------
IMG = mx.nd.array(np.random.RandomState(3).randint(0, 256, (6, 8, 3)), dtype="uint8")


@pytest.mark.parametrize("cls,axis", [(transforms.RandomFlipLeftRight, 1),
                                      (transforms.RandomFlipTopBottom, 0)])
def test_random_flips(cls, axis):
    x = IMG.asnumpy()
    seen = set()
    for seed in range(20):
        mx.random.seed(seed)
        y = cls()(IMG).asnumpy()
        flipped = np.array_equal(y, np.flip(x, axis))
        assert flipped or np.array_equal(y, x)
        seen.add(flipped)
    assert seen == {True, False}


@pytest.mark.parametrize("cls,adjust", [(transforms.RandomBrightness, ops.adjust_brightness),
                                        (transforms.RandomContrast, ops.adjust_contrast),
                                        (transforms.RandomSaturation, ops.adjust_saturation),
                                        (transforms.RandomHue, ops.adjust_hue)])
def test_random_factor_transforms(cls, adjust):
    for seed in (0, 1):
        mx.random.seed(seed)
        y = cls(0.4)(IMG)
        mx.random.seed(seed)
        factor = ops.uniform(0.6, 1.4)
        assert 0.6 <= factor <= 1.4
        np.testing.assert_array_equal(y.asnumpy(), adjust(IMG.asnumpy(), factor))
        assert y.dtype is np.uint8 and y.shape == IMG.shape


def test_random_lighting_and_jitter():
    mx.random.seed(4)
    a = transforms.RandomLighting(0.1)(IMG).asnumpy()
    mx.random.seed(4)
    alpha = mx.random.generator().normal(0.0, 0.1, size=3)
    np.testing.assert_array_equal(a, ops.adjust_lighting(IMG.asnumpy(), alpha))
    np.testing.assert_array_equal(transforms.RandomColorJitter()(IMG).asnumpy(), IMG.asnumpy())
    jitter = transforms.RandomColorJitter(0.3, 0.3, 0.3, 0.1)
    mx.random.seed(5)
    first = jitter(IMG).asnumpy()
    mx.random.seed(5)
    np.testing.assert_array_equal(jitter(IMG).asnumpy(), first)
    assert first.shape == IMG.shape and first.dtype == np.uint8


def test_random_apply_and_rotation_use_python_and_numpy_random():
    always = transforms.RandomApply(transforms.Cast(), p=1.0)
    never = transforms.RandomApply(transforms.Cast(), p=0.0)
    assert always(IMG).dtype is np.float32 and never(IMG) is IMG
    x = transforms.ToTensor()(IMG)
    np.random.seed(8)
    got = transforms.RandomRotation((-30, 30))(x).asnumpy()
    np.random.seed(8)
    np.random.random()
    angle = np.random.uniform(-30, 30)
    np.testing.assert_allclose(got, mx.image.imrotate(x, angle).asnumpy(), rtol=0, atol=1e-6)
    random.seed(2)
    a = transforms.RandomResizedCrop((5, 4))(IMG).asnumpy()
    random.seed(2)
    np.testing.assert_array_equal(a, transforms.RandomResizedCrop((5, 4))(IMG).asnumpy())


# --- hybridization ----------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore:All children of this Sequential")  # MXNet warns too
def test_compose_hybridizes_groups_as_mxnet():
    pipe = transforms.Compose([transforms.Resize(5), transforms.ToTensor(),
                               transforms.Normalize(0.5, 0.2)])
    want = pipe(IMG).asnumpy()
    pipe.hybridize()
    assert isinstance(pipe[0], nn.HybridSequential) and pipe[0]._active
    assert_matches(pipe(IMG).asnumpy(), want, "hybridized Compose")
    assert pipe[0]._cached_op.backend == "numpy"  # _image_resize has no ONNX export
    tensor = transforms.Compose([transforms.CenterCrop(4), transforms.ToTensor(),
                                 transforms.Normalize((0.4, 0.5, 0.6), (0.2, 0.3, 0.1))])
    assert_matches(tensor(IMG).asnumpy(), np.asarray(
        (IMG.asnumpy()[1:5, 2:6].transpose(2, 0, 1) / np.float32(255)
         - np.float32([0.4, 0.5, 0.6]).reshape(3, 1, 1)) / np.float32([0.2, 0.3, 0.1]).reshape(
            3, 1, 1), np.float32), "ToTensor + Normalize")
    assert tensor[1]._cached_op.backend == "onnxruntime"
    casts = transforms.Compose([transforms.Cast("float16"), transforms.Cast()])
    casts.hybridize()
    assert casts[0]._active
    np.testing.assert_array_equal(casts(IMG).asnumpy(), IMG.asnumpy().astype(np.float32))


def test_hybridized_random_transforms_draw_as_eager():
    pipe = nn.HybridSequential()
    pipe.add(transforms.RandomBrightness(0.4), transforms.RandomFlipLeftRight(),
             transforms.RandomLighting(0.1))
    mx.random.seed(3)
    want = pipe(IMG).asnumpy()
    pipe.hybridize()
    mx.random.seed(3)
    np.testing.assert_array_equal(pipe(IMG).asnumpy(), want)


def test_crop_resize_without_interpolation_is_bilinear():
    # MXNet passes interp=None to the op and fails; gluonport takes the op's default (1)
    block = transforms.CropResize(1, 0, 6, 5, size=4)
    want = transforms.CropResize(1, 0, 6, 5, size=4, interpolation=1)(IMG).asnumpy()
    np.testing.assert_array_equal(block(IMG).asnumpy(), want)
    block.hybridize()
    np.testing.assert_array_equal(block(IMG).asnumpy(), want)


MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def _preprocessing_net() -> nn.HybridSequential:
    net = nn.HybridSequential(prefix="pre_")
    with net.name_scope():
        net.add(transforms.ToTensor(), transforms.Normalize(MEAN, STD), nn.Dense(4))
    net.initialize(mx.init.Xavier(rnd_type="gaussian"))
    return net


EXPORT_GOLDEN = os.path.join(os.path.dirname(HERE), "ops", "image_pipeline-symbol.json")


def test_tensor_pipeline_hybridizes_and_exports(tmp_path):
    """ToTensor + Normalize + Dense: the hybridized graph equals the imperative run, its symbol
    file is the one MXNet 1.9.1 exports for the same network (gen_image_export.py; MXNet loads
    gluonport's file and gives the same output), and its ONNX export runs on onnxruntime with
    the same result. Tolerance 1e-5 absolute on outputs of magnitude ~10 (float32 sums in
    another order)."""
    import onnxruntime as ort

    batch = mx.nd.array(np.random.RandomState(9).randint(0, 256, (2, 6, 8, 3)), dtype="uint8")
    net = _preprocessing_net()
    want = net(batch).asnumpy()
    net.hybridize()
    np.testing.assert_allclose(net(batch).asnumpy(), want, rtol=0, atol=1e-5)
    sym_file, _ = net.export(str(tmp_path / "pre"))
    with open(sym_file, encoding="utf-8") as f, open(EXPORT_GOLDEN, encoding="utf-8") as g:
        assert f.read() == g.read()  # byte for byte what MXNet 1.9.1 exports
    loaded = mx.gluon.SymbolBlock.imports(sym_file, ["data"], str(tmp_path / "pre-0000.params"))
    np.testing.assert_allclose(loaded(batch).asnumpy(), want, rtol=0, atol=1e-5)
    path = net.export_onnx(str(tmp_path / "pre.onnx"), batch, dynamic_batch=True)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    np.testing.assert_allclose(sess.run(None, {name: batch.asnumpy()})[0], want, rtol=0,
                               atol=1e-5)
    one = batch.asnumpy()[:1]
    np.testing.assert_allclose(sess.run(None, {name: one})[0], want[:1], rtol=0, atol=1e-5)


# --- errors -----------------------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda: mx.image.imresize(IMG, 4, 4, interp=7),
    lambda: mx.image.imresize(IMG, 4, 4, 9),
    lambda: transforms.Resize(4, interpolation=5)(IMG),
    lambda: transforms.CropResize(0, 0, 4, 4, size=3, interpolation=-1)(IMG),
])
def test_unsupported_interpolation_raises(call):
    with pytest.raises(GluonportError, match="interp.*(0 \\(nearest\\)|supported)"):
        call()


@pytest.mark.parametrize("fn,arg", [(mx.image.imdecode, b"\x89PNG\r\n"),
                                    (mx.image.imread, "cat.jpg")])
def test_decoding_needs_pillow_or_opencv(fn, arg):
    with pytest.raises(UnsupportedOpError, match="Pillow or OpenCV"):
        fn(arg)


@pytest.mark.parametrize("call,error", [
    (lambda: mx.image.imresize(IMG.astype("int32"), 4, 4), DTypeError),
    (lambda: mx.image.imresize(IMG.astype("float16"), 4, 4), DTypeError),
    (lambda: mx.image.imresize(IMG, 0, 4), GluonportError),
    (lambda: mx.image.imresize(IMG[0], 4, 4), ShapeError),
    (lambda: transforms.ToTensor()(IMG[0]), ShapeError),
    (lambda: transforms.Normalize((0.1, 0.2), 1.0)(transforms.ToTensor()(IMG)), ShapeError),
    (lambda: transforms.Normalize()(mx.nd.zeros((4, 2, 2))), ShapeError),
    (lambda: transforms.CropResize(5, 0, 4, 4)(IMG), ShapeError),
    (lambda: transforms.RandomBrightness(0.1)(mx.nd.zeros((1, 2, 2, 3))), ShapeError),
])
def test_bad_input_is_a_clear_error(call, error):
    with pytest.raises(error):
        call()


def test_imresize_out_and_numpy_input():
    out = mx.nd.zeros((3, 4, 3), dtype="uint8")
    res = mx.image.imresize(IMG, 4, 3, interp=1, out=out)
    assert res is out
    np.testing.assert_array_equal(out.asnumpy(),
                                  mx.image.imresize(IMG.asnumpy(), 4, 3).asnumpy())


@pytest.mark.parametrize("module", [mx.image, mx.image.CreateAugmenter.__module__, transforms])
def test_docstring_examples_run(module):
    import sys

    module = sys.modules[module] if isinstance(module, str) else module
    result = doctest.testmod(module)
    assert result.failed == 0 and result.attempted > 0
