"""gluon.contrib.estimator against MXNet 1.9.1 (issue 14).

tests/golden/estimator/estimator_script.py is MXNet 1.x user code: a Dense net from saved
initial parameters trained 2 epochs by Estimator.fit on a DataLoader of an ArrayDataset, with
validation each epoch, a handler recording metrics per batch and parameters per epoch, a
CheckpointHandler (save_best on validation accuracy) and an EarlyStoppingHandler; then
``fit(batches=3)`` and ``evaluate``. gen_estimator.py ran it in MXNet 1.9.1; here the same text
runs with ``import gluonport as mx``.

Parameters: |ours - mxnet| <= 1e-4 * |mxnet| + 1e-5 * max(1, max |mxnet|) (float32 sums in
another order, carried through 13 SGD steps with momentum; measured well below, see the
report). Metric values to 1e-5 relative (float32 losses averaged), log lines (times and paths
masked), metric names and checkpoint file names exactly.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import gluonport as mx
from gluonport.errors import GluonportError
from gluonport.gluon.contrib.estimator import (
    EarlyStoppingHandler,
    Estimator,
    LoggingHandler,
    StoppingHandler,
)
from tests._ported import load_ported

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "golden",
                    "estimator")


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict:
    script = load_ported(os.path.join(HERE, "estimator_script.py"))
    return script.run(HERE, str(tmp_path_factory.mktemp("estimator")))


@pytest.fixture(scope="module")
def golden() -> dict:
    with np.load(os.path.join(HERE, "estimator_golden.npz")) as z:
        return {k: z[k] for k in z.files}


def test_recorded_names_match(results, golden):
    assert sorted(results) == sorted(golden)


def test_values_match_mxnet(results, golden):
    for key, want in golden.items():
        got = np.asarray(results[key])
        if want.dtype.kind in "US":
            assert got.tolist() == want.tolist(), key
        elif want.ndim == 0:
            np.testing.assert_allclose(float(got), float(want), rtol=1e-5, err_msg=key)
        else:
            assert got.shape == want.shape and got.dtype == want.dtype, key
            scale = max(1.0, float(np.abs(want).max()))
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * scale, err_msg=key)


def test_training_moved_the_parameters(golden):
    assert not np.allclose(golden["fit:e0:mlp_dense0_weight"], golden["fit:e1:mlp_dense0_weight"])


def _setup():
    net = mx.gluon.nn.Dense(1, in_units=3)
    net.initialize(mx.init.Constant(0.1))
    x = np.arange(24, dtype="float32").reshape(8, 3) / 24
    data = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(x, np.zeros(8, "float32")),
                                    batch_size=4)
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    return net, data, trainer


def test_errors_are_clear():
    net, data, trainer = _setup()
    loss = mx.gluon.loss.L2Loss()
    with pytest.raises(GluonportError, match="loss must be a Loss"):
        Estimator(net, "l2")
    with pytest.raises(GluonportError, match="Trainer must be"):
        Estimator(net, loss, trainer="sgd", context=mx.cpu())
    with pytest.raises(GluonportError, match="context must be"):
        Estimator(net, loss, trainer=trainer, context="cpu")
    est = Estimator(net, loss, trainer=trainer, context=mx.cpu())
    assert [m.name for m in est.train_metrics] == ["training l2loss"]
    with pytest.raises(GluonportError, match="DataLoader"):
        est.fit([1, 2], epochs=1)
    with pytest.raises(GluonportError, match="one and only one"):
        est.fit(data, epochs=1, batches=2)
    with pytest.raises(GluonportError, match="EventHandler"):
        est.fit(data, epochs=1, event_handlers=[object()])
    with pytest.raises(GluonportError, match="outside of the known"):
        est.fit(data, epochs=1, event_handlers=[LoggingHandler(metrics=[mx.metric.Accuracy()])])
    with pytest.raises(GluonportError, match="log_interval"):
        LoggingHandler(log_interval="sometimes")
    with pytest.raises(GluonportError, match="monitor"):
        EarlyStoppingHandler(monitor="loss")


def test_early_stopping_stops():
    """patience 0 on a training loss that cannot improve (lr 0): stops after epoch 2 of 10
    (the first epoch sets the best value)."""
    net, data, _ = _setup()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.0})
    est = Estimator(net, mx.gluon.loss.L2Loss(), trainer=trainer, context=mx.cpu())
    stop = StoppingHandler()
    early = EarlyStoppingHandler(est.train_metrics[0], patience=0, mode="min")
    est.fit(data, epochs=10, event_handlers=[early, stop])
    assert early.stop_training and stop.current_epoch == 2


def test_checkpoint_resume_and_symbol(tmp_path):
    """CheckpointHandler writes the hybridized net's symbol and a checkpoint per epoch; a new
    fit with resume_from_checkpoint loads the latest and trains the remaining epochs only."""
    from gluonport.gluon.contrib.estimator import CheckpointHandler

    net, data, trainer = _setup()
    net.hybridize()
    est = Estimator(net, mx.gluon.loss.L2Loss(), trainer=trainer, context=mx.cpu())
    est.fit(data, epochs=2, event_handlers=[CheckpointHandler(str(tmp_path), "m")])
    files = sorted(os.listdir(tmp_path))
    assert files == ["m-epoch0batch2.params", "m-epoch0batch2.states", "m-epoch1batch4.params",
                     "m-epoch1batch4.states", "m-symbol.json"]
    trained = net.weight.data().asnumpy().copy()

    net2, _, _ = _setup()
    trainer2 = mx.gluon.Trainer(net2.collect_params(), "sgd", {"learning_rate": 0.1})
    est2 = Estimator(net2, mx.gluon.loss.L2Loss(), trainer=trainer2, context=mx.cpu())
    stop = StoppingHandler()
    est2.fit(data, epochs=3, event_handlers=[
        CheckpointHandler(str(tmp_path), "m", resume_from_checkpoint=True), stop])
    assert est2.max_epoch == 1 and stop.current_epoch == 1  # 3 - (1 + 1) epochs left
    assert not np.allclose(net2.weight.data().asnumpy(), trained)  # loaded, then trained on
    assert "m-epoch2batch6.params" in os.listdir(tmp_path)  # batches counted on, as MXNet
