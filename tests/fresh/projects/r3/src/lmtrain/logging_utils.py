import logging
import sys

import torch_xla.runtime as xr


def setup_logging(level=logging.INFO):
    """Log at `level` on the first process and only warnings elsewhere."""
    is_main = xr.global_ordinal() == 0
    logging.basicConfig(
        level=level if is_main else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stdout,
    )
    return logging.getLogger("lmtrain")
