"""External data of an ONNX model must stay inside the model's folder, on every load path.

Each hostile model is ``y = x + W`` with ``W`` (4 float32) kept in an external file whose
location is chosen by the test. Outside the folder lies ``secret.bin`` holding 4 x 1234.5: a
load path that follows the location would return ``x + 1234.5``. Every path (import, both
``gluonport.load`` backends, ``static_shape`` re-sessions, ``OrtRunner`` and the CLI) must
refuse every case with a :class:`FormatError` before onnxruntime gets the model.
"""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
from gluonport_cli.main import cli
from onnx import TensorProto
from onnx import helper as h

import gluonport
from gluonport.errors import FormatError, GluonportError
from gluonport.onnx import import_graph, import_model
from gluonport.onnx._import_fold import initial_consts
from gluonport.runtime.ort import OrtRunner, RuntimeOptions
from tests._cli import CliRunner

SECRET = np.full(4, 1234.5, np.float32)
WEIGHT = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
X = np.array([[0.5, -0.5, 0.25, 0.0]], np.float32)


def _model(location: str, **extra: str) -> onnx.ModelProto:
    w = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[4])
    w.data_location = TensorProto.EXTERNAL
    for key, value in {"location": location, **extra}.items():
        entry = w.external_data.add()
        entry.key, entry.value = key, value
    graph = h.make_graph([h.make_node("Add", ["x", "W"], ["y"])], "g",
                         [h.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
                         [h.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])], [w])
    return h.make_model(graph, ir_version=8, opset_imports=[h.make_opsetid("", 17)])


def _write(folder, location: str, **extra: str) -> str:
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "model.onnx")
    with open(path, "wb") as f:
        f.write(_model(location, **extra).SerializeToString())
    return path


@pytest.fixture
def place(tmp_path):
    """(model folder, path of the secret outside it)."""
    secret = tmp_path / "secret.bin"
    secret.write_bytes(SECRET.tobytes())
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.bin").write_bytes(SECRET.tobytes())
    folder = tmp_path / "models"
    folder.mkdir()
    return folder, str(secret)


def _hostile(folder, secret: str) -> dict[str, str]:
    """name -> model path, one per hostile external-data location."""
    root = os.path.dirname(secret)
    cases: dict[str, str] = {}

    def case(name, location, setup=None, **extra):
        sub = folder / name
        sub.mkdir()
        if setup:
            setup(sub)
        cases[name] = _write(sub, location, **extra)

    case("dotdot", "../../secret.bin")
    case("dotdot_inner", "a/../../../secret.bin")
    case("backslash", "..\\..\\secret.bin")
    case("absolute", secret)
    case("file_symlink", "w.bin", lambda d: os.symlink(secret, d / "w.bin"))
    case("relative_symlink", "w.bin", lambda d: os.symlink("../../secret.bin", d / "w.bin"))
    case("folder_symlink", "sub/secret.bin",
         lambda d: os.symlink(os.path.join(root, "outside"), d / "sub"))
    case("nul", "w.bin\0../../secret.bin", lambda d: (d / "w.bin").write_bytes(WEIGHT.tobytes()))
    case("empty", "")
    case("dot", ".")
    case("missing", "nosuch.bin")
    case("directory", "d", lambda d: (d / "d").mkdir())
    case("fifo", "p", lambda d: os.mkfifo(d / "p"))
    case("device_link", "z", lambda d: os.symlink("/dev/zero", d / "z"))
    data = lambda d: (d / "w.bin").write_bytes(WEIGHT.tobytes())  # noqa: E731
    case("offset_past_end", "w.bin", data, offset="17")
    case("length_past_end", "w.bin", data, length="32")
    case("huge_length", "w.bin", data, length=str(2 ** 62))
    case("huge_offset", "w.bin", data, offset="9" * 30)
    case("negative_offset", "w.bin", data, offset="-4")
    case("hex_offset", "w.bin", data, offset="0x4")
    case("short_length", "w.bin", data, length="8")
    case("short_file", "w.bin", lambda d: (d / "w.bin").write_bytes(b"\0" * 8))
    return cases


