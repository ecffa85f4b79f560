"""Generated worst-case inputs for the linearity tests and the benchmark.

Each generator takes N and returns a module whose findings grow with N; the engine's
work on it must grow linearly (tests/test_linear.py, ``benchmarks/bench.py --generated``).
"""

from __future__ import annotations

HEAD = "import os\nimport torch\nimport torch.distributed as dist\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n\n\n"


def early_returns(n: int) -> str:
    """One function: N ``if c: return`` statements, each followed by a finding."""
    return HEAD + "def f(x):\n" + "".join(f"    if c{i}:\n        return\n    x.cuda()\n" for i in range(n))


def elif_chain(n: int) -> str:
    """An N-branch ``if``/``elif`` chain (N nested ``orelse`` frames), a finding per branch."""
    return (HEAD + "def f(x, mode):\n    if mode == 0:\n        x.cuda()\n"
            + "".join(f"    elif mode == {i}:\n        x.cuda()\n" for i in range(1, n)))


def superseding_findings(n: int) -> str:
    """N calls each giving a finding that supersedes another (the one-finding-per-fix pass)."""
    calls = "".join(f'    dist.init_process_group("gloo", rank=int(os.environ["RANK"]), world_size={i + 2})\n'
                    for i in range(n))
    return HEAD + "def worker(index):\n" + calls + "\n\ntorch_xla.launch(worker)\n"


def call_chain(n: int) -> str:
    """N functions each calling the next, the last only from a CUDA branch (XLA-off callers)."""
    funcs = "".join(f"def f{i}(x):\n    x.cuda()\n    return f{i + 1}(x)\n\n\n" for i in range(n))
    return HEAD + funcs + f"def f{n}(x):\n    return x\n\n\nif torch.cuda.is_available():\n    f0(1)\n"


def step_loops(n: int) -> str:
    """N functions with a step loop over a plain DataLoader each (loader and sync queries)."""
    funcs = "".join(
        f"def train{i}(model, ds, opt):\n    loader = DataLoader(ds)\n    for x in loader:\n"
        f"        model(x).sum().backward()\n        xm.optimizer_step(opt)\n\n\n" for i in range(n))
    return HEAD + "from torch.utils.data import DataLoader\n\n\n" + funcs


def elif_imports(n: int) -> str:
    """An N-branch chain where every branch imports torch_xla (guards settled once each)."""
    return ("import torch\n\n\ndef f(x, mode):\n    if mode == 0:\n        import torch_xla\n        x.cuda()\n"
            + "".join(f"    elif mode == {i}:\n        import torch_xla\n        x.cuda()\n" for i in range(1, n)))


def exit_imports(n: int) -> str:
    """N consecutive `if a.tI: import torch_xla; sys.exit(0)` (N stacked frames around imports)."""
    return ("import sys\n\nimport torch\n\n\ndef f(a, x):\n"
            + "".join(f"    if a.t{i}:\n        import torch_xla\n        sys.exit(0)\n    x.cuda()\n" for i in range(n)))


def many_timers(n: int) -> str:
    """One step loop with N start/stop timer pairs around lazy work (XLA504 per pair)."""
    body = "".join(f"        t{i} = time.time()\n        model(x).sum().backward()\n        xm.optimizer_step(opt)\n"
                   f"        d{i} = time.time() - t{i}\n" for i in range(n))
    return HEAD + "import time\n\n\ndef train(model, opt, loader):\n    for x in loader:\n" + body


def launches(n: int) -> str:
    """N launched workers with an unsharded loader each (XLA303), launched one after the
    other from a main() that touches the runtime before each launch (XLA003)."""
    workers = "".join(
        f"def w{i}(index):\n    data = TensorDataset(torch.randn(8, 4))\n"
        f"    for (x,) in DataLoader(data, batch_size=2, drop_last=True):\n"
        f"        model(x).sum().backward()\n        xm.optimizer_step(opt, barrier=True)\n\n\n" for i in range(n))
    main = "def main():\n" + "".join(f"    n{i} = xr.world_size()\n    torch_xla.launch(w{i})\n" for i in range(n))
    return (HEAD + "import torch_xla.runtime as xr\nfrom torch.utils.data import DataLoader, TensorDataset\n\n\n"
            + workers + main + "\n\nif __name__ == '__main__':\n    main()\n")


