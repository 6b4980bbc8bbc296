"""Small PyTorch models exported to ONNX, for tests/onnx/test_torch_models.py.

Run from the repository root with a Python that has torch (CPU wheel) and, for the dynamo
exporter, onnxscript; the test suite itself never imports torch:

    pip install torch==2.13.0 onnxscript
    python tests/golden/onnx/torch/make_torch_models.py [MODEL ...]

Every model is built with random weights after ``torch.manual_seed(0)`` (BatchNorm running
statistics randomized too, so BatchNorm is not an identity), put in eval mode and exported

* with the classic TorchScript exporter (``dynamo=False``) at opsets 13 (14 for the
  transformer and the token model: attention and triu export from 14 on) and 17, and
* with the dynamo exporter (``dynamo=True``) at opset 18, and
* for the three transformer encoders (``OPSET23``), with the dynamo exporter at opset 23 too,
  where ``scaled_dot_product_attention`` becomes ONNX's ``Attention`` op (with the key
  padding mask, with a float attention mask given as a graph input, and with no mask),

each with a dynamic batch axis (named ``N``; an input without a batch axis, the attention
mask, has ``batch_axis: null`` in the manifest). Files written beside this script:

* ``<model>_<exporter><opset>.onnx`` (e.g. ``cnn_ts13.onnx``, ``cnn_dynamo18.onnx``);
* ``<model>.input.<name>.npy``: the fixed batch-1 input(s) (shared by all variants);
* ``<model>.output.<i>.npy``: torch's output(s) on that input.

``manifest.json`` lists each model's inputs (dtype, batch-1 shape, batch axis; ``high``: the
bound of integer token ids) and outputs, and each variant's file (or the exporter's error if
it could not export).
Deterministic: the same seeds give the same weights, inputs and outputs; re-running rewrites the
same files (up to the exporter's producer_version string).
"""
from __future__ import annotations

import json
import logging
import os
import sys
import warnings

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
VARIANTS = [("ts", 13, False), ("ts", 17, False), ("dynamo", 18, True)]
# the classic exporter writes scaled_dot_product_attention and triu from opset 14 on only
FIRST_OPSET = {"transformer": 14, "tokenlm": 14, "encoder": 14, "encoder_mask": 14}
# models also exported at opset 23, where torch writes ONNX's Attention op
OPSET23 = ("transformer", "encoder", "encoder_mask")


# ---------------------------------------------------------------------------------------------
# (a) transformer encoder with a key padding mask
class Transformer(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64,
                                           dropout=0.1, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)

    def forward(self, x, pad_mask):
        return self.enc(x, src_key_padding_mask=pad_mask)


# (a2) pre-norm transformer encoder with GELU, no mask; (a3) the same with a float attention
# mask added to the attention scores, given as an input of shape (L, L) (no batch axis).
# ``is_causal=False``: nn.TransformerEncoder otherwise compares the mask with a causal one,
# a data-dependent branch torch.export cannot trace.
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64,
                                           dropout=0.1, batch_first=True, norm_first=True,
                                           activation="gelu")
        self.enc = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)

    def forward(self, x):
        return self.enc(x)


class EncoderMask(Encoder):
    def forward(self, x, attn_mask):
        return self.enc(x, mask=attn_mask, is_causal=False)


def encoder_inputs(rng, n):
    return {"x": rng.standard_normal((n, 6, 32)).astype(np.float32)}


def encoder_mask_inputs(rng, n):
    return {"x": rng.standard_normal((n, 6, 32)).astype(np.float32),
            "attn_mask": rng.standard_normal((6, 6)).astype(np.float32)}


def transformer_inputs(rng, n):
    x = rng.standard_normal((n, 6, 32)).astype(np.float32)
    mask = np.zeros((n, 6), bool)
    for i in range(n):  # each row keeps at least 3 positions (no fully masked softmax row)
        mask[i, 6 - (i % 4):] = True
    return {"x": x, "pad_mask": mask}


# (b) ResNet-style CNN: fused Conv+BN, pre-activation BN blocks (BN kept), residual adds,
# AdaptiveAvgPool, PyTorch's view(x.size(0), -1) flatten
class PreActBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.bn1, self.conv1 = nn.BatchNorm2d(cin), nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn2, self.conv2 = nn.BatchNorm2d(cout), nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.short = (nn.Conv2d(cin, cout, 1, stride, bias=False)
                      if stride != 1 or cin != cout else None)

    def forward(self, x):
        out = F.relu(self.bn1(x))
        short = self.short(out) if self.short is not None else x
        out = self.conv1(out)
        out = self.conv2(F.relu(self.bn2(out)))
        return out + short