def _entry_points(path: str):
    """Every public way to open (and run) the model at ``path``."""
    yield "import_model", lambda: import_model(path)
    yield "load_numpy", lambda: gluonport.load(path, backend="numpy")(X)
    yield "load_ort", lambda: gluonport.load(path, backend="onnxruntime")(X)
    yield "load_ort_static", lambda: gluonport.load(
        path, backend="onnxruntime", options=RuntimeOptions(static_shape=True))(X)
    yield "ort_runner", lambda: OrtRunner(path).run([X])
    yield "metadata", lambda: gluonport.onnx.get_model_metadata(path)


@pytest.mark.parametrize("cli_args", [
    ("run", "{}", "--input-shape", "x=1,4"),
    ("inspect", "{}"),
    ("convert", "{}", "-o", "{out}"),
    ("bench", "{}", "--input-shape", "x=1,4", "--iters", "1", "--warmup", "0"),
])
def test_cli_refuses_hostile_external_data(place, tmp_path, cli_args):
    folder, secret = place
    for name, path in _hostile(folder, secret).items():
        argv = [a.format(path, out=str(tmp_path / f"back_{name}")) for a in cli_args]
        res = CliRunner().invoke(cli, argv)
        assert res.exit_code not in (0, 1), (name, res.output)
        assert "1234.5" not in res.output and "Traceback" not in res.output, name
        assert "internal error" not in res.output.lower(), (name, res.output)
        assert "model.onnx" in res.output, (name, res.output)  # the message names the file
        assert not os.path.exists(tmp_path / f"back_{name}-symbol.json"), name


def test_every_entry_point_refuses_every_hostile_location(place, monkeypatch):
    folder, secret = place
    sessions = []
    import onnxruntime

    real = onnxruntime.InferenceSession
    monkeypatch.setattr(onnxruntime, "InferenceSession",
                        lambda *a, **k: sessions.append(a) or real(*a, **k))
    cases = _hostile(folder, secret)
    assert len(cases) >= 20
    for name, path in cases.items():
        for entry, call in _entry_points(path):
            with pytest.raises(FormatError) as err:
                call()
            assert "model.onnx" in str(err.value), (name, entry, str(err.value))
    assert sessions == [], "onnxruntime was handed a hostile model"


def test_refusals_name_the_cause(place):
    folder, secret = place
    cases = _hostile(folder, secret)
    want = {"dotdot": "outside the model's folder", "absolute": "outside the model's folder",
            "file_symlink": "outside", "folder_symlink": "outside", "nul": "outside",
            "missing": "does not exist", "directory": "not a regular file",
            "fifo": "not a regular file", "offset_past_end": "past the end",
            "huge_length": "past the end", "negative_offset": "non-negative decimal",
            "short_length": "need 16 bytes", "short_file": "need 16 bytes"}
    for name, text in want.items():
        with pytest.raises(FormatError, match="W"):
            import_model(cases[name])
        with pytest.raises(FormatError) as err:
            OrtRunner(cases[name])
        assert text in str(err.value), (name, str(err.value))


def test_good_external_data_runs_on_every_path(tmp_path):
    """The positive control: data beside the model (also through a symlink that stays inside
    the folder, and at an offset) loads on every path and gives x + W."""
    want = X + WEIGHT
    for name, location, extra in (("plain", "w.bin", {}), ("link", "l.bin", {}),
                                  ("offset", "w.bin", {"offset": "16", "length": "16"})):
        folder = tmp_path / name
        folder.mkdir()
        blob = (SECRET.tobytes() + WEIGHT.tobytes()) if extra else WEIGHT.tobytes()
        (folder / "w.bin").write_bytes(blob)
        if location == "l.bin":
            os.symlink("w.bin", folder / "l.bin")
        path = _write(folder, location, **extra)
        np.testing.assert_array_equal(gluonport.load(path, backend="numpy")(X), want)
        np.testing.assert_array_equal(gluonport.load(path, backend="onnxruntime")(X), want)
        static = gluonport.load(path, options=RuntimeOptions(static_shape=True))
        np.testing.assert_array_equal(static(np.concatenate([X, X])), np.concatenate([want] * 2))
        _, arg, _ = import_model(path)
        np.testing.assert_array_equal(np.asarray(arg["W"].asnumpy()), WEIGHT)
        res = CliRunner().invoke(cli, ["run", path, "--input-shape", "x=1,4", "--json"])
        assert res.exit_code == 0, res.output


