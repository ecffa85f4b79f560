"""A device or a batch that reaches a step helper as a parameter (``Model.device_place`` and
``_batch_or_tensor`` through every caller): no superlinear path, no deep recursion.
Behaviour: ``tests/fixtures/XLA503_device_param.py``."""

from __future__ import annotations

from work_counter import engine_work


def chain(n: int) -> str:
    """The step loop calls h0(x, dev), which calls h1(x, dev), ... h{n-1}: each moves its batch
    to its device parameter and masks it; only the first levels are followed (depth-bounded),
    and N more helpers are each called from the loop directly."""
    out = ["import torch_xla\nimport torch_xla.core.xla_model as xm\n\n\n"]
    for i in range(n):
        nxt = f"    h{i + 1}(x, device)\n" if i + 1 < n else ""
        out.append(f"def h{i}(x, device):\n    x = x.to(device)\n    y = x[x > 0]\n{nxt}    return y.sum()\n\n\n")
        out.append(f"def g{i}(x, device):\n    x = x.to(device)\n    return x[x > {i}].sum()\n\n\n")
    out.append("def train(model, loader, opt):\n    dev = torch_xla.device()\n    for x in loader:\n"
               "        loss = model(x.to(dev)) + h0(x, dev)\n"
               + "".join(f"        loss = loss + g{i}(x, dev)\n" for i in range(n))
               + "        loss.backward()\n        xm.optimizer_step(opt)\n        torch_xla.sync()\n")
    return "".join(out)


def test_doubling_the_helpers_at_most_doubles_work():
    engine_work(chain(30))
    small, found_small = engine_work(chain(30))
    mid, found_mid = engine_work(chain(60))
    large, found_large = engine_work(chain(120))
    assert {f.code for f in found_small} == {"XLA503"}
    assert len(found_large) > len(found_mid) > len(found_small) >= 30
    assert mid <= 2.2 * small and large <= 2.2 * mid, (small, mid, large)
