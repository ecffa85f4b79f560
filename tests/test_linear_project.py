"""Project mode stays linear: linting every module of a generated project of N modules costs
at most about twice the work (lines executed, tests/work_counter.py) at 2N, as in
tests/test_linear.py. Shapes: a chain of imports and calls (each module calls the previous
one), a star (every module imports one shared module; one launcher imports them all), and
callers (every module calls one shared function, passing the ``xm`` module into its
parameter: the reverse call index answers what all N callers pass)."""

from __future__ import annotations

from pathlib import Path

import pytest

from work_counter import project_work

N = 30
SLACK = 2.3

LAUNCHER = ("import torch_xla\nimport torch_xla.distributed.xla_multiprocessing as xmp\n{imports}\n\n"
            "def _run(index):\n{calls}\n\nif __name__ == '__main__':\n    xmp.spawn(_run)\n")


def chain(base: Path, n: int) -> list[Path]:
    files = {"pyproject.toml": ""}
    for i in range(n):
        prev = f"from m{i - 1} import f{i - 1}\n" if i else ""
        call = f"    f{i - 1}()\n" if i else ""
        files[f"m{i}.py"] = (f"import torch\n{prev}\n\nclass C{i}:\n    def step(self):\n        return {i}\n\n\n"
                             f"def f{i}():\n    torch.cuda.empty_cache()\n{call}    C{i}().step()\n\n\n"
                             f"def cpu{i}():\n    torch.cuda.empty_cache()\n")
    files["train.py"] = LAUNCHER.format(imports=f"from m{n - 1} import f{n - 1}", calls=f"    f{n - 1}()\n")
    return _write(base, files)


def star(base: Path, n: int) -> list[Path]:
    files = {"pyproject.toml": "", "common.py": "import torch\n\n\ndef shared():\n    torch.cuda.synchronize()\n"}
    for i in range(n):
        files[f"pkg/m{i}.py"] = (f"import torch\nfrom common import shared\n\n\ndef f{i}():\n"
                                 f"    torch.cuda.empty_cache()\n    shared()\n")
    files["pkg/__init__.py"] = ""
    files["train.py"] = LAUNCHER.format(imports="\n".join(f"from pkg.m{i} import f{i}" for i in range(n)),
                                        calls="".join(f"    f{i}()\n" for i in range(n)))
    return _write(base, files)


def callers(base: Path, n: int) -> list[Path]:
    files = {"pyproject.toml": "", "common.py": "import torch\n\n\ndef shared(x, xm):\n"
                                                "    torch.cuda.empty_cache()\n    return xm.xrt_world_size()\n"}
    for i in range(n):
        files[f"pkg/m{i}.py"] = (f"import torch_xla.core.xla_model as xm\nfrom common import shared\n\n\n"
                                 f"def f{i}(x):\n    return shared(x, xm)\n")
    files["pkg/__init__.py"] = ""
    files["train.py"] = LAUNCHER.format(imports="\n".join(f"from pkg.m{i} import f{i}" for i in range(n)),
                                        calls="".join(f"    f{i}({i})\n" for i in range(n)))
    return _write(base, files)


def subclasses(base: Path, n: int) -> list[Path]:
    """A base trainer's loop calls ``self.training_step``; N subclasses in N modules override
    it, each built by the launched code (dispatch per (method, class) reached)."""
    files = {"pyproject.toml": "", "pkg/__init__.py": "",
             "pkg/base.py": ("import torch\n\n\nclass Base:\n    def training_step(self, b):\n        return b\n\n"
                             "    def fit(self, loader):\n        for b in loader:\n            self.training_step(b)\n"
                             "            torch.cuda.empty_cache()\n")}
    for i in range(n):
        files[f"pkg/s{i}.py"] = (f"import torch\nfrom pkg.base import Base\n\n\nclass S{i}(Base):\n"
                                 f"    def training_step(self, b):\n        torch.cuda.empty_cache()\n        return b\n")
    files["train.py"] = LAUNCHER.format(imports="\n".join(f"from pkg.s{i} import S{i}" for i in range(n)),
                                        calls="".join(f"    S{i}().fit([])\n" for i in range(n)))
    return _write(base, files)


def factories(base: Path, n: int) -> list[Path]:
    """A factory with N constant-tested branches, each building a class of its own module;
    the launched code asks for one: only that branch is followed."""
    branches = "".join(f"    if name == 'b{i}':\n        from pkg.b{i} import B{i}\n\n        return B{i}()\n"
                       for i in range(n))
    files = {"pyproject.toml": "", "pkg/__init__.py": "", "pkg/factory.py": f"def make(name):\n{branches}"
             "    return None\n"}
    for i in range(n):
        files[f"pkg/b{i}.py"] = f"import torch\n\n\nclass B{i}:\n    def go(self):\n        torch.cuda.empty_cache()\n"
    files["train.py"] = LAUNCHER.format(imports="from pkg.factory import make", calls="    make('b0').go()\n")
    return _write(base, files)


