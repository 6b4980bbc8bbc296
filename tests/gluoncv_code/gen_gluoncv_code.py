"""Oracle side of the optional GluonCV-model-code test: build GluonCV model-zoo nets from their
Python code in MXNet 1.9.1 (random weights, scaled so that scores do not saturate), and save
``<name>.params`` (save_parameters: structural names) and ``<name>.npz`` (input and outputs).

    ~/.cache/gluonport-oracle/bin/python tests/gluoncv_code/gen_gluoncv_code.py [OUT_DIR]

OUT_DIR defaults to tests/golden/large/gluoncv_code (git-ignored). Needs gluoncv installed in
the oracle (the oracle's setup.sh installs 0.10.5).
"""
import os
import sys

import mxnet as mx
import numpy as np
from gluoncv import model_zoo

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "golden", "large",
                                                         "gluoncv_code")
MODELS = {"resnet50_v1b": {}, "mobilenetv3_small": {},
          "yolo3_mobilenet1.0_voc": {"pretrained_base": False},
          "center_net_resnet18_v1b_voc": {"pretrained_base": False}}


def weights(net, seed):
    rng = np.random.RandomState(seed)
    for key, p in sorted(net._collect_params_with_prefix().items()):
        if key.endswith(("running_var", "gamma")):
            v = rng.uniform(0.5, 1.5, p.shape)
        elif key.endswith(("running_mean", "beta", "bias")):
            v = rng.uniform(-0.1, 0.1, p.shape)
        else:
            fan_in = int(np.prod(p.shape[1:])) or 1
            v = rng.normal(0, 0.6 / np.sqrt(fan_in), p.shape)
        p.set_data(mx.nd.array(v.astype("float32")))


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, kwargs in MODELS.items():
        net = model_zoo.get_model(name, pretrained=False, **kwargs)
        net.initialize()
        x = mx.nd.array(np.random.RandomState(0).uniform(-1, 1, (1, 3, 256, 256)))
        net(x)
        weights(net, 1)
        out = net(x)
        out = out if isinstance(out, (list, tuple)) else [out]
        net.save_parameters(os.path.join(OUT, name + ".params"))
        np.savez(os.path.join(OUT, name + ".npz"), x=x.asnumpy(),
                 **{f"out{i}": o.asnumpy() for i, o in enumerate(out)})
        print(name, [o.shape for o in out])


if __name__ == "__main__":
    main()
