"""Multi-tensor and two-phase optimizer operators of MXNet 1.9.1.

``multi_sgd_update`` and its momentum / master-weight / preloaded variants update several weights
in one call (MXNet's SGD optimizer uses them for every dense update); ``multi_sum_sq`` and
``multi_lars`` compute LARS learning rates; ``lamb_update_phase1/2`` (and ``mp_``) are LAMB's two
steps and ``_multi_lamb_update`` / ``_multi_adamw_update`` their fused multi-tensor forms.

Inputs are interleaved per weight as in MXNet (``weight_0, grad_0, mom_0, weight_1, ...``); the
states (MXNet's ``FMutateInputs``, this registry's ``aux``) are written in place. The arithmetic
follows MXNet's kernels: the multi-tensor kernels compute in the master type (float32 for the
``mp`` variants, the weight's dtype otherwise) in their own operation order, which differs from
the single-tensor ops' (``w + (0 - lr*wd*w - lr*rescale*g)`` rather than ``(1 - lr*wd)*w - ...``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..._core.attr_fields import REQUIRED, Bool, Float, FloatTuple, Int, Shape
from ...errors import OpAttributeError, ShapeError
from ..infer import fmt, merge
from ..registry import OpDef, register
from .update import F32, NO_GRAD, NO_ONNX, check_same_shapes, clip, rescale_value, sgd_into

__all__: list[str] = []


# --- layout helpers ---------------------------------------------------------------------------
def _names(per: tuple[str, ...], count_attr: str, tail: tuple[str, ...] = ()) -> Callable:
    def names(p):
        n = int(p.get(count_attr, 1))
        return [f"{k}_{i}" for i in range(n) for k in per] + list(tail)

    return names


def _mutated(per: tuple[str, ...], count_attr: str, states: tuple[str, ...]) -> Callable:
    def aux(p):
        n = int(p.get(count_attr, 1))
        return [i * len(per) + per.index(s) for i in range(n) for s in states]

    return aux


def _count(name: str, p, count_attr: str, n_inputs: int, stride: int, tail: int) -> int:
    n = int(p.get(count_attr, 1))
    if n < 1 or n_inputs != n * stride + tail:
        raise OpAttributeError(f"{name}: {count_attr}={n} needs {n * stride + tail} inputs "
                               f"({stride} per tensor{f' + {tail}' if tail else ''}), got "
                               f"{n_inputs}")
    return n


def _groups(name, p, arrays, per, count_attr, tail=0):
    n = _count(name, p, count_attr, len(arrays), len(per), tail)
    groups = [arrays[i * len(per):(i + 1) * len(per)] for i in range(n)]
    for i, grp in enumerate(groups):
        check_same_shapes(name, [f"{k}_{i}" for k in per], grp)
    return groups


def _per_tensor(name: str, values, n: int, what: str) -> list:
    vals = list(values)
    if len(vals) != n:
        raise OpAttributeError(f"{name}: {what} has {len(vals)} values for {n} tensors")
    return vals


def _multi_shape(per: tuple[str, ...], count_attr: str, tail: tuple[tuple, ...] = ()):
    """Each tensor's inputs share the weight's shape; one output per weight."""
    def rule(p, in_shapes):
        n = int(p.get(count_attr, 1))
        if len(in_shapes) != n * len(per) + len(tail):
            raise ShapeError(f"{count_attr}={n} needs {n * len(per) + len(tail)} inputs, got "
                             f"{len(in_shapes)}")
        ins, outs = list(in_shapes), []
        for i in range(n):
            common = None
            for j in range(len(per)):
                common = merge(common, ins[i * len(per) + j], f"{per[j]}_{i}: ")
            ins[i * len(per):(i + 1) * len(per)] = [common] * len(per)
            outs.append(common)
        for k, shape in enumerate(tail):
            ins[n * len(per) + k] = merge(ins[n * len(per) + k], shape(n) if callable(shape)
                                          else shape)
        return ins, outs

    return rule


def _multi_type(per: tuple[str, ...], count_attr: str, mp_states: tuple[str, ...] = ()):
    def rule(p, in_types):
        n = int(p.get(count_attr, 1))
        if len(in_types) < n * len(per):
            raise ShapeError(f"{count_attr}={n} needs {n * len(per)} inputs, got {len(in_types)}")
        ins, outs = list(in_types), []
        for i in range(n):
            w = ins[i * len(per)] or ins[i * len(per) + 1]
            for j, k in enumerate(per):
                if ins[i * len(per) + j] is None:
                    ins[i * len(per) + j] = np.dtype(np.float32) if k in mp_states else w
            outs.append(w)
        ins = [np.dtype(np.float32) if t is None else t for t in ins]
        return ins, outs

    return rule


# --- multi SGD --------------------------------------------------------------------------------
def _multi_sgd(name: str, per: tuple[str, ...], preloaded: bool, inplace: bool):
    """A multi SGD op's compute: MXNet's MultiSGD kernel per tensor in its master type
    (``w + (m*mom - (lr*wd)*w - step)``, see :func:`.update.sgd_into`). ``inplace``: the call's
    ``out`` are the weights (MXNet's SGD optimizer's call), so each new weight is written
    straight into its weight."""
    has_mom, mp = "mom" in per, "weight32" in per

    def compute(p, *arrays):
        tail = 2 if preloaded else 0
        groups = _groups(name, p, arrays, per, "num_weights", tail)
        n = len(groups)
        if preloaded:
            lrs, wds = (np.asarray(a, F32).reshape(-1) for a in arrays[-2:])
            if lrs.size < n or wds.size < n:
                raise ShapeError(f"{name}: lrs and wds need {n} values, got shapes "
                                 f"{fmt(np.shape(arrays[-2]))}, {fmt(np.shape(arrays[-1]))}")
        else:
            lrs = _per_tensor(name, p.lrs, n, "lrs")
            wds = _per_tensor(name, p.wds, n, "wds")
        outs = []
        for i, grp in enumerate(groups):
            w, g = grp[0], grp[1]
            mom = grp[per.index("mom")] if has_mom else None
            master = grp[per.index("weight32")] if mp else w
            mt = F32 if mp else w.dtype
            dst = master if mp or inplace else np.empty_like(w)
            sgd_into(dst, master, g, mom, mt, lrs[i], wds[i],
                     p.get("momentum", 0.0) if has_mom else 0.0, p.rescale_grad,
                     p.clip_gradient)
            if mp:
                dst = w if inplace else np.empty_like(w)
                np.copyto(dst, master, casting="unsafe")
            outs.append(dst)
        return outs

    return compute


_MULTI_TAIL = {"rescale_grad": Float(1.0), "clip_gradient": Float(-1.0), "num_weights": Int(1)}
for _base, _per in (("sgd_update", ("weight", "grad")),
                    ("sgd_mom_update", ("weight", "grad", "mom")),
                    ("mp_sgd_update", ("weight", "grad", "weight32")),
                    ("mp_sgd_mom_update", ("weight", "grad", "mom", "weight32"))):
    _states = tuple(k for k in _per if k in ("mom", "weight32"))
    _mom = {"momentum": Float(0.0)} if "mom" in _per else {}
    for _pre in (False, True):
        _name = ("preloaded_multi_" if _pre else "multi_") + _base
        _params = ({**_mom, **_MULTI_TAIL} if _pre else
                   {"lrs": FloatTuple(REQUIRED), "wds": FloatTuple(REQUIRED), **_mom,
                    **_MULTI_TAIL})
        _tail = ("lrs", "wds") if _pre else ()
        register(OpDef(
            _name, params=_params, inputs=_names(_per, "num_weights", _tail), variadic="",
            aux=_mutated(_per, "num_weights", _states),
            num_outputs=lambda p: int(p.get("num_weights", 1)),
            compute=_multi_sgd(_name, _per, _pre, False),
            inplace_compute=_multi_sgd(_name, _per, _pre, True),
            infer_shape=_multi_shape(_per, "num_weights",
                                     ((lambda n: (n,)),) * 2 if _pre else ()),
            infer_type=_multi_type(_per, "num_weights", _states), no_onnx=NO_ONNX,
            no_gradient=NO_GRAD,
            doc=f"``{_base}`` of ``num_weights`` weights in one call"
                + (" (learning rates and weight decays as float32 arrays ``lrs``, ``wds``)"
                   if _pre else "") + "."))


# --- LARS -------------------------------------------------------------------------------------
def _sum_sq(a: np.ndarray) -> np.float32:
    """MXNet's CPU sum of squares: ``a*a`` in the array's dtype, summed in order in float32."""
    sq = (a * a).reshape(-1).astype(F32)
    return np.cumsum(sq, dtype=F32)[-1] if sq.size else F32(0.0)


def _multi_sum_sq(p, *arrays):
    if len(arrays) != p.num_arrays:
        raise OpAttributeError(f"multi_sum_sq: num_arrays={p.num_arrays} but {len(arrays)} "
                               "inputs")
    return np.array([_sum_sq(np.asarray(a)) for a in arrays], dtype=F32)


register(OpDef(
    "multi_sum_sq", params={"num_arrays": Int(REQUIRED)}, variadic="num_arrays",
    inputs=lambda p: [f"array_{i}" for i in range(int(p.get("num_arrays", 0) or 0))],
    compute=_multi_sum_sq,
    infer_shape=lambda p, s: (list(s), [(len(s),)]),
    infer_type=lambda p, t: (list(t), [np.dtype(np.float32)]), no_onnx=NO_ONNX, no_gradient=NO_GRAD,
    doc="Sum of squares of each input (float32, one value per array)."))


def _multi_lars(p, lrs, wss, gss, wds):
    arrays = [np.asarray(a) for a in (lrs, wss, gss, wds)]
    check_same_shapes("multi_lars", ("lrs", "weights_sum_sq", "grads_sum_sq", "wds"), arrays)
    if any(a.dtype != np.float32 for a in arrays):
        raise ShapeError("multi_lars: every input must be float32 (MXNet: 'MultiLARS only "
                         "support float')")
    lrs, wss, gss, wds = arrays
    w_norm = np.sqrt(wss)
    valid = (w_norm > 0) & (gss > 0)
    lars = lrs * F32(p.eta) * w_norm / (np.sqrt(gss) * F32(p.rescale_grad) + wds * w_norm
                                        + F32(p.eps))
    return np.where(valid, lars, lrs).astype(F32)


register(OpDef(
    "multi_lars", params={"eta": Float(REQUIRED), "eps": Float(REQUIRED),
                          "rescale_grad": Float(1.0)},
    inputs=("lrs", "weights_sum_sq", "grads_sum_sq", "wds"), compute=_multi_lars,
    no_onnx=NO_ONNX, no_gradient=NO_GRAD,
    doc="LARS learning rates: ``lr * eta * |w| / (|g| * rescale_grad + wd * |w| + eps)``."))


# --- LAMB -------------------------------------------------------------------------------------
def _lamb_g(p, w_master, g, mean, var, mt):
    """LAMB phase 1 (MXNet's kernel): returns (g, mean, var)."""
    mt = np.dtype(mt).type
    gr = g.astype(mt) * mt(p.rescale_grad)
    if p.clip_gradient >= 0:
        gr = clip(gr, mt(p.clip_gradient))
    b1, b2 = mt(p.beta1), mt(p.beta2)
    mean = b1 * mean + (F32(1.0) - b1).astype(mt) * gr
    var = b2 * var + (F32(1.0) - b2).astype(mt) * gr * gr
    eps, wd = mt(p.epsilon), mt(p.wd)
    if p.bias_correction:
        b1t = F32(np.power(F32(p.beta1), F32(p.t))) if mt is F32 else mt(p.beta1 ** p.t)
        b2t = F32(np.power(F32(p.beta2), F32(p.t))) if mt is F32 else mt(p.beta2 ** p.t)
        mean_hat = (mean.astype(np.float64) / (1.0 - np.float64(b1t))).astype(mt)
        var_hat = var / (mt(1) - b2t)
        out = mean_hat / (np.sqrt(var_hat) + eps) + wd * w_master
    else:
        out = mean / (np.sqrt(var) + eps) + wd * w_master
    return out, mean, var


def _lamb1(p, w, g, mean, var):
    check_same_shapes("lamb_update_phase1", ("weight", "grad", "mean", "var"), (w, g, mean, var))
    out, m, v = _lamb_g(p, w, g, mean, var, w.dtype)
    mean[...], var[...] = m, v
    return out


def _mp_lamb1(p, w, g, mean, var, w32):
    check_same_shapes("mp_lamb_update_phase1", ("weight", "grad", "mean", "var", "weight32"),
                      (w, g, mean, var, w32))
    out, m, v = _lamb_g(p, w32, g, mean, var, F32)
    mean[...], var[...] = m, v
    return out


def _trust_lr(lr, r1, r2, lower, upper, mt):
    r1 = mt(r1)
    if lower >= 0:
        r1 = max(r1, mt(lower))
    if upper >= 0:
        r1 = min(r1, mt(upper))
    if r1 == 0 or r2 == 0:
        return mt(lr)
    return mt(lr) * r1 / mt(r2)


def _scalar(name: str, what: str, a) -> float:
    a = np.asarray(a)
    if a.size < 1:
        raise ShapeError(f"{name}: input {what!r} is empty; it must hold the norm")
    return a.reshape(-1)[0]


def _lamb2(p, w, g, r1, r2):
    check_same_shapes("lamb_update_phase2", ("weight", "g"), (w, g))
    t = w.dtype.type
    lr = _trust_lr(p.lr, _scalar("lamb_update_phase2", "r1", r1),
                   _scalar("lamb_update_phase2", "r2", r2), p.lower_bound, p.upper_bound, t)
    return w - lr * g


def _mp_lamb2(p, w, g, r1, r2, w32):
    check_same_shapes("mp_lamb_update_phase2", ("weight", "g", "weight32"), (w, g, w32))
    lr = _trust_lr(p.lr, _scalar("mp_lamb_update_phase2", "r1", r1),
                   _scalar("mp_lamb_update_phase2", "r2", r2), p.lower_bound, p.upper_bound, F32)
    # MXNet marks weight32 mutable but its kernel only writes the output: weight32 stays as is
    return (w32 - lr * g.astype(F32)).astype(w.dtype)


def _norm_shape(p, in_shapes):
    w = in_shapes[0]
    for s in in_shapes[1:2]:
        w = merge(w, s, "g: ")
    ins = [w, w, (1,), (1,)] + ([w] if len(in_shapes) > 4 else [])
    return ins, [w]


_LAMB1 = {"beta1": Float(0.9), "beta2": Float(0.999), "epsilon": Float(1e-6), "t": Int(REQUIRED),
          "bias_correction": Bool(True), "wd": Float(REQUIRED), "rescale_grad": Float(1.0),
          "clip_gradient": Float(-1.0)}
_LAMB2 = {"lr": Float(REQUIRED), "lower_bound": Float(-1.0), "upper_bound": Float(-1.0)}
register(OpDef("lamb_update_phase1", params=_LAMB1, inputs=("weight", "grad", "mean", "var"),
               aux=(2, 3), compute=_lamb1, no_onnx=NO_ONNX, no_gradient=NO_GRAD,
               doc="LAMB step 1: updates mean/var, returns the update direction ``g``."))
register(OpDef("mp_lamb_update_phase1", params=_LAMB1,
               inputs=("weight", "grad", "mean", "var", "weight32"), aux=(2, 3),
               compute=_mp_lamb1, no_onnx=NO_ONNX, no_gradient=NO_GRAD,
               infer_type=lambda p, t: ([*t[:2], *[np.dtype(np.float32)] * 3],
                                        [np.dtype(np.float32)]),
               doc="``lamb_update_phase1`` on a float32 master copy ``weight32``."))
register(OpDef("lamb_update_phase2", params=_LAMB2, inputs=("weight", "g", "r1", "r2"),
               compute=_lamb2, infer_shape=_norm_shape, no_onnx=NO_ONNX, no_gradient=NO_GRAD,
               doc="LAMB step 2: ``weight - lr * r1/r2 * g`` (``r1``, ``r2``: norms)."))
register(OpDef("mp_lamb_update_phase2", params=_LAMB2,
               inputs=("weight", "g", "r1", "r2", "weight32"), aux=(4,), compute=_mp_lamb2,
               infer_shape=_norm_shape, no_onnx=NO_ONNX, no_gradient=NO_GRAD,
               infer_type=lambda p, t: ([t[0], *[np.dtype(np.float32)] * 4], [t[0]]),
               doc="``lamb_update_phase2`` on a float32 master copy ``weight32``."))


def _multi_lamb(name: str, per: tuple[str, ...]):
    mp = "weight32" in per

    def compute(p, *arrays):
        groups = _groups(name, p, arrays, per, "num_tensors")
        n = len(groups)
        lrs = _per_tensor(name, p.learning_rates, n, "learning_rates")
        wds = _per_tensor(name, p.wds, n, "wds")
        steps = _per_tensor(name, p.step_count, n, "step_count")
        outs = []
        for i, grp in enumerate(groups):
            w, g, mean, var = grp[:4]
            master = grp[4] if mp else w
            mt = F32 if mp else w.dtype.type
            sg = g.astype(mt) * mt(p.rescale_grad)
            if p.clip_gradient >= 0:
                sg = clip(sg, mt(p.clip_gradient))
            b1, b2 = mt(p.beta1), mt(p.beta2)
            m = b1 * mean + (mt(1.0) - b1) * sg
            v = b2 * var + (mt(1.0) - b2) * sg * sg
            mean[...], var[...] = m, v
            if p.bias_correction:
                step = mt(steps[i])
                m = m / (mt(1.0) - np.power(b1, step))
                v = v / (mt(1.0) - np.power(b2, step))
            upd = (m / (np.sqrt(v) + mt(p.epsilon)) + mt(wds[i]) * master).astype(F32)
            r1, r2 = np.sqrt(_sum_sq(w)), np.sqrt(_sum_sq(upd))
            if p.lower_bound >= 0:
                r1 = max(r1, F32(p.lower_bound))
            if p.upper_bound >= 0:
                r1 = min(r1, F32(p.upper_bound))
            ratio = F32(1.0) if r1 == 0 or r2 == 0 else r1 / r2
            new = master - mt(mt(lrs[i]) * mt(ratio)) * upd.astype(mt)
            if mp:
                master[...] = new
            outs.append(new.astype(w.dtype))
        return outs

    return compute


_MLAMB = {"learning_rates": FloatTuple(REQUIRED), "beta1": Float(0.9), "beta2": Float(0.999),
          "epsilon": Float(1e-6), "wds": FloatTuple(REQUIRED), "rescale_grad": Float(1.0),
          "lower_bound": Float(-1.0), "upper_bound": Float(-1.0), "clip_gradient": Float(-1.0),
          "bias_correction": Bool(True), "step_count": Shape(REQUIRED), "num_tensors": Int(1)}
for _name, _per in (("_multi_lamb_update", ("weight", "grad", "mean", "var")),
                    ("_multi_mp_lamb_update", ("weight", "grad", "mean", "var", "weight32"))):
    _states = ("mean", "var", "weight32") if "weight32" in _per else ("mean", "var")
    register(OpDef(
        _name, params=_MLAMB, inputs=_names(_per, "num_tensors"), variadic="",
        aux=_mutated(_per, "num_tensors", ("mean", "var")),
        num_outputs=lambda p: int(p.get("num_tensors", 1)), compute=_multi_lamb(_name, _per),
        infer_shape=_multi_shape(_per, "num_tensors"),
        infer_type=_multi_type(_per, "num_tensors", _states[2:]), no_onnx=NO_ONNX,
        no_gradient=NO_GRAD,
        doc="LAMB of ``num_tensors`` weights in one call (both phases)."))


# --- multi AdamW ------------------------------------------------------------------------------
def _multi_adamw(name: str, per: tuple[str, ...]):
    mp = "weight32" in per

    def compute(p, *arrays):
        groups = _groups(name, p, arrays, per, "num_weights", 1)
        n = len(groups)
        r = rescale_value(name, arrays[-1])
        lrs = _per_tensor(name, p.lrs, n, "lrs")
        wds = _per_tensor(name, p.wds, n, "wds")
        etas = _per_tensor(name, p.etas, n, "etas")
        if not np.isfinite(r) or r == 0:  # MXNet skips the update
            return [grp[0].copy() for grp in groups]
        outs = []
        for i, grp in enumerate(groups):
            w, g, mean, var = grp[:4]
            master = grp[4] if mp else w
            mt = F32 if mp else w.dtype.type
            sg = mt(r) * g.astype(mt)
            if p.clip_gradient >= 0:
                sg = clip(sg, mt(p.clip_gradient))
            m = mt(p.beta1) * (mean - sg) + sg
            sq = sg * sg
            v = mt(p.beta2) * (var - sq) + sq
            mean[...], var[...] = m, v
            new = master - mt(etas[i]) * (mt(lrs[i]) * m / (np.sqrt(v) + mt(p.epsilon))
                                          + mt(wds[i]) * master)
            if mp:
                master[...] = new
            outs.append(new.astype(w.dtype))
        return outs

    return compute


_MADAMW = {"lrs": FloatTuple(REQUIRED), "beta1": Float(0.9), "beta2": Float(0.999),
           "epsilon": Float(1e-8), "wds": FloatTuple(REQUIRED), "etas": FloatTuple(REQUIRED),
           "clip_gradient": Float(-1.0), "num_weights": Int(1)}
for _name, _per in (("_multi_adamw_update", ("weight", "grad", "mean", "var")),
                    ("_multi_mp_adamw_update", ("weight", "grad", "mean", "var", "weight32"))):
    _states = ("mean", "var", "weight32") if "weight32" in _per else ("mean", "var")
    register(OpDef(
        _name, params=_MADAMW, inputs=_names(_per, "num_weights", ("rescale_grad",)),
        variadic="", aux=_mutated(_per, "num_weights", _states),
        num_outputs=lambda p: int(p.get("num_weights", 1)), compute=_multi_adamw(_name, _per),
        infer_shape=_multi_shape(_per, "num_weights", ((1,),)),
        infer_type=_multi_type(_per, "num_weights", _states[2:]), no_onnx=NO_ONNX,
        no_gradient=NO_GRAD,
        doc="AdamW of ``num_weights`` weights in one call; skipped when ``rescale_grad`` "
            "(the last input) is 0 or not finite."))

