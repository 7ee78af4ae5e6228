"""Where kernelmill keeps its caches (no torch here: the command's early start reads it)."""

from __future__ import annotations

import os
from pathlib import Path


def default_cache_dir() -> Path:
    base = os.environ.get("KERNELMILL_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "kernelmill")
    return Path(base)
