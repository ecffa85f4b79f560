"""Run constants for the v4-32 slice. Edit here; the launcher has only a few flags."""
NUM_CORES = 16  # v4-32: 4 hosts x 4 chips
PER_CORE_BATCH = 64
DIST_BACKEND = "xla"

DATA_ROOT = "/mnt/imagenet"
CKPT_DIR = "/mnt/disks/ckpt/vit_b16"
IMAGE_SIZE = 224
PATCH = 16
DIM = 768
DEPTH = 12
HEADS = 12
PATCH_DROP = 0.25

LR = 1e-3
WEIGHT_DECAY = 0.05
EPOCHS = 90
LOG_EVERY = 100
SEED = 0
