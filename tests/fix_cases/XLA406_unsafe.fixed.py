# options: --unsafe-fixes --xla-project=off
import argparse

import torch
import torch_xla  # noqa: F401


def main():
    args = argparse.ArgumentParser().parse_args()
    model = torch.nn.Linear(4, 2).to("xla")
    x = torch.zeros(2, 4, device="xla")
    return model(x), args


if __name__ == "__main__":
    main()
