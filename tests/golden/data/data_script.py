"""Evaluation-style data code written for MXNet 1.9.1's ``gluon.data`` and ``gluon.utils``.

gen_data.py runs it in MXNet 1.9.1 and records what ``run`` returns; tests/gluon/test_data.py
runs the same text with only the import changed to ``import gluonport as mx`` and compares.
Every batch is recorded as its structure (list/tuple nesting, NDArray dtype, shape, context) plus
its values; errors as (type, message); shuffled orders only as sorted values.
"""
import warnings

import mxnet as mx
import numpy as np

gluon = mx.gluon
nd = mx.nd


def describe(obj, key, out):
    """The structure of ``obj`` as JSON, its arrays stored in ``out`` under ``key/...``."""
    if isinstance(obj, nd.NDArray):
        out[key] = obj.asnumpy()
        return ["NDArray", np.dtype(obj.dtype).name, list(obj.shape), str(obj.context)]
    if isinstance(obj, np.ndarray):
        out[key] = obj
        return ["numpy", obj.dtype.name, list(obj.shape)]
    if isinstance(obj, (list, tuple)):
        return [type(obj).__name__, [describe(x, "%s/%d" % (key, i), out)
                                     for i, x in enumerate(obj)]]
    if isinstance(obj, bytes):
        return ["bytes", obj.hex()]
    if isinstance(obj, np.generic):
        return ["scalar", obj.dtype.name, obj.item()]
    return [type(obj).__name__, obj]


def record_batches(name, loader, out, epochs=1):
    """Every batch of ``epochs`` passes over ``loader``."""
    out[name + "/len"] = len(loader)
    for epoch in range(epochs):
        batches = [describe(b, "%s/e%d/b%d" % (name, epoch, i), out)
                   for i, b in enumerate(loader)]
        out["%s/e%d" % (name, epoch)] = batches


