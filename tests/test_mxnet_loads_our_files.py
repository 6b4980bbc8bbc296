"""Optional: files gluonport writes load in the real MXNet 1.9.1 with equal outputs.

Runs tests/golden/mxnet_check/check_in_mxnet.py when the oracle (README: "Golden fixtures and
the oracle") is installed; skips otherwise.
"""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORACLE = os.path.expanduser("~/.cache/gluonport-oracle/bin/python")


@pytest.mark.oracle
@pytest.mark.skipif(not os.path.exists(ORACLE), reason="MXNet 1.9.1 oracle not installed "
                    "(README: 'Golden fixtures and the oracle')")
def test_mxnet_loads_files_written_by_gluonport():
    script = os.path.join(ROOT, "tests", "golden", "mxnet_check", "check_in_mxnet.py")
    out = subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=1800,
                         cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
