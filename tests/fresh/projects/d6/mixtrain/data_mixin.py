"""DataMixin: per-replica shards of the train and validation sets, fed through MpDeviceLoader."""
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
from torch.utils.data import DataLoader, DistributedSampler


class DataMixin:
    _train_dl = None
    _train_sampler = None

    def _train_loader(self):
        if self._train_dl is None:
            self._train_sampler = DistributedSampler(self.train_set, num_replicas=xr.world_size(),
                                                     rank=xr.global_ordinal(), shuffle=True)
            self._train_dl = DataLoader(self.train_set, batch_size=self.cfg.batch_size,  # expect: XLA304
                                        sampler=self._train_sampler, num_workers=self.cfg.workers,
                                        persistent_workers=True)
        return self._train_dl

    def train_batches(self, epoch):
        loader = self._train_loader()
        self._train_sampler.set_epoch(epoch)
        return pl.MpDeviceLoader(loader, self.device)

    def val_batches(self):
        sampler = DistributedSampler(self.val_set, num_replicas=xr.world_size(), rank=xr.global_ordinal(),
                                     shuffle=False)
        loader = DataLoader(self.val_set, batch_size=self.cfg.eval_batch_size, sampler=sampler,
                            num_workers=self.cfg.workers)
        return pl.MpDeviceLoader(loader, self.device)
