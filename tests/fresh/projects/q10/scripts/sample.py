"""Greedy samples from a trained checkpoint (export with consolidate.py first)."""
import sys

import torch
import torch_xla

from tpullm import Decoder, ModelConfig
from tpullm.model import greedy_generate


def main(path):
    model = Decoder(ModelConfig())
    model.load_state_dict(torch.load(path, map_location="cpu"))
    model = model.to(torch_xla.device())
    prompt = torch.tensor([[1, 345, 678, 91]])
    out = greedy_generate(model, prompt, max_new_tokens=32)
    print(out.tolist())


if __name__ == "__main__":
    main(sys.argv[1])