def spmd_launches(n: int) -> str:
    """N launches and N "xla" groups after an SPMD switch in a helper (XLA004, XLA107)."""
    main = "def setup():\n    xr.use_spmd()\n\n\ndef main():\n    setup()\n" + "".join(
        f"    dist.init_process_group('xla', init_method='xla://')\n    torch_xla.launch(w{i})\n" for i in range(n))
    workers = "".join(f"def w{i}(index):\n    return index\n\n\n" for i in range(n))
    return HEAD + "import torch_xla.runtime as xr\n\n\n" + workers + main + "\n\nmain()\n"


def guarded_saves(n: int) -> str:
    """One function: N early returns, each followed by a master-guarded xm.save and wandb.log
    and a torch.save of the model's state (XLA601, XLA602, XLA604 per block)."""
    body = "".join(f"    if flag{i}:\n        return\n    if xm.is_master_ordinal():\n"
                   f"        xm.save(model.state_dict(), path)\n        wandb.log({{}})\n"
                   f"    torch.save(model.state_dict(), path)\n" for i in range(n))
    return HEAD + "import wandb\n\n\ndef save(model, path):\n" + body + "\n\ntorch_xla.launch(save)\n"


def runtime_odds(n: int) -> str:
    """N sharding annotations of an unmoved model, N ties before N moves, N cache
    initializations after a sync, N data pointers of device tensors (XLA901/903/904/905)."""
    body = "".join(
        f"    xs.mark_sharding(model.l{i}.weight, mesh, (0, 1))\n"
        f"    model.h{i}.weight = model.e{i}.weight\n"
        f"    xr.initialize_cache('/tmp/c{i}')\n"
        f"    p{i} = torch.ones(4, device=dev).data_ptr()\n" for i in range(n))
    moves = "".join(f"    model.to(dev)\n    model.e{i}.to(dev)\n" for i in range(n))
    return (HEAD + "import torch_xla.runtime as xr\nimport torch_xla.distributed.spmd as xs\n\n\n"
            "def f(mesh):\n    dev = torch_xla.device()\n    model = torch.nn.Linear(4, 4)\n    torch_xla.sync()\n"
            + body + moves)


def rank_devices(n: int) -> str:
    """N ``xm.xla_device(index + i)`` (an XLA402 holding the XLA804 it supersedes) and N
    ``xm.xla_device()`` beside N ``m.to(index)`` (XLA804 and XLA402 apart): the
    one-finding-per-fix pass once compared every XLA804 with every XLA402."""
    body = "".join(f"    d{i} = xm.xla_device()\n    m.to(index)\n    e{i} = xm.xla_device(index + {i})\n"
                   for i in range(n))
    return HEAD + "def worker(index, m):\n" + body + "\n\ntorch_xla.launch(worker)\n"


def env_reads_after_returns(n: int) -> str:
    """N ``if cI: return`` each followed by a ``RANK`` read in launched code (XLA109): the
    guard test for ``if "RANK" in os.environ:`` once scanned every frame at every read."""
    body = "".join(f"    if c{i}:\n        return\n    r{i} = os.environ['RANK']\n" for i in range(n))
    return HEAD + "def worker(index):\n" + body + "\n\ntorch_xla.launch(worker)\n"


def syncs_after_continues(n: int) -> str:
    """A step loop with N ``if cI: continue`` each followed by a sync (XLA805): the branch
    frames of each sync were once collected over the whole chain."""
    body = "".join(f"        if c{i}:\n            continue\n        xm.mark_step()\n" for i in range(n))
    return (HEAD + "def train(model, opt, loader):\n    for x in loader:\n" + body
            + "        model(x).sum().backward()\n        xm.optimizer_step(opt)\n")


def double_steps(n: int) -> str:
    """A step loop with N ``if cI: continue`` each followed by ``xm.optimizer_step(oI)`` and
    ``oI.step()`` (XLA207 per pair), and N try blocks holding the pair in body and handler
    (exclusive, silent): pairs once compared every branch frame and every try block."""
    params = ", ".join(f"o{i}" for i in range(n))
    body = "".join(f"        if c{i}:\n            continue\n        xm.optimizer_step(o{i})\n        o{i}.step()\n"
                   f"        try:\n            xm.optimizer_step(o{i})\n        except E{i}:\n            o{i}.step()\n"
                   for i in range(n))
    return HEAD + f"def train(model, loader, {params}):\n    for x in loader:\n        model(x).sum().backward()\n" + body


