"""A package face whose names are imported on first use (PEP 562): a package's
`__getattr__` and `__dir__` from a {name: submodule} table, so importing the package (or
a light submodule of it) does not import what its heavy submodules need (torch, numpy)."""

from __future__ import annotations

import importlib
import sys
from typing import Any, Callable


def lazy_face(package: str, where: dict[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """(`__getattr__`, `__dir__`) for `package`, whose names live in `where[name]`: a
    submodule holding the name, "submodule:attr" for another name there, or the
    submodule itself when its last part is the name."""

    def __getattr__(name: str) -> Any:
        if name in where:
            place, _, attr = where[name].partition(":")
            module = importlib.import_module(f"{package}.{place}")
            # "sub.mod:other": another name there; "sub.name" (the name itself): that submodule
            # not cached on the package: the face always hands out what the submodule holds
            # now (a test that patches the submodule patches what the face gives)
            return getattr(module, attr) if attr else module if place.rsplit(".", 1)[-1] == name else getattr(module, name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(where))

    return __getattr__, __dir__
