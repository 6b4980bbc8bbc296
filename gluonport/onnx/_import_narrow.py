"""Narrow ONNX tensor types carried in MXNet types: bfloat16, float8, float4 in float32; int4 and
int2 in int8; uint4 and uint2 in uint8.

MXNet 1.x computes none of these types (its bfloat16 runs through float32 too). Every value of
each one is exact in its carrier, so a model is imported as the same model over the carriers:
before import, :func:`carry_narrow_types` rewrites its top-level graph --

* graph inputs, outputs, value infos, initializers and ``Constant`` values of a narrow type
  take the carrier type (values converted exactly);
* a ``Cast`` (or a ``CastLike`` whose target is narrow) *to* a narrow type becomes a cast to the
  carrier plus a rounding of the value onto the narrow type's grid, written with ordinary ONNX
  ops the importer maps onto MXNet ops. Floats: round half to even to the type's mantissa
  width, with the exponent ``e = floor(log2 |x|)`` (fixed up by one where float32's ``Log``
  rounds across a power of two) held at the smallest normal exponent (subnormals); the
  saturating conversions clip to the largest finite value first, the others give NaN (or
  infinity, float8e5m2) past it. Integers: truncation, then wrapping into the type's bit width
  (ml_dtypes' conversion, which onnx's expected outputs use);
* a cast *from* a narrow type is a cast from its carrier.

Ops computing on a narrow type (a bfloat16 Celu) compute on the carrier: once rounded at the
model's outputs, not after every op. The backend (:mod:`gluonport.onnx.backend`) feeds narrow
inputs as carriers and returns outputs in the model's declared types. float8e8m0 (powers of
two only) is carried in float32 too, its casts rounding the exponent as onnx does
(:func:`_round_e8m0`). Not carried: tensors inside subgraphs.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .._core.dtypes import bfloat16_to_float32
from ..errors import UnsupportedOpError

__all__ = ["NARROW", "carry_narrow_types", "to_carrier", "from_carrier", "narrow_dtype",
           "narrow_values"]


@dataclass(frozen=True)
class Narrow:
    """One narrow type: its carrier, and for floats the grid (mantissa bits, smallest normal
    exponent, largest finite value, what a non-saturating overflow gives); for integers the
    bit width."""

    carrier: int
    mantissa: int = 0
    emin: int = 0
    largest: float = 0.0
    overflow: str = "nan"  # 'nan', 'inf' (non-saturating overflow), 'clip' (always saturates)
    bits: int = 0
    signed: bool = True


_F32_MAX = float(np.finfo(np.float32).max)
_PAST = 3.4e38  # above bfloat16's rounding boundary to infinity (3.3962e38)
#: by TensorProto member name: float4e2m1, float8e8m0, int2 and uint2 came in onnx releases
#: after pyproject.toml's floor (1.17), so each type is carried where the installed onnx has it
_NARROW_BY_NAME = {
    "BFLOAT16": Narrow(TensorProto.FLOAT, 7, -126, _F32_MAX, "inf"),
    "FLOAT8E4M3FN": Narrow(TensorProto.FLOAT, 3, -6, 448.0, "nan"),
    "FLOAT8E4M3FNUZ": Narrow(TensorProto.FLOAT, 3, -7, 240.0, "nan"),
    "FLOAT8E5M2": Narrow(TensorProto.FLOAT, 2, -14, 57344.0, "inf"),
    "FLOAT8E5M2FNUZ": Narrow(TensorProto.FLOAT, 2, -15, 57344.0, "nan"),
    "FLOAT4E2M1": Narrow(TensorProto.FLOAT, 1, 0, 6.0, "clip"),
    "FLOAT8E8M0": Narrow(TensorProto.FLOAT, 0, -127, 2.0 ** 127, "e8m0"),
    "INT4": Narrow(TensorProto.INT8, bits=4),
    "UINT4": Narrow(TensorProto.UINT8, bits=4, signed=False),
    "INT2": Narrow(TensorProto.INT8, bits=2),
    "UINT2": Narrow(TensorProto.UINT8, bits=2, signed=False),
}
NARROW: dict[int, Narrow] = {getattr(TensorProto, name): spec
                             for name, spec in _NARROW_BY_NAME.items()
                             if hasattr(TensorProto, name)}


# the types Cast's ``saturate`` applies to
_SATURATING = {TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E4M3FNUZ, TensorProto.FLOAT8E5M2,
               TensorProto.FLOAT8E5M2FNUZ}


def narrow_dtype(elem_type: int) -> np.dtype | None:
    """The numpy (ml_dtypes) dtype of a narrow ONNX type; None for any other type."""
    if elem_type not in NARROW:
        return None
    return np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))


def _carrier_np(elem_type: int) -> np.dtype:
    return np.dtype(helper.tensor_dtype_to_np_dtype(NARROW[elem_type].carrier))


def to_carrier(x: np.ndarray) -> np.ndarray:
    """``x`` in its carrier dtype when its dtype is a narrow one (exact), else ``x``."""
    for elem in NARROW:
        if x.dtype == narrow_dtype(elem):
            return x.astype(_carrier_np(elem))
    return x


def from_carrier(x: np.ndarray, elem_type: int) -> np.ndarray:
    """A carrier array back in the narrow type ``elem_type`` (values are on its grid)."""
    want = narrow_dtype(elem_type)
    return x if want is None else np.asarray(x).astype(want)


class _Writer:
    """Emits the replacement nodes of one rewritten node, with fresh names."""

    def __init__(self, graph: onnx.GraphProto, base: str):
        self.graph, self.base, self.nodes, self.n = graph, base, [], 0
        self.taken = {o for node in graph.node for o in node.output} | {
            i.name for i in graph.input} | {t.name for t in graph.initializer}

    def name(self) -> str:
        while True:
            self.n += 1
            cand = f"{self.base}__narrow{self.n}"
            if cand not in self.taken:
                self.taken.add(cand)
                return cand

    def op(self, op_type: str, inputs: list[str], out: str | None = None, **attrs) -> str:
        out = out or self.name()
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out

    def const(self, value, dtype=np.float32) -> str:
        out = self.name()
        self.nodes.append(helper.make_node("Constant", [], [out], name=out,
                                           value=numpy_helper.from_array(
                                               np.array(value, dtype=dtype), out)))
        return out


def _round_half_even(w: _Writer, t: str) -> str:
    """``t`` rounded to an integer, ties to even: ``floor(t) + (frac > 1/2) + (frac == 1/2) *
    (floor(t) odd)`` (MXNet's rint rounds ties down, its round away from zero)."""
    f = w.op("Floor", [t])
    d = w.op("Sub", [t, f])
    half = w.const(0.5)
    up = w.op("Cast", [w.op("Greater", [d, half])], to=TensorProto.FLOAT)
    tie = w.op("Cast", [w.op("Equal", [d, half])], to=TensorProto.FLOAT)
    odd = w.op("Abs", [w.op("Mod", [f, w.const(2.0)], fmod=1)])
    return w.op("Add", [w.op("Add", [f, up]), w.op("Mul", [tie, odd])])


def _round_float(w: _Writer, x: str, spec: Narrow, saturate: bool, out: str) -> None:
    """float32 ``x`` onto the grid of ``spec`` (see the module docstring)."""
    if saturate or spec.overflow == "clip":
        x = w.op("Clip", [x, w.const(-spec.largest), w.const(spec.largest)])
    # infinities to a finite value past every narrow type's overflow (NaN stays): 3.4e38, not
    # float32's max, which MXNet 1.9.1 reads back from the attribute string as infinity
    finite = w.op("Clip", [x, w.const(-_PAST), w.const(_PAST)])
    e = w.op("Max", [_exponent(w, w.op("Abs", [finite])), w.const(float(spec.emin))])
    two = w.const(2.0)
    q = w.op("Pow", [two, w.op("Sub", [e, w.const(float(spec.mantissa))])])
    y = w.op("Mul", [_round_half_even(w, w.op("Div", [finite, q])), q])
    if saturate or spec.overflow == "clip":
        w.op("Identity", [y], out)
        return
    flags = [w.op("Cast", [w.op("Greater", [w.op("Abs", [y]), w.const(spec.largest)])],
                  to=TensorProto.FLOAT), w.op("Cast", [w.op("IsInf", [x])], to=TensorProto.FLOAT)]
    over = w.op("Cast", [w.op("Max", flags)], to=TensorProto.BOOL)  # (MXNet's logical_or
    # refuses bool operands)
    if spec.overflow == "inf":
        fill = w.op("Mul", [w.op("Sign", [finite]), w.const(np.inf)])
    else:
        fill = w.op("Add", [w.op("Mul", [y, w.const(0.0)]), w.const(np.nan)])
    w.op("Where", [over, fill, y], out)


def _wrap_int(w: _Writer, x: str, src: int, spec: Narrow, out: str) -> None:
    """Truncate to an integer, then wrap into ``spec.bits`` bits (two's complement if signed)."""
    if src not in (TensorProto.INT64,):
        x = w.op("Cast", [x], to=TensorProto.INT64)  # floats truncate toward zero
    size = 1 << spec.bits
    low = -(size // 2) if spec.signed else 0
    shifted = w.op("Sub", [x, w.const(low, np.int64)]) if low else x
    wrapped = w.op("Mod", [shifted, w.const(size, np.int64)])  # floor mod: in [0, size)
    if low:
        wrapped = w.op("Add", [wrapped, w.const(low, np.int64)])
    w.op("Cast", [wrapped], out, to=spec.carrier)


def _flag(w: _Writer, op: str, inputs: list[str]) -> str:
    """A comparison as float 1/0 (MXNet's logic ops refuse bool operands)."""
    return w.op("Cast", [w.op(op, inputs)], to=TensorProto.FLOAT)


def _exponent(w: _Writer, mag: str) -> str:
    """``floor(log2(mag))`` for finite ``mag >= 0`` (-inf at 0), fixed up by one where
    float32's ``Log`` rounds across a power of two."""
    two = w.const(2.0)
    e = w.op("Floor", [w.op("Div", [w.op("Log", [mag]), w.const(math.log(2.0))])])
    p = w.op("Pow", [two, e])
    lower, upper = _flag(w, "Greater", [p, mag]), _flag(w, "LessOrEqual", [w.op("Mul", [p, two]),
                                                                          mag])
    return w.op("Add", [w.op("Sub", [e, lower]), upper])


def _round_e8m0(w: _Writer, x: str, saturate: bool, mode: str, out: str) -> None:
    """float32 ``x`` to float8e8m0 (``2^(f - 127)``, f in 0..254; 255 is NaN), as onnx's
    ``to_float8e8m0`` works on float32's bits: the sign is dropped; the biased exponent f of
    ``|x|`` (0 for zero and subnormals) goes up by one where the fraction asks for it --
    ``up``: any fraction; ``nearest``: at least half (an exact half of a subnormal stays);
    ``down``: never -- and stops at 254 with ``saturate`` (NaN past it without); NaN and
    infinity give NaN."""
    if mode not in ("up", "down", "nearest"):
        raise UnsupportedOpError(f"Cast round_mode {mode!r} is not up, down or nearest")
    mag = w.op("Clip", [w.op("Abs", [x]), w.const(0.0), w.const(_PAST)])
    sub = _flag(w, "Less", [mag, w.const(2.0 ** -126)])  # exponent field 0
    normal = w.op("Sub", [w.const(1.0), sub])
    e = w.op("Max", [_exponent(w, mag), w.const(-126.0)])
    base = w.op("Add", [w.op("Mul", [e, normal]), w.op("Mul", [w.const(-127.0), sub])])
    frac = w.op("Div", [mag, w.op("Pow", [w.const(2.0), e])])  # in [1, 2) when normal
    if mode == "down":
        inc = None
    elif mode == "up":
        inc = w.op("Add", [w.op("Mul", [_flag(w, "Greater", [frac, w.const(1.0)]), normal]),
                           w.op("Mul", [_flag(w, "Greater", [mag, w.const(0.0)]), sub])])
    else:
        inc = w.op("Add", [
            w.op("Mul", [_flag(w, "GreaterOrEqual", [frac, w.const(1.5)]), normal]),
            w.op("Mul", [_flag(w, "Greater", [mag, w.const(2.0 ** -127)]), sub])])
    exp = base if inc is None else w.op("Add", [base, inc])
    if saturate:
        exp = w.op("Min", [exp, w.const(127.0)])
    y = w.op("Pow", [w.const(2.0), exp])
    bad = [_flag(w, "IsNaN", [x]), _flag(w, "IsInf", [x])]
    if not saturate:
        bad.append(_flag(w, "Greater", [exp, w.const(127.0)]))
    nan = w.op("Add", [w.op("Mul", [y, w.const(0.0)]), w.const(np.nan)])
    w.op("Where", [w.op("Cast", [w.op("Max", bad)], to=TensorProto.BOOL), nan, y], out)


def _cast_to_narrow(w: _Writer, x: str, src: int | None, to: int, saturate: bool,
                    out: str, round_mode: str = "up") -> None:
    spec = NARROW[to]
    if spec.bits:
        _wrap_int(w, x, src or TensorProto.FLOAT, spec, out)
        return
    if src != TensorProto.FLOAT:
        x = w.op("Cast", [x], to=TensorProto.FLOAT)
    if spec.overflow == "e8m0":
        _round_e8m0(w, x, saturate, round_mode, out)
        return
    _round_float(w, x, spec, saturate and to in _SATURATING, out)


def _attr(node: onnx.NodeProto, name: str, default):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def _is_narrow(vi: onnx.ValueInfoProto) -> bool:
    return vi.type.HasField("tensor_type") and vi.type.tensor_type.elem_type in NARROW


def _retype(vi: onnx.ValueInfoProto) -> bool:
    tt = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
    if tt is not None and tt.elem_type in NARROW:
        tt.elem_type = NARROW[tt.elem_type].carrier
        return True
    return False


def _float8_values(exp_bits: int, bias: int, kind: str) -> np.ndarray:
    """The float32 value of each of the 256 bit patterns of a float8 type: ``kind`` "fn" (no
    infinity, NaN at all-ones), "fnuz" (no -0, NaN at 0x80) or "ieee" (e5m2: inf and NaN at
    the top exponent)."""
    b = np.arange(256)
    mbits = 7 - exp_bits
    e, m = (b >> mbits) & ((1 << exp_bits) - 1), b & ((1 << mbits) - 1)
    mag = np.where(e == 0, m * 2.0 ** (1 - bias - mbits),
                   (1 + m / 2 ** mbits) * 2.0 ** (e - bias))
    out = np.where(b & 0x80, -mag, mag)
    top = e == (1 << exp_bits) - 1
    if kind == "fn":
        out[top & (m == (1 << mbits) - 1)] = np.nan
    elif kind == "fnuz":
        out[0x80] = np.nan
    else:
        out[top] = np.where(m[top] == 0, np.copysign(np.inf, out[top]), np.nan)
    nan = np.isnan(out)  # a NaN keeps the pattern's sign bit, as ml_dtypes' conversion does
    out[nan] = np.copysign(np.nan, np.where(b[nan] & 0x80, -1.0, 1.0))
    return out.astype(np.float32)


# float8 types by their bits: (exponent bits, bias, kind of _float8_values)
_FLOAT8_BITS = {TensorProto.FLOAT8E4M3FN: (4, 7, "fn"),
                TensorProto.FLOAT8E4M3FNUZ: (4, 8, "fnuz"),
                TensorProto.FLOAT8E5M2: (5, 15, "ieee"),
                TensorProto.FLOAT8E5M2FNUZ: (5, 16, "fnuz")}


def _from_bits(bits: np.ndarray, elem_type: int) -> np.ndarray:
    """float32 values of raw bfloat16 (the upper half of a float32) or float8 bits."""
    if elem_type == TensorProto.BFLOAT16:
        return bfloat16_to_float32(bits.view(np.uint16))
    return _float8_values(*_FLOAT8_BITS[elem_type])[bits.view(np.uint8)]


def narrow_values(value: np.ndarray, elem_type: int) -> np.ndarray:
    """What ``numpy_helper.to_array`` gave for a tensor of ``elem_type``, in its carrier dtype
    (exact): an ml_dtypes array is converted; onnx 1.17's raw bits of bfloat16 and float8
    (structured uint16/uint8 dtypes) are decoded."""
    carrier = _carrier_np(elem_type)
    decodable = elem_type == TensorProto.BFLOAT16 or elem_type in _FLOAT8_BITS
    if decodable and value.dtype != narrow_dtype(elem_type):
        base = value.dtype.base if value.dtype.fields else value.dtype
        if base.kind == "u":  # onnx < 1.18 (no ml_dtypes): raw bits, not values
            return _from_bits(np.ascontiguousarray(value), elem_type).astype(carrier)
    return value.astype(carrier)


def _carried_tensor(t: onnx.TensorProto) -> onnx.TensorProto:
    value = numpy_helper.to_array(t)
    return numpy_helper.from_array(narrow_values(value, t.data_type), t.name)


def _types(model: onnx.ModelProto) -> tuple[dict[str, int], dict[str, int]]:
    """Element types and ranks of the graph's tensors (onnx's shape inference; unknown ones
    absent)."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - an uninferable model keeps its declared types
        inferred = model
    g = inferred.graph
    out = {t.name: t.data_type for t in g.initializer}
    ranks = {t.name: len(t.dims) for t in g.initializer}
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.elem_type:
            out[vi.name] = vi.type.tensor_type.elem_type
            if vi.type.tensor_type.HasField("shape"):
                ranks[vi.name] = len(vi.type.tensor_type.shape.dim)
    return out, ranks


def _mentions_narrow(g: onnx.GraphProto) -> bool:
    """Whether a narrow type can occur at all: declared on a tensor, held by an initializer or
    a Constant, or named by an attribute (``Cast.to``, ``output_dtype``) -- without running
    shape inference on every model."""
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.elem_type in NARROW:
            return True
    if any(t.data_type in NARROW for t in g.initializer):
        return True
    for node in g.node:
        for a in node.attribute:
            if a.type == onnx.AttributeProto.INT and a.name in ("to", "output_dtype") and \
                    a.i in NARROW:
                return True
            if a.type == onnx.AttributeProto.TENSOR and a.t.data_type in NARROW:
                return True
    return False


def carry_narrow_types(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model`` with its top-level narrow tensors carried in MXNet types (a new model; the
    same one when nothing is narrow)."""
    if not _mentions_narrow(model.graph):
        return model
    types, ranks = _types(model)
    if not any(t in NARROW for t in types.values()):
        return model
    out = onnx.ModelProto()
    out.CopyFrom(model)
    g = out.graph
    nodes = []
    for node in g.node:
        nodes.extend(_rewrite(g, node, types, ranks))
    del g.node[:]
    g.node.extend(nodes)
    edges = [f"{vi.name} ({TensorProto.DataType.Name(vi.type.tensor_type.elem_type)})"
             for vi in list(g.input) + list(g.output) if _is_narrow(vi)]
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        _retype(vi)
    if edges:
        warnings.warn(f"graph inputs/outputs {', '.join(edges)} are carried in MXNet types "
                      "(float32, int8, uint8) with the same values: feed and read them so "
                      "(gluonport.onnx.backend converts)", stacklevel=3)
    for i, t in enumerate(g.initializer):
        if t.data_type in NARROW:
            g.initializer[i].CopyFrom(_carried_tensor(t))
    return out


def _rewrite(g: onnx.GraphProto, node: onnx.NodeProto, types: dict[str, int],
             ranks: dict[str, int]) -> list:
    if node.domain not in ("", "ai.onnx"):
        return [node]
    if node.op_type == "Constant":
        value = _attr(node, "value", None)
        if isinstance(value, onnx.TensorProto) and value.data_type in NARROW:
            return [helper.make_node("Constant", [], list(node.output), name=node.name,
                                     value=_carried_tensor(value))]
        return [node]
    if node.op_type == "QuantizeLinear" and types.get(node.output[0]) in NARROW:
        return _quantize(g, node, types, ranks)
    if node.op_type not in ("Cast", "CastLike"):
        return [node]
    to = _attr(node, "to", None) if node.op_type == "Cast" else types.get(node.input[1])
    src = types.get(node.input[0])
    if to is None or (to not in NARROW and src not in NARROW):
        return [node]
    w = _Writer(g, node.output[0])
    saturate = bool(_attr(node, "saturate", 1))
    carrier_src = NARROW[src].carrier if src in NARROW else src
    if to in NARROW:
        mode = _attr(node, "round_mode", b"up")
        _cast_to_narrow(w, node.input[0], carrier_src, to, saturate, node.output[0],
                        mode.decode() if isinstance(mode, bytes) else mode)
    else:
        w.op("Cast", [node.input[0]], node.output[0], to=to)
    return w.nodes


def _quantize(g: onnx.GraphProto, node: onnx.NodeProto, types: dict[str, int],
              ranks: dict[str, int]) -> list:
    """QuantizeLinear to a narrow type. Integers: the carrier's QuantizeLinear (saturating to
    8 bits) clipped to the narrow range. Floats (float8, float4): ``x / scale (+ zero point)``
    cast onto the grid with the node's ``saturate`` -- per tensor or per axis; blocked
    quantization is left to the importer, which refuses the narrow type."""
    to = types[node.output[0]]
    spec = NARROW[to]
    w = _Writer(g, node.output[0])
    if spec.bits:
        size = 1 << spec.bits
        low = -(size // 2) if spec.signed else 0
        dtype = np.int8 if spec.signed else np.uint8
        q = onnx.NodeProto()
        q.CopyFrom(node)
        q.output[0] = w.name()
        w.nodes.append(q)
        w.op("Clip", [q.output[0], w.const(low, dtype), w.const(low + size - 1, dtype)],
             node.output[0])
        return w.nodes
    if _attr(node, "block_size", 0):
        return [node]
    rank = ranks.get(node.input[0])
    axis = _attr(node, "axis", 1)

    def along_axis(name: str) -> str:
        v = w.op("Cast", [name], to=TensorProto.FLOAT)
        if ranks.get(name, 0) == 1 and rank is not None and rank > 1:
            a = axis % rank
            tail = list(range(1, rank - a))
            if tail:
                v = w.op("Unsqueeze", [v, w.const(tail, np.int64)])
        return v

    if rank is None and ranks.get(node.input[1], 0) > 0:
        return [node]
    x = w.op("Div", [w.op("Cast", [node.input[0]], to=TensorProto.FLOAT),
                     along_axis(node.input[1])])
    if len(node.input) > 2 and node.input[2]:
        x = w.op("Add", [x, along_axis(node.input[2])])
    _round_float(w, x, spec, bool(_attr(node, "saturate", 1)), node.output[0])
    return w.nodes
