"""Building a candidate's lazy ``load_inline`` calls in the build phase.

LLM-written candidates often build their extensions where they first need
them: in ``__init__``, in ``forward`` (cached in a global or an attribute), or
in a helper, frequently inside ``try``/``except`` with a PyTorch fallback.
Importing the module (the build phase) runs none of those calls, so their
compiles used to land in the run phase, on the GPU's run worker, one at a
time. Here the build worker finds every ``load_inline`` call in the source
that the import did not run, works out its arguments without running the
candidate's functions, and builds each into the shared cache (`inline_build`).
When the candidate later makes the call on the run worker, the cache answers
it: no compile there (the run phase reports its compiles, `inline_build`'s
``compiles``, so a miss shows).

How arguments are found, per call: the module's globals after import, plus
the simple assignments (``name = expression``, or names unpacked from one:
``a, b = expression``) of the enclosing functions, evaluated in source order
before the call, each in that growing namespace; an assignment whose value
cannot be computed that way (it calls the candidate's code, reads ``self`` or
the inputs) is skipped. One that picks from a table by a key known only at
run time (``name, src = table[which]``, a dict, list or tuple of at most
`MAX_CHOICES` entries) is computed for every entry: a candidate with several
extensions behind one helper builds them all. Evaluating an expression runs no
candidate function unless the expression itself calls one (string formatting
and concatenation of constants is what LLM code has here). A call whose
arguments still cannot be computed is reported as unresolved and left to the
run phase. The distinct calls found are built at once (`MAX_PARALLEL`).

Why by hand: the calls are in the candidate's own source, in arbitrary
places; no library extracts and evaluates them.
"""

from __future__ import annotations

import ast
import inspect
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from types import ModuleType

from ...cudasrc.inline_calls import inline_calls


@dataclass
class LazyCall:
    line: int
    scopes: list[ast.AST]  # enclosing function definitions, outermost first
    call: ast.Call


@dataclass
class PrebuildReport:
    found: int = 0  # load_inline calls the import did not run
    built: int = 0  # built into the cache here (or already there)
    unresolved: list[str] = field(default_factory=list)  # "line N: why"
    failed: list[str] = field(default_factory=list)  # compile errors: the run phase will meet them too
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return {"found": self.found, "built": self.built, "unresolved": self.unresolved[:10],
                "failed": self.failed[:10], "seconds": round(self.seconds, 3)}


def lazy_calls(code: str) -> list[LazyCall]:
    """``load_inline`` calls inside function bodies (the ones an import does not run)."""
    return [LazyCall(c.line, c.scopes, c.call) for c in inline_calls(code) if c.lazy]


MAX_CHOICES = 8  # entries of a table indexed by a run-time key that are tried, each
MAX_NAMESPACES = 16  # combinations of such choices followed per call
MAX_PARALLEL = 4  # distinct calls of one candidate built at once


def _names(target: ast.AST) -> bool:
    return isinstance(target, ast.Name) or (isinstance(target, (ast.Tuple, ast.List))
                                            and all(isinstance(e, ast.Name) for e in target.elts))


def _assignments_before(scope: ast.AST, line: int) -> list[ast.Assign]:
    """``name = value`` and ``a, b = value`` statements of `scope` (any depth, not
    nested functions) that come before `line`, in source order."""
    out: list[ast.Assign] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            if isinstance(child, ast.Assign) and child.lineno < line and all(_names(t) for t in child.targets):
                out.append(child)
            visit(child)

    visit(scope)
    return sorted(out, key=lambda a: (a.lineno, a.col_offset))


def _eval(node: ast.AST, namespace: dict):
    return eval(compile(ast.Expression(node), "<candidate>", "eval"), namespace)  # noqa: S307 - the candidate's own expression, in its own build process


def _bind(target: ast.AST, value, namespace: dict) -> dict | None:
    """`namespace` with `target` assigned `value` (None when it does not unpack)."""
    if isinstance(target, ast.Name):
        return {**namespace, target.id: value}
    try:
        values = list(value)
    except TypeError:
        return None
    if len(values) != len(target.elts):
        return None
    return {**namespace, **{e.id: v for e, v in zip(target.elts, values)}}


def _choices(node: ast.AST, namespace: dict) -> list | None:
    """Every value `node` may take when it indexes a known table by an unknown key."""
    if not isinstance(node, ast.Subscript):
        return None
    try:
        table = _eval(node.value, namespace)
    except Exception:  # noqa: BLE001
        return None
    if isinstance(table, dict) and 0 < len(table) <= MAX_CHOICES:
        return list(table.values())
    if isinstance(table, (list, tuple)) and 0 < len(table) <= MAX_CHOICES:
        return list(table)
    return None


