"""The engine: runs the rules over one module and never lets a rule crash the host.

Every adapter (flake8, pylint, the CLI) calls :func:`run` with a parsed tree and gets
back a sorted list of :class:`~flake8_xla.registry.Finding`.
"""

from __future__ import annotations

import ast
import bisect
import gc
from typing import Iterable, Sequence

from .model import Model
from .project import EMPTY, ProjectFacts, answers_for, callers_lookup, defs_lookup, facts_for, findings_for, \
    helper_lookup, imported, lend_tree, reach_verdict, imported_before_launch, project_names_xla, project_uses_xla, with_launchers
from .registry import ANYWHERE, ENV, ENV_PREFIXES, ENV_SETTERS, UNIMPORTED, XLA_DEVICE_TEXTS, Finding, Rule, \
    all_rules
from .settings import Settings


def needs_walk(source: str | None, settings: Settings) -> bool:
    """Fast path: can anything fire in a module with this text?

    No rule fires in a module whose text never mentions ``torch``; in the default scope
    (``auto``) none fires unless the text mentions ``torch_xla`` (every rule needs a
    torch_xla import, or a torch_xla name, to fire) -- except the environment-variable
    rules (scope ``ENV``), which fire wherever ``XLA_*`` / ``PJRT_*`` / ``XRT_*`` is set:
    their text test is a prefix and ``environ`` or ``putenv``, checked only when the first
    test fails (one more substring scan, ``env``, for most files) -- and XLA406 (scope
    ``UNIMPORTED``: an ``"xla"`` device in a module that never imports torch_xla), whose
    text test is a quoted ``xla`` (``"xla`` or ``'xla``: two more scans).
    """
    if source is None:
        return True
    if ("torch" if settings.scope == "always" else "torch_xla") in source:
        return True
    return any(t in source for t in XLA_DEVICE_TEXTS) or _may_set_env(source)


def _may_set_env(source: str) -> bool:
    # "env" is in both setters: one scan turns away most files (9 in 10 of site-packages)
    return "env" in source and any(p in source for p in ENV_PREFIXES) and any(s in source for s in ENV_SETTERS)


def internal_error(where: str, exc: BaseException) -> Finding:
    return Finding(1, 0, "XLA000", f"internal error in {where} ({type(exc).__name__}); please report")


def run(
    tree: ast.AST,
    settings: Settings | None = None,
    source: str | Sequence[str] | None = None,
    rules: Iterable[type[Rule]] | None = None,
    filename: str | None = None,
) -> list[Finding]:
    """Lint one module.

    Args:
        tree: the parsed module (flake8's tree; never modified).
        settings: scope and target version; defaults to ``Settings()``.
        source: the module's text (a string or its lines) for the fast path; ``None``
            skips the fast path.
        rules: the rule classes to run; default every registered rule.
        filename: the module's file (relative to the working directory or absolute), for
            project mode (``xla-project``): the other modules of its project are read from
            the root found from it. ``None`` (stdin without a file name): the module alone.

    Returns:
        Findings sorted by (line, col, code). A rule that raises becomes one ``XLA000``
        finding at line 1 naming the rule and the exception type; the other rules still
        run. Nothing is printed.
    """
    settings = settings or Settings()
    if source is not None and not isinstance(source, str):
        source = "".join(source)
    paused = gc.isenabled()
    if paused:
        # every object the model makes lives until the run ends, and release() frees them
        # all by reference counting: a collection during the run would only move them
        # between generations (a third of the engine's time with the collector on); the
        # same holds for the project layer's work for this module (the summaries a first
        # question builds, kept for the process), so the pause starts before it
        gc.disable()
    try:
        return _run(tree, settings, source, rules, filename)
    finally:
        if paused:
            gc.enable()


