"""Image ops (``_image_*``) against MXNet 1.9.1 (tests/golden/ops/image.npz)."""

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import GluonportError, OpAttributeError, ShapeError
from gluonport.ops import registry

NAMES = ["adjust_lighting", "crop", "flip_left_right", "flip_top_bottom", "normalize",
         "random_brightness", "random_color_jitter", "random_contrast", "random_flip_left_right",
         "random_flip_top_bottom", "random_hue", "random_lighting", "random_saturation",
         "resize", "to_tensor"]  # dir(mx.nd.image) in MXNet 1.9.1


@pytest.mark.parametrize("name", NAMES)
def test_placed_at_image_namespaces_with_npx_alias(name):
    assert callable(getattr(mx.nd.image, name)) and callable(getattr(mx.sym.image, name))
    assert registry.canonical_name(f"_npx__image_{name}") == f"_image_{name}"


U8 = mx.nd.array(np.random.RandomState(0).randint(0, 256, (6, 8, 3)), dtype="uint8")


def test_positional_attributes_follow_mxnet_order():
    # MXNet's transforms call F.image.normalize(x, mean, std) and F.image.crop(x, x0, y0, w, h)
    t = mx.nd.image.to_tensor(U8)
    a = mx.nd.image.normalize(t, (0.1, 0.2, 0.3), (0.5, 0.6, 0.7)).asnumpy()
    b = mx.nd.image.normalize(t, mean=(0.1, 0.2, 0.3), std=(0.5, 0.6, 0.7)).asnumpy()
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(mx.nd.image.crop(U8, 1, 2, 3, 4).asnumpy(),
                                  U8.asnumpy()[2:6, 1:4])
    assert mx.nd.image.resize(U8, 4, True, 0).shape == (4, 5, 3)


@pytest.mark.parametrize("op,attrs,shape,want", [
    ("to_tensor", {}, (0, 5, 3), (3, 0, 5)),
    ("to_tensor", {}, (2, 4, 0, 3), (2, 3, 4, 0)),
    ("resize", {"size": (5, 3)}, (0, 0, 0, 3), (0, 3, 5, 3)),
    ("resize", {"size": 5}, (0, 0, 3), (5, 5, 3)),
    ("resize", {"size": 5, "keep_ratio": True}, (0, 0, 3), (0, 0, 3)),
    ("resize", {"size": 5, "keep_ratio": True}, (4, 6, 3), (5, 7, 3)),
    ("crop", {"x": 1, "y": 1, "width": 2, "height": 3}, (0, 0, 0, 3), (0, 3, 2, 3)),
    ("flip_left_right", {}, (0, 0, 3), (0, 0, 3)),
    ("normalize", {"mean": 0.5, "std": 2.0}, (2, 0, 5, 5), (2, 0, 5, 5)),
])
def test_partial_shape_inference(op, attrs, shape, want):
    s = getattr(mx.sym.image, op)(mx.sym.var("data"), **attrs)
    _, outs, _ = s.infer_shape_partial(data=shape)
    assert tuple(outs[0]) == want


@pytest.mark.parametrize("op,dtype,want", [
    ("to_tensor", np.uint8, np.float32), ("to_tensor", np.float64, np.float32),
    ("normalize", np.float16, np.float16), ("crop", np.int32, np.int32),
    ("flip_left_right", np.int32, np.int32), ("adjust_lighting", np.uint8, np.uint8),
])
def test_type_inference(op, dtype, want):
    attrs = {"crop": {"x": 0, "y": 0, "width": 1, "height": 1},
             "adjust_lighting": {"alpha": (1, 2, 3)}}.get(op, {})
    s = getattr(mx.sym.image, op)(mx.sym.var("data"), **attrs)
    assert s.infer_type(data=dtype)[1] == [want]


@pytest.mark.parametrize("call,error,match", [
    # MXNet's default mean/std have 4 values, which fit neither 1 nor 3 channels
    (lambda x: mx.nd.image.normalize(mx.nd.image.to_tensor(x)), ShapeError, "1 or 3 elements"),
    (lambda x: mx.nd.image.normalize(mx.nd.ones((4, 2, 2)), 0.5, 0.2), ShapeError,
     r"channel axis .*\(4, 2, 2\)"),
    (lambda x: mx.nd.image.to_tensor(x[0]), ShapeError, r"\(8, 3\)"),
    (lambda x: mx.nd.image.flip_left_right(mx.nd.ones((2, 6, 8, 3))), ShapeError,
     r"\(height, width, channels\)"),
    (lambda x: mx.nd.image.crop(x, 5, 0, 4, 4), ShapeError, "does not fit"),
    (lambda x: mx.nd.image.crop(x, -1, 0, 2, 2), OpAttributeError, "x=-1"),
    (lambda x: mx.nd.image.crop(mx.nd.ones((6, 8, 5)), 0, 0, 2, 2), ShapeError, "1 or 3"),
    (lambda x: mx.nd.image.resize(x, (3, 4, 5)), OpAttributeError, "size"),
    (lambda x: mx.nd.image.resize(x, 0), OpAttributeError, "positive"),
    (lambda x: mx.nd.image.resize(x, 4, interp=7), GluonportError, "interp"),
    (lambda x: mx.nd.image.resize(x.astype("float16"), 4), GluonportError, "float16"),
    (lambda x: mx.nd.image.random_brightness(x, -0.5, 1.0), OpAttributeError, "min_factor"),
    (lambda x: mx.nd.image.adjust_lighting(x, alpha=(0.1, 0.2)), OpAttributeError, "3 values"),
])
def test_bad_input_is_a_clear_error(call, error, match):
    with pytest.raises(error, match=match):
        call(U8)


def test_symbolic_error_names_the_node():
    s = mx.sym.image.normalize(mx.sym.var("data"), mean=(1, 2), std=1, name="norm")
    with pytest.raises(ShapeError, match=r"'norm'.*mean.*\(3, 4, 5\)"):
        s.infer_shape(data=(3, 4, 5))


def test_random_ops_draw_from_the_seeded_generator():
    outs = []
    for _ in range(2):
        mx.random.seed(11)
        outs.append([mx.nd.image.random_brightness(U8, 0.5, 1.5).asnumpy() for _ in range(3)])
    np.testing.assert_array_equal(np.stack(outs[0]), np.stack(outs[1]))
    assert not np.array_equal(outs[0][0], outs[0][1])  # a new factor per call
    x = U8.asnumpy().astype(float)
    for out in outs[0]:  # each is trunc(U8 * f) for one factor f in [0.5, 1.5)
        keep = (x > 100) & (out < 255)  # away from truncation noise and saturation
        ratio = out[keep] / x[keep]
        assert 0.49 < ratio.min() and ratio.max() < 1.5 and np.ptp(ratio) < 0.02
    flips = {np.array_equal(mx.nd.image.random_flip_top_bottom(U8).asnumpy(),
                            U8.asnumpy()[::-1]) for _ in range(40)}
    assert flips == {True, False}
