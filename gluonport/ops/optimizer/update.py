"""Fused optimizer update operators (MXNet 1.9.1 ``src/operator/optimizer_op*``, ``contrib/adamw``).

Each op takes the weight, its gradient and the optimizer's states; it returns the new weight
(MXNet's Python optimizers call it with ``out=weight``) and updates the states in place: the
inputs MXNet marks ``FMutateInputs`` are this registry's ``aux`` inputs, and compute writes their
new values into the arrays it is given (the NDArray buffers, in ``nd``).

Arithmetic follows MXNet's CPU kernels: every parameter is cast to the kernel's element type
first (the weight's dtype, float32 for the master-weight ``mp_`` variants), and each expression is
evaluated in the kernel's operation order, so float32 results agree to about one ulp. Dense
arrays only: ``lazy_update`` changes nothing for dense gradients (MXNet's standard update).

The multi-tensor ops (``multi_sgd_update``, LAMB, LARS, ...) are in :mod:`.optimizer_multi`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..._core.attr_fields import REQUIRED, Bool, Float, Int
from ...errors import DTypeError, ShapeError
from ..infer import fmt
from ..registry import OpDef, register

__all__ = ["NO_ONNX", "NO_GRAD", "clip", "f32", "check_same_shapes", "rescale_value", "mp_type",
           "sgd_into"]

NO_ONNX = ("an optimizer update writes its weight and states in place (MXNet's FMutateInputs); "
           "ONNX graphs are inference functions, so training updates are not exported")
NO_GRAD = ("an optimizer update: MXNet 1.9.1 registers no FGradient for its fused update "
           "ops (they run outside autograd, on gradients already computed)")

F32 = np.float32


def f32(value: float) -> np.float32:
    """A parameter as the kernel sees it: MXNet's ``float`` fields."""
    return F32(value)


def clip(x: np.ndarray, bound) -> np.ndarray:
    """mshadow's ``clip::Map``: ``bound`` above, ``-bound`` below (NaN stays NaN)."""
    return np.clip(x, -bound, bound)


def check_same_shapes(op: str, names: Sequence[str], arrays: Sequence[np.ndarray]) -> None:
    """Every array has the weight's shape (MXNet's ElemwiseShape), or a ShapeError."""
    want = np.shape(arrays[0])
    for name, a in zip(names, arrays):
        if np.shape(a) != want:
            raise ShapeError(f"{op}: input {name!r} has shape {fmt(np.shape(a))}, expected the "
                             f"weight's shape {fmt(want)}")


def _sign(x: np.ndarray) -> np.ndarray:
    """``(x > 0) - (x < 0)`` in x's dtype (0 for 0 and NaN, as MXNet's kernels)."""
    return ((x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)).astype(x.dtype)


# --- the op factory ---------------------------------------------------------------------------
Kernel = Callable[..., tuple]


def _wrap(name: str, names: tuple[str, ...], mutate: tuple[int, ...], kernel: Kernel,
          mp: bool) -> Callable:
    def compute(p, *arrays):
        check_same_shapes(name, names, arrays)
        if mp and any(arrays[i].dtype != np.float32 for i in range(2, len(arrays))):
            bad = next(names[i] for i in range(2, len(arrays)) if arrays[i].dtype != np.float32)
            raise DTypeError(f"{name}: input {bad!r} must be float32 (the master copy and its "
                             "states), got " + str(arrays[names.index(bad)].dtype))
        out, *states = kernel(p, *arrays)
        for i, new in zip(mutate, states):
            arrays[i][...] = new
        return out.astype(arrays[0].dtype, copy=False)

    return compute


def mp_type(p, in_types):
    """Master-weight ops: the output has the weight's dtype; states and weight32 are float32."""
    w = in_types[0] if in_types[0] is not None else in_types[1]
    ins = [w if i < 2 and t is None else (np.dtype(np.float32) if t is None else t)
           for i, t in enumerate(in_types)]
    return ins, [w]


