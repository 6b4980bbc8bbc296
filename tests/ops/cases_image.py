"""Case table for gluonport/ops/vision/image.py, MXNet 1.9.1's ``_image_*`` operators (plain data;
see tests/ops/_check.py).

uint8 results are compared exactly (a difference of 1 exceeds the default tolerance). Flips use
an even size along the flipped axis: MXNet never writes the middle row/column of an odd one.
The random ops are deterministic with ``min_factor == max_factor``; the others are compared by
shape and dtype only (their draws come from another generator than MXNet's).
"""

U8 = {"dtype": "uint8", "low": 0, "high": 256}
PIX = {"low": 0.0, "high": 255.0}
UNIT = {"low": 0.0, "high": 1.0}
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
# MXNet 1.9.1's gradient of these ops is ``_copy`` of the head gradient, not their derivative
COPY = {"no_fd": "MXNet's gradient is the head gradient copied (_copy), not the derivative"}
COPY_F32 = {"no_fd": "computed in float32 (MXNet's arithmetic): too coarse for differences "
                     "of 1e-6 (the _copy gradient is the derivative here)"}

_TO_TENSOR = [
    {"name": "to_tensor_u8_hwc", "op": "_image_to_tensor", "inputs": [{"shape": (5, 7, 3), **U8}]},
    {"name": "to_tensor_u8_nhwc", "op": "_image_to_tensor",
     "inputs": [{"shape": (2, 4, 5, 3), **U8}]},
    {"name": "to_tensor_f32", "op": "_image_to_tensor", "inputs": [{"shape": (4, 6, 3), **PIX}]},
    {"name": "to_tensor_f64_gray", "op": "_image_to_tensor",
     "inputs": [{"shape": (4, 6, 1), "dtype": "float64", **PIX}]},
    {"name": "to_tensor_f16", "op": "_image_to_tensor",
     "inputs": [{"shape": (3, 5, 3), "dtype": "float16", **PIX}]},
    {"name": "to_tensor_i32_two_channels", "op": "_image_to_tensor",
     "inputs": [{"shape": (4, 4, 2), "dtype": "int32", "low": -300, "high": 300}]},
    {"name": "to_tensor_int8_negative", "op": "_image_to_tensor",
     "inputs": [{"shape": (1, 3, 2, 4), "dtype": "int8", "low": -128, "high": 128}]},
]

_NORMALIZE = [
    {"name": "normalize_chw", "op": "_image_normalize", "inputs": [{"shape": (3, 4, 5), **UNIT}],
     "attrs": {"mean": MEAN, "std": STD}},
    {"name": "normalize_nchw", "op": "_image_normalize",
     "inputs": [{"shape": (2, 3, 4, 5), **UNIT}], "attrs": {"mean": MEAN, "std": STD}},
    {"name": "normalize_scalar", "op": "_image_normalize", "inputs": [{"shape": (3, 2, 6)}],
     "attrs": {"mean": 0.5, "std": 0.25}},
    {"name": "normalize_list_mean_scalar_std", "op": "_image_normalize",
     "inputs": [{"shape": (3, 3, 3)}], "attrs": {"mean": list(MEAN), "std": 0.3}},
    {"name": "normalize_tuples", "op": "_image_normalize", "inputs": [{"shape": (3, 2, 2)}],
     "attrs": {"mean": (1.0, 2.0, 3.0), "std": (4.0, 5.0, 6.0)}},
    {"name": "normalize_gray", "op": "_image_normalize", "inputs": [{"shape": (1, 4, 5)}],
     "attrs": {"mean": (0.4,), "std": (0.2,)}},
    {"name": "normalize_gray_batch", "op": "_image_normalize",
     "inputs": [{"shape": (2, 1, 3, 4)}], "attrs": {"mean": 0.1, "std": 3.0}},
    {"name": "normalize_f64", "op": "_image_normalize",
     "inputs": [{"shape": (3, 4, 4), "dtype": "float64"}], "attrs": {"mean": MEAN, "std": STD}},
    {"name": "normalize_f16", "op": "_image_normalize",
     "inputs": [{"shape": (3, 2, 4), "dtype": "float16", **UNIT}],
     "attrs": {"mean": MEAN, "std": STD}},
    {"name": "normalize_u8", "op": "_image_normalize",
     "inputs": [{"shape": (3, 2, 3), "dtype": "uint8", "low": 10, "high": 200}],
     "attrs": {"mean": (1.0, 2.0, 3.0), "std": (2.0, 4.0, 1.5)}},
    {"name": "normalize_i32_negative", "op": "_image_normalize",
     "inputs": [{"shape": (3, 3, 2), "dtype": "int32", "low": -50, "high": 50}],
     "attrs": {"mean": (0.5, 1.1, 3.0), "std": 0.2}},
]

