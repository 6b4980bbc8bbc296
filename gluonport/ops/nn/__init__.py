"""Neural-network operators, one file per op group, each op defined whole (parameters,
compute, shape and type rules, ONNX lowering):

* :mod:`.dense`: FullyConnected, Activation, LeakyReLU, Dropout, the softmax family
  (their backward kernels in :mod:`.dense_grad`);
* :mod:`.conv`: Convolution, Convolution_v1, Deconvolution, UpSampling;
* :mod:`.im2col`: im2col, col2im;
* :mod:`.pool`: Pooling, Pooling_v1;
* :mod:`.resize`: AdaptiveAvgPooling2D, BilinearResize2D, Pad, Crop;
* :mod:`.norm`: BatchNorm (and SyncBatchNorm, BatchNormWithReLU), LayerNorm, InstanceNorm,
  GroupNorm, L2Normalization, LRN (their backward kernels, which also update BatchNorm's
  moving statistics, in :mod:`.norm_grad`; :mod:`.norm_train`: BatchNorm's training forward as
  one node with its own backward kernel, for training graphs on onnxruntime);
* :mod:`.output`: the legacy output heads (SoftmaxOutput, ...) and CTCLoss (their loss
  backward kernels in :mod:`.output_grad`);
* :mod:`.sequence`: SequenceMask, SequenceReverse, SequenceLast (and SequenceLast's backward);
* :mod:`.rnn`: the fused RNN op (rnn_relu, rnn_tanh, LSTM, GRU) and its weight layouts
  (back-propagation through time and the training forward in :mod:`.rnn_grad`, its ONNX
  lowering in :mod:`.rnn_grad_onnx`; :mod:`.rnn_train`: an LSTM layer's training forward that
  returns its step activations and that forward's backward kernel, with their ONNX lowerings,
  for training graphs on onnxruntime);
* :mod:`.attention`: _contrib_div_sqrt_dim and the interleaved attention matmuls;
* :mod:`.deformable`: deformable convolution (DCNv1, DCNv2).

Importing this package registers nothing; ``gluonport/ops/_families.py`` imports the files.
"""
