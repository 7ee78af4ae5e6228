"""A content-addressed cache of build products, shared by every worker process.

An entry is a folder named by the SHA-256 of everything that decides its
bytes (sources, flags, compiler and torch identity). It is written in a private
temporary folder and published with one ``rename``, so a reader sees a whole
entry or none: a build that hangs or is killed mid-way leaves only a temporary
folder (swept later), never a poisoned entry. Each entry carries a manifest
with the size and hash of its files; an entry that does not match it (a torn
disk write, a truncated copy, someone's editing) is removed and rebuilt.

Concurrent builders of one key serialise on an ``flock`` of a per-key lock
file. The kernel drops that lock when its holder dies, however it dies, so a
stale lock cannot hang anyone (torch's ``FileBaton`` is a file that exists
until its owner deletes it: a builder killed at its timeout leaves it behind
and the next builder waits forever).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Iterator

MANIFEST = "manifest.json"
_STALE_TMP_S = 3600.0  # temporary folders older than this belong to dead builders


def content_key(*parts: str | bytes) -> str:
    """SHA-256 over the parts, each length-prefixed (so parts cannot run together)."""
    h = hashlib.sha256()
    for p in parts:
        b = p.encode() if isinstance(p, str) else p
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()


# kinds whose entries are checked by size only when read: a precompiled header is 0.45-0.8 GB,
# hashing it took 0.3-1.5 s per build (more than a slim unit's whole compile); GCC checks a
# header's validity itself and the builder compiles again without it when that fails
# (InlineBuilder.compile_unit), so the hash guards nothing the compiler does not
_SIZE_ONLY = frozenset({"pch"})


def _file_sha(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _sign(fd: int) -> None:
    """Write this process's id into a lock file just taken, so a process that finds the lock
    held can ask who holds it (`BuildCache.holder`): a build at the run's priority is worth
    waiting for, an idle-priority one may not run for a long time."""
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)


class BuildCache:
    """Entries under ``root/<kind>/<key[:2]>/<key>/``; locks under ``root/locks``."""

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.stats = {"hits": 0, "misses": 0, "corrupt": 0}
        for sub in ("locks", "tmp"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)

    def path(self, kind: str, key: str) -> Path:
        return self.root / kind / key[:2] / key

    def get(self, kind: str, key: str) -> Path | None:
        """The entry's folder if it is present and intact; a damaged one is removed."""
        entry = self.path(kind, key)
        if not entry.is_dir():
            self.stats["misses"] += 1
            return None
        if not self._intact(entry, hashed=kind not in _SIZE_ONLY):
            self.stats["corrupt"] += 1
            self._discard(entry)
            return None
        self.stats["hits"] += 1
        return entry

    def _intact(self, entry: Path, hashed: bool = True) -> bool:
        try:
            manifest = json.loads((entry / MANIFEST).read_text())
            for name, meta in manifest["files"].items():
                f = entry / name
                if f.stat().st_size != meta["size"] or (hashed and _file_sha(f) != meta["sha256"]):
                    return False
            return True
        except (OSError, ValueError, KeyError, TypeError):
            return False

    def _discard(self, entry: Path) -> None:
        # move aside first: a reader racing with us sees no entry, not half of one
        grave = self.root / "tmp" / f"corrupt-{entry.name}-{os.getpid()}-{time.monotonic_ns()}"
        with contextlib.suppress(OSError):
            os.rename(entry, grave)
        shutil.rmtree(grave, ignore_errors=True)

    @contextlib.contextmanager
    def lock(self, kind: str, key: str) -> Iterator[None]:
        """Exclusive per-key lock; released by the kernel if the holder dies."""
        path = self.root / "locks" / f"{kind}-{key}.lock"
        fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            _sign(fd)
            yield
        finally:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def try_lock(self, kind: str, key: str):
        """The per-key lock as a context manager if it is free now, else None."""
        fd = self.try_lock_fd(kind, key)
        if fd is None:
            return None

        @contextlib.contextmanager
        def held() -> Iterator[None]:
            try:
                yield
            finally:
                with contextlib.suppress(OSError):
                    fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)

        return held()

    def try_lock_fd(self, kind: str, key: str) -> int | None:
        """The per-key lock as a bare descriptor if it is free now, else None: the lock
        lasts until every copy of the descriptor is closed (one handed to a child
        process keeps it held after the parent closes its own)."""
        path = self.root / "locks" / f"{kind}-{key}.lock"
        fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return None
        _sign(fd)
        return fd

    def holder(self, kind: str, key: str) -> int | None:
        """The process id that holds `key`'s lock now (written by the holder as it took the
        lock), or None: the lock is free, or its holder wrote nothing readable."""
        fd = self.try_lock_fd(kind, key)
        if fd is not None:
            os.close(fd)
            return None
        try:
            with open(self.root / "locks" / f"{kind}-{key}.lock", "rb") as fh:
                return int(fh.read(32).split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def count_use(self, kind: str, key: str) -> int:
        """Record one more use of `key` and return how many came before (any process)."""
        path = self.root / "locks" / f"{kind}-{key}.uses"
        fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o644)
        try:
            before = os.fstat(fd).st_size
            os.write(fd, b".")
        finally:
            os.close(fd)
        return before

    def staging(self, kind: str) -> Path:
        """A private folder to build in; hand it to `publish` when complete."""
        return Path(tempfile.mkdtemp(prefix=f"{kind}-", dir=self.root / "tmp"))

    def publish(self, kind: str, key: str, staged: Path, meta: dict | None = None) -> Path:
        """Write the manifest and rename `staged` into place (atomic)."""
        files = {}
        for f in sorted(staged.iterdir()):
            if f.is_file() and f.name != MANIFEST:
                files[f.name] = {"size": f.stat().st_size, "sha256": _file_sha(f)}
        manifest = {"key": key, "kind": kind, "files": files, "created": time.time(), "meta": meta or {}}
        (staged / MANIFEST).write_text(json.dumps(manifest, indent=1))
        entry = self.path(kind, key)
        entry.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.rename(staged, entry)
        except OSError:
            # someone published the same key first (same content): keep theirs
            if self.get(kind, key) is None:
                shutil.rmtree(entry, ignore_errors=True)
                os.rename(staged, entry)
            else:
                shutil.rmtree(staged, ignore_errors=True)
        return entry

    def sweep(self, older_than_s: float = _STALE_TMP_S) -> int:
        """Remove temporary folders left by builders that died; returns how many."""
        now, n = time.time(), 0
        for d in (self.root / "tmp").iterdir():
            try:
                if now - d.stat().st_mtime > older_than_s:
                    shutil.rmtree(d, ignore_errors=True)
                    n += 1
            except OSError:
                continue
        return n
