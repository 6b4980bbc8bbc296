"""Inference pre-processing written for MXNet 1.x: ``mx.image`` helpers and
``gluon.data.vision.transforms`` on small fixed random images. gen_image.py runs it in MXNet
1.9.1 and records what it returns; tests/gluon/test_vision_transforms.py runs the same text
with only the imports changed (``mxnet`` -> ``gluonport``).

``run()`` returns {name: value}: numpy arrays (uint8 results must match bit for bit) or plain
data (shapes, crop rectangles, reprs)."""
import random

import mxnet as mx
import numpy as np
from mxnet.gluon.data.vision import transforms

MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]


def images():
    """Fixed random images: name -> (H, W, C) numpy array."""
    rs = np.random.RandomState(1234)
    u8 = {"u8_23x31x3": (23, 31, 3), "u8_24x36x3": (24, 36, 3), "u8_16x20x1": (16, 20, 1),
          "u8_12x16x2": (12, 16, 2), "u8_10x12x4": (10, 12, 4), "u8_31x23x3": (31, 23, 3)}
    out = {k: rs.randint(0, 256, size=s).astype(np.uint8) for k, s in u8.items()}
    out["f32_13x17x3"] = (rs.rand(13, 17, 3) * 255).astype(np.float32)
    out["f32_12x16x1"] = (rs.rand(12, 16, 1) * 255).astype(np.float32)
    return out


# (image, width, height): up, down, odd, exact halves and thirds, one axis up and one down
RESIZES = [("u8_23x31x3", 31, 23), ("u8_23x31x3", 15, 11), ("u8_23x31x3", 10, 7),
           ("u8_23x31x3", 47, 35), ("u8_23x31x3", 8, 40), ("u8_23x31x3", 29, 3),
           ("u8_24x36x3", 18, 12), ("u8_24x36x3", 12, 8), ("u8_24x36x3", 36, 8),
           ("u8_16x20x1", 9, 13), ("u8_16x20x1", 10, 8), ("u8_16x20x1", 40, 32),
           ("u8_12x16x2", 8, 6), ("u8_12x16x2", 21, 17), ("u8_10x12x4", 7, 5),
           ("u8_10x12x4", 24, 20), ("u8_10x12x4", 7, 39),
           ("f32_13x17x3", 8, 6), ("f32_13x17x3", 23, 15),
           ("f32_13x17x3", 5, 9), ("f32_12x16x1", 8, 6), ("f32_12x16x1", 11, 7),
           ("f32_12x16x1", 32, 24)]


def nd(img):
    return mx.nd.array(img, dtype=img.dtype)


