"""A campaign of bad inputs through every ``gluonport`` command.

Files of every format the CLI reads (``.params``, symbol JSON, ``.onnx``, ``.npy`` inputs) are
made here broken in many ways (empty, truncated, corrupted, huge declared sizes, the wrong
format), together with FIFOs, devices, directories and dangling symlinks in every file role, bad
option values, unknown inputs, wrong shapes and dtypes and unusable output paths. Every run must
end with a documented exit code (never the "internal error" one), no traceback and a one-line
message naming what was wrong; none may hang (each run has an alarm, and the FIFO cases also run
through a real subprocess with a timeout).
"""

from __future__ import annotations

import os
import shutil
import signal
import struct
import subprocess
import sys
import zipfile

import numpy as np
import pytest
from gluonport_cli.main import cli

from tests._cli import CliRunner

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MLP = os.path.join(ROOT, "sample_models", "mlp")
DOCUMENTED = {1, 2, 3, 4}  # mismatch, usage, input/format, unsupported op (5 is "other")
CASE_SECONDS = 20

LIST_MAGIC, V2_MAGIC = 0x112, 0xF993FAC9

NET_CODE = '''
import gluonport as mx
from gluonport.gluon import nn


class Tiny(mx.gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.dense = nn.Dense(3, in_units=10)

    def hybrid_forward(self, F, x):
        return self.dense(x)


def not_a_block():
    return 42


VALUE = 3.5
'''


class Hang(Exception):
    """A run took longer than CASE_SECONDS."""


def _alarm(signum, frame):
    raise Hang()


def _params_record(shape: tuple, payload: bytes, flag: int = 0) -> bytes:
    head = struct.pack("<Ii", V2_MAGIC, 0) + struct.pack("<i", len(shape))
    head += b"".join(struct.pack("<q", d) for d in shape)
    return head + struct.pack("<iii", 1, 0, flag) + payload


def _params_file(records: list[bytes], names: list[str] | None) -> bytes:
    out = struct.pack("<QQQ", LIST_MAGIC, 0, len(records)) + b"".join(records)
    names = names or []
    out += struct.pack("<Q", len(names))
    for n in names:
        out += struct.pack("<Q", len(n)) + n.encode()
    return out


