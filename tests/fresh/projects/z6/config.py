from dataclasses import dataclass


@dataclass
class GANConfig:
    data_root: str = "/data/celeba"
    sample_dir: str = "gs://my-gan-bucket/samples"
    image_size: int = 64
    nz: int = 128
    ngf: int = 64
    ndf: int = 64
    batch_size: int = 128
    lr: float = 2e-4
    epochs: int = 25
    seed: int = 999
    num_workers: int = 4
    log_every: int = 50
    sync_every: int = 200
