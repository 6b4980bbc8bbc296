"""Operator names MXNet 1.9.1's ONNX exporter (``mxnet.onnx.mx2onnx``) registers.

The operator issue aims for at least this set; ``OPERATORS.md`` lists what is still missing.
Extracted from the ``@mx_op.register(...)`` names in MXNet 1.9.1's
``python/mxnet/onnx/mx2onnx/_op_translations/`` (facts only).
"""

MX2ONNX_OPS: tuple[str, ...] = (
    "Activation", "BatchNorm", "BlockGrad", "Cast", "Concat", "Convolution", "Crop",
    "Deconvolution", "Dropout", "Embedding", "Flatten", "FullyConnected", "InstanceNorm",
    "L2Normalization", "LRN", "LayerNorm", "LeakyReLU", "LogisticRegressionOutput", "MakeLoss",
    "Pad", "Pooling", "RNN", "ROIPooling", "Reshape", "SequenceMask", "SequenceReverse",
    "SliceChannel", "SoftmaxOutput", "SwapAxis", "UpSampling", "_arange",
    "_contrib_AdaptiveAvgPooling2D", "_contrib_BilinearResize2D", "_contrib_ROIAlign",
    "_contrib_arange_like", "_contrib_box_decode", "_contrib_box_nms", "_contrib_div_sqrt_dim",
    "_contrib_interleaved_matmul_selfatt_qk", "_contrib_interleaved_matmul_selfatt_valatt",
    "_copy", "_div_scalar", "_equal_scalar", "_greater_scalar", "_lesser_scalar", "_linalg_gemm2",
    "_maximum", "_maximum_scalar", "_minimum", "_minimum_scalar", "_minus_scalar", "_mul_scalar",
    "_ones", "_plus_scalar", "_power", "_power_scalar", "_random_normal", "_random_uniform",
    "_random_uniform_like", "_rdiv_scalar", "_rminus_scalar", "_rnn_param_concat",
    "_sample_multinomial", "_split_v2", "_zeros", "abs", "add_n", "arccos", "arcsin", "arctan",
    "argmax", "argmin", "argsort", "batch_dot", "broadcast_add", "broadcast_axis", "broadcast_div",
    "broadcast_equal", "broadcast_greater", "broadcast_greater_equal", "broadcast_lesser",
    "broadcast_lesser_equal", "broadcast_like", "broadcast_logical_and", "broadcast_logical_or",
    "broadcast_logical_xor", "broadcast_minimum", "broadcast_mod", "broadcast_mul",
    "broadcast_not_equal", "broadcast_power", "broadcast_sub", "broadcast_to", "ceil", "clip",
    "cos", "depth_to_space", "dot", "elemwise_add", "elemwise_div", "elemwise_mul", "elemwise_sub",
    "exp", "expand_dims", "floor", "gather_nd", "hard_sigmoid", "identity", "log", "log2",
    "log_softmax", "logical_not", "max", "mean", "min", "negative", "norm", "one_hot",
    "ones_like", "prod", "reciprocal", "relu", "repeat", "reshape_like", "reverse", "shape_array",
    "sigmoid", "sin", "size_array", "slice", "slice_axis", "slice_like", "softmax",
    "space_to_depth", "sqrt", "square", "squeeze", "stack", "sum", "sum_axis", "take", "tan",
    "tanh", "tile", "topk", "transpose", "where", "zeros_like",
)