class ResNetish(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1, bias=False), nn.BatchNorm2d(8),
                                  nn.ReLU(), nn.MaxPool2d(3, 2, 1))
        self.block1 = PreActBlock(8, 8, 1)
        self.block2 = PreActBlock(8, 16, 2)
        self.bn = nn.BatchNorm2d(16)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.block2(self.block1(self.stem(x)))
        x = self.pool(F.relu(self.bn(x)))
        return self.fc(x.view(x.size(0), -1))


def image_inputs(c, hw):
    def make(rng, n):
        return {"x": rng.standard_normal((n, c, hw, hw)).astype(np.float32)}
    return make


# (c) 2-layer bidirectional LSTM (batch_first) + Linear
class BiLSTM(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(5, 8, num_layers=2, bidirectional=True, batch_first=True)
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.fc(y)


def seq_inputs(shape, batch_axis):
    def make(rng, n):
        s = list(shape)
        s[batch_axis] = n
        return {"x": rng.standard_normal(s).astype(np.float32)}
    return make


# (d) 2-layer GRU, time-major (batch on axis 1), with a given initial state
class GRUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(5, 8, num_layers=2)
        self.fc = nn.Linear(8, 3)

    def forward(self, x, h0):
        y, h = self.gru(x, h0)
        return self.fc(y[-1]), h


def gru_inputs(rng, n):
    return {"x": rng.standard_normal((7, n, 5)).astype(np.float32),
            "h0": rng.standard_normal((2, n, 8)).astype(np.float32)}


# (e) U-Net-like: ConvTranspose2d, Upsample nearest / bilinear (align_corners True, False),
# concat skips
class UNetish(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.enc2 = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU())
        self.enc3 = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(16, 16, 3, padding=1), nn.ReLU())
        self.up3 = nn.ConvTranspose2d(16, 16, 2, stride=2)
        self.dec2 = nn.Conv2d(32, 8, 3, padding=1)
        self.up_nearest = nn.Upsample(scale_factor=2, mode="nearest")
        self.up_bilinear_ac = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)
        self.dec1 = nn.Conv2d(8 + 8 + 8, 4, 3, padding=1)
        self.ct_pad = nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1)

    def forward(self, x):
        e1 = self.enc1(x)                       # 16x16
        e2 = self.enc2(e1)                      # 8x8
        e3 = self.enc3(e2)                      # 4x4
        d2 = F.relu(self.dec2(torch.cat([self.up3(e3), e2], 1)))    # 8x8
        a = self.up_nearest(d2)
        b = self.up_bilinear_ac(d2)
        d1 = F.relu(self.dec1(torch.cat([a, b, e1], 1)))            # 16x16
        small = F.interpolate(d1, size=(6, 6), mode="bilinear", align_corners=False)
        return self.ct_pad(d1), small


# (f) MobileNetV2-like inverted residual: depthwise conv, ReLU6 (Clip), hardswish, SiLU,
# squeeze-excite with hardsigmoid
class MobileBlock(nn.Module):
    def __init__(self):
        super().__init__()
        c, e = 8, 24
        self.expand = nn.Sequential(nn.Conv2d(c, e, 1, bias=False), nn.BatchNorm2d(e),
                                    nn.ReLU6())
        self.dw = nn.Sequential(nn.Conv2d(e, e, 3, 1, 1, groups=e, bias=False),
                                nn.BatchNorm2d(e), nn.Hardswish())
        self.se1, self.se2 = nn.Conv2d(e, 8, 1), nn.Conv2d(8, e, 1)
        self.project = nn.Sequential(nn.Conv2d(e, c, 1, bias=False), nn.BatchNorm2d(c))
        self.dw2 = nn.Conv2d(c, c, 3, 2, 1, groups=c)
        self.act = nn.SiLU()

    def forward(self, x):
        h = self.dw(self.expand(x))
        s = F.hardsigmoid(self.se2(F.relu(self.se1(F.adaptive_avg_pool2d(h, 1)))))
        y = x + self.project(h * s)
        return self.act(self.dw2(y))


# (g) MLP: LayerNorm, GELU exact and tanh, Dropout, Softmax / LogSoftmax
class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.ln1 = nn.Linear(16, 32), nn.LayerNorm(32)
        self.fc2, self.ln2 = nn.Linear(32, 32), nn.LayerNorm(32, eps=1e-6)
        self.drop = nn.Dropout(0.3)
        self.fc3 = nn.Linear(32, 6)

    def forward(self, x):
        h = self.drop(F.gelu(self.ln1(self.fc1(x))))
        h = self.drop(F.gelu(self.ln2(self.fc2(h)), approximate="tanh"))
        z = self.fc3(h)
        return F.softmax(z, dim=-1), F.log_softmax(z, dim=1)


