from .wide_resnet import WideResNet


def build_model(cfg):
    depth = {"wrn16": 16, "wrn28": 28, "wrn40": 40}.get(cfg.arch)
    if depth is None:
        raise ValueError(f"unknown arch {cfg.arch!r}")
    return WideResNet(depth=depth, width=cfg.width, num_classes=10)