def _npy_header(shape: tuple, descr: str = "<f4") -> bytes:
    text = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape!r}, }}"
    text += " " * (63 - (len(text) + 10) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode()


def _write(path: str, data: bytes | str) -> str:
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(path, mode) as f:
        f.write(data)
    return path


class Files:
    """The campaign's files, made in one temporary folder."""

    def __init__(self, d: str):
        self.d = d
        self.sym = open(MLP + "-symbol.json", "rb").read()
        self.params = open(MLP + "-0000.params", "rb").read()
        self.x = np.load(MLP + "-input.npy")
        self.good = self.pair("good", self.sym, self.params)
        np.save(self.p("x.npy"), self.x)
        self.onnx = self.make_onnx()
        self.specials = self.make_specials()

    def p(self, name: str) -> str:
        return os.path.join(self.d, name)

    def pair(self, name: str, sym: bytes, params: bytes | None) -> str:
        _write(self.p(f"{name}-symbol.json"), sym)
        if params is not None:
            _write(self.p(f"{name}-0000.params"), params)
        for suffix in ("-input.npy", "-output.npy"):
            shutil.copy(MLP + suffix, self.p(name + suffix))
        return self.p(name)

    def make_onnx(self) -> bytes:
        import gluonport as mx

        sym, arg, aux = mx.model.load_checkpoint(MLP, 0)
        path = self.p("good.onnx")
        mx.onnx.export_model(sym, {**arg, **aux}, [(1, 10)], onnx_file_path=path,
                             dynamic=True)
        return open(path, "rb").read()

    def make_specials(self) -> dict[str, str]:
        """FIFOs, folders, dangling symlinks and devices under every name a role needs."""
        out = {}
        for kind in ("fifo", "dir", "dangling", "device"):
            for suffix in ("-symbol.json", "-0000.params", ".onnx", ".npy", ".params"):
                path = self.p(f"{kind}{suffix}")
                if kind == "fifo":
                    os.mkfifo(path)
                elif kind == "dir":
                    os.mkdir(path)
                elif kind == "dangling":
                    os.symlink(self.p("nowhere/at/all"), path)
                else:
                    os.symlink("/dev/zero", path)
                out[kind + suffix] = path
        _write(self.p("fifo-0000.params.real"), self.params)
        return out

    # ------------------------------------------------------------------ broken .params
    def bad_params(self) -> dict[str, bytes]:
        good = self.params
        rec = _params_record((2, 3), np.zeros(6, np.float32).tobytes())
        return {
            "empty": b"",
            "one_byte": b"\x12",
            "magic_only": struct.pack("<Q", LIST_MAGIC),
            "header_only": struct.pack("<QQ", LIST_MAGIC, 0),
            **{f"trunc{k}": good[: len(good) * k // 100] for k in (5, 20, 50, 80, 99)},
            "bad_magic": b"\x00" * 8 + good[8:],
            "huge_count": struct.pack("<QQQ", LIST_MAGIC, 0, 1 << 62) + good[24:],
            "huge_dims": _params_file([_params_record((1 << 40, 1 << 40), b"\0" * 16)], ["a"]),
            "neg_dim": _params_file([_params_record((-5, 3), b"\0" * 16)], ["a"]),
            "huge_ndim": _params_file([struct.pack("<Iii", V2_MAGIC, 0, 1 << 30)], ["a"]),
            "bad_dtype": _params_file([_params_record((2, 3), b"\0" * 24, flag=99)], ["a"]),
            "bad_record_magic": _params_file([b"\xde\xad\xbe\xef" + rec[4:]], ["a"]),
            "names_mismatch": _params_file([rec, rec], ["a"]),
            "huge_name": _params_file([rec], None)[:-8] + struct.pack("<QQ", 1, 1 << 60),
            "garbage": np.random.default_rng(0).bytes(3000),
            "text": b"these are not parameters\n",
            "symbol_json": self.sym,
            "npy_list": _npy_header((2, 3)) + b"\0" * 24,
            "npz_empty": _empty_zip(),
            "npz_corrupt": b"PK\x03\x04" + np.random.default_rng(1).bytes(200),
            "list_style": _params_file([rec], None),
            "foreign_names": _params_file([rec], ["arg:nosuch_weight"]),
            "wrong_shape": _params_file([rec], ["arg:hybridsequential0_dense0_weight"]),
        }

    # ------------------------------------------------------------------ broken symbol JSON
    def bad_symbols(self) -> dict[str, bytes]:
        good = self.sym.decode()
        node = '{"op": "null", "name": "data", "inputs": []}'
        fc = ('{"op": "FullyConnected", "name": "fc", "attrs": {"num_hidden": "%s"}, '
              '"inputs": [[0, 0, 0]]}')

        def graph(nodes: str, heads: str = "[[1, 0, 0]]", args: str = "[0]") -> bytes:
            return (f'{{"nodes": [{nodes}], "arg_nodes": {args}, "heads": {heads}, '
                    '"attrs": {"mxnet_version": ["int", 10901]}}').encode()

        return {
            "empty": b"",
            "blank": b"   \n",
            "open_brace": b"{",
            "array": b"[]",
            "null": b"null",
            "number": b"123",
            "not_utf8": b"\xff\xfe\x00{",
            "deep": b"[" * 200000 + b"]" * 200000,
            "deep_dict": b'{"a":' * 100000 + b"1" + b"}" * 100000,
            "huge_number": b'{"nodes": 1e999999, "heads": []}',
            "nodes_not_list": b'{"nodes": {}, "heads": [], "arg_nodes": []}',
            "node_not_object": graph("1, 2"),
            "no_op": graph('{"name": "x", "inputs": []}', "[[0, 0, 0]]"),
            "head_out_of_range": graph(node, "[[7, 0, 0]]"),
            "head_negative": graph(node, "[[-1, 0, 0]]"),
            "input_out_of_range": graph(node + ", " + fc.replace("[[0, 0, 0]]", "[[9, 0, 0]]")
                                        % 3),
            "self_cycle": graph(node + ", " + fc.replace("[[0, 0, 0]]", "[[1, 0, 0]]") % 3),
            "unknown_op": graph(node + ', {"op": "NoSuchOp", "name": "n", "inputs": [[0,0,0]]}'),
            "bad_attr": graph(node + ", " + fc % "abc"),
            "negative_hidden": graph(node + ", " + fc % "-4"),
            "huge_hidden": graph(node + ", " + fc % (10 ** 15)),
            "attrs_list": graph(node + ', {"op": "relu", "name": "r", "attrs": [1], '
                                '"inputs": [[0, 0, 0]]}'),
            "heads_string": graph(node, '"x"'),
            "arg_nodes_bad": graph(node, "[[0, 0, 0]]", "[5]"),
            "version_string": good.replace('["int", 10901]', '"abc"').encode(),
            **{f"trunc{k}": self.sym[: len(self.sym) * k // 100] for k in (10, 50, 90)},
            "params_bytes": self.params,
        }

    # ------------------------------------------------------------------ broken .onnx
    def bad_onnx(self) -> dict[str, bytes]:
        import onnx
        from onnx import TensorProto, helper

        good = self.onnx
        huge_in = helper.make_tensor_value_info("data", TensorProto.FLOAT, [1 << 20, 1 << 20])
        out = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1 << 20, 1 << 20])
        huge = helper.make_model(helper.make_graph([helper.make_node("Relu", ["data"], ["y"])],
                                                   "g", [huge_in], [out]),
                                 opset_imports=[helper.make_opsetid("", 17)])
        unknown = helper.make_model(helper.make_graph(
            [helper.make_node("NoSuchOp", ["data"], ["y"], domain="x.y")], "g",
            [helper.make_tensor_value_info("data", TensorProto.FLOAT, [1, 2])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])]),
            opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("x.y", 1)])
        return {
            "empty": b"",
            "one_byte": b"\x08",
            "garbage": np.random.default_rng(2).bytes(2000),
            "text": b"not an onnx model\n",
            "json": self.sym,
            "params": self.params,
            **{f"trunc{k}": good[: len(good) * k // 100] for k in (10, 50, 90)},
            "no_graph": onnx.ModelProto(ir_version=8).SerializeToString(),
            "huge_input": huge.SerializeToString(),
            "unknown_op": unknown.SerializeToString(),
        }

    # ------------------------------------------------------------------ broken .npy inputs
    def bad_npys(self) -> dict[str, bytes]:
        def npy(a: np.ndarray) -> bytes:
            import io

            b = io.BytesIO()
            np.save(b, a, allow_pickle=True)
            return b.getvalue()

        good = npy(self.x)
        return {
            "empty": b"",
            "magic_only": b"\x93NUMPY",
            "trunc_header": good[:20],
            "trunc_data": good[: len(good) - 7],
            "garbage": np.random.default_rng(3).bytes(500),
            "huge_shape": _npy_header((1 << 40, 10)) + b"\0" * 64,
            "object": npy(np.array([{"a": 1}, None], dtype=object)),
            "npz": _npz_bytes(self.x),
            "params": self.params,
            "wrong_shape": npy(np.zeros((4, 9), np.float32)),
            "wrong_rank": npy(np.zeros((10,), np.float32)),
            "scalar": npy(np.float32(1.0)),
            "strings": npy(np.array([["a"] * 10] * 2)),
            "complex": npy(np.zeros((2, 10), np.complex64)),
            "bool": npy(np.zeros((2, 10), bool)),
            "bad_descr": _npy_header((2, 10), "<q9") + b"\0" * 160,
        }


def _empty_zip() -> bytes:
    import io

    b = io.BytesIO()
    with zipfile.ZipFile(b, "w"):
        pass
    return b.getvalue()


def _npz_bytes(x: np.ndarray) -> bytes:
    import io

    b = io.BytesIO()
    np.savez(b, data=x)
    return b.getvalue()


# Files whose contents `inspect` can show although running them fails (parameters that do not
# fit the graph, attributes only shape inference checks, an op only onnxruntime would refuse).
INSPECTABLE = {"p_npz_empty", "p_foreign_names", "p_wrong_shape", "s_unknown_op",
               "s_negative_hidden", "s_huge_hidden", "o_huge_input", "o_unknown_op"}


def _cases(f: Files) -> list[tuple[list[str], str]]:
    """``(argv, text the message must contain)`` for every bad input; a text starting with
    ``"?"`` marks a run that may also succeed (see INSPECTABLE)."""
    cases: list[tuple[list[str], str]] = []
    shape = ["--input-shape", "data=2,10"]
    onnx_out = f.p("out.onnx")
    quick = ["--iters", "1", "--warmup", "0", "--batch", "1"]

    def model_cmds(model: str, name: str, extra: tuple = ()) -> None:
        ok = "?" if os.path.basename(model).split("-")[0].split(".")[0] in INSPECTABLE else ""
        cases.append((["inspect", model, *extra], ok + name))
        cases.append((["run", model, *extra, *shape], name))
        cases.append((["convert", model, *extra, "-o", onnx_out, *shape], name))
        cases.append((["validate", model, *extra, *shape], name))
        cases.append((["bench", model, *extra, *shape, *quick], name))

    for name, data in f.bad_params().items():
        prefix = f.pair(f"p_{name}", f.sym, data)
        model_cmds(prefix, f"p_{name}-0000.params")
        cases.append((["quickstart", prefix], f"p_{name}"))
        path = _write(f.p(f"{name}.params"), data)
        cases.append((["run", f.good, "--params", path, *shape], f"{name}.params"))
        cases.append((["export", "badnets_cli:Tiny", "--params", path, "--input-shape",
                       "data=2,10", "--onnx", onnx_out], f"{name}.params"))
    for name, data in f.bad_symbols().items():
        prefix = f.pair(f"s_{name}", data, f.params)
        model_cmds(prefix + "-symbol.json", f"s_{name}-symbol.json")
        cases.append((["quickstart", prefix], f"s_{name}"))
    for name, data in f.bad_onnx().items():
        path = _write(f.p(f"o_{name}.onnx"), data)
        ok = "?" if f"o_{name}" in INSPECTABLE else ""
        cases.append((["inspect", path], f"{ok}o_{name}.onnx"))
        cases.append((["run", path], f"o_{name}.onnx"))
        cases.append((["convert", path, "-o", f.p("back")], f"o_{name}.onnx"))
        cases.append((["validate", f.good, path, *shape], f"o_{name}.onnx"))
        cases.append((["bench", path, *quick], f"o_{name}.onnx"))
    for name, data in f.bad_npys().items():
        path = _write(f.p(f"i_{name}.npy"), data)
        for cmd in ("run", "validate", "convert"):
            extra = ["-o", onnx_out] if cmd == "convert" else []
            cases.append(([cmd, f.good, "--input", f"data={path}", *extra], f"i_{name}.npy"))
    for kind, path in f.specials.items():
        base = os.path.basename(path)
        if kind.endswith("-symbol.json"):
            model_cmds(path, base)
            cases.append((["quickstart", path[: -len("-symbol.json")]], base))
        elif kind.endswith(".onnx"):
            model_cmds(path, base)
        elif kind.endswith(".npy"):
            cases.append((["run", f.good, "--input", f"data={path}"], base))
        elif kind.endswith(".params"):
            cases.append((["run", f.good, "--params", path, *shape], base))
            cases.append((["inspect", f.good, "--params", path], base))
            cases.append((["export", "badnets_cli:Tiny", "--params", path, "--input-shape",
                           "data=2,10", "-o", f.p("e")], base))
    cases += _flag_cases(f, shape, onnx_out)
    cases += _output_cases(f, shape)
    return cases


def _flag_cases(f: Files, shape: list[str], onnx_out: str) -> list[tuple[list[str], str]]:
    g, x = f.good, f"data={f.p('x.npy')}"
    tiny = ["export", "badnets_cli:Tiny", "--input-shape", "data=2,10"]
    cases = [
        (["inspect", g, "--epoch", "-1"], "--epoch"),
        (["inspect", g, "--epoch", "10000"], "--epoch"),
        (["inspect", g, "--epoch", "abc"], "--epoch"),
        (["run", g, "--epoch", "7", *shape], "good-0007.params"),
        (["run", g, "--input-shape", "data=2,10", "--input-shape", "nosuch=1,2"], "nosuch"),
        (["run", g, "--input", f"nosuch={f.p('x.npy')}"], "nosuch"),
        (["run", g, "--input-shape", "data=2,9"], "data looks like N,10"),
        (["validate", g, "--input-shape", "data=2,9"], "data looks like N,10"),
        (["convert", g, "-o", onnx_out, "--input-shape", "data=2,9"], "data looks like N,10"),
        (["bench", g, "--input-shape", "data=2,9"], "data looks like N,10"),
        (["validate", g, "--input-shape", "data=2,10", "--input-shape", "nosuch=1,2"],
         "nosuch"),
        (["validate", g, f.p("good.onnx"), "--input-shape", "nosuch=1,2"], "nosuch"),
        (["validate", g, "--input", f"nosuch={f.p('x.npy')}"], "nosuch"),
        (["bench", g, "--input-shape", "nosuch=1,2"], "nosuch"),
        (["convert", g, "-o", onnx_out, "--input-shape", "nosuch=1,2"], "nosuch"),
        (["run", g, "--input-shape", "data=10"], "data"),
        (["run", g, "--input-shape", "data=0,10"], "data"),
        (["run", g, "--input-shape", "data=-1,10"], "--input-shape"),
        (["run", g, "--input-shape", "data="], "--input-shape"),
        (["run", g, "--input-shape", "=1,2"], "--input-shape"),
        (["run", g, "--input-shape", "data=99999999999,99999999999"], "data"),
        (["run", g, "--input-shape", "data=" + ",".join(["2"] * 40)], "data"),
        (["run", g, "--input", "data"], "--input"),
        (["run", g, "--input", "=x.npy"], "--input"),
        (["run", g, "--input", x, "--device", "tpu"], "--device"),
        (["run", g, "--input", x, "--backend", "tensorflow"], "--backend"),
        (["run", g, "--input", x, "--no-such-flag"], "--no-such-flag"),
        (["run"], "MODEL"),
        (["nosuchcommand"], "nosuchcommand"),
        (["convert", g, *shape], "--output"),
        (["convert", g, *shape, "-o", onnx_out, "--opset", "0"], "opset"),
        (["convert", g, *shape, "-o", onnx_out, "--opset", "abc"], "--opset"),
        (["convert", g, *shape, "-o", onnx_out, "--opset", "99"], "opset"),
        (["convert", g, *shape, "-o", onnx_out, "--rtol", "abc"], "--rtol"),
        (["convert", g, *shape, "-o", onnx_out, "--rtol", "-1"], "--rtol"),
        (["convert", g, *shape, "-o", onnx_out, "--atol", "nan"], "--atol"),
        (["convert", g, *shape, "-o", onnx_out, "--dynamic-axes", "data=x"], "--dynamic-axes"),
        (["convert", g, *shape, "-o", onnx_out, "--dynamic-axes", "nosuch=0"], "nosuch"),
        (["convert", g, *shape, "-o", onnx_out, "--outputs", "nosuch"], "nosuch"),
        (["validate", g, "--input", x, "--rtol", "-1"], "--rtol"),
        (["validate", g, f.p("x.npy"), *shape], "x.npy"),
        (["bench", g, *shape, "--batch", "0"], "--batch"),
        (["bench", g, *shape, "--batch", "-3"], "--batch"),
        (["bench", g, *shape, "--batch", ""], "--batch"),
        (["bench", g, *shape, "--iters", "0"], "--iters"),
        (["bench", g, *shape, "--iters", "-1"], "--iters"),
        (["bench", g, *shape, "--warmup", "-1"], "--warmup"),
        (["quickstart", f.p("nosuch")], "nosuch"),
        (["quickstart", g, "--rtol", "x"], "--rtol"),
        ([*tiny, "--onnx", onnx_out, "--epoch", "-1"], "--epoch"),
        ([*tiny, "-o", f.p("e"), "--epoch", "10000"], "--epoch"),
        ([*tiny], "-o"),
        ([*tiny, "--onnx", onnx_out, "--kwargs", "not json"], "--kwargs"),
        ([*tiny, "--onnx", onnx_out, "--kwargs", "[1, 2]"], "--kwargs"),
        ([*tiny, "--onnx", onnx_out, "--kwargs", '{"nosuch": 1}'], "nosuch"),
        (["export", "nocolon", "--input-shape", "data=2,10", "--onnx", onnx_out], "nocolon"),
        (["export", "no_such_module_x:Net", "--input-shape", "data=2,10", "--onnx", onnx_out],
         "no_such_module_x"),
        (["export", "badnets_cli:Nope", "--input-shape", "data=2,10", "--onnx", onnx_out],
         "Nope"),
        (["export", "badnets_cli:not_a_block", "--input-shape", "data=2,10", "--onnx",
          onnx_out], "not_a_block"),
        (["export", "badnets_cli:VALUE", "--input-shape", "data=2,10", "--onnx", onnx_out],
         "VALUE"),
        ([*tiny[:2], "--input-shape", "data=2,7", "--onnx", onnx_out], "data"),
        ([*tiny, "--onnx", onnx_out, "--opset", "3"], "opset"),
        ([*tiny, "--onnx", onnx_out, "--params", f.p("x.npy")], "x.npy"),
    ]
    return cases


def _output_cases(f: Files, shape: list[str]) -> list[tuple[list[str], str]]:
    g, x = f.good, f"data={f.p('x.npy')}"
    afile = _write(f.p("a_file"), "x")
    folder = f.p("outdir")
    os.makedirs(folder, exist_ok=True)
    tiny = ["export", "badnets_cli:Tiny", "--input-shape", "data=2,10"]
    cases = []
    for bad, text in ((f.p("missing/out"), "missing"), (afile + "/out", "a_file"),
                      (folder + os.sep, "outdir"), (folder, "outdir"), ("", "-o")):
        cases.append((["run", g, "--input", x, "-o", bad + (".npz" if bad.endswith("out")
                                                             else "")], text))
        cases.append((["convert", g, *shape, "-o", bad + (".onnx" if bad.endswith("out")
                                                          else "")], text))
        cases.append(([*tiny, "--onnx", bad + (".onnx" if bad.endswith("out") else "")],
                      text if bad else "--onnx"))
        cases.append(([*tiny, "-o", bad], text))
        cases.append((["quickstart", "-o", bad + (".onnx" if bad.endswith("out") else "")],
                      text))
    cases.append((["convert", f.p("good.onnx"), "-o", f.p("missing/back")], "missing"))
    if os.geteuid() != 0:  # root writes anywhere
        locked = f.p("locked")
        os.makedirs(locked, exist_ok=True)
        os.chmod(locked, 0o500)
        for argv in (["run", g, "--input", x, "-o", os.path.join(locked, "o.npz")],
                     ["convert", g, *shape, "-o", os.path.join(locked, "o.onnx")],
                     [*tiny, "-o", os.path.join(locked, "m")]):
            cases.append((argv, "locked"))
    return cases


def _check(res, argv: list[str], text: str) -> str | None:
    """What is wrong with one run's result, or None."""
    out = res.output
    if isinstance(res.exception, Hang):
        return "hung"
    if text.startswith("?"):
        if res.exit_code == 0:
            return None
        text = text[1:]
    if res.exit_code not in DOCUMENTED:
        return f"exit {res.exit_code}"
    if "Traceback" in out or "internal error" in out:
        return "traceback/internal error"
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    if len(lines) != 1 or not lines[0].startswith("Error: "):
        return f"{len(lines)} lines on stderr"
    if text.lower() not in lines[0].lower():
        return f"message does not name {text!r}"
    return None


def test_campaign_of_bad_inputs(tmp_path, monkeypatch):
    f = Files(str(tmp_path))
    _write(str(tmp_path / "badnets_cli.py"), NET_CODE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    cases = _cases(f)
    assert len(cases) >= 150
    failures = []
    old = signal.signal(signal.SIGALRM, _alarm)
    try:
        for argv, text in cases:
            signal.alarm(CASE_SECONDS)
            try:
                res = CliRunner().invoke(cli, argv)
            finally:
                signal.alarm(0)
            problem = _check(res, argv, text)
            if problem:
                failures.append(f"{' '.join(os.path.basename(a) for a in argv)}: {problem}: "
                                f"{res.output.strip()[-300:]!r}")
    finally:
        signal.signal(signal.SIGALRM, old)
    assert not failures, f"{len(failures)} of {len(cases)} runs:\n" + "\n".join(failures)


def test_fifos_and_devices_do_not_hang_the_real_command(tmp_path):
    """The installed command, in a subprocess with a timeout: a FIFO or /dev/zero given as a
    model, params or input file is refused at once (reading one would block or never end)."""
    fifo = str(tmp_path / "m-symbol.json")
    os.mkfifo(fifo)
    os.mkfifo(str(tmp_path / "p.params"))
    os.mkfifo(str(tmp_path / "x.npy"))
    os.mkfifo(str(tmp_path / "f.onnx"))
    shape = ["--input-shape", "data=2,10"]
    runs = [
        ["inspect", fifo],
        ["inspect", str(tmp_path / "f.onnx")],
        ["run", MLP, "--params", str(tmp_path / "p.params"), *shape],
        ["run", MLP, "--input", f"data={tmp_path / 'x.npy'}"],
        ["run", MLP, "--input", "data=/dev/zero"],
        ["convert", MLP, "--params", "/dev/zero", "-o", str(tmp_path / "o.onnx"), *shape],
        ["export", "badnets_cli:Tiny", "--params", str(tmp_path / "p.params"),
         "--input-shape", "data=2,10", "--onnx", str(tmp_path / "o.onnx")],
    ]
    _write(str(tmp_path / "badnets_cli.py"), NET_CODE)
    for argv in runs:
        out = subprocess.run([sys.executable, "-m", "gluonport_cli.main", *argv],
                             capture_output=True, text=True, timeout=60, cwd=tmp_path)
        lines = out.stderr.strip().splitlines()
        assert out.returncode == 3, (argv, out.stderr)
        assert len(lines) == 1 and lines[0].startswith("Error: "), out.stderr
        assert "FIFO" in lines[0] or "character device" in lines[0], lines[0]


def test_usage_errors_are_one_line_with_the_command():
    res = CliRunner().invoke(cli, ["run", MLP, "--epoch", "-1"], prog_name="gluonport")
    assert res.exit_code == 2
    assert res.stderr.strip().splitlines() == [
        "Error: Invalid value for '--epoch': -1 is not in the range 0<=x<=9999; see "
        "'gluonport run --help'"]


def test_wrong_input_shape_shows_what_the_model_expects():
    lenet = os.path.join(ROOT, "sample_models", "lenet_bn")
    res = CliRunner().invoke(cli, ["run", lenet, "--input-shape", "data=2,3,28,28"])
    assert res.exit_code == 3, res.output
    assert "data looks like N,1,H,W" in res.stderr and "Traceback" not in res.output
    res = CliRunner().invoke(cli, ["run", lenet, "--input-shape", "image=2,1,28,28"])
    assert res.exit_code == 2 and "has no input 'image'; its inputs are 'data'" in res.stderr


@pytest.mark.parametrize("argv", [[], ["lenet_bn"], ["mlp"], ["sample_models/mlp"]])
def test_quickstart_runs_the_installed_samples_from_any_folder(argv, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(cli, ["quickstart", *argv])
    assert res.exit_code == 0, res.output
    assert "OK: converted, validated and ran" in res.output


def test_library_writes_name_the_folder_not_a_temp_file(tmp_path):
    import gluonport as mx

    _write(str(tmp_path / "afile"), "x")
    arrays = {"a": mx.nd.zeros((2,))}
    for target, kind, name in ((tmp_path / "missing" / "x.params", FileNotFoundError, "missing"),
                               (tmp_path / "afile" / "x.params", NotADirectoryError, "afile"),
                               (tmp_path, IsADirectoryError, tmp_path.name)):
        with pytest.raises(kind) as err:
            mx.nd.save(str(target), arrays)
        assert err.value.filename.endswith(name), err.value
        assert "gluonport-tmp" not in str(err.value), err.value
    assert sorted(os.listdir(tmp_path)) == ["afile"]


def test_bare_command_prints_help():
    res = CliRunner().invoke(cli, [], prog_name="gluonport")
    assert res.exit_code == 0 and res.output.startswith("Usage: gluonport")


def test_seeded_corruptions_of_every_format(tmp_path):
    """Random byte flips, insertions and cuts of a good symbol JSON, .params, .onnx and .npy
    (seeded): each run ends ok or with a documented one-line error, never an internal one."""
    f = Files(str(tmp_path))
    rng = np.random.default_rng(12)
    sources = {"-symbol.json": f.sym, "-0000.params": f.params, ".onnx": f.onnx,
               ".npy": open(f.p("x.npy"), "rb").read()}
    runner, problems, runs = CliRunner(), [], 0
    for i in range(15):
        for suffix, good in sources.items():
            data = bytearray(good)
            for _ in range(int(rng.integers(1, 6))):
                at = int(rng.integers(0, len(data)))
                kind = int(rng.integers(0, 3))
                if kind == 0:
                    data[at] = int(rng.integers(0, 256))
                elif kind == 1:
                    data[at:at] = rng.bytes(int(rng.integers(1, 9)))
                else:
                    del data[at:at + int(rng.integers(1, 64))]
            name = f"c{i}"
            if suffix == ".onnx":
                argvs = [["inspect", _write(f.p(name + ".onnx"), bytes(data))],
                         ["run", f.p(name + ".onnx")]]
            elif suffix == ".npy":
                path = _write(f.p(name + ".npy"), bytes(data))
                argvs = [["run", f.good, "--input", f"data={path}"]]
            else:
                prefix = f.pair(name, f.sym, f.params)
                _write(prefix + suffix, bytes(data))
                argvs = [["inspect", prefix], ["run", prefix, "--input-shape", "data=2,10"]]
            for argv in argvs:
                runs += 1
                res = runner.invoke(cli, argv)
                lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
                bad = ("Traceback" in res.output or "internal error" in res.output
                       or res.exit_code not in {0} | DOCUMENTED
                       or (res.exit_code and (len(lines) != 1 or name not in lines[0])))
                if bad:
                    problems.append(f"{argv}: {res.exit_code}: {res.output[-300:]!r}")
    assert runs >= 90
    assert not problems, "\n".join(problems)