def same_optimizer_steps(n: int) -> str:
    """N ``xm.optimizer_step(opt)`` and N ``opt.step()`` in one loop: N squared pairs, so past
    32 steps of one optimizer XLA207 stays silent (generated code, bounded work)."""
    body = "".join("        xm.optimizer_step(opt)\n        opt.step()\n" for _ in range(n))
    return HEAD + "def train(model, opt, loader):\n    for x in loader:\n        model(x).sum().backward()\n" + body


def inheritance_chain(n: int) -> str:
    """N module classes each subclassing the one before, each ``forward`` calling
    ``super().forward(x)`` after a finding (XLA401): the MRO was rebuilt per class and
    every ``.forward`` call resolved once per ``forward`` method."""
    classes = "".join(f"class M{i}(M{i - 1}):\n    def forward(self, x):\n        x.cuda()\n"
                      f"        return super().forward(x)\n\n\n" for i in range(1, n))
    return (HEAD + "class M0(torch.nn.Module):\n    def forward(self, x):\n        return x.cuda()\n\n\n"
            + classes + f"def main(x):\n    M{n - 1}().forward(x)\n")


def mixin_chain(n: int) -> str:
    """N module classes each subclassing the one before and a mixin, each ``forward``
    calling a mixin method and ``super().forward(x)``, each class built and called."""
    classes = "".join(f"class M{i}(M{i - 1}, Mixin):\n    def forward(self, x):\n        x.cuda()\n"
                      f"        self.helper(x)\n        return super().forward(x)\n\n\n" for i in range(1, n))
    uses = "".join(f"    m{i} = M{i}()\n    m{i}.forward(x)\n" for i in range(n))
    return (HEAD + "class Mixin:\n    def helper(self, x):\n        return x\n\n\n"
            "class M0(torch.nn.Module):\n    def forward(self, x):\n        return x.cuda()\n\n\n"
            + classes + "def main(x):\n" + uses)


def wide_bases(n: int) -> str:
    """One module class with N mixin bases, its ``forward`` calling each mixin's method."""
    mixins = "".join(f"class B{i}:\n    def h{i}(self):\n        return 1\n\n\n" for i in range(n))
    bases = ", ".join(f"B{i}" for i in range(n))
    return (HEAD + mixins + f"class M(torch.nn.Module, {bases}):\n    def forward(self, x):\n"
            + "".join(f"        x.cuda()\n        self.h{i}()\n" for i in range(n)))


def launched_subclasses(n: int) -> str:
    """N module classes each subclassing the one before, each built and called in a
    launched function (XLA401 per class): the call graph listed each class's methods by
    scanning its whole MRO."""
    classes = "".join(f"class M{i}(M{i - 1}):\n    def forward(self, x):\n        x.cuda()\n"
                      f"        loss = self.step(x)\n        loss.backward()\n        return super().forward(x)\n\n\n"
                      for i in range(1, n))
    uses = "".join(f"    m{i} = M{i}()\n    m{i}.forward(x)\n" for i in range(n))
    return (HEAD + "class M0(torch.nn.Module):\n    def forward(self, x):\n        return x.cuda()\n\n"
            "    def step(self, x):\n        return x.sum()\n\n\n"
            + classes + "def main(index, x):\n" + uses + "\n\ntorch_xla.launch(main)\n")


def unreduced_workers(n: int) -> str:
    """N launched workers each stepping ``opt.step()`` with nothing reducing the gradients
    (XLA201 per worker): each step loop once scanned every function of the module."""
    workers = "".join(f"def w{i}(index, loader, model, opt):\n    for x in loader:\n        model(x).sum().backward()\n"
                      f"        opt.step()\n\n\n" for i in range(n))
    main = "".join(f"    torch_xla.launch(w{i}, args=(None, None, None))\n" for i in range(n))
    return HEAD + workers + "def main():\n" + main + "\n\nmain()\n"


def overriding_steps(n: int) -> str:
    """N classes each subclassing the one before and overriding its stepping method (XLA201
    on the last one only: which override runs is not known for the others): each method
    once scanned every class and its MRO."""
    method = ("    def run(self, model, opt, loader):\n        for x in loader:\n"
              "            model(x).sum().backward()\n            opt.step()\n\n\n")
    classes = "".join(f"class T{i}(T{i - 1}):\n" + method for i in range(1, n))
    return (HEAD + "class T0:\n" + method + classes
            + f"def main(index):\n    T{n - 1}().run(None, None, None)\n\n\ntorch_xla.launch(main)\n")


