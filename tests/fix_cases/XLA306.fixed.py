# remains: XLA306 XLA306
import torch_xla
import torch_xla.distributed.parallel_loader as pl


def chained(loader, model, epochs):
    device = torch_xla.device()
    batches = pl.MpDeviceLoader(loader, device, loader_prefetch_size=16)
    for epoch in range(epochs):
        for x in batches:
            model(x)


def asked_each_epoch(loader, model, epochs):
    device = torch_xla.device()
    para = pl.MpDeviceLoader(loader, device)
    for epoch in range(epochs):
        for step, x in enumerate(para):
            model(x)


def also_read_otherwise(loader, model, epochs):
    device = torch_xla.device()
    para = pl.ParallelLoader(loader, [device])  # the fix would change what para._done reads: left alone
    for epoch in range(epochs):
        for x in para.per_device_loader(device):
            model(x)
    return para._done


def closed_in_a_closure(loader, model, epochs):
    device = torch_xla.device()
    para = pl.ParallelLoader(loader, [device])  # a nested function reads it too: left alone

    def stop():
        para.close()

    for epoch in range(epochs):
        for x in para.per_device_loader(device):
            model(x)
    return stop
