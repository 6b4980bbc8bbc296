"""onnx's own backend test suite against gluonport's importer + numpy executor.

``onnx.backend.test.BackendTest`` builds one test per node test shipped with the installed onnx
(and the small "simple" / "pytorch" model tests whose data ships with it). Each is imported
into an MXNet graph (gluonport.onnx.backend), run on the numpy executor and compared with
onnx's expected outputs (its tolerances, exact shapes and dtypes).

Every exclusion below is a regular expression with the reason it cannot pass. Categories:
no MXNet 1.x equivalent; non-tensor types (strings, sequences, optionals, maps); training ops;
quantization; randomness;
empty tensors (MXNet 1.x has no zero-size arrays); known semantic differences; and real models
whose weights are downloads (no network here). ``benchmarks/onnx_backend_coverage.py`` counts
the tests per category (``--run all`` also runs the excluded ones).
"""

from __future__ import annotations

import numpy as np
import onnx
import onnx.backend.test
from onnx import TensorProto, helper

from gluonport.onnx.backend import GluonportBackend

EXCLUDE: dict[str, list[str]] = {
    # --- ops with no MXNet 1.x equivalent (the importer names them in UnsupportedOpError) ---
    # (ops that onnx defines as functions -- Attention, RotaryEmbedding, the windows ... --
    # import by expanding their function body into primitive ops: gluonport/onnx/_import_expand)
    "float16 accumulation: 2 of 192 values differ by 1 ulp from the float32-computed "
    "reference": [r"^test_attention_4d_causal_fp16"],
    # (Bitwise*: MXNet's _npi_bitwise_* ops; BitShift: integer products / quotients by 2^s;
    # BitCast between integers of one width: Cast -- gluonport/onnx/importers/bits.py)
    "BitCast between floats and integers: no MXNet op reinterprets a float's bits; to int16: "
    "MXNet's Cast has no int16": [r"^test_bitcast_.*float", r"^test_bitcast_uint16_to_int16"],
    # (DFT: products with constant cosine/sine matrices; STFT: frames by take, then the same;
    # MelWeightMatrix: a constant)
    "DFT inverse: the expected zeros carry the reference's float32 round trip (1.9e-7, over "
    "the 1e-7 atol) where the transform computed in float64 gives 3e-15": [
        r"^test_dft_inverse"],
    # (DeformConv: MXNet's _contrib_ModulatedDeformableConvolution, importers/sampling.py;
    # MaxUnpool: scatter_nd into the unpooled shape, importers/nn.py)
    # (GridSample nearest, border/reflection padding: the grid moved before BilinearSampler)
    "GridSample bicubic and 3-D; AffineGrid 3-D: MXNet's BilinearSampler/GridGenerator are "
    "bilinear and 2-D": [
        r"^test_gridsample_(bicubic|volumetric)",
        r"^test_affine_grid_3d(?!.*expanded)"],
    "RoiAlign mode='max': MXNet's ROIAlign averages the samples of a bin": [
        r"^test_roialign_mode_max"],
    "data-dependent output shapes (MXNet 1.x graphs are static; box_nms pads with -1)": [
        r"^test_nonmaxsuppression_", r"^test_unique_", r"^test_nonzero"],
    "ImageDecoder, TfIdfVectorizer: no MXNet 1.x op": [
        r"^test_image_decoder", r"^test_tfidfvectorizer"],
    "ai.onnx.ml domain ops": [r"^test_ai_onnx_ml_"],
    # --- types ---
    "string tensors": [r"^test_string_", r"^test_strnorm", r"^test_regex_full_match",
                       r"^test_equal_string", r"^test_cast(like)?_.*STRING"],
    # (If with a constant condition and Loop with a constant trip count are unrolled:
    # gluonport/onnx/_import_unroll; the rest and every Scan, Scan-8 included, import onto
    # MXNet's _cond/_while_loop/_foreach: gluonport/onnx/importers/control.py)
    # (sequences built and read inside the graph with known positions and sizes are
    # expanded into their tensors, optionals holding tensors resolved where their presence
    # is known while importing: gluonport/onnx/_import_sequence.py)
    "sequences and optionals are not MXNet tensors: sequence graph inputs/outputs, presence "
    "of an optional graph input (known at run time), SequenceMap, If/Loop over them": [
        r"^test_sequence_(insert|map)", r"^test_optional_get_element_(optional_)?sequence",
        r"^test_optional_has_element_(empty_optional|optional|tensor)_input",
        r"^test_identity_sequence",
        r"^test_identity_opt", r"^test_if_(seq|opt)", r"^test_loop1[36]_seq",
        r"^test_split_to_sequence"],
    # (bfloat16, float8, float8e8m0, float4, int4, int2: carried in float32 / int8 / uint8
    # with the same values, casts rounded onto the narrow grid: gluonport/onnx/_import_narrow)
    # --- quantization ---
    # (QuantizeLinear / DequantizeLinear to and from 8-bit integers are composed elementwise)
    "quantized ops: MXNet 1.x quantization is a different (contrib, calibrated) scheme": [
        r"^test_qlinear", r"^test_convinteger", r"^test_matmulinteger"],
    "QuantizeLinear to int16/uint16: no such MXNet 1.x type": [
        r"^test_quantizelinear_(u?int16|blocked_symmetric)"],
    # --- training and randomness ---
    "training ops (training-mode dropout/BatchNorm, optimizers, gradients)": [
        r"^test_training_dropout", r"^test_batchnorm_.*training_mode", r"^test_adagrad",
        r"^test_adam", r"^test_momentum", r"^test_nesterov_momentum", r"^test_gradient_of"],
    "random draws cannot equal the reference's": [r"^test_bernoulli"],
    # --- empty tensors ---
    "zero-size tensors: MXNet 1.x has none (0 means an unknown dim)": [
        r"^test_reduce_(max|min|log_sum_exp)_empty_set_bool_cpu",
        r"^test_reshape_allowzero_reordered", r"^test_slice_start_out_of_bounds",
        r"^test_causal_conv_with_state_kernel_size_one"],
    # --- semantic differences, each named by the importer ---
    # (pooling with dilations: one strided slice per kernel tap, gluonport/onnx/importers/nn.py)
    "MaxPool's Indices output: MXNet's Pooling does not return argmax": [
        r"^test_maxpool_with_argmax"],
    # (GRU linear_before_reset=0, LSTM peepholes, shorter sequence_lens: unrolled into cells)
    # (Mod of floats: MXNet's mod gives 0 for a zero divisor, the import adds NaN there)
    "Einsum ellipsis: not mapped": [r"^test_einsum_batch_diagonal"],
    "Resize keep_aspect_ratio where round(scale * n) != floor(scale * n): the per-axis maps "
    "come from a resize by scale": [r"^test_resize_downsample_sizes_nearest_not_smaller"],
}