def error(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - whatever MXNet raises is the record
        return [type(exc).__name__, str(exc)]
    return None


def arrays():
    rng = np.random.RandomState(7)
    x = rng.uniform(-1, 1, (10, 4)).astype(np.float32)
    y = np.arange(10) % 3
    return x, y


def loaders(out):
    x, y = arrays()
    for mode in ["keep", "discard", "rollover"]:
        loader = gluon.data.DataLoader(gluon.data.ArrayDataset(x, y), batch_size=4,
                                       last_batch=mode)
        record_batches("array_" + mode, loader, out, epochs=2)
    nd_set = gluon.data.ArrayDataset(nd.array(x), nd.array(y), [float(v) for v in y])
    record_batches("array_nd", gluon.data.DataLoader(nd_set, batch_size=3), out)
    out["array_nd/item"] = describe(nd_set[2], "array_nd/item", out)
    record_batches("numpy_float64", gluon.data.DataLoader(x.astype(np.float64), 4), out)
    record_batches("nd_direct", gluon.data.DataLoader(nd.array(x), batch_size=4), out)
    record_batches("nd_1d_direct", gluon.data.DataLoader(nd.array(y), batch_size=4), out)
    record_batches("ints", gluon.data.DataLoader(gluon.data.SimpleDataset(list(range(7))), 3),
                   out)
    record_batches("floats", gluon.data.DataLoader([0.5, 1.5, 2.5, 3.5, 4.5], 2), out)
    record_batches("bools", gluon.data.DataLoader([True, False, True], 2), out)
    nested = [[i, i + 1, i + 2] for i in range(5)]
    record_batches("nested_lists", gluon.data.DataLoader(nested, batch_size=2), out)
    tuples = [(x[i], (int(y[i]), float(i) / 2), nd.array(x[i] * 2)) for i in range(5)]
    record_batches("nested_tuples", gluon.data.DataLoader(tuples, batch_size=2), out)
    pairs = gluon.data.SimpleDataset([(i, [i, -i]) for i in range(4)])
    record_batches("tuple_of_list", gluon.data.DataLoader(pairs, batch_size=3), out)


def transforms(out):
    x, y = arrays()
    base = gluon.data.ArrayDataset(x, y)
    lazy = base.transform(lambda d, lab: (d * 2, lab + 1))
    eager = base.transform(lambda d, lab: (d * 2, lab + 1), lazy=False)
    first = base.transform_first(lambda d: d.sum())
    single = gluon.data.SimpleDataset(list(range(6))).transform(lambda v: v * v)
    single_first = gluon.data.SimpleDataset(list(range(6))).transform_first(lambda v: -v)
    for name, ds in [("lazy", lazy), ("eager", eager), ("first", first), ("single", single),
                     ("single_first", single_first)]:
        out["transform_%s/type" % name] = type(ds).__name__
        record_batches("transform_" + name, gluon.data.DataLoader(ds, batch_size=4), out)
    to_nd = base.transform_first(lambda d: nd.array(d).reshape((2, 2)))
    record_batches("transform_to_nd", gluon.data.DataLoader(to_nd, batch_size=3), out)


def samplers(out):
    for mode in ["keep", "discard", "rollover"]:
        bs = gluon.data.BatchSampler(gluon.data.SequentialSampler(10), 3, mode)
        lens, epochs = [], []
        for _ in range(3):
            lens.append(len(bs))
            epochs.append([list(map(int, b)) for b in bs])
        out["batch_sampler_" + mode] = {"lens": lens, "epochs": epochs}
    out["sequential_start"] = list(gluon.data.SequentialSampler(4, start=3))
    data = gluon.data.SimpleDataset(list(range(10, 20)))
    sampler = gluon.data.FilterSampler(lambda v: v % 3 == 0, data)
    out["filter_sampler"] = [list(sampler), len(sampler)]
    rand = gluon.data.RandomSampler(9)
    out["random_sampler_sorted"] = [sorted(int(i) for i in rand), len(rand)]
    custom = gluon.data.BatchSampler(gluon.data.SequentialSampler(7), 2, "discard")
    record_batches("with_batch_sampler", gluon.data.DataLoader(data, batch_sampler=custom), out)
    picked = gluon.data.SequentialSampler(4, start=5)
    record_batches("with_sampler", gluon.data.DataLoader(data, 3, sampler=picked), out)
    shuffled = gluon.data.DataLoader(data, batch_size=4, shuffle=True, last_batch="keep")
    out["shuffle_sorted"] = sorted(int(v) for b in shuffled for v in b.asnumpy())
    out["shuffle_len"] = len(shuffled)


def dataset_ops(out):
    data = gluon.data.SimpleDataset(list(range(10)))
    for n in (3, 4):
        out["shard_%d" % n] = [list(data.shard(n, i)) for i in range(n)]
    out["take"] = [list(data.take(3)), len(data.take(None)), len(data.take(100)),
                   list(data.take(0))]
    filtered = data.filter(lambda v: v % 4 != 1)
    out["filter"] = [list(filtered), len(filtered), filtered[-1]]
    sampled = data.sample(gluon.data.SequentialSampler(3, start=6))
    out["sample"] = [list(sampled), len(sampled)]
    chained = data.transform(lambda v: v * 10).shard(3, 1).filter(lambda v: v > 30).take(2)
    out["chained"] = list(chained)
    x, y = arrays()
    out["array_dataset_item"] = describe(gluon.data.ArrayDataset(x, y)[3], "ad_item", out)
    out["array_dataset_single"] = describe(gluon.data.ArrayDataset(x)[3], "ad_single", out)
    out["array_dataset_len"] = len(gluon.data.ArrayDataset(x, list(y)))


def utils(out):
    u = gluon.utils
    data = nd.array(np.arange(60, dtype=np.float32).reshape(10, 6))
    cases = [("even", 5, 0, True), ("uneven", 3, 0, False), ("axis1", 3, 1, True),
             ("axis1_uneven", 4, 1, False), ("more_slices", 12, 0, False), ("one", 1, 0, True)]
    for name, n, axis, even in cases:
        out["split_" + name] = describe(u.split_data(data, n, axis, even), "split_" + name, out)
    ctxs = [mx.cpu(0), mx.cpu(1), mx.cpu(2)]
    out["load_nd"] = describe(u.split_and_load(data[:9], ctxs), "load_nd", out)
    raw = np.arange(12, dtype=np.float64).reshape(4, 3)
    out["load_numpy"] = describe(u.split_and_load(raw, ctxs[:2]), "load_numpy", out)
    out["load_single"] = describe(u.split_and_load(raw[:3], [mx.cpu(1)]), "load_single", out)
    out["load_uneven"] = describe(u.split_and_load(data, ctxs, 0, False), "load_uneven", out)
    rng = np.random.RandomState(3)
    for name, max_norm in [("clip", 1.0), ("noclip", 100.0)]:
        arrs = [nd.array(rng.normal(size=s)) for s in [(3, 4), (5,), (2, 2, 2)]]
        norm = u.clip_global_norm(arrs, max_norm)
        out["clip_" + name] = [type(norm).__name__, float(norm),
                               describe(arrs, "clip_" + name, out)]
    arrs = [nd.array(rng.normal(size=(4,)))]
    norm = u.clip_global_norm(arrs, 0.5, check_isfinite=False)
    out["clip_nocheck"] = [describe(norm, "clip_nocheck_norm", out),
                           describe(arrs, "clip_nocheck", out)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        norm = u.clip_global_norm([nd.array([1.0, np.nan])], 1.0)
    out["clip_nan"] = [repr(float(norm)),
                       [str(w.message) for w in caught if "nan or inf" in str(w.message)]]


def errors(out):
    x, y = arrays()
    ds = gluon.data.ArrayDataset(x, y)
    u = gluon.utils
    data = nd.zeros((10, 6))
    out["errors"] = {
        "split_uneven": error(lambda: u.split_data(data, 3)),
        "split_uneven_axis1": error(lambda: u.split_data(data, 4, batch_axis=1)),
        "load_uneven": error(lambda: u.split_and_load(data, [mx.cpu(0), mx.cpu(1), mx.cpu(2)])),
        "no_batch_size": error(lambda: gluon.data.DataLoader(ds)),
        "shuffle_and_sampler": error(lambda: gluon.data.DataLoader(
            ds, 2, shuffle=True, sampler=gluon.data.SequentialSampler(10))),
        "batch_sampler_and_size": error(lambda: gluon.data.DataLoader(
            ds, 2, batch_sampler=gluon.data.BatchSampler(gluon.data.SequentialSampler(10), 2))),
        "bad_last_batch": error(lambda: list(gluon.data.BatchSampler(
            gluon.data.SequentialSampler(10), 3, "drop"))),
        "bad_last_batch_loader": error(lambda: list(gluon.data.DataLoader(
            ds, 3, last_batch="drop"))),
        "array_lengths": error(lambda: gluon.data.ArrayDataset(x, y[:5])),
        "array_empty": error(lambda: gluon.data.ArrayDataset()),
        "sample_not_sampler": error(lambda: ds.sample([1, 2])),
        "shard_index": error(lambda: ds.shard(2, 2)),
        "strings": error(lambda: list(gluon.data.DataLoader(["a", "b"], 2))),
        "ragged": error(lambda: list(gluon.data.DataLoader([np.zeros(3), np.zeros(4)], 2))),
        "timeout": error(lambda: gluon.data.DataLoader(ds, 2, timeout=0)),
        "clip_empty": error(lambda: u.clip_global_norm([], 1.0)),
    }


def inference(out):
    """The evaluation loop the port is for: a Dense net over a DataLoader's batches."""
    x, y = arrays()
    net = gluon.nn.Dense(3, in_units=4)
    net.initialize()
    net.weight.set_data(nd.array(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)))
    net.bias.set_data(nd.array([0.1, -0.2, 0.3]))
    loader = gluon.data.DataLoader(gluon.data.ArrayDataset(x, y), batch_size=4,
                                   last_batch="keep", num_workers=2, thread_pool=True)
    preds, labels = [], []
    for data, label in loader:
        for part in gluon.utils.split_and_load(data, [mx.cpu(0)]):
            preds.append(net(part).argmax(axis=1).asnumpy())
        labels.append(label.asnumpy())
    out["inference/pred"] = np.concatenate(preds)
    out["inference/label"] = np.concatenate(labels)
    pinned = gluon.data.DataLoader(gluon.data.ArrayDataset(x, y), 4, pin_memory=True)
    out["pinned"] = describe(next(iter(pinned)), "pinned", out)


def records(golden_dir, out):
    rec = gluon.data.RecordFileDataset(golden_dir + "/data/records.rec")
    out["records"] = [len(rec), [describe(rec[i], "rec%d" % i, out) for i in range(len(rec))],
                      describe(rec[-1], "rec_last", out)]


def run(golden_dir):
    out = {}
    loaders(out)
    transforms(out)
    samplers(out)
    dataset_ops(out)
    utils(out)
    errors(out)
    inference(out)
    records(golden_dir, out)
    return out