_RESIZE = [
    {"name": "resize_u8_square", "op": "_image_resize", "inputs": [{"shape": (6, 8, 3), **U8}],
     "attrs": {"size": 4}},
    {"name": "resize_u8_width_height", "op": "_image_resize",
     "inputs": [{"shape": (6, 8, 3), **U8}], "attrs": {"size": (5, 3)}},
    {"name": "resize_keep_ratio_landscape", "op": "_image_resize",
     "inputs": [{"shape": (6, 8, 3), **U8}], "attrs": {"size": 3, "keep_ratio": True}},
    {"name": "resize_keep_ratio_portrait", "op": "_image_resize",
     "inputs": [{"shape": (9, 6, 3), **U8}], "attrs": {"size": 4, "keep_ratio": True}},
    {"name": "resize_nearest_up_gray", "op": "_image_resize",
     "inputs": [{"shape": (4, 5, 1), **U8}], "attrs": {"size": (9, 7), "interp": 0}},
    {"name": "resize_cubic", "op": "_image_resize", "inputs": [{"shape": (8, 8, 3), **U8}],
     "attrs": {"size": (5, 6), "interp": 2}},
    {"name": "resize_area_down", "op": "_image_resize", "inputs": [{"shape": (12, 9, 3), **U8}],
     "attrs": {"size": (4, 5), "interp": 3}},
    {"name": "resize_lanczos_up", "op": "_image_resize", "inputs": [{"shape": (6, 6, 3), **U8}],
     "attrs": {"size": (10, 8), "interp": 4}},
    {"name": "resize_nhwc", "op": "_image_resize", "inputs": [{"shape": (2, 6, 8, 3), **U8}],
     "attrs": {"size": (4, 3)}},
    {"name": "resize_nhwc_keep_ratio", "op": "_image_resize",
     "inputs": [{"shape": (2, 5, 7, 1), **U8}], "attrs": {"size": 3, "keep_ratio": True}},
    {"name": "resize_f32", "op": "_image_resize", "inputs": [{"shape": (6, 8, 3), **PIX}],
     "attrs": {"size": (5, 4)}, "atol": 1e-4},
    {"name": "resize_f64_cubic", "op": "_image_resize",
     "inputs": [{"shape": (5, 5, 1), "dtype": "float64", **PIX}],
     "attrs": {"size": 3, "interp": 2}, "atol": 1e-9},
]

_CROP = [
    {"name": "crop_hwc", "op": "_image_crop", "inputs": [{"shape": (6, 8, 3), **U8}],
     "attrs": {"x": 1, "y": 2, "width": 4, "height": 3}},
    {"name": "crop_nhwc_whole", "op": "_image_crop", "inputs": [{"shape": (2, 6, 8, 1)}],
     "attrs": {"x": 0, "y": 0, "width": 8, "height": 6}},
    {"name": "crop_f16_far_edge", "op": "_image_crop",
     "inputs": [{"shape": (5, 5, 3), "dtype": "float16"}],
     "attrs": {"x": 2, "y": 1, "width": 3, "height": 4}},
    {"name": "crop_i32_one_pixel", "op": "_image_crop",
     "inputs": [{"shape": (3, 4, 3), "dtype": "int32", "low": -9, "high": 9}],
     "attrs": {"x": 3, "y": 2, "width": 1, "height": 1}},
]

_FLIP = [
    {"name": "flip_left_right_u8", "op": "_image_flip_left_right",
     "inputs": [{"shape": (5, 6, 3), **U8}]},
    {"name": "flip_left_right_gray", "op": "_image_flip_left_right",
     "inputs": [{"shape": (4, 8, 1)}], **COPY},
    {"name": "flip_top_bottom_u8", "op": "_image_flip_top_bottom",
     "inputs": [{"shape": (6, 5, 3), **U8}]},
    {"name": "flip_top_bottom_f16_gray", "op": "_image_flip_top_bottom",
     "inputs": [{"shape": (4, 3, 1), "dtype": "float16"}], **COPY},
    {"name": "flip_top_bottom_i32", "op": "_image_flip_top_bottom",
     "inputs": [{"shape": (2, 2, 3), "dtype": "int32", "low": -9, "high": 9}]},
]