def _namespaces(call: LazyCall, module_globals: dict) -> list[dict]:
    """The namespaces the call may run in (one per combination of table entries)."""
    spaces = [dict(module_globals)]
    for scope in call.scopes:
        for assign in _assignments_before(scope, call.line):
            after = []
            for ns in spaces:
                try:
                    values = [_eval(assign.value, ns)]
                except Exception:  # noqa: BLE001 - a local that needs the running call
                    values = _choices(assign.value, ns)
                    if values is None:
                        after.append(ns)  # skipped
                        continue
                for value in values:
                    new = ns
                    for target in assign.targets:
                        new = _bind(target, value, new) if new is not None else None
                    after.append(new if new is not None else ns)
            spaces = after[:MAX_NAMESPACES]
    return spaces


def call_arguments(call: LazyCall, module_globals: dict, load_inline_signature: inspect.Signature) -> dict:
    """The keyword arguments of one lazy call; raises ValueError naming what could not be computed."""
    return call_argument_sets(call, module_globals, load_inline_signature)[0]


def call_argument_sets(call: LazyCall, module_globals: dict, load_inline_signature: inspect.Signature) -> list[dict]:
    """Every distinct set of keyword arguments the call may get (several when it picks
    its sources from a table); raises ValueError naming what could not be computed."""
    out, first_error = [], None
    for namespace in _namespaces(call, module_globals):
        try:
            kwargs = _arguments(call, namespace, load_inline_signature)
        except ValueError as exc:
            first_error = first_error or exc
            continue
        if all(repr(kwargs) != repr(o) for o in out):
            out.append(kwargs)
    if not out:
        raise first_error or ValueError("no arguments")
    return out


def _arguments(call: LazyCall, namespace: dict, load_inline_signature: inspect.Signature) -> dict:
    args, kwargs = [], {}
    for i, arg in enumerate(call.call.args):
        if isinstance(arg, ast.Starred):
            raise ValueError("positional arguments unpacked with *")
        try:
            args.append(_eval(arg, namespace))
        except Exception as exc:  # noqa: BLE001
            raise ValueError(f"argument {i + 1}: {type(exc).__name__}: {exc}") from None
    for kw in call.call.keywords:
        if kw.arg is None:
            try:
                kwargs.update(_eval(kw.value, namespace))
            except Exception as exc:  # noqa: BLE001
                raise ValueError(f"**arguments: {type(exc).__name__}: {exc}") from None
            continue
        try:
            kwargs[kw.arg] = _eval(kw.value, namespace)
        except Exception as exc:  # noqa: BLE001
            raise ValueError(f"{kw.arg}=: {type(exc).__name__}: {exc}") from None
    try:
        bound = load_inline_signature.bind(*args, **kwargs)
    except TypeError as exc:
        raise ValueError(str(exc)) from None
    return dict(bound.arguments)


def prebuild(module: ModuleType, code: str) -> PrebuildReport:
    """Build every lazy ``load_inline`` call of `code` (imported as `module`)
    through the installed cached builder; nothing is imported or run."""
    from . import inline_build

    report = PrebuildReport()
    calls = lazy_calls(code)
    report.found = len(calls)
    if not calls:
        return report
    t0 = time.perf_counter()
    signature = inspect.signature(inline_build.build_only)
    todo: dict[str, tuple[int, dict, dict]] = {}
    for call in calls:
        try:
            sets = call_argument_sets(call, vars(module), signature)
        except ValueError as exc:
            report.unresolved.append(f"line {call.line}: {exc}")
            continue
        for kwargs in sets:
            extra = kwargs.pop("unknown", None) or {}
            key = repr(sorted((k, repr(v)) for k, v in {**kwargs, **extra}.items()))
            if key in todo:  # the same call reached twice (a loop's body, two branches)
                report.built += 1
                continue
            todo[key] = (call.line, kwargs, extra)

    def one(item: tuple[int, dict, dict]) -> tuple[str, str]:
        line, kwargs, extra = item
        try:
            inline_build.build_only(**kwargs, **extra)
            return "built", ""
        except inline_build.Unsupported as exc:
            return "unresolved", f"line {line}: {exc}"
        except inline_build.CompileError as exc:
            last = str(exc).strip().splitlines()[-1] if str(exc).strip() else "compile error"
            return "failed", f"line {line}: {last}"
        except Exception as exc:  # noqa: BLE001 - e.g. a source that is not a string
            return "unresolved", f"line {line}: {type(exc).__name__}: {exc}"

    # distinct extensions build at once: their compilers are separate processes
    with ThreadPoolExecutor(max_workers=max(1, min(MAX_PARALLEL, len(todo)))) as pool:
        for what, text in pool.map(one, todo.values()):
            if what == "built":
                report.built += 1
            else:
                getattr(report, what).append(text)
    report.seconds = time.perf_counter() - t0
    return report