def dataset_subclasses(n: int) -> str:
    """N map-style datasets each subclassing the one before, each read unsharded by a
    DataLoader in a launched loop (XLA303 per loader): each class's datasets check read
    its whole MRO, methods and calls included."""
    classes = "".join(f"class D{i}(D{i - 1}):\n    def __len__(self):\n        return {i}\n\n\n" for i in range(1, n))
    loops = "".join(f"    for (x,) in DataLoader(D{i}(), batch_size=2, drop_last=True):\n        model(x).sum().backward()\n"
                    f"        xm.optimizer_step(opt, barrier=True)\n" for i in range(n))
    return (HEAD + "from torch.utils.data import DataLoader, Dataset\n\n\n"
            "class D0(Dataset):\n    def __getitem__(self, i):\n        return i\n\n\n"
            + classes + "def w(index, model, opt):\n" + loops + "\n\ntorch_xla.launch(w)\n")


def wide_unpacking(n: int) -> str:
    """One ``a0, ..., aN = make()`` and a finding on each name: the walk tested every
    target for a starred one once per target."""
    names = ", ".join(f"a{i}" for i in range(n))
    return HEAD + f"def f(make):\n    {names} = make()\n" + "".join(f"    a{i}.cuda()\n" for i in range(n))


def wide_loop_targets(n: int) -> str:
    """One ``for a0, ..., aN in rows:`` and a finding on each name."""
    names = ", ".join(f"a{i}" for i in range(n))
    return HEAD + f"def f(rows):\n    for {names} in rows:\n" + "".join(f"        a{i}.cuda()\n" for i in range(n))


def long_attribute_chains(n: int) -> str:
    """Two N-link attribute chains (one rooted in torch_xla) and N findings."""
    chain = ".".join(f"a{i}" for i in range(n))
    return (HEAD + f"def f(x, cfg):\n    y = cfg.{chain}\n    z = torch_xla.{chain}\n"
            + "".join(f"    x.cuda({i})\n" for i in range(n)))


def shared_trainer(n: int) -> str:
    """One function with N step loops over its loader parameter, stepping its optimizer
    parameter, called from N places each with its own host model, DataLoader without
    drop_last (XLA304) and optimizer (XLA404): each use of a parameter re-read every
    caller's argument."""
    loops = "".join("    for x in loader:\n        model(x).sum().backward()\n        xm.optimizer_step(opt)\n"
                    for _ in range(n))
    calls = "".join(f"    m{i} = torch.nn.Linear(4, 4)\n"
                    f"    train(m{i}, DataLoader(ds, batch_size=8), torch.optim.SGD(m{i}.parameters(), lr=0.1))\n"
                    for i in range(n))
    return (HEAD + "from torch.utils.data import DataLoader\n\n\ndef train(model, loader, opt):\n" + loops
            + "\n\ndef main(ds):\n" + calls)


def loader_parameters(n: int) -> str:
    """N functions each stepping in a loop over its loader parameter, each called once with a
    plain DataLoader (XLA301 at each call): every function once scanned every parameter."""
    funcs = "".join(f"def t{i}(model, loader, opt):\n    for x in loader:\n        model(x).sum().backward()\n"
                    f"        xm.optimizer_step(opt)\n\n\n" for i in range(n))
    calls = "".join(f"    t{i}(model, DataLoader(ds, batch_size=8, drop_last=True), opt)\n" for i in range(n))
    return HEAD + "from torch.utils.data import DataLoader\n\n\n" + funcs + "def main(ds, model, opt):\n" + calls


def helper_steps(n: int) -> str:
    """A helper with N ``xm.optimizer_step(opt, barrier=True)`` (XLA204 each), called N
    times from a device-loader loop: its callers were checked once per step."""
    steps = "".join("    xm.optimizer_step(opt, barrier=True)\n" for _ in range(n))
    calls = "".join("        step(opt)\n" for _ in range(n))
    return (HEAD + "import torch_xla.distributed.parallel_loader as pl\n\n\ndef step(opt):\n" + steps
            + "\n\ndef main(loader, opt, model):\n    for x in pl.MpDeviceLoader(loader, torch_xla.device()):\n"
            "        model(x).sum().backward()\n" + calls)


