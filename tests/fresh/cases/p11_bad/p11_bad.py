# Bug report: "RuntimeError: ... 'xla' device type not recognized" when running a
# ResNet inference smoke test on a TPU VM. The script sends tensors to "xla" but never
# imports torch_xla, so the device type is never registered.
import argparse

import torch
import torchvision


def load_model():
    model = torchvision.models.resnet18(weights=None)
    model.eval()
    return model.to("xla")  # expect: XLA406


def main(batch_size=16):
    model = load_model()
    images = torch.randn(batch_size, 3, 224, 224, device="xla")  # expect: XLA406
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
