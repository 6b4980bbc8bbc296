"""MXNet 1.x user code: an Embedding + 2-layer LSTM (hidden 32) language model on random
tokens, truncated BPTT over sequences of 10 (hidden state detached between steps), gradients
clipped with gluon.utils.clip_global_norm, SGD for 3 steps. Imperative (a gluon.Block), as
MXNet's word-language-model tutorial trains it. Returns losses, global norms, gradients after
clipping and parameters after each step."""
import os

import mxnet as mx
import numpy as np
from mxnet import autograd, gluon
from mxnet.gluon import nn, rnn

STEPS, BATCH, SEQ, VOCAB, EMBED, HIDDEN = 3, 4, 10, 50, 16, 32
CLIP = 0.05
INIT = "lstm_lm_init.params"


class LanguageModel(gluon.Block):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.embedding = nn.Embedding(VOCAB, EMBED)
            self.lstm = rnn.LSTM(HIDDEN, num_layers=2, input_size=EMBED)
            self.decoder = nn.Dense(VOCAB, flatten=False, in_units=HIDDEN)

    def forward(self, inputs, state):
        output, state = self.lstm(self.embedding(inputs), state)
        return self.decoder(output), state

    def begin_state(self, *args, **kwargs):
        return self.lstm.begin_state(*args, **kwargs)


def data():
    rs = np.random.RandomState(13)
    return rs.randint(0, VOCAB, (STEPS * SEQ + 1, BATCH)).astype("float32")


def init(folder):
    mx.random.seed(3)
    model = LanguageModel(prefix="lm_")
    model.initialize(mx.init.Xavier())
    model(mx.nd.zeros((SEQ, BATCH)), model.begin_state(batch_size=BATCH))
    model.save_parameters(os.path.join(folder, INIT))


def run(folder):
    model = LanguageModel(prefix="lm_")
    model.load_parameters(os.path.join(folder, INIT))
    params = model.collect_params()
    trainer = gluon.Trainer(params, "sgd", {"learning_rate": 0.5, "momentum": 0.0, "wd": 0})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    tokens = data()
    state = model.begin_state(batch_size=BATCH, func=mx.nd.zeros)
    out = {}
    for step in range(STEPS):
        x = mx.nd.array(tokens[step * SEQ:(step + 1) * SEQ])
        y = mx.nd.array(tokens[step * SEQ + 1:(step + 1) * SEQ + 1])
        state = [s.detach() for s in state]
        with autograd.record():
            output, state = model(x, state)
            loss = loss_fn(output.reshape((-3, -1)), y.reshape((-1,)))
        loss.backward()
        grads = [p.grad() for p in params.values()]
        norm = gluon.utils.clip_global_norm(grads, CLIP * SEQ * BATCH)
        trainer.step(SEQ * BATCH)
        out[f"step{step}:loss"] = loss.asnumpy()
        out[f"step{step}:norm"] = np.array(norm, dtype="float32")
        for name, p in params.items():
            out[f"step{step}:grad:{name}"] = p.grad().asnumpy()
            out[f"step{step}:{name}"] = p.data().asnumpy()
        for i, s in enumerate(state):
            out[f"step{step}:state{i}"] = s.asnumpy()
    return out