def nested_step_loops(n: int) -> str:
    """N step loops nested in one another, each with a finding: each call was re-checked once
    per enclosing loop. Python's parser accepts 100 indentation levels at most, so the
    linear test doubles 12, 24, 48, and past 48 the loops are split into functions of at
    most 48 nested loops each (the benchmark's sizes)."""
    out = []
    for start in range(0, n, 48):
        out.append(f"def train{start}(model, opt, loader):\n")
        for d in range(min(48, n - start)):
            ind = "    " * (d + 1)
            out.append(f"{ind}for x{d} in loader:\n{ind}    model(x{d}).sum().backward()\n"
                       f"{ind}    xm.optimizer_step(opt)\n{ind}    x{d}.cuda()\n")
        out.append("\n\n")
    return HEAD + "".join(out)


def carried_loops(n: int) -> str:
    """One function with N loops that are no training step, each carrying a device tensor and
    reading it on the host with no sync (XLA508 per loop)."""
    body = "".join(f"    for i in range(10):\n        x{i} = x{i} @ w\n        print(x{i}.sum().item())\n"
                   for i in range(n))
    inits = "".join(f"    x{i} = torch.ones(4, device=torch_xla.device())\n" for i in range(n))
    return HEAD + "def run(w):\n" + inits + body


def nested_carried_loops(n: int) -> str:
    """N nested loops that are no training step, each level carrying its own device tensor
    and reading it (the innermost reports; every level asks what its body carries). Split
    into functions of at most 48 levels, as ``nested_step_loops``."""
    out = []
    for start in range(0, n, 48):
        out.append(f"def run{start}(w):\n    x = torch.ones(4, device=torch_xla.device())\n")
        for d in range(min(48, n - start)):
            ind = "    " * (d + 1)
            out.append(f"{ind}for i{d} in range(3):\n{ind}    x = x @ w\n{ind}    print(x.sum().item())\n")
        out.append("\n\n")
    return HEAD + "".join(out)


def self_state_hierarchy(n: int) -> str:
    """A base trainer binding N ``self.`` attributes in ``__init__`` and a step loop calling N
    hooks, N subclasses each subclassing the one before, reading every attribute and
    overriding one hook with a host sync (XLA501 per override reached from the loop): each
    (class, attribute) and (class, hook) query is answered once, from indexes built once."""
    attrs = "".join(f"        self.a{i} = torch_xla.device()\n" for i in range(n))
    hooks = "".join(f"            self.h{i}(x)\n" for i in range(n))
    base = ("class T0:\n    def __init__(self, loader):\n" + attrs
            + "        self.loader = pl.MpDeviceLoader(loader, self.a0)\n\n"
            + "    def fit(self, opt):\n        for x in self.loader:\n" + hooks
            + "            x.sum().backward()\n            xm.optimizer_step(opt)\n\n"
            + "".join(f"    def h{i}(self, x):\n        return 0\n\n" for i in range(n)) + "\n")
    subs = "".join(f"class T{i}(T{i - 1}):\n    def h{i - 1}(self, x):\n"
                   f"        return torch.ones(2, device=self.a{i - 1}).sum().item()\n\n\n" for i in range(1, n + 1))
    return (HEAD + "import torch_xla.distributed.parallel_loader as pl\n\n\n" + base + subs
            + f"def main(index):\n    T{n}(None).fit(None)\n\n\ntorch_xla.launch(main)\n")


def generator_loops(n: int) -> str:
    """N generator functions each over a plain loader, each iterated by a launched step loop
    (XLA301 per loop): each generator's yields and loops are read once."""
    gens = "".join(f"def g{i}(loader):\n    for b in loader:\n        yield b.to('xla')\n\n\n" for i in range(n))
    loops = "".join(f"    for b in g{i}(DataLoader(ds, drop_last=True)):\n        model(b).sum().backward()\n"
                    "        xm.optimizer_step(opt)\n" for i in range(n))
    return (HEAD + "from torch.utils.data import DataLoader\n\n\n" + gens
            + "def main(index, model, opt, ds):\n" + loops + "\n\ntorch_xla.launch(main)\n")