def _op(name: str, names: tuple[str, ...], params: dict, kernel: Kernel,
        mutate: tuple[int, ...] = (), mp: bool = False, doc: str = "",
        inplace: Kernel | None = None) -> None:
    aliases = (f"_sparse_{name}",) if name in _SPARSE_ALIASES else ()
    register(OpDef(name, params=params, inputs=names, aux=mutate, aliases=aliases,
                   compute=_wrap(name, names, mutate, kernel, mp),
                   inplace_compute=_wrap(name, names, mutate, inplace, mp) if inplace else None,
                   infer_type=mp_type if mp else None, no_onnx=NO_ONNX,
                   no_gradient=NO_GRAD, doc=doc))


#: MXNet registers these under a ``_sparse_`` name too (its row_sparse entry points)
_SPARSE_ALIASES = ("sgd_update", "sgd_mom_update", "adam_update", "ftrl_update")


def _lr():
    return Float(REQUIRED)


_SCALE = {"rescale_grad": Float(1.0), "clip_gradient": Float(-1.0)}


# --- SGD ----------------------------------------------------------------------------------------
# The SGD kernels run blockwise and write straight into their destination (the weight itself
# when called with ``out=weight``, MXNet's optimizers' call): the same elementwise operations in
# the same order as MXNet's kernel, so the results are bit-identical to whole-array expressions,
# with a few cache-sized scratch blocks instead of full-size temporaries.
_BLOCK = 1 << 15  # elements per block


def _blockwise(kernel: Callable, arrays: Sequence[np.ndarray], scratch: Sequence) -> None:
    """``kernel(*blocks, *scratch_blocks)`` over matching flat blocks of same-shape ``arrays``
    (one scratch block per dtype in ``scratch``); not C-contiguous arrays run as one block."""
    size = arrays[0].size
    if not all(a.flags.c_contiguous for a in arrays):
        kernel(*arrays, *(np.empty(arrays[0].shape, dt) for dt in scratch))
        return
    flat = [a.reshape(-1) for a in arrays]
    bufs = [np.empty(min(size, _BLOCK), dt) for dt in scratch]
    for s in range(0, size, _BLOCK):
        e = min(s + _BLOCK, size)
        kernel(*(f[s:e] for f in flat), *(b[:e - s] for b in bufs))


def sgd_into(dst: np.ndarray, w: np.ndarray, g: np.ndarray, mom: np.ndarray | None, mt,
             lr, wd, momentum, rescale, clip_gradient, decay_first: bool = False) -> None:
    """MXNet's SGD kernels in element type ``mt``, written into ``dst`` (may be ``w``) and, with
    momentum, ``mom`` (updated in place). ``step`` is ``lr*clip(rescale*g)`` (``clip_gradient
    >= 0``) or ``(lr*rescale)*g``.

    * momentum (``mom`` given; MXNet's ``sgd_mom_update`` and the multi-tensor kernel):
      ``mom = momentum*mom - (lr*wd)*w - step``, ``dst = w + mom``;
    * no ``mom``, ``decay_first=False`` (the multi-tensor kernel without momentum):
      ``dst = w + ((0 - (lr*wd)*w) - step)``;
    * no ``mom``, ``decay_first=True`` (``sgd_update``): ``dst = (1 - lr*wd)*w - step``.
    """
    t = np.dtype(mt).type
    lr, wd, m, rs = t(lr), t(wd), t(momentum), t(rescale)
    lr_wd, lr_rs = lr * wd, lr * rs
    bound = t(clip_gradient) if clip_gradient >= 0 else None
    coef = (F32(1.0) - lr_wd).astype(t)

    def step_into(gb, out):
        gb = gb.astype(t, copy=False)
        if bound is None:
            np.multiply(lr_rs, gb, out=out)
        else:
            np.multiply(rs, gb, out=out)
            np.clip(out, -bound, bound, out=out)
            np.multiply(lr, out, out=out)

    def with_mom(db, wb, gb, mb, s1):
        np.multiply(lr_wd, wb, out=s1)
        np.multiply(m, mb, out=mb)
        np.subtract(mb, s1, out=mb)
        step_into(gb, s1)
        np.subtract(mb, s1, out=mb)
        np.add(wb, mb, out=db)

    def no_mom(db, wb, gb, s1, s2):
        np.multiply(lr_wd, wb, out=s1)
        np.subtract(t(0) * t(0), s1, out=s1)  # the kernel's momentum term, 0 * 0
        step_into(gb, s2)
        np.subtract(s1, s2, out=s1)
        np.add(wb, s1, out=db)

    def decay(db, wb, gb, s1, s2):
        np.multiply(coef, wb, out=s1)
        step_into(gb, s2)
        np.subtract(s1, s2, out=db)

    if mom is not None:
        _blockwise(with_mom, (dst, w, g, mom), (t,))
    else:
        _blockwise(decay if decay_first else no_mom, (dst, w, g), (t, t))


