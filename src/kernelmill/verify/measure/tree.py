"""The one walker of tensor trees: a tensor, or lists, tuples (and, where asked, dicts)
of them and of other values, as inputs and outputs are.

Every copy, move, snapshot or listing of a tree's tensors in verify/ goes through
`map_tensors` or `tensors_in`, so all agree on what a tree is. torch is imported on
first use: process/loading.py, which the worker imports before torch, uses these.
"""

from __future__ import annotations

from typing import Any, Callable


def map_tensors(obj: Any, fn: Callable[[Any], Any], *, lists: bool = False, dicts: bool = False) -> Any:
    """`obj` with every tensor `t` replaced by `fn(t)`, through nested lists and tuples
    (and dicts, with `dicts`); a container keeps its type, or becomes a list with
    `lists`; anything else is returned as it is."""
    import torch

    def walk(o: Any) -> Any:
        if isinstance(o, torch.Tensor):
            return fn(o)
        if isinstance(o, (list, tuple)):
            items = [walk(x) for x in o]
            return items if lists else type(o)(items)
        if dicts and isinstance(o, dict):
            return {k: walk(v) for k, v in o.items()}
        return o

    return walk(obj)


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
    it = iter(new)

    def walk(o: Any) -> Any:
        if isinstance(o, (tuple, list)):
            return type(o)(walk(i) for i in o)
        return next(it)

    return walk(obj)