def held_modules(n: int) -> str:
    """A trainer holding N host modules in ``self.m<i>`` with N optimizers, each stepped in
    the loop and never moved (XLA404 per module): every (class, attribute) asks one index
    of the module's attribute reads, built once."""
    init = "".join(f"        self.m{i} = torch.nn.Linear(4, 4)\n"
                   f"        self.o{i} = torch.optim.SGD(self.m{i}.parameters(), lr=0.1)\n" for i in range(n))
    body = "".join(f"            self.m{i}(x).sum().backward()\n            xm.optimizer_step(self.o{i})\n"
                   for i in range(n))
    return (HEAD + "import torch_xla.distributed.parallel_loader as pl\n\n\n"
            + "class Trainer:\n    def __init__(self, loader):\n" + init
            + "        self.loader = pl.MpDeviceLoader(loader, torch_xla.device())\n\n"
            + "    def fit(self):\n        for x in self.loader:\n" + body
            + "\n\ndef main(index):\n    Trainer(None).fit()\n\n\ntorch_xla.launch(main)\n")


def post_sync_reads(n: int) -> str:
    """A step loop whose body, after its sync, reads N all-reduces under N conditions (each
    read sees up to N reaching definitions), then N evaluation loops each read after it
    (XLA501 after the sync; the evaluation results silent): each name's freshness and each
    read's evaluation source are memoised."""
    head = ("def train(model, opt, loader, flags):\n    for x, y in loader:\n"
            "        loss = model(x).sum()\n        loss.backward()\n        xm.optimizer_step(opt)\n"
            "        torch_xla.sync()\n        r = xm.all_reduce(xm.REDUCE_SUM, loss)\n")
    reads = "".join(f"        if flags[{i}]:\n            r = r + xm.all_reduce(xm.REDUCE_SUM, loss)\n"
                    f"        print(r.item())\n" for i in range(n))
    evals = "".join(f"        for vx in val_loader{i}:\n            acc{i} = model(vx)\n"
                    f"        print(acc{i}.sum().item())\n" for i in range(n))
    return HEAD + "\n\n" + head + reads + evals


_DICT_STEP = ("def train(model, opt, loader):\n    for step, (x, y) in enumerate(loader):\n"
              "        loss = model(x).sum()\n        loss.backward()\n"
              "        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
              "        xm.optimizer_step(opt)\n")


def dict_helper_fan(n: int) -> str:
    """One helper reads N keys of its dict parameter; the step calls it from N sites, each
    passing a dict name or display with a device tensor under one key (XLA501 for each
    device key): the device keys of every caller are gathered once per (helper, parameter)."""
    helper = "def log(step, o):\n" + "".join(f'    print(o["k{i}"].item(), o["b"])\n' for i in range(n))
    calls = "".join(f'        out{i} = {{"k{i}": loss.detach(), "b": step * {i}}}\n        log(step, out{i})\n'
                    for i in range(n))
    return HEAD + "\n\n" + helper + "\n\n" + _DICT_STEP + calls


def dict_chains(n: int) -> str:
    """N dict displays each built from the previous one's item, each read, the last one's
    device item read on the host (one XLA501), and the clip norm read: one walk of the
    function answers how every name is used."""
    body = '        d0 = {"x": loss.detach(), "n": norm}\n'
    body += "".join(f'        d{i} = {{"x": d{i - 1}["x"], "k{i}": {i}}}\n        print(d{i}["k{i}"])\n'
                    for i in range(1, n))
    body += f'        print(d{n - 1}["x"].item())\n        print(d0["n"].item())\n'
    return HEAD + "\n\n" + _DICT_STEP + body


GENERATORS = {f.__name__: f for f in (dict_helper_fan, dict_chains, self_state_hierarchy, held_modules, generator_loops,
                                      early_returns, elif_chain, superseding_findings, call_chain, step_loops, elif_imports,
                                      exit_imports, many_timers, launches, spmd_launches, guarded_saves, runtime_odds,
                                      rank_devices, env_reads_after_returns, syncs_after_continues, double_steps,
                                      same_optimizer_steps, wide_unpacking, wide_loop_targets,
                                      long_attribute_chains, inheritance_chain, mixin_chain, wide_bases,
                                      shared_trainer, loader_parameters, helper_steps, nested_step_loops,
                                      launched_subclasses, unreduced_workers, overriding_steps,
                                      dataset_subclasses,
                                      post_sync_reads, carried_loops, nested_carried_loops)}

#: the first size of a shape whose N is bounded or costly (default 100; each test doubles it twice)
SIZES = {"nested_step_loops": 12, "nested_carried_loops": 12, "carried_loops": 25, "shared_trainer": 50, "loader_parameters": 200}