def _sgd_kernel(dst_of: Callable, mp: bool, has_mom: bool) -> Callable:
    """An SGD op's compute: ``dst_of(w)`` is where the new weight goes (``w`` in place or a new
    array); ``mp``: the master copy ``weight32`` (last input) is updated and cast to the
    weight's dtype."""
    def kernel(p, w, g, *states):
        mom = states[0] if has_mom else None
        master = states[-1] if mp else w
        mt = F32 if mp else w.dtype
        dst = master if mp else dst_of(w)
        sgd_into(dst, master, g, mom, mt, p.lr, p.wd, p.momentum if has_mom else 0.0,
                 p.rescale_grad, p.clip_gradient, decay_first=not has_mom)
        if mp:
            out = dst_of(w)
            np.copyto(out, master, casting="unsafe")
            return (out, *states)
        return (dst, *states)

    return kernel


def _fresh(w: np.ndarray) -> np.ndarray:
    return np.empty_like(w)


def _same(w: np.ndarray) -> np.ndarray:
    return w


_SGD = {"lr": _lr(), "wd": Float(0.0), **_SCALE, "lazy_update": Bool(True)}
_SGD_MOM = {"lr": _lr(), "momentum": Float(0.0), "wd": Float(0.0), **_SCALE,
            "lazy_update": Bool(True)}
_op("sgd_update", ("weight", "grad"), _SGD, _sgd_kernel(_fresh, False, False),
    inplace=_sgd_kernel(_same, False, False),
    doc="SGD: ``weight = (1 - lr*wd)*weight - lr*clip(rescale_grad*grad)``.")
_op("sgd_mom_update", ("weight", "grad", "mom"), _SGD_MOM, _sgd_kernel(_fresh, False, True),
    (2,), inplace=_sgd_kernel(_same, False, True),
    doc="SGD with momentum: ``mom = momentum*mom - lr*wd*weight - lr*clip(rescale_grad*grad)``; "
        "``weight += mom``.")
_op("mp_sgd_update", ("weight", "grad", "weight32"), _SGD, _sgd_kernel(_fresh, True, False),
    (2,), mp=True, inplace=_sgd_kernel(_same, True, False),
    doc="``sgd_update`` on a float32 master copy ``weight32`` of a float16 weight.")
_op("mp_sgd_mom_update", ("weight", "grad", "mom", "weight32"), _SGD_MOM,
    _sgd_kernel(_fresh, True, True), (2, 3), mp=True, inplace=_sgd_kernel(_same, True, True),
    doc="``sgd_mom_update`` on a float32 master copy ``weight32``.")


# --- NAG --------------------------------------------------------------------------------------
def _nag_into(p, dst, w, g, mom, t, use_new: bool) -> None:
    """MXNet's NAG kernel blockwise into ``dst`` (may be ``w``) and ``mom``, in type ``t``:
    ``g' = clip(rescale*g)``, ``mom = momentum*mom``, ``dst = (w - mom) + (momentum + 1) *
    (mom - lr*(g' + wd*w))``, then ``mom -= lr*(g' + wd*v)`` with ``v`` the new weight when
    ``use_new`` (run in place, ``out=weight``, how MXNet's NAG optimizer calls it: its kernel
    reads ``weight`` after writing ``out``; ``mp_nag_mom_update`` always does so), else ``w``."""
    lr, wd, m, rs = t(p.lr), t(p.wd), t(p.momentum), t(p.rescale_grad)
    m1 = m + t(1)
    bound = t(p.clip_gradient) if p.clip_gradient >= 0 else None

    def block(db, wb, gb, mb, gr, s2, new):
        np.multiply(rs, gb.astype(t, copy=False), out=gr)
        if bound is not None:
            np.clip(gr, -bound, bound, out=gr)
        np.multiply(m, mb, out=mb)
        np.multiply(wd, wb, out=s2)
        np.add(gr, s2, out=s2)
        np.multiply(lr, s2, out=s2)
        np.subtract(mb, s2, out=s2)
        np.multiply(m1, s2, out=s2)
        np.subtract(wb, mb, out=new)
        np.add(new, s2, out=new)
        np.multiply(wd, new if use_new else wb, out=s2)
        np.add(gr, s2, out=s2)
        np.multiply(lr, s2, out=s2)
        np.subtract(mb, s2, out=mb)
        np.copyto(db, new)

    _blockwise(block, (dst, w, g, mom), (t, t, t))


