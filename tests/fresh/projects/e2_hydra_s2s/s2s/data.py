"""JSONL (document, summary) pairs -> fixed-shape batches on the device."""
import torch
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
from datasets import load_dataset
from torch.utils.data import DataLoader, DistributedSampler


class Seq2SeqCollator:
    """Pads every batch to the same lengths so the TPU graph never changes shape."""

    def __init__(self, tokenizer, max_source_len, max_target_len):
        self.tokenizer = tokenizer
        self.max_source_len = max_source_len
        self.max_target_len = max_target_len

    def __call__(self, rows):
        src = self.tokenizer([r["document"] for r in rows], max_length=self.max_source_len,
                             padding="max_length", truncation=True, return_tensors="pt")
        tgt = self.tokenizer([r["summary"] for r in rows], max_length=self.max_target_len,
                             padding="max_length", truncation=True, return_tensors="pt")
        labels = tgt["input_ids"]
        decoder_input_ids = torch.cat([torch.zeros_like(labels[:, :1]), labels[:, :-1]], dim=1)
        return {"input_ids": src["input_ids"], "attention_mask": src["attention_mask"],
                "decoder_input_ids": decoder_input_ids, "labels": labels}


def build_train_loader(cfg, tokenizer, device):
    ds = load_dataset("json", data_files=cfg.train_file, split="train")
    sampler = DistributedSampler(ds, num_replicas=xr.world_size(), rank=xr.global_ordinal(), shuffle=True, seed=cfg.seed)
    collate = Seq2SeqCollator(tokenizer, cfg.max_source_len, cfg.max_target_len)
    loader = DataLoader(ds, batch_size=cfg.batch_size, sampler=sampler, collate_fn=collate, num_workers=cfg.num_workers)  # expect: XLA304
    return pl.MpDeviceLoader(loader, device)
