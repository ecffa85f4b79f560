# options: --unsafe-fixes
# remains: XLA909 XLA909
import torch_xla.distributed.spmd as xs


class Block:
    def forward(self, x, mesh):
        h = self.fc1(x)
        h = xs.mark_sharding(h, mesh, ("fsdp", None))  # keep this comment
        self.h = xs.mark_sharding(self.h, mesh, ("fsdp", None))
        x = xs.mark_sharding(x.to("xla"), mesh, ("fsdp", None))
        y = self.fc2(xs.mark_sharding(h, mesh, ("fsdp", None)))
        return y + x
