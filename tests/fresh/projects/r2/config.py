"""Run configuration. Switch BACKEND to "cuda" on a GPU box."""
BACKEND = "tpu"

NUM_CLASSES = 10
NUM_TRAIN = 50_000
NUM_VAL = 10_000
BATCH_SIZE = 128
EPOCHS = 30
LR = 0.2
MOMENTUM = 0.9
WEIGHT_DECAY = 5e-4
LOG_EVERY = 50
NUM_WORKERS = 4

CKPT_DIR = "/tmp/cifar_ckpt"
GCS_DIR = "gs://my-team-bucket/cifar-resnet9"