def _nag_kernel(dst_of: Callable, use_new: bool, mp: bool) -> Callable:
    def kernel(p, w, g, mom, *rest):
        if mp:
            w32 = rest[0]
            _nag_into(p, w32, w32, g, mom, F32, True)
            out = dst_of(w)
            np.copyto(out, w32, casting="unsafe")
            return out, mom, w32
        dst = dst_of(w)
        _nag_into(p, dst, w, g, mom, w.dtype.type, use_new)
        return dst, mom

    return kernel


_op("nag_mom_update", ("weight", "grad", "mom"),
    {k: v for k, v in _SGD_MOM.items() if k != "lazy_update"}, _nag_kernel(_fresh, False, False),
    (2,), doc="Nesterov momentum (MXNet's kernel; with ``out=weight`` the momentum sees the new "
              "weight, as in MXNet).", inplace=_nag_kernel(_same, True, False))

_op("mp_nag_mom_update", ("weight", "grad", "mom", "weight32"),
    {k: v for k, v in _SGD_MOM.items() if k != "lazy_update"}, _nag_kernel(_fresh, True, True),
    (2, 3), mp=True, inplace=_nag_kernel(_same, True, True),
    doc="``nag_mom_update`` on a float32 master copy ``weight32``.")


# --- signSGD / Signum ---------------------------------------------------------------------------
def _signsgd(p, w, g):
    t = w.dtype.type
    lr, wd = t(p.lr), t(p.wd)  # clip_gradient has no effect (as in MXNet)
    return ((F32(1.0) - lr * wd).astype(t) * w - lr * _sign(g),)


def _signum(p, w, g, mom):
    t = w.dtype.type
    lr, wd, m = t(p.lr), t(p.wd), t(p.momentum)
    one_m = t(1) - m
    if p.clip_gradient >= 0:
        mom = m * mom - one_m * wd * w - one_m * clip(t(p.rescale_grad) * g, t(p.clip_gradient))
    else:
        mom = m * mom - one_m * wd * w - one_m * t(p.rescale_grad) * g
    out = (F32(1.0) - lr * t(p.wd_lh)).astype(t) * w + lr * _sign(mom)
    return out, mom


_op("signsgd_update", ("weight", "grad"),
    {"lr": _lr(), "wd": Float(0.0), **_SCALE}, _signsgd,
    doc="signSGD: ``weight = (1 - lr*wd)*weight - lr*sign(grad)``.")
_op("signum_update", ("weight", "grad", "mom"),
    {"lr": _lr(), "momentum": Float(0.0), "wd": Float(0.0), **_SCALE, "wd_lh": Float(0.0)},
    _signum, (2,), doc="Signum: sign of the momentum, decoupled weight decay ``wd_lh``.")


