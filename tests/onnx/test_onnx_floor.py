"""gluonport must import and run with the lowest onnx pyproject.toml allows (1.17): a
``TensorProto.<MEMBER>`` that only newer onnx releases define breaks ``import`` there (the
narrow-type table once named ``TensorProto.FLOAT4E2M1``, so ``gluonport.onnx.importer`` failed to
import under onnx 1.17). Newer members are looked up by name where the installed onnx has
them (``gluonport/onnx/_import_narrow.py``). ``benchmarks/check_min_versions.sh`` runs the
ONNX and runtime tests in a virtualenv with the floors themselves; this check runs in CI."""

from __future__ import annotations

import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

#: the members of onnx 1.17.0's TensorProto: its DataType and DataLocation values and nested
#: types (from ``dir(onnx.TensorProto)`` under onnx 1.17.0)
ONNX_1_17 = frozenset({
    "UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64", "STRING",
    "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16",
    "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4", "INT4",
    "DEFAULT", "EXTERNAL", "DataType", "DataLocation", "Segment"})


def test_floor_is_still_1_17():
    # the set above is onnx 1.17's: raise the floor and this set together
    with open(os.path.join(ROOT, "pyproject.toml")) as f:
        assert '"onnx>=1.17"' in f.read()


def test_no_tensorproto_member_newer_than_the_onnx_floor():
    used: dict[str, list[str]] = {}
    for top in ("gluonport", "cli"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                if not name.endswith(".py"):
                    continue
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                for member in re.findall(r"\bTensorProto\.([A-Za-z_][A-Za-z0-9_]*)", text):
                    used.setdefault(member, []).append(os.path.relpath(path, ROOT))
    assert "FLOAT" in used  # the scan sees the code
    newer = {m: sorted(set(p)) for m, p in used.items()
             if m not in ONNX_1_17 and not m.startswith("_") and m[:1].isupper()
             and not m.endswith("_FIELD_NUMBER")}
    assert not newer, ("TensorProto members onnx 1.17 lacks (look them up by name with "
                       f"getattr, as _import_narrow.py does): {newer}")
