"""KernelBench problems at a size a CPU can run, and what a task needs at a given size.

KernelBench's files are written for a GPU (level 1's ReLU moves 6.4 GB); they carry no
`SIZE_PROFILES`. `small_profile(task)` derives one by a fixed rule, so `--profile small`
(the default on a CPU) shrinks any such file the same way every time:

1. The sizes it may change are the file's module-level integers whose names say batch,
   sequence or spatial extent (`batch_size`, `batch`, `N`, `M`, `L`, `seq_len`, `length`,
   `height`, `width`, `depth`, `dim`, `dim1`, ..., and names ending in `_len`,
   `_length`, `_size` other than `kernel_size`), and the largest element of module-level
   integer tuples named `*shape*`. Channels, features, heads, kernel sizes, strides,
   paddings and groups stay as written: they fix the model's weights and its arithmetic.
2. While the reference moves more than `SMALL_BYTES` (64 MB: its inputs, parameters and
   outputs, traced on PyTorch's meta device at no cost), the largest of those sizes is
   halved (the first in the file on a tie), never below 2 (a batch) or 8 (any other).
3. A size whose halving makes the program fail (a shape it cannot take) is halved together
   with the sizes of the same value (a batch and a shape that must broadcast); if that fails
   too it is put back and left alone; so is a size whose halving moves no fewer bytes
   (a constant the program does not use for its tensors). What was applied is recorded in every verdict (`measurement.sizes`).

`needs(task, overrides)` is the trace behind it: FLOPs and bytes moved at a size, which
`verify` uses to say before any candidate runs that a task will not fit the machine.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import replace
from typing import Any

from ..records import Task

SMALL_BYTES = 64 << 20
RULE = ("small: batch, sequence and spatial sizes halved, the largest first, until the reference moves at most "
        "64 MB (tasks/scaling.py)")
_SIZE_NAME = re.compile(r"^(batch(_size)?|batches|n|m|l|b|seq(_len|_length|uence_length)?|length|tokens|num_tokens|"
                        r"height|width|depth|h|w|d|dim\d*|spatial|size|input_length|.*_len|.*_length|.*_size)$",
                        re.IGNORECASE)
_KEEP = re.compile(r"kernel|stride|pad|dilation|group|channel|feature|head|embed|hidden|vocab|class|expert",
                   re.IGNORECASE)


def size_constants(code: str) -> dict[str, Any]:
    """The module-level sizes rule 1 may change, with their values as written."""
    out: dict[str, Any] = {}
    for node in ast.parse(code).body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        name = node.targets[0].id
        value = _constant(node.value)
        if value is None:
            continue
        if _KEEP.search(name):
            continue
        if isinstance(value, int) and not isinstance(value, bool) and value > 1 and _SIZE_NAME.match(name):
            out[name] = value
        elif ("shape" in name.lower() and isinstance(value, tuple) and value
              and all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
            out[name] = value
    return out


def _constant(node: ast.AST) -> Any:
    """An int, or a tuple of ints, written as literals and + - * // ** (`N = 2048 * 2`); else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Tuple):
        items = [_constant(e) for e in node.elts]
        return tuple(items) if items and all(isinstance(i, int) for i in items) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Pow)):
        a, b = _constant(node.left), _constant(node.right)
        if not (isinstance(a, int) and isinstance(b, int)) or (isinstance(node.op, ast.Pow) and b > 64):
            return None
        ops = {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b}
        if isinstance(node.op, ast.FloorDiv):
            return a // b if b else None
        return ops.get(type(node.op), a ** b if isinstance(node.op, ast.Pow) else None)
    return None


def needs(task: Task, overrides: dict[str, Any] | None = None):
    """The reference's FLOPs and bytes moved at `overrides` (dsl.features' meta trace):
    a `Features` (its `error` set when the program cannot be traced there)."""
    from ..dsl.features import _trace

    try:
        return _trace(task, "meta", overrides or {}, 20.0)
    except Exception as exc:  # noqa: BLE001 - the program's own failure at this size
        from ..dsl.features import Features

        return Features(task.task_id, error=f"{type(exc).__name__}: {exc}")


