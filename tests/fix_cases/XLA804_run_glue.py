# A Hugging Face run_glue-style TPU script: torch_xla imported only when a TPU is there, the
# device asked for in main (issue 30.6); `import torch_xla` joins the guarded import.
import torch
from transformers import is_torch_tpu_available

if is_torch_tpu_available():
    import torch_xla.core.xla_model as xm


def main():
    device = xm.xla_device()
    model = torch.nn.Linear(2, 2).to(device)
    return model


def _mp_fn(index):
    # For xla_spawn (TPUs)
    main()


if __name__ == "__main__":
    main()
