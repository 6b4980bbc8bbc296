"""README's Python examples run as written (from the repository root)."""

import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
    BLOCKS = re.findall(r"```python\n(.*?)```", f.read(), flags=re.S)


def test_readme_has_examples():
    assert len(BLOCKS) >= 4


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example_runs(code, monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    code = code.replace("/tmp/lenet.onnx", str(tmp_path / "lenet.onnx"))
    exec(compile(code, "README.md", "exec"), {"__name__": "__readme__"})
