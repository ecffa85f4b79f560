from .vit import VisionTransformer


def vit_tiny(num_classes=1000):
    return VisionTransformer(dim=192, depth=12, heads=3, num_classes=num_classes)