def _run(tree: ast.AST, settings: Settings, source: str | None, rules: Iterable[type[Rule]] | None,
         filename: str | None) -> list[Finding]:
    """:func:`run` with the collector paused."""
    facts = EMPTY
    project = bool(filename and settings.project == "on")
    if not needs_walk(source, settings):
        # a module without torch_xla may still be XLA code where the project's XLA code
        # reaches it (even one that never mentions torch: a callbacks module the trainer
        # calls), or launch through a project's wrapper; one that never mentions torch is
        # looked at only when some module of its project names torch_xla (one bytes search
        # per root and process), so plain projects stay on the fast path
        if not project or source is None:
            return []
        plain = "torch" not in source
        if plain and not _project_uses_xla(filename, settings):
            return []
        rule_classes = list(rules) if rules is not None else list(all_rules().values())
        stored = None
        consult = not plain or _imported(filename, settings)
        if consult:
            # the reach verdict a previous run kept: most such modules are reached by no
            # launch (no project facts, nothing fires); a reached one's findings may be kept
            # (one that never mentions torch and that no module imports never touches the cache)
            verdict = _reach_verdict(filename, settings)
            if verdict is False:
                return []
            if verdict:
                stored = _stored(filename, settings, source, rule_classes)
                found = _get(stored) if stored is not None else None
                if found is not None:
                    return [Finding(*f) for f in found]
        facts = _project_facts(filename, settings, plain, None)
        if facts is None:  # (the project could not be read: unknown, nothing kept)
            return []
        if facts is EMPTY:
            if stored is not None:
                _put(stored, [])
            return []
        if stored is None and consult:  # (reached: kept, though no verdict was there to say so)
            stored = _stored(filename, settings, source, rule_classes)
    else:
        rule_classes = list(rules) if rules is not None else list(all_rules().values())
        stored = None
    if project and facts is EMPTY:
        # a module that needs the walk: its findings of a previous run with the same inputs
        # (its text, the project's files, the settings, the rules) are its findings now
        stored = _stored(filename, settings, source, rule_classes)
        if stored is not None:
            found = _get(stored)
            if found is not None:
                return [Finding(*f) for f in found]
        lend_tree(filename, settings, source, tree)  # (a summary of this module reuses the host's tree)
        facts = _project_facts(filename, settings, False, None)
        if facts is None:  # (the project could not be read: the module alone, nothing kept)
            facts, stored = EMPTY, None
    if facts.launchers:
        settings = with_launchers(settings, facts.launchers)
    try:
        try:
            lookup = helper_lookup(filename, tree, settings) if project else None
            model = Model(tree, settings, facts.reached, facts.launchers, lookup,
                          callers_lookup(filename, settings) if project else None, facts.setup,
                          defs_lookup(filename, tree, settings) if project else None,
                          project_launcher_selves=facts.launcher_selves, project_dispatch=facts.dispatch,
                          project_resolved=facts.resolved,
                          project_answers=_answers(filename, settings, source, rule_classes) if project else None)
            if project:  # asked (once per root and process) only by XLA406, only where it may fire
                model.project_xla_probe = lambda: _project_names_xla(filename, settings)
                model.project_import_probe = lambda: _imported_before_launch(filename, settings)
                model.project_overridden = facts.overridden
        except Exception as exc:  # never crash the host's run
            return [internal_error("the semantic model", exc)]
        try:
            found = _check(model, settings, rule_classes)
            if model.project_answers is not None:
                _flush(model.project_answers)
            if model.dead_blocks:  # code that never runs (if False:, if TYPE_CHECKING:, ...)
                found = [f for f in found if not model.in_dead_code(f.line, f.col)]
            found = _name_callers(model, facts, found) if facts.callers and not model.uses_torch_xla else found
            if stored is not None:
                _put(stored, found)
            return found
        finally:
            model.release()
    finally:
        if project:
            lend_tree(None, settings, None, None)


def _answers(filename: str, settings: Settings, source: str | None, rule_classes: list[type[Rule]]):
    """The module's stored answers to the project questions its rules ask most
    (:mod:`flake8_xla.project.answers`), or ``None``."""
    try:
        return answers_for(filename, settings, source, tuple(cls.code for cls in rule_classes))
    except (Exception, RecursionError):  # never crash the host's run: every answer is computed
        return None


def _stored(filename: str, settings: Settings, source: str | None, rule_classes: list[type[Rule]]):
    """The module's findings entry (:mod:`flake8_xla.project.findings`), or ``None``."""
    try:
        return findings_for(filename, settings, source,
                            tuple(f"{cls.code}:{cls.__module__}.{cls.__qualname__}" for cls in rule_classes))
    except (Exception, RecursionError):  # never crash the host's run: the module is linted
        return None


def _imported(filename: str, settings: Settings) -> bool:
    try:
        return imported(filename, settings)
    except (Exception, RecursionError):  # never crash the host's run: the fast path stays
        return False


def _reach_verdict(filename: str, settings: Settings) -> bool | None:
    try:
        return reach_verdict(filename, settings)
    except (Exception, RecursionError):  # never crash the host's run: the reach is asked
        return None


def _get(stored) -> tuple | None:
    try:
        return stored.get()
    except (Exception, RecursionError):  # (an entry that cannot be read: linted again)
        return None


def _put(stored, found: list[Finding]) -> None:
    try:
        stored.put(found)
    except (Exception, RecursionError):  # (a cache that cannot be written: the next run lints again)
        pass


def _flush(answers) -> None:
    try:
        answers.flush()
    except (Exception, RecursionError):  # (a cache that cannot be written: the next run computes again)
        pass


