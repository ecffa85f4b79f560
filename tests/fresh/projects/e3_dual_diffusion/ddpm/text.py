"""The frozen text encoder that conditions the UNet."""
from transformers import CLIPTextModel


def load_frozen_text_encoder(name, device):
    encoder = CLIPTextModel.from_pretrained(name)
    encoder.requires_grad_(False)
    encoder.eval()
    # it is never trained, so keep it in half precision to save memory
    return encoder.to(device).half()  # expect: XLA706
