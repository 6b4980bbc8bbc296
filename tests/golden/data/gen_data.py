"""Run data_script.py in MXNet 1.9.1 (the oracle) and record its results:

    ~/.cache/gluonport-oracle/bin/python tests/golden/data/gen_data.py

Deterministic; rewrites, in tests/golden/data/:
  records.rec / records.idx  a small indexed RecordIO file written by MXNet's
                    MXIndexedRecordIO (records with MXNet's magic number inside, which its writer
                    splits into multi-part records, an empty record, unaligned lengths, keys out
                    of order)
  data_golden.npz   every array data_script.run returned
  data_golden.json  everything else (batch structures, dtypes, shapes, contexts, errors)
"""
import json
import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import data_script  # noqa: E402
import mxnet as mx  # noqa: E402

MAGIC = struct.pack("<I", 0xCED7230A)  # dmlc-core RecordIOWriter::kMagic
RECORDS = [
    (5, b"hello"),
    (2, b""),
    (9, MAGIC),
    (0, b"abcd" + MAGIC + b"efgh" + MAGIC + MAGIC + b"xyz"),
    (7, b"ab" + MAGIC + b"cd"),  # unaligned: MXNet does not split
    (3, bytes(range(256)) * 3 + b"\x01"),
    (4, mx.recordio.pack(mx.recordio.IRHeader(0, 3.0, 11, 0), b"payload")),
]


def write_records():
    prefix = os.path.join(HERE, "records")
    writer = mx.recordio.MXIndexedRecordIO(prefix + ".idx", prefix + ".rec", "w")
    for key, buf in RECORDS:
        writer.write_idx(key, buf)
    writer.close()


def main():
    write_records()
    out = data_script.run(os.path.dirname(HERE))
    arrays = {k: v for k, v in out.items() if isinstance(v, np.ndarray)}
    rest = {k: v for k, v in out.items() if k not in arrays}
    np.savez_compressed(os.path.join(HERE, "data_golden.npz"), **arrays)
    with open(os.path.join(HERE, "data_golden.json"), "w") as f:
        json.dump(rest, f, indent=1, sort_keys=True)
    print(len(arrays), "arrays;", json.dumps(rest["errors"], indent=1))


if __name__ == "__main__":
    main()
