"""Image-caption pairs from a folder of <id>.jpg / <id>.txt files."""
import os

import torch
from PIL import Image
from torch.utils.data import Dataset
from torchvision import transforms as T
from transformers import AutoTokenizer


class CaptionedImages(Dataset):
    def __init__(self, root, size=64, tokenizer="openai/clip-vit-base-patch32", max_tokens=77):
        self.root = root
        self.ids = sorted(f[:-4] for f in os.listdir(root) if f.endswith(".jpg"))
        self.tokenizer = AutoTokenizer.from_pretrained(tokenizer)
        self.max_tokens = max_tokens
        self.transform = T.Compose([
            T.Resize(size), T.CenterCrop(size), T.RandomHorizontalFlip(), T.ToTensor(), T.Normalize([0.5], [0.5]),
        ])

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        key = self.ids[i]
        image = self.transform(Image.open(os.path.join(self.root, key + ".jpg")).convert("RGB"))
        with open(os.path.join(self.root, key + ".txt")) as f:
            caption = f.read().strip()
        tokens = self.tokenizer(caption, max_length=self.max_tokens, padding="max_length", truncation=True,
                                return_tensors="pt")["input_ids"][0]
        return image, tokens.to(torch.long)
