"""Issue 29 section 2: misses and wrong findings of built rules, each as the smallest
script that shows the kind. Every test fails on the code before the fix; each asserts the
exact ``(line, column, code)`` set (flake8's 1-based columns) of the codes it is about."""

from __future__ import annotations

import ast
import textwrap

from flake8_xla import engine, settings as settings_mod


def lint(source: str, select: str = "XLA", version: str | None = None) -> set:
    source = textwrap.dedent(source)
    found = engine.run(ast.parse(source), settings_mod.build(None, version), source)
    return {(f.line, f.col + 1, f.code) for f in found if f.code.startswith(select)}


def messages(source: str, code: str, version: str | None = None) -> list:
    source = textwrap.dedent(source)
    found = engine.run(ast.parse(source), settings_mod.build(None, version), source)
    return [f.message for f in found if f.code == code]


# -------------------------------------------------------------- 3. host values (XLA501/507)

def test_a_python_number_dividing_the_loss_stays_a_number():
    """``loss / grad_accum_steps`` with an int divisor: the divisor, what is computed from it,
    its prints and the f-string file names are host values (no XLA501 / XLA507)."""
    assert lint('''\
        import torch_xla.core.xla_model as xm
        import torch_xla.distributed.parallel_loader as pl


        def train(model, loss_fn, opt, loader, device, config):
            dl = pl.MpDeviceLoader(loader, device)
            grad_accum_steps = config["grad_accum_steps"]
            scale = int(config["scale"])
            effective = grad_accum_steps * 8
            for step, (x, y) in enumerate(dl):
                loss = loss_fn(model(x), y)
                loss = loss / grad_accum_steps * scale
                loss.backward()
                xm.optimizer_step(opt)
                print(f"step {step} accum {grad_accum_steps} eff {effective}")
                print("scale", scale, step)
                xm.save(model.state_dict(), f"ckpt_{grad_accum_steps}_{scale}.pt")
                if step % 10 == 0:
                    print(f"{effective}")
                    print(loss.item())
        ''', "XLA5") == {(20, 19, "XLA507")}


def test_a_device_divisor_still_makes_a_device_value():
    """The loss divided by a token count computed on the device: the count is still a tensor."""
    assert lint('''\
        import torch_xla.core.xla_model as xm
        import torch_xla.distributed.parallel_loader as pl


        def train(model, loss_fn, opt, loader, device):
            for x, y, mask in pl.MpDeviceLoader(loader, device):
                n_tokens = mask.sum()
                loss = loss_fn(model(x), y) / n_tokens
                loss.backward()
                xm.optimizer_step(opt)
                print(n_tokens.item())
        ''', "XLA5") == {(11, 15, "XLA501")}


def test_a_read_on_the_first_iteration_only_is_no_step_read():
    """``if batch_idx == 0:`` / ``if step == 0:`` runs once: not XLA501 (nor XLA507)."""
    assert lint('''\
        import torch_xla.core.xla_model as xm
        import torch_xla.distributed.parallel_loader as pl


        def train(model, loss_fn, opt, loader, device, epoch):
            global_step = 0
            for batch_idx, (x, y) in enumerate(pl.MpDeviceLoader(loader, device)):
                loss = loss_fn(model(x), y)
                loss.backward()
                xm.optimizer_step(opt)
                global_step += 1
                if batch_idx == 0:
                    print(loss.item())
                if 1 == global_step and epoch == 0:
                    print(f"first loss {loss}")
                if batch_idx == epoch:
                    print(loss.item())
                else:
                    print(float(loss))
        ''', "XLA5") == {(17, 19, "XLA501"), (19, 19, "XLA501")}