def _fixed(kind: str, factor: float, spec: dict, suffix: str, **extra) -> dict:
    return {"name": f"random_{kind}_{suffix}", "op": f"_image_random_{kind}", "inputs": [spec],
            "attrs": {"min_factor": factor, "max_factor": factor}, **extra}


_RGB8 = {"shape": (5, 6, 3), **U8}
_GRAY8 = {"shape": (4, 5, 1), **U8}
_RGBF = {"shape": (4, 4, 3), **PIX}
_ADJUST = [
    _fixed("brightness", 1.7, _RGB8, "u8_saturates"),
    _fixed("brightness", 0.5, _RGBF, "f32", atol=1e-4, **COPY),
    _fixed("brightness", 0.55, _GRAY8, "gray"),
    _fixed("contrast", 0.35, _RGB8, "u8"),
    _fixed("contrast", 1.6, _GRAY8, "gray"),
    _fixed("contrast", 1.2, _RGBF, "f32", atol=1e-4, **COPY),
    _fixed("saturation", 1.8, _RGB8, "u8"),
    _fixed("saturation", 0.3, _RGBF, "f32", atol=1e-4, **COPY),
    _fixed("saturation", 0.3, _GRAY8, "gray_copies"),
    _fixed("hue", 0.15, _RGB8, "u8"),
    _fixed("hue", 0.8, _RGBF, "f32", atol=2e-4, **COPY),
    _fixed("hue", 1.65, {"shape": (6, 4, 3), **U8}, "u8_wraps"),
    {"name": "adjust_lighting_u8", "op": "_image_adjust_lighting", "inputs": [_RGB8],
     "attrs": {"alpha": (0.1, -0.2, 0.05)}},
    {"name": "adjust_lighting_u8_saturates", "op": "_image_adjust_lighting", "inputs": [_RGB8],
     "attrs": {"alpha": (-1.5, 2.0, 3.0)}},
    {"name": "adjust_lighting_f32", "op": "_image_adjust_lighting", "inputs": [_RGBF],
     "attrs": {"alpha": (0.3, 0.1, -0.4)}, "atol": 1e-4, **COPY_F32},
    {"name": "adjust_lighting_f16", "op": "_image_adjust_lighting",
     "inputs": [{"shape": (2, 3, 3), "dtype": "float16", **PIX}],
     "attrs": {"alpha": (0.3, 0.1, -0.4)}, **COPY_F32},
    {"name": "adjust_lighting_i32_extra_alpha", "op": "_image_adjust_lighting",
     "inputs": [{"shape": (2, 2, 3), "dtype": "int32", "low": -100, "high": 100}],
     "attrs": {"alpha": (0.5, -0.5, 1.0, 9.0)}},
    {"name": "random_lighting_std0", "op": "_image_random_lighting", "inputs": [_RGB8],
     "attrs": {"alpha_std": 0.0}},
]

_RANDOM = [
    {"name": "random_flip_left_right", "op": "_image_random_flip_left_right",
     "inputs": [_RGB8], "compare": "shape"},
    {"name": "random_flip_top_bottom", "op": "_image_random_flip_top_bottom",
     "inputs": [{"shape": (4, 3, 1)}], "compare": "shape", **COPY},
    {"name": "random_brightness_range", "op": "_image_random_brightness", "inputs": [_RGB8],
     "attrs": {"min_factor": 0.5, "max_factor": 1.5}, "compare": "shape"},
    {"name": "random_color_jitter", "op": "_image_random_color_jitter", "inputs": [_RGB8],
     "attrs": {"brightness": 0.3, "contrast": 0.3, "saturation": 0.3, "hue": 0.1},
     "compare": "shape"},
    {"name": "random_lighting_default", "op": "_image_random_lighting", "inputs": [_RGBF],
     "compare": "shape", "no_fd": "random lighting offsets: every forward call draws anew"},
]

CASES = _TO_TENSOR + _NORMALIZE + _RESIZE + _CROP + _FLIP + _ADJUST + _RANDOM

# the deterministic ops with an ONNX export (tests/onnx/test_export_image.py)
EXPORTED = ("_image_to_tensor", "_image_normalize", "_image_crop", "_image_flip_left_right",
            "_image_flip_top_bottom", "_image_adjust_lighting")