def run_image(imgs, out):
    for name, w, h in RESIZES:
        for interp in range(5):
            res = mx.image.imresize(nd(imgs[name]), w, h, interp=interp)
            out["imresize/%s/%dx%d/%d" % (name, w, h, interp)] = res.asnumpy()
    src = nd(imgs["u8_23x31x3"])
    out["resize_short/16"] = mx.image.resize_short(src, 16).asnumpy()
    out["resize_short/16/interp1"] = mx.image.resize_short(src, 16, interp=1).asnumpy()
    out["resize_short/40/interp9"] = mx.image.resize_short(src, 40, interp=9).asnumpy()
    out["resize_short/portrait"] = mx.image.resize_short(nd(imgs["u8_31x23x3"]), 12).asnumpy()
    out["resize_short/f32"] = mx.image.resize_short(nd(imgs["f32_13x17x3"]), 9).asnumpy()
    for key, size, interp in [("16x16", (16, 16), 2), ("40x30", (40, 30), 2),
                              ("40x30/interp1", (40, 30), 1), ("35x10", (35, 10), 2)]:
        crop, rect = mx.image.center_crop(src, size, interp=interp)
        out["center_crop/" + key] = crop.asnumpy()
        out["center_crop/%s/rect" % key] = list(rect)
    f32 = nd(imgs["f32_13x17x3"])
    out["center_crop/f32"] = mx.image.center_crop(f32, (20, 20))[0].asnumpy()
    out["fixed_crop/plain"] = mx.image.fixed_crop(src, 2, 3, 10, 8).asnumpy()
    out["fixed_crop/resized"] = mx.image.fixed_crop(src, 2, 3, 10, 8, (20, 16), 1).asnumpy()
    random.seed(7)
    for i, size in enumerate([(12, 10), (12, 10), (40, 40)]):
        crop, rect = mx.image.random_crop(src, size)
        out["random_crop/%d" % i], out["random_crop/%d/rect" % i] = crop.asnumpy(), list(rect)
    random.seed(11)
    for i in range(3):
        crop, rect = mx.image.random_size_crop(src, (16, 16), (0.3, 1.0), (0.75, 1.333), 1)
        out["random_size_crop/%d" % i] = crop.asnumpy()
        out["random_size_crop/%d/rect" % i] = list(rect)
    norm = mx.image.color_normalize(f32.copy(), mx.nd.array([123.68, 116.28, 103.53]),
                                    mx.nd.array([58.4, 57.12, 57.38]))
    out["color_normalize"] = norm.asnumpy()
    out["scale_down"] = [list(mx.image.scale_down(s, c)) for s, c in
                         [((640, 480), (720, 120)), ((100, 50), (30, 90)), ((20, 20), (5, 6))]]
    small = nd(imgs["u8_23x31x3"][:4, :5])
    for kind in range(5):
        out["copyMakeBorder/%d" % kind] = mx.image.copyMakeBorder(
            small, 2, 3, 6, 1, type=kind).asnumpy()
    out["copyMakeBorder/value"] = mx.image.copyMakeBorder(small, 1, 1, 2, 2, value=7).asnumpy()
    out["copyMakeBorder/values"] = mx.image.copyMakeBorder(
        small, 1, 2, 1, 0, values=(9, 99, 199)).asnumpy()
    chw = mx.nd.array(imgs["f32_13x17x3"].transpose(2, 0, 1) / 255.0)
    out["imrotate/30"] = mx.image.imrotate(chw, 30).asnumpy()
    out["imrotate/-45/zoom_in"] = mx.image.imrotate(chw, -45, zoom_in=True).asnumpy()
    out["imrotate/60/zoom_out"] = mx.image.imrotate(chw, 60, zoom_out=True).asnumpy()
    batch = mx.nd.stack(chw, chw * 0.5)
    out["imrotate/batch"] = mx.image.imrotate(batch, mx.nd.array([10, 100])).asnumpy()


def run_transforms(imgs, out):
    src = nd(imgs["u8_23x31x3"])
    tiny = nd(imgs["u8_23x31x3"][:9, :13])
    batch = nd(np.stack([imgs["u8_23x31x3"], imgs["u8_23x31x3"][::-1]]))
    tiny_batch = nd(np.stack([imgs["u8_23x31x3"][:9, :13], imgs["u8_23x31x3"][-9:, -13:]]))
    out["ToTensor"] = transforms.ToTensor()(tiny).asnumpy()
    out["ToTensor/batch"] = transforms.ToTensor()(tiny_batch).asnumpy()
    out["ToTensor/f32"] = transforms.ToTensor()(nd(imgs["f32_13x17x3"])).asnumpy()
    tensor = transforms.ToTensor()(tiny)
    out["Normalize"] = transforms.Normalize(MEAN, STD)(tensor).asnumpy()
    out["Normalize/scalar"] = transforms.Normalize(0.5, 0.25)(tensor).asnumpy()
    out["Normalize/batch"] = transforms.Normalize(MEAN, STD)(
        transforms.ToTensor()(tiny_batch)).asnumpy()
    out["Normalize/gray"] = transforms.Normalize(0.4, 0.2)(
        transforms.ToTensor()(nd(imgs["u8_16x20x1"]))).asnumpy()
    out["Resize/16"] = transforms.Resize(16)(src).asnumpy()
    out["Resize/16/keep"] = transforms.Resize(16, keep_ratio=True)(src).asnumpy()
    out["Resize/16/keep/portrait"] = transforms.Resize(16, keep_ratio=True)(
        nd(imgs["u8_31x23x3"])).asnumpy()
    out["Resize/20x12"] = transforms.Resize((20, 12))(src).asnumpy()
    for interp in range(5):
        out["Resize/29x19/%d" % interp] = transforms.Resize(
            (29, 19), interpolation=interp)(src).asnumpy()
    out["Resize/batch"] = transforms.Resize((9, 7))(batch).asnumpy()
    out["Resize/f32"] = transforms.Resize(11)(nd(imgs["f32_13x17x3"])).asnumpy()
    out["CenterCrop/16"] = transforms.CenterCrop(16)(src).asnumpy()
    out["CenterCrop/40x30"] = transforms.CenterCrop((40, 30))(src).asnumpy()
    out["CropResize"] = transforms.CropResize(2, 3, 10, 8)(src).asnumpy()
    out["CropResize/size"] = transforms.CropResize(2, 3, 10, 8, size=(15, 12),
                                                   interpolation=1)(src).asnumpy()
    out["CropResize/cubic"] = transforms.CropResize(1, 1, 20, 17, size=9,
                                                    interpolation=2)(src).asnumpy()
    out["CropResize/batch"] = transforms.CropResize(4, 2, 11, 13, size=(6, 5),
                                                    interpolation=0)(batch).asnumpy()
    out["Cast"] = transforms.Cast()(tiny).asnumpy()
    out["Cast/float16"] = transforms.Cast("float16")(tiny).asnumpy()
    random.seed(5)
    for i in range(3):
        out["RandomResizedCrop/%d" % i] = transforms.RandomResizedCrop(12)(src).asnumpy()
    out["Rotate"] = transforms.Rotate(20)(transforms.ToTensor()(tiny)).asnumpy()