# Test data that onnx < 1.18 (pyproject.toml allows 1.17) writes differently, each detected
# on the installed onnx, with the reason.
OLDER_ONNX: dict[str, list[str]] = {}
if np.dtype(helper.tensor_dtype_to_np_dtype(TensorProto.BFLOAT16)) == np.float32:
    OLDER_ONNX[f"onnx {onnx.__version__} has no ml_dtypes: its bfloat16 and float8 test "
               "arrays are raw bits in onnx's own structured dtypes, which the backend's "
               "carriers are not; its casts to int4 saturate where newer onnx wraps"] = [
        r"^test_cast(like)?_(no_saturate_)?.*(BFLOAT16|FLOAT8)",
        r"^test_cast_FLOAT(16)?_to_U?INT4", r"^test_(de)?quantizelinear_e(4m3fn|5m2)"]
if tuple(int(v) for v in onnx.__version__.split(".")[:2]) < (1, 18):
    OLDER_ONNX[f"onnx {onnx.__version__}'s expected output predates the ONNX 1.18 fix of "
               "AveragePool's ceil_mode windows, which gluonport follows"] = [
        r"^test_averagepool_3d_dilations_large_count_include_pad_is_1_ceil_mode_is_True"]

# Models whose weights onnx downloads at test time: no network here.
REAL_MODELS = ["inception_v1", "inception_v2", "zfnet512", "densenet121", "vgg19",
               "shufflenet", "bvlc_alexnet", "resnet50", "squeezenet"]

backend_test = onnx.backend.test.BackendTest(GluonportBackend, __name__)
for _patterns in [*EXCLUDE.values(), *OLDER_ONNX.values()]:
    for _pattern in _patterns:
        backend_test.exclude(_pattern)
backend_test.exclude(r"^test_(" + "|".join(REAL_MODELS) + ")_")
backend_test.exclude(r"_cuda$")  # the numpy executor runs on the host only

globals().update(backend_test.test_cases)
