"""The one walker of tensor trees: a tensor, or lists, tuples (and, where asked, dicts)
of them and of other values, as inputs and outputs are.

Every copy, move, snapshot or listing of a tree's tensors in verify/ goes through
`map_tensors` or `tensors_in`, so all agree on what a tree is. torch is imported on
first use: process/loading.py, which the worker imports before torch, uses these.
"""

from __future__ import annotations

from typing import Any, Callable


def map_tensors(obj: Any, fn: Callable[[Any], Any], *, lists: bool = False, dicts: bool = False,
                plain: bool = False) -> Any:
    """`obj` with every tensor `t` replaced by `fn(t)`, through nested lists and tuples
    (and dicts, with `dicts`); a container keeps its type, or becomes a list with
    `lists`, or a plain list or tuple with `plain` (a namedtuple a tuple: what a file
    the candidate's process loads with `weights_only` can hold); anything else is
    returned as it is."""
    import torch

    return _map(obj, fn, "lists" if lists else "plain" if plain else "keep", dicts, torch.Tensor)


def _map(o: Any, fn: Callable[[Any], Any], lists: str, dicts: bool, tensor: type) -> Any:
    # a module-level recursion, not a closure: a recursive closure is a reference cycle
    # (the function and its own cell) that keeps `fn`, and what `fn` holds (the tensors
    # `tensors_in` collects), alive until the cyclic collector runs. Called per timed
    # call, that held a large task's outputs: a resident candidate (gc.freeze) passed
    # its 4 GiB memory limit (the hostile corpus, i15)
    if isinstance(o, tensor):
        return fn(o)
    if isinstance(o, (list, tuple)):
        items = [_map(x, fn, lists, dicts, tensor) for x in o]
        if lists == "lists" or (lists == "plain" and isinstance(o, list)):
            return items
        if lists == "plain":
            return tuple(items)
        return type(o)(*items) if hasattr(o, "_fields") else type(o)(items)  # a namedtuple takes fields
    if dicts and isinstance(o, dict):
        return {k: _map(v, fn, lists, dicts, tensor) for k, v in o.items()}
    return o


def tensors_in(obj: Any, *, dicts: bool = True) -> list:
    """The tensors of a tree, in order (dict values too unless `dicts` is False)."""
    found: list = []
    map_tensors(obj, found.append, dicts=dicts)
    return found


def leaves(obj: Any, where: str = "output") -> list[tuple[str, Any]]:
    """Every leaf of nested lists and tuples (tensors and anything else), each with a
    readable path: ``output[1][0]``."""
    if isinstance(obj, (tuple, list)):
        return [leaf for i, item in enumerate(obj) for leaf in leaves(item, f"{where}[{i}]")]
    return [(where, obj)]


def with_leaves(obj: Any, new: list[Any]) -> Any:
    """`obj`'s list/tuple structure with its leaves (as `leaves` lists them) replaced by
    `new`, in order."""
    return _with(obj, iter(new))


def _with(o: Any, it) -> Any:
    if isinstance(o, (tuple, list)):
        return type(o)(_with(i, it) for i in o)
    return next(it)