# (h) tensor manipulation: einsum, matmul, transpose, permute, chunk, split, gather,
# index_select, masked_fill, where, cumsum
class TensorOps(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(6, 6))
        self.register_buffer("sel", torch.tensor([3, 0, 2]))

    def forward(self, x):
        a = torch.einsum("bij,jk->bik", x, self.w)            # (N, 4, 6)
        b = a.permute(0, 2, 1)                                # (N, 6, 4)
        c = torch.matmul(x, b)                                # (N, 4, 4)
        c1, c2 = c.chunk(2, dim=-1)                           # (N, 4, 2) x 2
        s1, s2, s3 = x.split([1, 2, 3], dim=-1)
        idx = x.argmax(dim=-1, keepdim=True)                  # (N, 4, 1)
        g = torch.gather(x, 2, idx)                           # (N, 4, 1)
        sel = torch.index_select(x, 2, self.sel)              # (N, 4, 3)
        m = sel.masked_fill(sel < 0, -1.5)
        w = torch.where(s3 > 0.2, s3, c2.sum(-1, keepdim=True) * s3)
        cs = torch.cumsum(x.transpose(1, 2), dim=2)           # (N, 6, 4)
        mixed = torch.cat([c1 * s2, g + s1, m, w], dim=-1)    # (N, 4, 10)
        return mixed, cs


# (i) detection-like head: TopK over anchor scores, Gather of the matching boxes
class DetHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU())
        self.cls = nn.Conv2d(8, 2 * 3, 1)      # 2 anchors x 3 classes
        self.box = nn.Conv2d(8, 2 * 4, 1)

    def forward(self, x):
        f = self.body(x)
        n = x.size(0)
        cls = self.cls(f).permute(0, 2, 3, 1).reshape(n, -1, 3)   # (N, A, 3)
        box = self.box(f).permute(0, 2, 3, 1).reshape(n, -1, 4)   # (N, A, 4)
        prob = cls.softmax(-1)
        score, label = prob[..., 1:].max(-1)                      # (N, A)
        top, idx = score.topk(5, dim=1)
        boxes = torch.gather(box.sigmoid(), 1, idx.unsqueeze(-1).expand(-1, -1, 4))
        labels = torch.gather(label, 1, idx)
        return top, boxes, labels.to(torch.float32)


# (j) token model: Embedding (Gather of int64 ids), positions from arange, a causal mask
# (triu), nn.MultiheadAttention, LayerNorm, log_softmax over the vocabulary
VOCAB = 50


class TokenLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb, self.pos = nn.Embedding(VOCAB, 16), nn.Embedding(8, 16)
        self.attn = nn.MultiheadAttention(16, 2, batch_first=True)
        self.ln = nn.LayerNorm(16)
        self.out = nn.Linear(16, VOCAB)

    def forward(self, ids):
        length = ids.size(1)
        h = self.emb(ids) + self.pos(torch.arange(length))[None]
        causal = torch.triu(torch.ones(length, length, dtype=torch.bool), 1)
        a, _ = self.attn(h, h, h, attn_mask=causal, need_weights=False)
        return self.out(self.ln(h + a)).log_softmax(-1)


def token_inputs(rng, n):
    return {"ids": rng.integers(0, VOCAB, (n, 8)).astype(np.int64)}


def default_init(model):
    """Random BatchNorm statistics and affine parameters, so BN is not an identity."""
    g = torch.Generator().manual_seed(1)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.num_features, generator=g) * 0.5)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)
            m.weight.data.copy_(torch.rand(m.num_features, generator=g) + 0.5)
            m.bias.data.copy_(torch.randn(m.num_features, generator=g) * 0.2)
    return model


# name -> (module class, make_inputs(rng, batch), {input: batch axis}, output names,
#          {output: batch axis})
MODELS = {
    "transformer": (Transformer, transformer_inputs, {"x": 0, "pad_mask": 0}, ["y"], {"y": 0}),
    "encoder": (Encoder, encoder_inputs, {"x": 0}, ["y"], {"y": 0}),
    "encoder_mask": (EncoderMask, encoder_mask_inputs, {"x": 0, "attn_mask": None}, ["y"],
                     {"y": 0}),
    "cnn": (ResNetish, image_inputs(3, 16), {"x": 0}, ["y"], {"y": 0}),
    "bilstm": (BiLSTM, seq_inputs((1, 7, 5), 0), {"x": 0}, ["y"], {"y": 0}),
    "gru": (GRUNet, gru_inputs, {"x": 1, "h0": 1}, ["y", "h"], {"y": 0, "h": 1}),
    "unet": (UNetish, image_inputs(3, 16), {"x": 0}, ["y", "small"], {"y": 0, "small": 0}),
    "mobile": (MobileBlock, image_inputs(8, 12), {"x": 0}, ["y"], {"y": 0}),
    "mlp": (MLP, seq_inputs((1, 5, 16), 0), {"x": 0}, ["prob", "logp"],
            {"prob": 0, "logp": 0}),
    "tensorops": (TensorOps, seq_inputs((1, 4, 6), 0), {"x": 0}, ["mixed", "cumsum"],
                  {"mixed": 0, "cumsum": 0}),
    "dethead": (DetHead, image_inputs(3, 12), {"x": 0}, ["scores", "boxes", "labels"],
                {"scores": 0, "boxes": 0, "labels": 0}),
    "tokenlm": (TokenLM, token_inputs, {"ids": 0}, ["logp"], {"logp": 0}),
}


