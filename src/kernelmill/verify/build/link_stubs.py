"""torch's own libraries as empty stand-ins in an extension's link.

torch links an extension against libc10, libtorch_cpu, libtorch and libtorch_python (and
their CUDA siblings). GNU ld reads every symbol of every library it is given: for
libtorch_cpu.so (0.4 GB) that took 0.35-0.6 s of a ~3 s cold build, against 0.1 s for the
link of the candidate's own objects (docs/results/benchmarks_history.md, issue 14, seventeenth session).
A shared object's link needs none of those symbols: Linux links shared objects with
undefined references allowed (torch's command asks for nothing else), so the library
only gives the output its DT_NEEDED name. An empty library with the same SONAME gives
ld that name at once; at import the references resolve against the real libraries, which
`import torch` has loaded already, exactly as they would after torch's link.

Where the two links differ, and why it does not matter or is not done:
* torch's link on toolchains that default to ``--as-needed`` names only the libraries a
  reference resolved in; a stub resolves none, so stubs are passed ``--no-as-needed`` and
  every one is named: the extra names are libraries the process has loaded already.
* a library whose symbols carry versions other than its base one is not stubbed (the
  references would lose their versions): libcudart's do, so it stays real (it is small:
  no measurable link time).
* user link flags that ask for every reference to resolve (``--no-undefined``, ``-z defs``)
  keep the real libraries: with stubs that link would fail.
* a user ``-L`` folder that holds a library of the same name shadows torch's: kept real.
Any failure here (no ``objdump``, a stub that does not build) keeps torch's link, and the
builder links again with torch's flags when a link with stubs fails (its errors are shown).

Written by hand: no build tool offers "link against a library's name only"; the parts
(SONAME from ``objdump -p``, an empty ``-shared`` object) are binutils' and the compiler's.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

from .buildcache import BuildCache, content_key

STUBBED = frozenset({"c10", "c10_cuda", "torch_cpu", "torch_cuda", "torch", "torch_python"})
_STRICT = ("no-undefined", "defs", "unresolved-symbols", "no-allow-shlib-undefined")


def library_facts(path: str) -> tuple[str, bool] | None:
    """(SONAME, has versions beyond the base one) of a shared library; None if unreadable."""
    try:
        res = subprocess.run(["objdump", "-p", path], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if res.returncode != 0:
        return None
    soname, versioned, in_defs = None, False, False
    for line in res.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "SONAME":
            soname = parts[1]
        elif line.startswith("Version definitions:"):
            in_defs = True
        elif in_defs:
            # "1 0x01 0x0c119eaf libtorch_cpu.so": flag 0x01 is the base (the file's own name)
            if len(parts) >= 4 and parts[1].startswith("0x"):
                versioned = versioned or parts[1] != "0x01"
            elif parts and not parts[0].isdigit():
                in_defs = False
    return (soname, versioned) if soname else None


def _search_dirs(ldflags: list[str]) -> list[str]:
    dirs, it = [], iter(ldflags)
    for f in it:
        if f == "-L":
            dirs.append(next(it, ""))
        elif f.startswith("-L"):
            dirs.append(f[2:])
    return dirs


def strict(ldflags: list[str]) -> bool:
    """Whether the flags ask for every reference to resolve at link time."""
    return any(any(s in f for s in _STRICT) for f in ldflags if f.startswith(("-Wl", "-z", "--")) or f in ("defs",))


class LinkStubs:
    """Stubs of torch's libraries, kept in the build cache (kind ``stub``)."""

    def __init__(self, cache: BuildCache):
        self.cache = cache
        self._kept: set[str] = set()  # libraries found unfit for a stub in this process

    def ldflags(self, ldflags: list[str], cxx: list[str]) -> list[str] | None:
        """torch's link flags with its own libraries as stubs; None where nothing is stubbed."""
        import torch.utils.cpp_extension as ce

        if strict(ldflags):
            return None
        torch_lib = os.path.realpath(ce.TORCH_LIB_PATH)
        dirs = _search_dirs(ldflags)
        out, changed = [], False
        for f in ldflags:
            name = f[2:] if f.startswith("-l") else None
            stub = None
            if name in STUBBED:
                found = next((d for d in dirs if os.path.exists(os.path.join(d, f"lib{name}.so"))), None)
                if found is not None and os.path.realpath(found) == torch_lib:
                    stub = self.stub(os.path.join(torch_lib, f"lib{name}.so"), cxx)
            if stub is None:
                out.append(f)
            else:
                out += ["-Wl,--push-state,--no-as-needed", str(stub), "-Wl,--pop-state"]
                changed = True
        return out if changed else None

    def stub(self, real: str, cxx: list[str]) -> Path | None:
        """An empty shared library with `real`'s SONAME (None: keep the real one)."""
        st = os.stat(real)
        key = content_key("stub", real, str(st.st_size), str(st.st_mtime_ns), *cxx)
        name = os.path.basename(real)
        if key in self._kept:
            return None
        hit = self.cache.get("stub", key)
        if hit is not None:
            return hit / name
        with self.cache.lock("stub", key):
            hit = self.cache.get("stub", key)
            if hit is not None:
                return hit / name
            facts = library_facts(real)
            if facts is None or facts[1]:
                self._kept.add(key)
                return None
            stage = self.cache.staging("stub")
            (stage / "empty.cpp").write_text("")
            cmd = [*cxx, "-shared", "-nostdlib", f"-Wl,-soname,{facts[0]}", "empty.cpp", "-o", name]
            res = subprocess.run(cmd, cwd=stage, capture_output=True, text=True)
            (stage / "empty.cpp").unlink()
            if res.returncode != 0:
                self._kept.add(key)
                return None
            return self.cache.publish("stub", key, stage, {"soname": facts[0], "real": real,
                                                           "command": shlex.join(cmd)}) / name
