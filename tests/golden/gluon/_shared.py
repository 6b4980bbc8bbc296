"""Code shared by the MXNet oracle generator (``gen_gluon.py``, Python 3.8 + MXNet 1.9.1) and
the gluonport tests: deterministic weights and inputs (numpy ``RandomState``, whose stream is
stable across numpy versions) and the small ``gluon.nn`` test networks, written against an
``nn`` module argument so the same code builds an MXNet net and a gluonport net.

Keep this file Python 3.8 compatible and free of MXNet/gluonport imports.
"""

import numpy as np

INPUT_SEED = 7
WEIGHT_SEED = 11


def make_input(shape, seed=INPUT_SEED, low=-1.0, high=1.0):
    """A float32 input array of ``shape``."""
    rng = np.random.RandomState(seed)
    return rng.uniform(low, high, size=shape).astype(np.float32)


def make_indices(shape, high, seed=INPUT_SEED):
    """Integer token ids in ``[0, high)``, as float32 (what Gluon's Embedding takes)."""
    rng = np.random.RandomState(seed)
    return rng.randint(0, high, size=shape).astype(np.float32)


def _value(rng, name, shape):
    if name.endswith("running_var"):
        return rng.uniform(0.5, 1.5, size=shape)
    if name.endswith("running_mean"):
        return 0.1 * rng.standard_normal(shape)
    if name.endswith("gamma"):
        return 1.0 + 0.1 * rng.standard_normal(shape)
    if name.endswith(("beta", "bias")):
        return 0.1 * rng.standard_normal(shape)
    if name.endswith("alpha"):
        return rng.uniform(0.1, 0.3, size=shape)
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
    return rng.standard_normal(shape) * np.sqrt(2.0 / max(fan_in, 1))


def make_weights(names_shapes, seed=WEIGHT_SEED):
    """Deterministic non-trivial values for ``[(name, shape), ...]`` in that order:
    He-scaled normal weights, gamma near 1, small beta/bias/running_mean, running_var in
    [0.5, 1.5]. Returns ``{name: float32 array}``."""
    rng = np.random.RandomState(seed)
    return {n: _value(rng, n, tuple(s)).astype(np.float32) for n, s in names_shapes}


# --- small nets covering every gluon.nn layer type -----------------------------------------

def nn_2d(nn):
    """2-D layers; input (2, 3, 8, 8)."""
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(4, 3, padding=1), nn.BatchNorm(), nn.PReLU(),
                nn.Conv2D(4, (3, 3), padding=(1, 1), groups=2, use_bias=False,
                          activation="relu"),
                nn.Conv2DTranspose(3, 3, strides=2, padding=1, output_padding=1),
                nn.LeakyReLU(0.1), nn.MaxPool2D(2),
                nn.AvgPool2D(3, 1, 1, count_include_pad=False), nn.InstanceNorm(),
                nn.ReflectionPad2D(1), nn.ELU(), nn.MaxPool2D(3, 2, ceil_mode=True),
                nn.GroupNorm(num_groups=3), nn.SELU(), nn.Activation("softrelu"),
                nn.GlobalAvgPool2D(), nn.Flatten(), nn.Dense(6), nn.LayerNorm(), nn.GELU(),
                nn.Swish(), nn.Dropout(0.3), nn.Dense(4, activation="tanh"),
                nn.HybridLambda(lambda F, x: F.relu(x)))
    return net


def nn_1d(nn):
    """1-D layers; input (2, 3, 10)."""
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv1D(4, 3), nn.Activation("sigmoid"), nn.Conv1DTranspose(2, 3, strides=2),
                nn.MaxPool1D(2), nn.AvgPool1D(2), nn.GlobalMaxPool1D(), nn.Flatten(),
                nn.Dense(3, use_bias=False, in_units=2))
    return net


def nn_3d(nn):
    """3-D layers; input (1, 2, 4, 6, 6)."""
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv3D(3, 3, padding=1), nn.BatchNorm(axis=1),
                nn.Conv3DTranspose(2, 2, strides=2), nn.MaxPool3D(2), nn.AvgPool3D(2),
                nn.GlobalMaxPool3D(), nn.Dense(2), nn.Activation("tanh"))
    return net


def nn_embed(nn):
    """Embedding and friends; input (2, 5) token ids below 10."""
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Embedding(10, 4), nn.LayerNorm(axis=-1, epsilon=1e-3),
                nn.Dense(3, flatten=False), nn.HybridLambda("tanh"), nn.Flatten(),
                nn.Dense(2, in_units=15))
    return net


NN_NETS = {
    "nn_2d": (nn_2d, (2, 3, 8, 8)),
    "nn_1d": (nn_1d, (2, 3, 10)),
    "nn_3d": (nn_3d, (1, 2, 4, 6, 6)),
    "nn_embed": (nn_embed, (2, 5)),
}


# --- gluon.contrib.nn layers -----------------------------------------------------------------

def contrib_2d(nn, cnn):
    """SyncBatchNorm, PixelShuffle2D, HybridConcurrent + Identity; input (1, 4, 3, 3)."""
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(8, 3, padding=1), cnn.SyncBatchNorm(num_devices=1),
                cnn.PixelShuffle2D((2, 2)))
        branches = cnn.HybridConcurrent(axis=1)
        with branches.name_scope():
            branches.add(cnn.Identity(), nn.Conv2D(3, 1))
        net.add(branches)
    return net


def contrib_1d(nn, cnn):
    """PixelShuffle1D; input (1, 6, 4)."""
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv1D(6, 1), cnn.PixelShuffle1D(3), nn.Conv1D(2, 3))
    return net


def contrib_3d(nn, cnn):
    """PixelShuffle3D; input (1, 8, 2, 2, 2)."""
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(cnn.PixelShuffle3D(2), nn.Conv3D(2, 1))
    return net


CONTRIB_NETS = {
    "contrib_2d": (contrib_2d, (1, 4, 3, 3)),
    "contrib_1d": (contrib_1d, (1, 6, 4)),
    "contrib_3d": (contrib_3d, (1, 8, 2, 2, 2)),
}


def nn_input(name):
    """The input array of nn (or contrib) test net ``name``."""
    shape = dict(NN_NETS, **CONTRIB_NETS)[name][1]
    if name == "nn_embed":
        return make_indices(shape, 10)
    return make_input(shape)


# --- model zoo --------------------------------------------------------------------------------

# Smallest square input each architecture accepts (found with MXNet; see gen_gluon.py).
ZOO_INPUT = {}  # filled from the manifest by the tests; the generator probes it

# Nets whose outputs (random deterministic weights) and export bytes are recorded.
ZOO_OUTPUT_NETS = ["resnet18_v1", "resnet18_v2", "resnet50_v1", "mobilenet0.25",
                   "mobilenetv2_0.25", "squeezenet1.1", "densenet121", "vgg11_bn", "alexnet",
                   "inceptionv3"]
# Nets whose MXNet-exported symbol JSON is committed (gzip) for SymbolBlock.imports tests.
ZOO_JSON_NETS = ["resnet18_v1", "mobilenet0.25", "mobilenetv2_0.25", "squeezenet1.1"]
