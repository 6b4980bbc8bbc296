"""Write ``legacy_var_attrs_golden.json``: MXNet 1.9.1's re-saved text of small 0.9.3 graphs,
whose load runs the 0.9.4 upgrader (each op's FSetInputVarAttrOnCompose, by input position).
Run with the oracle interpreter from the repository root::

    /root/.cache/gluonport-oracle/bin/python tests/golden/compose/gen_legacy_var_attrs.py

``cases()`` is also imported by the test (no MXNet needed there) to build the same inputs.

Which ops have the rule: MXNet 1.9.1's FSetInputVarAttrOnCompose registrations (BatchNorm,
BatchNorm_v1, _contrib_SyncBatchNorm, _contrib_BatchNormWithReLU, LeakyReLU, UpSampling,
IdentityAttachKLSparseReg), confirmed by loading, in MXNet 1.9.1, a 0.9.3 graph of each
registered forward op that needs no attributes (682 of them) with six variable inputs: only
those ops (and the _npx_ aliases) set an ``__init__``.
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

CASES = {
    # name: (op, attrs, number of variable inputs, attrs of variable 1 or None)
    "batchnorm": ("BatchNorm", {}, 5, None),
    "npx_batch_norm_alias": ("_npx_batch_norm", {}, 5, None),
    "batchnorm_v1_undefined": ("BatchNorm_v1", {}, 5, None),
    "kl_sparse_reg_undefined": ("IdentityAttachKLSparseReg", {}, 2, None),
    "prelu": ("LeakyReLU", {"act_type": "prelu"}, 2, None),
    "prelu_keeps_init": ("LeakyReLU", {"act_type": "prelu"}, 2, {"__init__": "[\"one\", {}]"}),
    "upsampling_bilinear": ("UpSampling", {"scale": "2", "sample_type": "bilinear",
                                           "num_filter": "1", "num_args": "2"}, 2, None),
    "upsampling_nearest": ("UpSampling", {"scale": "2", "sample_type": "nearest",
                                          "num_args": "2"}, 2, None),
    "convolution_none": ("Convolution", {"kernel": "(1,1)", "num_filter": "1"}, 3, None),
}


def cases():
    """The 0.9.3 JSON text of each case."""
    out = {}
    for name, (op, attrs, n, var1) in CASES.items():
        nodes = [{"op": "null", "name": f"{name}_v{i}", "inputs": []} for i in range(n)]
        if var1 is not None:
            nodes[1]["attrs"] = var1
        nodes.append({"op": op, "name": name, "attrs": attrs,
                      "inputs": [[i, 0, 0] for i in range(n)]})
        out[name] = json.dumps({"nodes": nodes, "arg_nodes": list(range(n)),
                                "heads": [[n, 0, 0]],
                                "attrs": {"mxnet_version": ["int", 903]}})
    return out


if __name__ == "__main__":
    import mxnet as mx

    golden = {k: mx.sym.load_json(v).tojson() for k, v in cases().items()}
    with open(os.path.join(HERE, "legacy_var_attrs_golden.json"), "w") as f:
        json.dump(golden, f, indent=1, sort_keys=True)
        f.write("\n")