def run_pipelines(imgs, out):
    src = nd(imgs["u8_23x31x3"])
    small = transforms.Compose([transforms.Resize(20), transforms.CenterCrop(16),
                                transforms.ToTensor(), transforms.Normalize(MEAN, STD)])
    out["Compose/small"] = small(src).asnumpy()
    out["Compose/repr"] = repr(small)
    keep = transforms.Compose([transforms.Resize(18, keep_ratio=True), transforms.CenterCrop(14),
                               transforms.Cast(), transforms.ToTensor(),
                               transforms.Normalize(MEAN, STD)])
    out["Compose/keep_ratio"] = keep(src).asnumpy()
    out["Compose/keep_ratio/repr"] = repr(keep)
    # the ImageNet evaluation pipeline on a photo-sized image
    photo = nd(np.random.RandomState(99).randint(0, 256, size=(375, 500, 3)).astype(np.uint8))
    crop = transforms.Compose([transforms.Resize(256, keep_ratio=True),
                               transforms.CenterCrop(224)])
    out["Compose/imagenet/crop"] = crop(photo).asnumpy()
    full = transforms.Compose([transforms.Resize(256, keep_ratio=True),
                               transforms.CenterCrop(224), transforms.ToTensor(),
                               transforms.Normalize(MEAN, STD)])
    out["Compose/imagenet"] = full(photo).asnumpy()
    legacy = mx.image.center_crop(mx.image.resize_short(photo, 256), (224, 224))[0]
    out["image/imagenet"] = legacy.asnumpy()


def run_augmenters(imgs, out):
    src = nd(imgs["u8_23x31x3"])
    augs = mx.image.CreateAugmenter(data_shape=(3, 16, 16), resize=20, mean=True, std=True)
    x = src
    for aug in augs:
        x = aug(x)
    out["CreateAugmenter/eval"] = x.asnumpy()
    out["CreateAugmenter/eval/dumps"] = [aug.dumps() for aug in augs]
    random.seed(3)
    np.random.seed(3)
    augs = mx.image.CreateAugmenter(
        data_shape=(3, 12, 14), resize=20, rand_crop=True, rand_resize=True, rand_mirror=True,
        mean=True, std=True, brightness=0.2, contrast=0.2, saturation=0.2, hue=0.1,
        pca_noise=0.05, rand_gray=0.3, inter_method=10)
    for i in range(4):
        x = src
        for aug in augs:
            x = aug(x)
        out["CreateAugmenter/train/%d" % i] = x.asnumpy()
    x = mx.image.ForceResizeAug((9, 11), interp=9)(src)
    out["ForceResizeAug"] = mx.image.RandomCropAug((6, 5), 1)(x).asnumpy()


def run():
    imgs = images()
    out = {}
    run_image(imgs, out)
    run_transforms(imgs, out)
    run_pipelines(imgs, out)
    run_augmenters(imgs, out)
    return out
