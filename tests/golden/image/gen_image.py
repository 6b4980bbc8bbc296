"""Oracle generator for tests/gluon/test_vision_transforms.py: runs the REAL MXNet 1.9.1
(built with OpenCV 3.4.2). Run from the repository root (deterministic; rewrites the files):

    ~/.cache/gluonport-oracle/bin/python tests/golden/image/gen_image.py

Writes into tests/golden/image/:
  script.npz    arrays image_script.run() returned (small ones whole)
  script.json   everything else it returned, and for arrays over 20 kB a digest: shape,
                dtype, sha256 of the bytes and every 1009th value
  ops.npz       MXNet's ``nd.image`` operators with a fixed factor (random_*(x, a, a),
                adjust_lighting, flips) on fixed images, for gluonport.ops.vision.image's kernels
"""
import hashlib
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import image_script  # noqa: E402
import mxnet as mx  # noqa: E402

BIG = 20000  # bytes; larger arrays are stored as a digest


def digest(a):
    a = np.ascontiguousarray(a)
    return {"shape": list(a.shape), "dtype": str(a.dtype),
            "sha256": hashlib.sha256(a.tobytes()).hexdigest(),
            "sample": a.reshape(-1)[::1009].astype(np.float64).tolist()}


OPS = [("random_brightness", 0.55), ("random_brightness", 1.7), ("random_contrast", 0.35),
       ("random_contrast", 1.6), ("random_saturation", 0.3), ("random_saturation", 1.8),
       ("random_hue", 0.15), ("random_hue", 0.8), ("random_hue", 1.65)]


def op_goldens():
    rs = np.random.RandomState(77)
    imgs = {"u8": rs.randint(0, 256, size=(9, 11, 3)).astype(np.uint8),
            "f32": (rs.rand(9, 11, 3) * 255).astype(np.float32),
            "gray": rs.randint(0, 256, size=(6, 7, 1)).astype(np.uint8)}
    out = {"in/" + k: v for k, v in imgs.items()}
    for k, img in imgs.items():
        x = mx.nd.array(img, dtype=img.dtype)
        for op, a in OPS:
            if op == "random_hue" and img.shape[2] == 1:
                continue
            res = getattr(mx.nd.image, op)(x, min_factor=a, max_factor=a)
            out["%s/%s/%g" % (k, op, a)] = res.asnumpy()
        if img.shape[2] == 3:
            for alpha in [(0.1, -0.2, 0.05), (-1.5, 2.0, 3.0)]:
                res = mx.nd.image.adjust_lighting(x, alpha=alpha)
                out["%s/adjust_lighting/%g,%g,%g" % ((k,) + alpha)] = res.asnumpy()
    # MXNet's flips never write the middle row/column of an odd size (uninitialised memory)
    # and its hue op writes nothing for one channel: only even sizes and colour are recorded
    even = {"u8": imgs["u8"][:8, :10], "f32": imgs["f32"][:8, :10], "gray": imgs["gray"][:6, :6]}
    for k, img in even.items():
        x = mx.nd.array(img, dtype=img.dtype)
        out["in/even/" + k] = img
        out["%s/flip_left_right" % k] = mx.nd.image.flip_left_right(x).asnumpy()
        out["%s/flip_top_bottom" % k] = mx.nd.image.flip_top_bottom(x).asnumpy()
    return out


def main():
    out = image_script.run()
    arrays, rest = {}, {}
    for k, v in out.items():
        if isinstance(v, np.ndarray) and v.nbytes > BIG:
            rest[k] = {"digest": digest(v)}
        elif isinstance(v, np.ndarray):
            arrays[k] = v
        else:
            rest[k] = v
    np.savez_compressed(os.path.join(HERE, "script.npz"), **arrays)
    with open(os.path.join(HERE, "script.json"), "w") as f:
        json.dump(rest, f, indent=1, sort_keys=True)
    np.savez_compressed(os.path.join(HERE, "ops.npz"), **op_goldens())
    print(len(arrays), "arrays;", len(rest), "other results")


if __name__ == "__main__":
    main()
