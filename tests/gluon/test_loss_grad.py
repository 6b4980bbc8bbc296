"""Every ``gluon.loss`` trains: tests/golden/loss/loss_grad_script.py (written for MXNet) run
here with only its import changed; loss values and the gradients of the prediction and the
label equal MXNet 1.9.1's (``loss_grad_golden.npz``, gen_loss_grad.py), imperatively and
hybridized. Tolerance rtol 1e-4 / atol 1e-5: float32, reductions summed in another order."""

from __future__ import annotations

import os

import numpy as np
import pytest

from tests._ported import load_ported

HERE = os.path.join(os.path.dirname(__file__), "..", "golden", "loss")

with np.load(os.path.join(HERE, "loss_grad_golden.npz")) as _z:
    GOLDEN = {k: _z[k] for k in _z.files}


@pytest.fixture(scope="module")
def ported() -> dict:
    return load_ported(os.path.join(HERE, "loss_grad_script.py")).run()


@pytest.mark.parametrize("key", sorted(GOLDEN))
def test_matches_mxnet(ported, key):
    np.testing.assert_allclose(ported[key], GOLDEN[key], rtol=1e-4, atol=1e-5, err_msg=key)
