"""nvcc's per-compile symbol hashes, blanked so two compiles of one program compare equal."""

from __future__ import annotations

import re

_INTERNAL = re.compile(r"(\d+)(_GLOBAL__N_|_INTERNAL_)")


def normalize_symbol(name: str) -> str:
    """Blank nvcc's per-compile part of internal names: `_ZN46_GLOBAL__N__1ff0..._26737` + `2an`
    (a length-prefixed component) becomes `_ZN#2an`."""
    out, pos = [], 0
    for m in _INTERNAL.finditer(name):
        if m.start() < pos:
            continue
        n = int(m.group(1))
        out.append(name[pos:m.start()] + "#")
        pos = m.end(1) + n
    return "".join(out) + name[pos:] if out else name