def callbacks(base: Path, n: int) -> list[Path]:
    """N callback classes in N modules, handed in one list to a trainer of another module,
    whose step loop calls ``cb.on_step_end(self, step, loss)`` on each: every override reads
    the device loss on the host (XLA501 per module, through the dispatch index)."""
    files = {"pyproject.toml": "", "pkg/__init__.py": "",
             "pkg/engine.py": ("import torch\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n"
                               "import torch_xla.distributed.parallel_loader as pl\n\n\n"
                               "class Trainer:\n    def __init__(self, model, loader, callbacks=()):\n"
                               "        self.device = torch_xla.device()\n        self.model = model.to(self.device)\n"
                               "        self.loader = loader\n        self.callbacks = list(callbacks)\n"
                               "        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)\n\n"
                               "    def train(self):\n"
                               "        for step, (x, y) in enumerate(pl.MpDeviceLoader(self.loader, self.device)):\n"
                               "            loss = torch.nn.functional.mse_loss(self.model(x), y)\n"
                               "            loss.backward()\n            xm.optimizer_step(self.optimizer)\n"
                               "            for cb in self.callbacks:\n                cb.on_step_end(self, step, loss)\n"),
             "pkg/base.py": "class Callback:\n    def on_step_end(self, trainer, step, loss):\n        pass\n"}
    for i in range(n):
        files[f"pkg/c{i}.py"] = (f"from pkg.base import Callback\n\n\nclass C{i}(Callback):\n"
                                 f"    def on_step_end(self, trainer, step, loss):\n        print(loss.item())\n")
    files["train.py"] = ("import torch\nimport torch_xla\nfrom pkg.engine import Trainer\n"
                         + "".join(f"from pkg.c{i} import C{i}\n" for i in range(n))
                         + "\n\ndef _mp_fn(index, loader):\n    model = torch.nn.Linear(4, 4)\n"
                         + "    Trainer(model, loader, callbacks=[" + ", ".join(f"C{i}()" for i in range(n))
                         + "]).train()\n\n\nif __name__ == '__main__':\n    torch_xla.launch(_mp_fn, args=(None,))\n")
    return _write(base, files)


def _write(base: Path, files: dict[str, str]) -> list[Path]:
    for name, text in files.items():
        (base / name).parent.mkdir(parents=True, exist_ok=True)
        (base / name).write_text(text, encoding="utf-8")
    return sorted(p for p in base.rglob("*.py"))


@pytest.mark.parametrize("shape", [chain, star, callers, subclasses, factories, callbacks],
                         ids=["chain", "star", "callers", "subclasses", "factories", "callbacks"])
def test_linting_every_module_is_linear_in_modules(shape, tmp_path):
    small, found_small = project_work(shape(tmp_path / "small", N))
    large, found_large = project_work(shape(tmp_path / "large", 2 * N))
    if shape is callers:  # common.shared is XLA code, and its xm is torch_xla's at all N call sites
        assert sorted((name, f.code) for name, f in found_small) == [("common.py", "XLA401"), ("common.py", "XLA801")]
        assert sorted((name, f.code) for name, f in found_large) == [("common.py", "XLA401"), ("common.py", "XLA801")]
    elif shape is factories:  # only the branch the constant selects: B0.go
        assert sorted((name, f.code) for name, f in found_small) == [("b0.py", "XLA401")]
        assert sorted((name, f.code) for name, f in found_large) == [("b0.py", "XLA401")]
    elif shape is callbacks:  # each callback's override reads the device loss in the trainer's step
        assert sorted((name, f.code, f.line) for name, f in found_small) == sorted(
            (f"c{i}.py", "XLA501", 6) for i in range(N))
        assert len(found_large) == 2 * N and {f.code for _, f in found_large} == {"XLA501"}
    elif shape is subclasses:  # each override is XLA code; the base's loop too
        assert len(found_small) == N + 1 and len(found_large) == 2 * N + 1
    else:  # every reached helper is XLA code (XLA401 per module), the CPU helpers stay plain
        assert len(found_small) == N + (shape is star) and len(found_large) == 2 * N + (shape is star)
    assert large <= SLACK * small, f"{shape.__name__}: work {small} at N={N}, {large} at N={2 * N} ({large / small:.2f}x)"


#: the project layer alone (flake8_xla/project/): its own work is small beside the modules'
#: models, so a term quadratic in the modules shows here first (a shared importer's calls
#: scanned once per module it hands objects to gave 2.33 at N=60, the callbacks shape)
PROJECT_LAYER = str(Path(__import__("flake8_xla.project", fromlist=["x"]).__file__).resolve().parent)
LAYER_N = 60
LAYER_SLACK = 2.15


@pytest.mark.parametrize("shape", [chain, star, callers, subclasses, factories, callbacks],
                         ids=["chain", "star", "callers", "subclasses", "factories", "callbacks"])
def test_the_project_layer_is_linear_in_modules(shape, tmp_path):
    small, _ = project_work(shape(tmp_path / "small", LAYER_N), prefix=PROJECT_LAYER)
    large, _ = project_work(shape(tmp_path / "large", 2 * LAYER_N), prefix=PROJECT_LAYER)
    assert large <= LAYER_SLACK * small, (f"{shape.__name__}: project-layer work {small} at N={LAYER_N}, "
                                          f"{large} at N={2 * LAYER_N} ({large / small:.2f}x)")
