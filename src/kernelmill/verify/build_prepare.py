"""Building the precompiled torch headers before the first candidate needs them.

Every g++ unit of a ``load_inline`` build includes ``torch/extension.h``;
with a precompiled header it costs about 40% of a plain compile (measured in
docs/verify_scale.md). Left to the builder, the header is built lazily, the
second time a flag set is seen, and the candidate that builds it waits for it
(26 s on the H200 machine). A verification run with enough compiled
candidates instead starts `prepare_pch` in a background process as it starts
(`start_background`): the headers for torch's default flag sets (no
``extra_cflags``/``extra_include_paths``: KernelBench-style candidates) are
built in parallel, in the shared build cache, so they are kept across runs and
no candidate ever waits for one. Candidates that arrive while it runs compile
without it (the builder never waits); a flag set it does not cover still gets
the lazy path.

Run by hand: ``python -m kernelmill.verify.build_prepare CACHE_DIR [--cuda]``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from . import inline_build
from .inline_build import InlineBuilder, Unsupported, torch_flags

# an eager header costs ~2 plain compiles: worth starting only for runs this large
EAGER_MIN_CANDIDATES = int(os.environ.get("KERNELMILL_PCH_EAGER_MIN", "4"))


def default_flag_sets(with_cuda: bool) -> list[tuple[str, list[str]]]:
    """(compiler, flags) of every g++ unit of a default ``load_inline`` call:
    the binding unit and, with CUDA, the host unit of a split CUDA unit."""
    from .cuda_split import host_flags

    flags = torch_flags("kernelmill_pch_probe", with_cuda, None, None, None, None)
    sets = [(flags["cxx"], flags["cflags"])]
    if with_cuda:
        sets.append((flags["cxx"], host_flags(flags["cuda_cflags"])))
    return sets


def prepare_pch(cache_root: str | Path, with_cuda: bool) -> dict:
    """Build the precompiled headers for the default flag sets (in parallel);
    returns what happened per set. Already built: nothing to do."""
    builder = InlineBuilder(cache_root)
    inline_build._FINGERPRINT = ""  # default calls have no user include folders
    try:
        sets = default_flag_sets(with_cuda)
    except Unsupported as exc:
        return {"error": str(exc)}

    def one(cs):
        t = time.perf_counter()
        path = builder._pch(cs[0], cs[1], eager=True)
        return {"ready": path is not None, "seconds": round(time.perf_counter() - t, 2)}

    with ThreadPoolExecutor(max_workers=len(sets)) as pool:
        done = list(pool.map(one, sets))
    out = {"sets": done}
    if "pch_error" in builder.log:
        out["error"] = builder.log["pch_error"]
    return out


def start_background(cache_root: str | Path, with_cuda: bool, env: dict | None = None) -> subprocess.Popen | None:
    """Start `prepare_pch` in its own process (not waited for; it finishes on
    its own even if the run ends first, and a kill leaves no entry)."""
    try:
        return subprocess.Popen([sys.executable, "-m", "kernelmill.verify.build_prepare", str(cache_root),
                                 *(["--cuda"] if with_cuda else [])],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                                start_new_session=True)
    except OSError as exc:
        print(f"kernelmill: could not start the precompiled-header build: {exc}", file=sys.stderr)
        return None


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0].startswith("-"):
        raise SystemExit("usage: python -m kernelmill.verify.build_prepare CACHE_DIR [--cuda]")
    print(json.dumps(prepare_pch(argv[0], "--cuda" in argv[1:])))


if __name__ == "__main__":
    main()
