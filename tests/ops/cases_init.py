"""Case table for ops/tensor/init.py: creation ops, no inputs (plain data; see
tests/ops/_check.py)."""


def _c(name, op, **attrs):
    return {"name": name, "op": op, "inputs": [], "attrs": attrs}


CASES = [
    _c("zeros", "_zeros", shape=(2, 3)),
    _c("zeros_int32_ctx", "_zeros", shape=(4,), dtype="int32", ctx="cpu(0)"),
    _c("zeros_f16_3d", "_zeros", shape=(1, 2, 3), dtype="float16"),
    _c("zeros_bool", "_zeros", shape=(2, 2), dtype="bool"),
    _c("ones", "_ones", shape=(3, 2)),
    _c("ones_uint8", "_ones", shape=(5,), dtype="uint8"),
    _c("ones_f64", "_ones", shape=(2, 1, 2), dtype="float64"),
    _c("full", "_full", shape=(2, 3), value=2.5),
    _c("full_int_truncates", "_full", shape=(3,), value=-2.7, dtype="int32"),
    _c("full_int8", "_full", shape=(2, 2), value=7, dtype="int8"),
    _c("full_f16", "_full", shape=(2,), value=0.1, dtype="float16"),
    _c("full_bool", "_full", shape=(3,), value=0.5, dtype="bool"),
    _c("arange_stop_only", "_arange", start=5),
    _c("arange_start_stop", "_arange", start=2, stop=9),
    _c("arange_step", "_arange", start=0.5, stop=3.2, step=0.7),
    _c("arange_neg_step", "_arange", start=3, stop=-2.5, step=-0.5),
    _c("arange_repeat", "_arange", start=0, stop=4, repeat=3),
    _c("arange_float_accumulates", "_arange", start=0.1, stop=10.0, step=0.1),
    _c("arange_int32", "_arange", start=1.7, stop=11, step=2.5, dtype="int32"),
    _c("arange_int64_neg", "_arange", start=-3.5, stop=4, step=1.5, dtype="int64"),
    _c("arange_uint8", "_arange", start=0, stop=6, step=2, dtype="uint8"),
    _c("arange_f64", "_arange", start=1, stop=2, step=0.1, dtype="float64"),
    _c("arange_f16", "_arange", start=0, stop=3, step=0.3, dtype="float16"),
    _c("arange_ctx", "_arange", start=0, stop=3, ctx="cpu(0)"),
    _c("eye", "_eye", N=3),
    _c("eye_rect", "_eye", N=2, M=4),
    _c("eye_k_pos", "_eye", N=4, M=3, k=1, dtype="int32"),
    _c("eye_k_neg", "_eye", N=3, k=-2, dtype="float64"),
    _c("eye_k_out_of_range", "_eye", N=2, k=5),
    _c("linspace", "_linspace", start=0, stop=1, num=5),
    _c("linspace_no_endpoint", "_linspace", start=-1, stop=1, num=4, endpoint=False),
    _c("linspace_one", "_linspace", start=3, stop=5, num=1),
    _c("linspace_int32", "_linspace", start=0, stop=10, num=4, dtype="int32"),
    _c("linspace_f64", "_linspace", start=0.1, stop=0.9, num=7, dtype="float64"),
]
