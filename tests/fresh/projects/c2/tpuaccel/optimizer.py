import torch_xla.core.xla_model as xm


class AcceleratedOptimizer:
    """Wraps a torch optimizer so that step() all-reduces the gradients first."""

    def __init__(self, optimizer):
        self.optimizer = optimizer

    @property
    def param_groups(self):
        return self.optimizer.param_groups

    def zero_grad(self, set_to_none=True):
        self.optimizer.zero_grad(set_to_none=set_to_none)

    def step(self, closure=None):
        if closure is not None:
            return xm.optimizer_step(self.optimizer, optimizer_args={"closure": closure})
        return xm.optimizer_step(self.optimizer)

    def state_dict(self):
        return self.optimizer.state_dict()

    def load_state_dict(self, state_dict):
        self.optimizer.load_state_dict(state_dict)