def test_swapped_after_load_is_refused_at_the_next_session(place):
    """A static_shape model builds a session per shape; a data file swapped for a symlink
    leading out after the first one is refused when the next session is built."""
    folder, secret = place
    (folder / "w.bin").write_bytes(WEIGHT.tobytes())
    path = _write(folder, "w.bin")
    model = gluonport.load(path, options=RuntimeOptions(static_shape=True))
    np.testing.assert_array_equal(model(X), X + WEIGHT)
    os.remove(folder / "w.bin")
    os.symlink(secret, folder / "w.bin")
    with pytest.raises(FormatError, match="outside"):
        model(np.concatenate([X, X]))


def test_in_memory_model_with_external_data_is_refused(place):
    """Bytes or a ModelProto have no folder: onnxruntime would look the file up relative to
    the current directory, so any external reference is refused."""
    model = _model("w.bin")
    for source in (model, model.SerializeToString()):
        for call in (lambda s=source: OrtRunner(s), lambda s=source: import_model(s)):
            with pytest.raises(FormatError, match="not given as a path"):
                call()


def test_invalid_utf8_names_are_format_errors(tmp_path):
    graph = h.make_graph([h.make_node("Relu", ["x"], ["y"], name="NODENAME")], "g",
                         [h.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                         [h.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    data = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)]).SerializeToString()
    path = tmp_path / "m.onnx"
    path.write_bytes(data.replace(b"NODENAME", b"\xff\xfe\x80\x81NAME"))
    for call in (lambda: import_model(str(path)), lambda: OrtRunner(str(path)),
                 lambda: gluonport.load(str(path))):
        with pytest.raises(FormatError, match="(?i)utf-8"):  # protobuf < 4 fails to parse it
            call()


@pytest.mark.parametrize("mutate, text", [
    (lambda t: setattr(t, "raw_data", b"\0" * 12), "raw_data holds 12 bytes"),
    (lambda t: setattr(t, "data_type", 99), "unknown data_type 99"),
    (lambda t: setattr(t, "data_type", 0), "unknown data_type 0"),
    (lambda t: t.dims.append(10 ** 12), "need"),
    (lambda t: (t.ClearField("raw_data"), t.float_data.extend([1.0] * 3)), "cannot be decoded"),
    (lambda t: (t.ClearField("raw_data"), t.float_data.append(1.0),
                t.dims.__setitem__(0, 1 << 40)), "values"),
])
def test_corrupt_initializers_are_format_errors(tmp_path, mutate, text):
    w = onnx.numpy_helper.from_array(WEIGHT, "W")
    mutate(w)
    graph = h.make_graph([h.make_node("Add", ["x", "W"], ["y"])], "g",
                         [h.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                         [h.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], [w])
    model = h.make_model(graph, ir_version=8, opset_imports=[h.make_opsetid("", 17)])
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    with pytest.raises(FormatError, match=text):
        initial_consts(model.graph)  # the decoder itself, whatever onnx.checker says first
    for call in (lambda: import_model(str(path)), lambda: import_graph(str(path), check=False),
                 lambda: gluonport.load(str(path), backend="numpy")(X)):
        with pytest.raises(GluonportError):
            call()


def test_symlinked_model_file_uses_the_folder_onnxruntime_reads(place):
    """``a/model.onnx`` links to ``b/model.onnx``: onnxruntime looks for ``w.bin`` in ``a/``,
    so that is the folder checked; ``a/w.bin`` leading out is refused."""
    folder, secret = place
    (folder / "b").mkdir()
    (folder / "a").mkdir()
    (folder / "b" / "w.bin").write_bytes(WEIGHT.tobytes())
    real = _write(folder / "b", "w.bin")
    os.symlink(real, folder / "a" / "model.onnx")
    os.symlink(secret, folder / "a" / "w.bin")
    for _, call in _entry_points(str(folder / "a" / "model.onnx")):
        with pytest.raises(FormatError, match="outside"):
            call()
    np.testing.assert_array_equal(gluonport.load(real)(X), X + WEIGHT)
