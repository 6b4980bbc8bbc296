"""Oracle generator: the symbol file MXNet 1.9.1 exports for a hybridized
ToTensor + Normalize + Dense network (tests/gluon/test_vision_transforms.py compares
gluonport's export of the same network with it). Run from the repository root:

    ~/.cache/gluonport-oracle/bin/python tests/golden/ops/gen_image_export.py

Writes tests/golden/ops/image_pipeline-symbol.json (deterministic: no random values in it).
"""
import os
import shutil
import tempfile

import mxnet as mx
import numpy as np
from mxnet.gluon import nn
from mxnet.gluon.data.vision import transforms

HERE = os.path.dirname(os.path.abspath(__file__))
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def main():
    net = nn.HybridSequential(prefix="pre_")
    with net.name_scope():
        net.add(transforms.ToTensor(), transforms.Normalize(MEAN, STD), nn.Dense(4))
    net.initialize()
    net.hybridize()
    net(mx.nd.array(np.zeros((2, 6, 8, 3)), dtype="uint8"))
    tmp = tempfile.mkdtemp()
    try:
        net.export(os.path.join(tmp, "pre"))
        shutil.copy(os.path.join(tmp, "pre-symbol.json"),
                    os.path.join(HERE, "image_pipeline-symbol.json"))
    finally:
        shutil.rmtree(tmp)
    print("wrote", os.path.join(HERE, "image_pipeline-symbol.json"))


if __name__ == "__main__":
    main()
