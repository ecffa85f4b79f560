"""Source samples shared by the robustness tests (no pytest import: other Pythons load it)."""

HEADER = "import torch\nimport torch_xla\nimport torch_xla.core.xla_model as xm\n"

SYNTAX = {
    (3, 10): """
        def f(a, b, /, c, *, d):
            match a:
                case {"x": x, **rest}: return x
                case [1, *others]: return others
                case Point(x=0) | Point(y=0) as p: return p
                case str() if (n := len(a)) > 2: return n
                case _: pass
        with (open("a") as f1, open("b") as f2): pass
        async def g():
            async with ctx() as c:
                async for i in aiter():
                    await c
            return [i async for i in aiter()]
        lambda *args, **kw: (yield)
        global_ = {**{}, 'a': 1}
        print(f"{global_!r:>{10}}")
        x: int = 1
        del x
        """,
    (3, 11): """
        try:
            pass
        except* ValueError as eg:
            pass
        def h(*args: *tuple[int, ...]): pass
        """,
    (3, 12): """
        type Alias[T] = list[T]
        def first[T: (int, str), *Ts, **P](x: T) -> T: return x
        class Box[T]:
            pass
        s = f"{"nested"} {'quotes'}"
        """,
    (3, 13): """
        def f[T = int](x: T) -> T: return x
        class C[T = str]: pass
        """,
    (3, 14): """
        t = t"hello {name}"
        try:
            pass
        except ValueError, TypeError:
            pass
        """,
}