# --- Adam / AdamW -----------------------------------------------------------------------------
def _adam_kernel(dst_of: Callable) -> Callable:
    """MXNet's Adam kernel blockwise in the weight's dtype ``t``, into ``dst_of(w)``:
    ``gr = clip(g*rescale + w*wd)``, ``mean = b1*mean + (1-b1)*gr``, ``var = b2*var +
    ((1-b2)*gr)*gr``, ``dst = w - (lr*mean) / (sqrt(var) + epsilon)``."""
    def kernel(p, w, g, mean, var):
        t = w.dtype.type
        b1, b2, rs, wd, lr, eps = (t(v) for v in (p.beta1, p.beta2, p.rescale_grad, p.wd,
                                                   p.lr, p.epsilon))
        one_b1, one_b2 = (F32(1.0) - b1).astype(t), (F32(1.0) - b2).astype(t)
        bound = t(p.clip_gradient) if p.clip_gradient >= 0 else None

        def block(db, wb, gb, mb, vb, gr, s2):
            np.multiply(gb.astype(t, copy=False), rs, out=gr)
            np.multiply(wb, wd, out=s2)
            np.add(gr, s2, out=gr)
            if bound is not None:
                np.clip(gr, -bound, bound, out=gr)
            np.multiply(b1, mb, out=mb)
            np.multiply(one_b1, gr, out=s2)
            np.add(mb, s2, out=mb)
            np.multiply(b2, vb, out=vb)
            np.multiply(one_b2, gr, out=s2)
            np.multiply(s2, gr, out=s2)
            np.add(vb, s2, out=vb)
            np.sqrt(vb, out=gr)
            np.add(gr, eps, out=gr)
            np.multiply(lr, mb, out=s2)
            np.divide(s2, gr, out=s2)
            np.subtract(wb, s2, out=db)

        dst = dst_of(w)
        _blockwise(block, (dst, w, g, mean, var), (t, t))
        return dst, mean, var

    return kernel


_BETAS = {"beta1": Float(0.9), "beta2": Float(0.999)}
_op("adam_update", ("weight", "grad", "mean", "var"),
    {"lr": _lr(), **_BETAS, "epsilon": Float(1e-8), "wd": Float(0.0), **_SCALE,
     "lazy_update": Bool(True)}, _adam_kernel(_fresh), (2, 3), inplace=_adam_kernel(_same),
    doc="Adam (bias correction is the caller's: MXNet's Adam optimizer folds it into lr).")


def _adamw_core(p, w32, g, mean, var, rescale):
    """AdamW's float32 master-weight kernel; ``rescale`` is the rescale_grad input's value."""
    scaled = F32(rescale) * g.astype(F32)
    if p.clip_gradient >= 0:
        scaled = clip(scaled, F32(p.clip_gradient))
    b1, b2 = F32(p.beta1), F32(p.beta2)
    mean = b1 * mean + (F32(1.0) - b1) * scaled
    var = b2 * var + (F32(1.0) - b2) * (scaled * scaled)
    new = w32 - F32(p.eta) * (F32(p.lr) * mean / (np.sqrt(var) + F32(p.epsilon))
                              + F32(p.wd) * w32)
    return new, mean, var


def rescale_value(name: str, r: np.ndarray) -> float:
    """The value of an AdamW-style ``rescale_grad`` input (one element)."""
    if np.size(r) != 1:
        raise ShapeError(f"{name}: input 'rescale_grad' must hold one value, got shape "
                         f"{fmt(np.shape(r))}")
    return float(np.asarray(r).reshape(-1)[0])


def _adamw(p, w, g, mean, var, rescale):
    """MXNet's dense AdamW: whole-array expressions in the weight's dtype; like MXNet it
    leaves ``rescale_grad * clip(grad)`` in ``grad`` (its kernel scales grad in place)."""
    r = rescale_value("_adamw_update", rescale)
    if not np.isfinite(r) or r == 0:  # MXNet skips the update
        return w.copy(), g, mean, var
    t = w.dtype.type
    g = t(r) * g
    if p.clip_gradient >= 0:
        g = clip(g, t(p.clip_gradient))
    mean = t(p.beta1) * mean + t(F32(1.0) - F32(p.beta1)) * g
    var = t(p.beta2) * var + t(F32(1.0) - F32(p.beta2)) * (g * g)
    out = w - t(p.eta) * (t(p.lr) * mean / (np.sqrt(var) + t(p.epsilon)) + t(p.wd) * w)
    return out, g, mean, var


def _mp_adamw(p, w, g, mean, var, w32, rescale):
    r = rescale_value("_mp_adamw_update", rescale)
    if not np.isfinite(r) or r == 0:
        return w.copy(), mean, var, w32
    new, mean, var = _adamw_core(p, w32, g, mean, var, r)
    return new.astype(w.dtype), mean, var, new


