"""Vision operators, one file per op group, each op defined whole (parameters, compute, shape
and type rules, ONNX lowering):

* :mod:`.image`: MXNet's ``_image_*`` operators (``nd.image.X``);
* :mod:`.detection`: box_nms, box_iou, bipartite_matching, box_encode, box_decode;
* :mod:`.multibox`: the SSD ops (MultiBoxPrior, MultiBoxTarget, MultiBoxDetection);
* :mod:`.roi`: ROIPooling, ROIAlign, PSROIPooling;
* :mod:`.proposal`: Proposal, MultiProposal (Faster R-CNN's RPN);
* :mod:`.boxes`: the helpers these files share (registration, greedy NMS, NMS lowering).

Importing this package registers nothing; ``gluonport/ops/_families.py`` imports the files.
"""