def _largest(value: Any) -> int:
    return max(value) if isinstance(value, tuple) else value


def _halved(value: Any, floor: int) -> Any | None:
    if isinstance(value, tuple):
        i = max(range(len(value)), key=lambda k: value[k])
        new = max(floor, value[i] // 2)
        return None if new == value[i] else value[:i] + (new,) + value[i + 1:]
    new = max(floor, value // 2)
    return None if new == value else new


def small_profile(task: Task, budget: int = SMALL_BYTES) -> dict[str, Any]:
    """The overrides of rule 2 for a task without a `small` profile of its own ({} when
    the task is already within the budget, or nothing can be shrunk)."""
    sizes = size_constants(task.code)
    if not sizes:
        return {}
    feats = needs(task)
    if feats.error or feats.bytes_moved <= budget:
        return {}
    current = dict(sizes)
    moved = feats.bytes_moved
    frozen: set[str] = set()
    for _ in range(200):  # each step halves one size: 200 steps shrink anything
        live = [n for n in current if n not in frozen]
        if not live:
            break
        name = max(live, key=lambda n: _largest(current[n]))
        new = _halved(current[name], 2 if name.lower().startswith("batch") or name.lower() in ("b", "batches") else 8)
        if new is None:
            frozen.add(name)
            continue
        trial = {**current, name: new}
        f = needs(task, {k: v for k, v in trial.items() if v != sizes[k]})
        if f.error:  # sizes that must stay equal (a batch and a shape that broadcast together) halve together
            peers = [n for n in live if n != name and _largest(current[n]) == _largest(current[name])]
            for n in peers:
                trial[n] = _halved(current[n], 8) or current[n]
            f = needs(task, {k: v for k, v in trial.items() if v != sizes[k]}) if peers else f
        if f.error or f.bytes_moved >= moved:  # it fails, or it sizes nothing the reference moves
            frozen.add(name)
            continue
        current, moved = trial, f.bytes_moved
        if moved <= budget:
            break
    return {k: v for k, v in current.items() if v != sizes[k]}


@functools.lru_cache(maxsize=4096)
def _derived(task_id: str, code: str) -> tuple:
    # the CLI's resume check, its fit warnings and the run each ask for it: traced once
    return tuple(small_profile(Task(task_id, code)).items())


def with_small_profile(task: Task) -> Task:
    """The task with a derived `small` profile where it has none of its own."""
    if "small" in (task.sizes or {}):
        return task
    derived = dict(_derived(task.task_id, task.code))
    return replace(task, sizes={**(task.sizes or {}), "small": derived}) if derived else task


# a CPU core's fp32 rate the estimate assumes (a conservative AVX2 core; timing runs one
# thread a side: TimingConfig.cpu_threads), and the reference calls a verification makes
# (trials, checks and the timing rounds of both sides, about)
CPU_FLOPS = 20e9
CALLS = 60


def fit_problem(task: Task, overrides: dict[str, Any], device: str, memory_gb: float,
                run_timeout: float) -> str | None:
    """Why a task at `overrides` will not verify on this machine, with the numbers, or None:
    its reference moves more than a third of a candidate's memory limit (inputs, weights,
    outputs, and the copies a check keeps), or, on a CPU, its calls take longer than the
    run's timeout at `CPU_FLOPS`."""
    f = needs(task, overrides)
    if f.error:
        return None  # not traceable on the meta device: nothing to say ahead
    gb = f.bytes_moved / 2**30
    if gb * 3 > memory_gb:
        return (f"moves {gb:.1f} GB a call (inputs, weights, outputs); with the copies a check keeps that is "
                f"more than a candidate's {memory_gb:g} GB limit")
    if device == "cpu" and f.flops:
        secs = f.flops / CPU_FLOPS * CALLS
        if secs > run_timeout:
            return (f"{f.flops / 1e9:.0f} GFLOP a call: about {secs:.0f} s for the ~{CALLS} calls of a verification "
                    f"on one core at {CPU_FLOPS / 1e9:.0f} GFLOP/s, over the {run_timeout:g} s run timeout")
    return None