def _adamw_wrap(name, names, mutate, kernel):
    def compute(p, *arrays):
        check_same_shapes(name, names[:-1], arrays[:-1])
        out, *states = kernel(p, *arrays)
        for i, new in zip(mutate, states):
            arrays[i][...] = new
        return out

    return compute


_ADAMW = {"lr": _lr(), **_BETAS, "epsilon": Float(1e-8), "wd": Float(0.0), "eta": Float(REQUIRED),
          "clip_gradient": Float(-1.0)}
for _name, _names, _aux, _writes, _k in (
        ("_adamw_update", ("weight", "grad", "mean", "var", "rescale_grad"), (2, 3), (1, 2, 3),
         _adamw),
        ("_mp_adamw_update", ("weight", "grad", "mean", "var", "weight32", "rescale_grad"),
         (2, 3, 4), (2, 3, 4), _mp_adamw)):
    register(OpDef(_name, params=_ADAMW, inputs=_names, aux=_aux,
                   compute=_adamw_wrap(_name, _names, _writes, _k),
                   infer_type=mp_type if _name.startswith("_mp") else None, no_onnx=NO_ONNX,
                   no_gradient=NO_GRAD,
                   doc="AdamW (decoupled weight decay); skipped when ``rescale_grad`` is 0 or "
                       "not finite."))


# --- RMSProp ----------------------------------------------------------------------------------
def _rms_grad(p, w, g, t):
    gr = t(p.rescale_grad) * g + t(p.wd) * w
    return clip(gr, t(p.clip_gradient)) if p.clip_gradient >= 0 else gr


def _rmsprop(p, w, g, n):
    t = w.dtype.type
    gr = _rms_grad(p, w, g, t)
    g1 = t(p.gamma1)
    n = (F32(1.0) - g1).astype(t) * (gr * gr) + g1 * n
    new = w - t(p.lr) * (gr / np.sqrt(n + t(p.epsilon)))
    if p.clip_weights >= 0:
        new = clip(new, t(p.clip_weights))
    return new, n


def _rmspropalex(p, w, g, n, gs, delta):
    t = w.dtype.type
    gr = _rms_grad(p, w, g, t)
    g1, g2 = t(p.gamma1), t(p.gamma2)
    one = (F32(1.0) - g1).astype(t)
    n = one * gr * gr + g1 * n
    gs = one * gr + g1 * gs
    delta = g2 * delta - (t(p.lr) * gr / np.sqrt(n - gs * gs + t(p.epsilon)))
    new = w + delta
    if p.clip_weights >= 0:
        new = clip(new, t(p.clip_weights))
    return new, n, gs, delta


_RMS_TAIL = {"epsilon": Float(1e-8), "wd": Float(0.0), **_SCALE, "clip_weights": Float(-1.0)}
_op("rmsprop_update", ("weight", "grad", "n"),
    {"lr": _lr(), "gamma1": Float(0.95), **_RMS_TAIL}, _rmsprop, (2,),
    doc="RMSProp (Tieleman & Hinton).")
_op("rmspropalex_update", ("weight", "grad", "n", "g", "delta"),
    {"lr": _lr(), "gamma1": Float(0.95), "gamma2": Float(0.9), **_RMS_TAIL}, _rmspropalex,
    (2, 3, 4), doc="Centered RMSProp (Graves 2013).")


# --- FTRL / FTML ------------------------------------------------------------------------------
def _ftrl(p, w, g, z, n):
    t = w.dtype.type
    gr = g * t(p.rescale_grad)
    if p.clip_gradient >= 0:
        gr = clip(gr, t(p.clip_gradient))
    lr = t(p.lr)
    z = z + (gr - (np.sqrt(n + gr * gr) - np.sqrt(n)) * w / lr)
    n = n + gr * gr
    lam = t(p.lamda1)
    out = (_sign(z) * lam - z) / ((t(p.beta) + np.sqrt(n)) / lr + t(p.wd)) \
        * (np.abs(z) > lam).astype(w.dtype)
    return out, z, n