def _project_facts(filename: str, settings: Settings, plain: bool = False, failed=EMPTY) -> ProjectFacts:
    """Project mode's facts about this module (``plain``: its text never mentions torch); none
    (and no error) when the project cannot be read: ``failed`` (default :data:`EMPTY`)."""
    try:
        return facts_for(filename, settings, plain)
    except (Exception, RecursionError):  # never crash the host's run: unknown, so nothing fires
        return failed


def _project_uses_xla(filename: str, settings: Settings) -> bool:
    try:
        return project_uses_xla(filename, settings)
    except (Exception, RecursionError):  # never crash the host's run: stay on the fast path
        return False


def _project_names_xla(filename: str, settings: Settings) -> bool | None:
    try:
        return project_names_xla(filename, settings)
    except (Exception, RecursionError):  # never crash the host's run: unknown, so nothing fires
        return None


def _imported_before_launch(filename: str, settings: Settings) -> str | None:
    try:
        return imported_before_launch(filename, settings)
    except (Exception, RecursionError):  # never crash the host's run: unknown, so nothing fires
        return None


def _name_callers(model: Model, facts: ProjectFacts, findings: list[Finding]) -> list[Finding]:
    """In a module without torch_xla, a finding is XLA code only because another module's
    launched code calls it: name the function and that module (``... (in train_fn, run from
    train.py); fix``)."""
    quals = model.function_quals()
    spans = sorted((f.node.lineno, f.node.end_lineno or f.node.lineno, quals[id(f)])
                   for f in model.project_roots())
    starts = [start for start, _, _ in spans]
    out = []
    for f in findings:
        # the innermost function around the line: the last one starting at or before it
        # that also ends after it (nested defs come after their parent in start order)
        i = bisect.bisect_right(starts, f.line) - 1
        while i >= 0 and spans[i][1] < f.line:
            i -= 1
        inside = spans[i][2] if i >= 0 else None
        caller = facts.callers.get(inside) if inside else None
        if caller and "; " in f.message:
            problem, fix = f.message.split("; ", 1)
            f = Finding(f.line, f.col, f.code, f"{problem} (in {inside[:40]}, run from {caller[-40:]}); {fix}", f.end)
        out.append(f)
    return out


def _check(model: Model, settings: Settings, rule_classes: list[type[Rule]]) -> list[Finding]:
    context_ok = model.uses_torch_xla or settings.scope == "always" or model.in_project()
    findings: list[Finding] = []
    for cls in rule_classes:
        if cls.scope == ANYWHERE:
            if not model.uses_torch_xla and not model.xla_param_aliases():
                continue  # API rules need a torch_xla name: a torch_xla import, or a parameter every caller binds to one
        elif cls.scope == UNIMPORTED:
            if model.has_xla_import() or model.in_project():
                continue  # XLA406 looks only at modules that never import torch_xla
        elif cls.scope != ENV and not context_ok:
            continue  # ENV rules run in every module: they look at where each variable is set
        try:
            findings.extend(cls(settings).check(model))
        except Exception as exc:
            findings.append(internal_error(cls.code, exc))
    return _one_finding_per_fix(findings, rule_classes, settings.unreported)


def _one_finding_per_fix(findings: list[Finding], rule_classes: list[type[Rule]],
                         unreported: tuple[str, ...] = ()) -> list[Finding]:
    """Drop a finding that lies inside the node of a finding whose rule supersedes its code
    (XLA103 on ``init_process_group("gloo", rank=int(os.environ["RANK"]))`` covers the
    XLA109 on the env read: one fix rewrites the whole call). A rule in ``unreported`` (the
    host will not show it) supersedes nothing, nor does a finding with ``covers=False``
    (its fix leaves the other finding's problem in place)."""
    if len(findings) < 2:
        return findings
    superseded: dict[str, set[str]] = {}
    for cls in rule_classes:
        if cls.code in unreported:
            continue
        for code in cls.supersedes:
            superseded.setdefault(code, set()).add(cls.code)
    # per superseding code: its findings' spans sorted by start, with the running maximum of
    # their ends, so "inside a span of code C" is one bisect (linear in findings overall)
    spans: dict[str, tuple[list, list]] = {}
    for code in {c for sups in superseded.values() for c in sups}:
        found = sorted(((f.line, f.col), f.end or (f.line, f.col)) for f in findings if f.code == code and f.covers)
        starts, reach, best = [], [], None
        for start, end in found:
            best = end if best is None or end > best else best
            starts.append(start)
            reach.append(best)
        spans[code] = (starts, reach)

    def covered(f: Finding) -> bool:
        pos = (f.line, f.col)
        for sup in superseded.get(f.code, ()):
            starts, reach = spans.get(sup, ((), ()))
            i = bisect.bisect_right(starts, pos)
            if i and reach[i - 1] >= pos:
                return True
        return False

    return sorted({f for f in findings if not covered(f)})
