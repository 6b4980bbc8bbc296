"""Neural-network operators, one file per op group, each op defined whole (parameters,
compute, shape and type rules, ONNX lowering):

* :mod:`.dense`: FullyConnected, Activation, LeakyReLU, Dropout, the softmax family;
* :mod:`.attention`: _contrib_div_sqrt_dim and the interleaved attention matmuls;
* :mod:`.deformable`: deformable convolution (DCNv1, DCNv2).

Importing this package registers nothing; ``gluonport/ops/_families.py`` imports the files.
"""
