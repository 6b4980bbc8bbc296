"""``gluon.data``: datasets, samplers and the DataLoader of MXNet 1.9.1's Gluon.

``import gluonport as mx`` then ``mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(X, y),
batch_size=32)`` yields the batches MXNet yields; batches are made in the calling process
(``num_workers`` is accepted and starts no workers).
"""

from . import vision
from .dataloader import DataLoader
from .dataset import ArrayDataset, Dataset, RecordFileDataset, SimpleDataset
from .sampler import BatchSampler, FilterSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["Dataset", "SimpleDataset", "ArrayDataset", "RecordFileDataset", "Sampler",
           "SequentialSampler", "RandomSampler", "FilterSampler", "BatchSampler", "DataLoader",
           "vision"]
