"""get_dataloaders(cfg, teacher): every loader of the run, by name."""
from torch.utils.data import DataLoader

from .collate import DistillCollate, PadCollate, TokenCounter
from .datasets import JsonlEval, LabeledPairs, ShardedCorpus

__all__ = ["get_dataloaders", "TokenCounter"]


def get_dataloaders(cfg, teacher):
    d = cfg.data
    pad = PadCollate(d.max_len, d.pad_id)
    train_ds = ShardedCorpus(d.train_glob, d.max_len)
    calib_ds = LabeledPairs(d.calib_path, d.max_len)
    val_ds = JsonlEval(d.val_path, d.max_len)
    return {
        "train": DataLoader(  # expect: XLA304
            train_ds,
            batch_size=d.batch_size,
            shuffle=True,
            collate_fn=DistillCollate(teacher, pad),  # expect: XLA305
            num_workers=4,
            persistent_workers=True,
        ),
        "calib": DataLoader(calib_ds, batch_size=d.batch_size, shuffle=True, collate_fn=pad, drop_last=True),  # expect: XLA303
        "val": DataLoader(val_ds, batch_size=d.eval_batch_size, collate_fn=pad, num_workers=2),
    }
