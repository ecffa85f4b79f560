# Fixed: `import torch_xla` registers the "xla" device type.
import argparse

import torch
import torch_xla  # noqa: F401  (registers the "xla" device)
import torchvision


def load_model():
    model = torchvision.models.resnet18(weights=None)
    model.eval()
    return model.to("xla")


def main(batch_size=16):
    model = load_model()
    images = torch.randn(batch_size, 3, 224, 224, device="xla")
    with torch.no_grad():
        logits = model(images)
    top1 = logits.argmax(-1).cpu()
    print(f"predicted classes {top1.tolist()}")


def parse_args():
    parser = argparse.ArgumentParser(description="ResNet-18 smoke test on a TPU VM")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=1)
    return parser.parse_args()


if __name__ == "__main__":
    args = parse_args()
    for _ in range(args.repeat):
        main(args.batch_size)
