"""The memoised class order (``Model.mro``, ``mro_any``, ``_mro_methods``,
``_class_methods``) answers exactly what the plain breadth-first walk over the bases
answers, whatever class is asked first:
random class graphs with several bases, chains, diamonds and cycles of bases (legal to
write, an error only when run), methods defined at different levels."""

from __future__ import annotations

import ast

from hypothesis import given, settings, strategies as st

from flake8_xla.model import Model

NAMES = ("a", "b", "c")


def reference_mro(model, cls):
    """The breadth-first walk the memoised MRO must equal (each class once)."""
    out, seen, i = [cls], {id(cls)}, 0
    while i < len(out):
        c = out[i]
        i += 1
        for base in c.node.bases:
            if type(base) is ast.Name:
                b = model.class_named(base.id, c.ctx)
                if b is not None and id(b) not in seen:
                    seen.add(id(b))
                    out.append(b)
    return out


def reference_module(model, cls):
    return any(model.qualname(base, c.ctx) == "torch.nn.Module" for c in reference_mro(model, cls)
               for base in c.node.bases)


def reference_method(model, cls, name):
    return next(([c.methods[name]] for c in reference_mro(model, cls) if name in c.methods), [])


def reference_class_methods(model, cls):
    found = {}
    for c in reference_mro(model, cls):
        for name, method in c.methods.items():
            found.setdefault(name, method)
    return list(found.values())


@st.composite
def class_graphs(draw):
    """(source, the order to ask the classes in) for up to 9 classes, each with up to 3
    bases among all of them (forward names: cycles), some a torch module, some methods."""
    n = draw(st.integers(1, 9))
    lines = ["import torch\n"]
    for i in range(n):
        bases = [f"C{j}" for j in draw(st.lists(st.integers(0, n - 1), max_size=3, unique=True))]
        if draw(st.booleans()) and draw(st.booleans()):
            bases.insert(draw(st.integers(0, len(bases))), "torch.nn.Module")
        methods = draw(st.permutations(NAMES))[:draw(st.integers(0, 3))]
        body = "".join(f"    def {m}(self):\n        return {i}\n" for m in methods) or "    pass\n"
        lines.append(f"class C{i}({', '.join(bases)}):\n{body}")
    return "".join(lines), draw(st.permutations(range(n)))


@settings(max_examples=300, deadline=None)
@given(class_graphs())
def test_memoised_class_order_is_the_breadth_first_walk(graph):
    source, order = graph
    model = Model(ast.parse(source))
    classes = [model.classes[i] for i in order]
    for cls in classes:  # the memoised answers, asked in a random order
        assert [c.name for c in model.mro(cls)] == [c.name for c in reference_mro(model, cls)], source
        assert model.is_module_class(cls) == reference_module(model, cls), source
        for name in NAMES:
            assert model._mro_methods(cls, name) == reference_method(model, cls, name), (source, cls.name, name)
        assert model._class_methods(cls) == reference_class_methods(model, cls), source  # same order too


def test_chain_with_a_mixin_reuses_the_base_order():
    """``class Mi(M(i-1), Mixin)``: the order of each class is its own, the base before the
    mixin, the mixin once (where the reused order already has it)."""
    source = "class Mixin:\n    pass\n\n\nclass M0:\n    pass\n\n\n" + "".join(
        f"class M{i}(M{i - 1}, Mixin):\n    pass\n\n\n" for i in range(1, 5))
    model = Model(ast.parse(source))
    last = model.classes[-1]
    assert [c.name for c in model.mro(last)] == ["M4", "M3", "Mixin", "M2", "M1", "M0"]
    assert [c.name for c in model.mro(model.classes[2])] == ["M1", "M0", "Mixin"]