def build(name):
    cls = MODELS[name][0]
    torch.manual_seed(0)
    return default_init(cls()).eval()


def export(model, name, variant):
    """Export one variant; returns the file name, or raises the exporter's error.

    The example inputs have batch 2: with batch 1, ``torch.export`` specializes the size-1
    batch and bakes it into some reshapes (the dynamo transformer's second layer)."""
    _, make, in_axes, out_names, out_axes = MODELS[name]
    kind, opset, dynamo = variant
    fname = f"{name}_{kind}{opset}.onnx"
    path = os.path.join(HERE, fname)
    inputs = make(np.random.default_rng(2), 2)
    args = tuple(torch.from_numpy(v) for v in inputs.values())
    axes = {k: {a: "N"} for k, a in in_axes.items() if a is not None}
    axes.update({k: {a: "N"} for k, a in out_axes.items()})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kw = dict(input_names=list(inputs), output_names=out_names, opset_version=opset,
                  dynamic_axes=axes, dynamo=dynamo)
        if dynamo:
            kw.update(external_data=False, optimize=True, verbose=False)
        else:
            kw.update(do_constant_folding=True)
        torch.onnx.export(model, args, path, **kw)
    if dynamo:
        _strip_trace_metadata(path)
    return fname


def _strip_trace_metadata(path):
    """The dynamo exporter records each node's Python stack (absolute paths, line numbers of
    this script) in metadata_props: drop it, so the files do not change with edits here."""
    import onnx

    model = onnx.load(path)
    graph = model.graph
    for item in (list(graph.node) + list(graph.input) + list(graph.output)
                 + list(graph.value_info) + list(graph.initializer)):
        del item.metadata_props[:]
        item.doc_string = ""
    onnx.save(model, path)


def generate(name):
    model = build(name)
    make = MODELS[name][1]
    inputs = make(np.random.default_rng(0), 1)
    # autograd on, as for the export: under no_grad nn.TransformerEncoder takes its fused fast
    # path, which gives NaN for a float attention mask (torch 2.13)
    outs = model(*[torch.from_numpy(v) for v in inputs.values()])
    outs = tuple(o.detach() for o in (outs if isinstance(outs, tuple) else (outs,)))
    for k, v in inputs.items():
        np.save(os.path.join(HERE, f"{name}.input.{k}.npy"), v)
    for i, o in enumerate(outs):
        np.save(os.path.join(HERE, f"{name}.output.{i}.npy"), o.numpy())
    entry = {"inputs": {k: {"dtype": str(v.dtype), "shape": list(v.shape),
                            "batch_axis": MODELS[name][2][k],
                            **({"high": VOCAB} if v.dtype.kind == "i" else {})}
                        for k, v in inputs.items()},
             "outputs": MODELS[name][3], "variants": {}}
    for kind, opset, dynamo in VARIANTS + ([("dynamo", 23, True)] if name in OPSET23 else []):
        variant = (kind, max(opset, FIRST_OPSET.get(name, 0)), dynamo)
        key = f"{variant[0]}{variant[1]}"
        try:  # with autograd on: nn.TransformerEncoder's fused fast path (no ONNX) stays off
            entry["variants"][key] = export(model, name, variant)
        except Exception as exc:  # noqa: BLE001  (recorded in the manifest)
            entry["variants"][key] = f"export failed: {type(exc).__name__}: {exc}"[:300]
        print(f"{name} {key}: {entry['variants'][key]}")
    return entry


def main(names):
    logging.getLogger("torch.onnx").setLevel(logging.ERROR)  # "torchvision is not installed"
    manifest_path = os.path.join(HERE, "manifest.json")
    manifest = {}
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f)
    for name in names or list(MODELS):
        manifest[name] = generate(name)
    with open(manifest_path, "w") as f:  # one line per model and field
        f.write("{\n" + ",\n".join(
            f'  "{k}": {{\n' + ",\n".join(f'    "{field}": {json.dumps(v)}'
                                           for field, v in manifest[k].items()) + "\n  }"
            for k in MODELS if k in manifest) + "\n}\n")


if __name__ == "__main__":
    main(sys.argv[1:])
