"""What an op hook (``HybridBlock.register_op_hook``) reports, as MXNet 1.9.1 reports it.

MXNet's cached graph calls the hook once per tensor, node by node in graph order: with
``monitor_all=True`` first each input of the node, named ``<node>_<input name>``, then (always)
each output, named ``<node>_<output name>``. The names come from the operator's
``FListInputNames`` / ``FListOutputNames``; an operator without them gets positional names,
``input0, input1, ...`` for inputs and ``0, 1, ...`` for outputs (``relu0_fwd_input0``,
``sigmoid0_0``). Inference reports the visible outputs only; training (``autograd.record``)
also the hidden ones (BatchNorm's ``mean``/``var``). Variables are never reported by
themselves, only as some node's input.

The two tables below say which convention each operator follows; they were read off MXNet
1.9.1 (``tests/golden/gluon/gen_op_hook_names.py`` records the names for every operator of the
per-op case tables, and ``tests/gluon/test_op_hook.py`` checks these tables against it). An
operator in neither table (one registered by user code) gets its declared input names and
positional output names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

__all__ = ["POSITIONAL_INPUTS", "NAMED_OUTPUTS", "input_names", "output_names", "make_monitor"]

#: Operators without ``FListInputNames``: inputs are reported as ``input0, input1, ...``.
POSITIONAL_INPUTS = frozenset({
    'Activation', 'BlockGrad', 'Cast', 'Flatten', 'Reshape', 'SoftmaxActivation',
    '_contrib_AdaptiveAvgPooling2D', '_contrib_arange_like', '_contrib_bipartite_matching',
    '_contrib_box_nms', '_contrib_div_sqrt_dim', '_contrib_gradientmultiplier', '_copy',
    '_div_scalar', '_equal_scalar', '_greater_equal_scalar', '_greater_scalar',
    '_hypot_scalar', '_image_adjust_lighting', '_image_crop', '_image_flip_left_right',
    '_image_flip_top_bottom', '_image_random_brightness', '_image_random_color_jitter',
    '_image_random_contrast', '_image_random_flip_left_right', '_image_random_flip_top_bottom',
    '_image_random_hue', '_image_random_lighting', '_image_random_saturation', '_image_resize',
    '_lesser_equal_scalar', '_lesser_scalar', '_logical_and_scalar', '_logical_or_scalar',
    '_logical_xor_scalar', '_maximum_scalar', '_minimum_scalar', '_minus_scalar',
    '_mod_scalar', '_mul_scalar', '_not_equal_scalar', '_plus_scalar', '_power_scalar',
    '_random_exponential_like', '_random_gamma_like',
    '_random_generalized_negative_binomial_like', '_random_negative_binomial_like',
    '_random_normal_like', '_random_poisson_like', '_random_uniform_like', '_rdiv_scalar',
    '_rminus_scalar', '_rmod_scalar', '_rpower_scalar', '_sample_multinomial', 'abs',
    'amp_cast', 'arccos', 'arccosh', 'arcsin', 'arcsinh', 'arctan', 'arctanh', 'argmax',
    'argmin', 'argsort', 'broadcast_axis', 'broadcast_to', 'cbrt', 'ceil', 'clip', 'cos',
    'cosh', 'degrees', 'erf', 'erfinv', 'exp', 'expand_dims', 'expm1', 'fix', 'floor', 'gamma',
    'gammaln', 'hard_sigmoid', 'log', 'log10', 'log1p', 'log2', 'logical_not', 'make_loss',
    'max', 'mean', 'min', 'nanprod', 'nansum', 'negative', 'norm', 'ones_like', 'prod',
    'radians', 'rcbrt', 'reciprocal', 'relu', 'rint', 'round', 'rsqrt', 'shape_array',
    'sigmoid', 'sign', 'sin', 'sinh', 'size_array', 'slice', 'slice_axis', 'smooth_l1',
    'softmin', 'softsign', 'sort', 'sqrt', 'square', 'sum', 'tan', 'tanh', 'topk', 'transpose',
    'trunc', 'zeros_like'
})

#: Operators with ``FListOutputNames``: outputs are reported by name (``output``, ``mean``);
#: every other operator's as ``0, 1, ...``.
NAMED_OUTPUTS = frozenset({
    'Activation', 'BatchNorm', 'BilinearSampler', 'Concat', 'Convolution', 'Convolution_v1',
    'Correlation', 'Crop', 'Custom', 'Deconvolution', 'Dropout', 'FullyConnected',
    'GridGenerator', 'GroupNorm', 'InstanceNorm', 'L2Normalization', 'LRN', 'LayerNorm',
    'LeakyReLU', 'MakeLoss', 'Pad', 'Pooling', 'Pooling_v1', 'RNN', 'ROIPooling', 'SVMOutput',
    'SequenceLast', 'SequenceMask', 'SequenceReverse', 'SliceChannel', 'SoftmaxActivation',
    'SoftmaxOutput', 'SpatialTransformer', 'SwapAxis', 'UpSampling',
    '_contrib_BatchNormWithReLU', '_contrib_DeformableConvolution',
    '_contrib_ModulatedDeformableConvolution', '_contrib_MultiBoxDetection',
    '_contrib_MultiBoxPrior', '_contrib_MultiBoxTarget', '_contrib_MultiProposal',
    '_contrib_PSROIPooling', '_contrib_Proposal', '_contrib_ROIAlign',
    '_contrib_SyncBatchNorm', '_contrib_index_array', '_contrib_interleaved_matmul_encdec_qk',
    '_contrib_interleaved_matmul_encdec_valatt', '_contrib_interleaved_matmul_selfatt_qk',
    '_contrib_interleaved_matmul_selfatt_valatt', '_rnn_param_concat', 'col2im',
    'elemwise_add', 'im2col', 'make_loss', 'softmax', 'softmin'
})


def input_names(node: Any) -> list[str]:
    """The names MXNet's hook gives ``node``'s inputs (without the ``<node>_`` prefix)."""
    count = len(node.inputs)
    if node.op.name in POSITIONAL_INPUTS:
        return [f"input{i}" for i in range(count)]
    names = list(node.op.input_names(node.params, count))[:count]
    return names + [f"input{i}" for i in range(len(names), count)]


def output_names(node: Any) -> list[str]:
    """The names MXNet's hook gives ``node``'s outputs (hidden ones included)."""
    if node.op.name in NAMED_OUTPUTS:
        return list(node.op.list_output_names(node.params))
    return [str(i) for i in range(node.num_outputs())]


def make_monitor(callback: Callable[[str, str, Any], Any], monitor_all: bool, is_train: bool,
                 feed: Mapping[str, np.ndarray], wrap: Callable[[np.ndarray], Any]
                 ) -> Callable[[Any, list], None]:
    """A ``GraphPlan.run`` monitor that calls ``callback(name, op_name, wrap(array))`` in
    MXNet's order. The executor reports a node after it ran; its inputs (variables from
    ``feed``, earlier outputs kept for this run) are reported first, as MXNet reports them
    before the node runs (ops here never write their inputs)."""
    values: dict[tuple[int, int], np.ndarray] = {}

    def monitor(node: Any, outs: list) -> None:
        op_name = node.op.name
        if monitor_all:
            for (src, index), name in zip(node.inputs, input_names(node)):
                arr = feed.get(src.name) if src.op is None else values.get((id(src), index))
                if arr is not None:
                    callback(f"{node.name}_{name}", op_name, wrap(arr))
            values.update(((id(node), i), o) for i, o in enumerate(outs))
        count = node.num_outputs() if is_train else node.num_visible_outputs()
        for name, arr in zip(output_names(node)[:count], outs[:count]):
            if arr is not None:
                callback(f"{node.name}_{name}", op_name, wrap(arr))

    return monitor