_op("ftrl_update", ("weight", "grad", "z", "n"),
    {"lr": _lr(), "lamda1": Float(0.01), "beta": Float(1.0), "wd": Float(0.0), **_SCALE},
    _ftrl, (2, 3), doc="FTRL-Proximal (McMahan et al. 2013).")


def _ftml(p, w, g, d, v, z):
    t = w.dtype.type
    gr = t(p.rescale_grad) * g + t(p.wd) * w
    if p.clip_grad >= 0:
        gr = clip(gr, t(p.clip_grad))
    b1, b2, step = t(p.beta1), t(p.beta2), t(p.t)
    v = b2 * v + (t(1) - b2) * (gr * gr)
    d_t = (t(1) - np.power(b1, step)) / t(p.lr) * (
        np.sqrt(v / (t(1) - np.power(b2, step))) + t(p.epsilon))
    z = b1 * z + (t(1) - b1) * gr - (d_t - b1 * d) * w
    return -z / d_t, d_t, v, z


_op("ftml_update", ("weight", "grad", "d", "v", "z"),
    {"lr": _lr(), "beta1": Float(0.6), "beta2": Float(0.999), "epsilon": Float(1e-8),
     "t": Int(REQUIRED), "wd": Float(0.0), "rescale_grad": Float(1.0), "clip_grad": Float(-1.0)},
    _ftml, (2, 3, 4), doc="FTML (Zheng & Kwok 2017).")


# --- AdaGrad (MXNet registers only the row_sparse form; dense arrays are all rows) ----------------
def _adagrad(p, w, g, h):
    if p.wd != 0:
        raise ShapeError("_sparse_adagrad_update: wd must be 0 (MXNet: weight decay is not "
                         "supported by the sparse AdaGrad update)")
    t = w.dtype.type
    gr = g * t(p.rescale_grad)
    if p.clip_gradient >= 0:
        gr = clip(gr, t(p.clip_gradient))
    h = h + gr * gr
    return w - gr / np.sqrt(h + t(p.epsilon)) * t(p.lr), h


_op("_sparse_adagrad_update", ("weight", "grad", "history"),
    {"lr": _lr(), "epsilon": Float(1e-7), "wd": Float(0.0), **_SCALE}, _adagrad, (2,),
    doc="AdaGrad's update (MXNet's row_sparse kernel; a dense gradient updates every row).")


def _group_adagrad(p, w, g, h):
    if w.ndim != 2 or np.shape(h) != (w.shape[0], 1) or np.shape(g) != w.shape:
        raise ShapeError("_contrib_group_adagrad_update: needs a 2-D weight, a gradient of its "
                         f"shape and a history of shape (rows, 1); got {fmt(w.shape)}, "
                         f"{fmt(np.shape(g))}, {fmt(np.shape(h))}")
    t = w.dtype.type
    gr = g * t(p.rescale_grad)
    if p.clip_gradient >= 0:
        gr = clip(gr, t(p.clip_gradient))
    ssq = np.cumsum(gr * gr, axis=1, dtype=w.dtype)[:, -1:] if w.shape[1] else np.zeros_like(h)
    h = h + ssq / t(w.shape[1])
    return w - t(p.lr) * gr / np.sqrt(h + t(p.epsilon)), h


def _group_adagrad_shape(p, in_shapes):
    w = in_shapes[0] if in_shapes[0] is not None else in_shapes[1]
    hist = in_shapes[2] if in_shapes[2] is not None else (
        (w[0], 1) if w is not None and len(w) == 2 else None)
    return [w, w, hist], [w]


register(OpDef(
    "_contrib_group_adagrad_update", inputs=("weight", "grad", "history"), aux=(2,),
    params={"lr": _lr(), "rescale_grad": Float(1.0), "clip_gradient": Float(-1.0),
            "epsilon": Float(1e-5)},
    compute=lambda p, w, g, h: _group_adagrad_apply(p, w, g, h),
    infer_shape=_group_adagrad_shape, no_onnx=NO_ONNX, no_gradient=NO_GRAD,
    doc="Group AdaGrad: one accumulated mean squared gradient per row."))


def _group_adagrad_apply(p, w, g, h):
    out, new_h = _group_adagrad(p, w, g, h)
    h[...] = new_h
    return out
