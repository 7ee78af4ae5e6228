"""The shared build cache: whole entries or none, damaged entries rebuilt, no stale-lock hangs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from kernelmill.verify.build.buildcache import BuildCache, content_key


def _put(cache: BuildCache, key: str, data: bytes) -> None:
    stage = cache.staging("obj")
    (stage / "unit.o").write_bytes(data)
    cache.publish("obj", key, stage)


def test_entry_round_trip_and_keys_differ(tmp_path):
    cache = BuildCache(tmp_path)
    key = content_key("a", "b")
    assert content_key("ab", "") != key  # parts cannot run together
    assert cache.get("obj", key) is None
    _put(cache, key, b"object")
    entry = cache.get("obj", key)
    assert entry is not None and (entry / "unit.o").read_bytes() == b"object"


def test_corrupt_entry_is_detected_removed_and_rebuilt(tmp_path):
    cache = BuildCache(tmp_path)
    key = content_key("x")
    _put(cache, key, b"good bytes")
    (cache.path("obj", key) / "unit.o").write_bytes(b"torn")  # damaged after publishing
    assert cache.get("obj", key) is None
    assert cache.stats["corrupt"] == 1 and not cache.path("obj", key).exists()
    _put(cache, key, b"good bytes")
    assert cache.get("obj", key) is not None


def test_unfinished_build_leaves_no_entry(tmp_path):
    """A builder killed mid-way only leaves a staging folder, which sweep removes."""
    cache = BuildCache(tmp_path)
    stage = cache.staging("obj")
    (stage / "unit.o").write_bytes(b"half")
    assert cache.get("obj", content_key("y")) is None
    os.utime(stage, (time.time() - 7200, time.time() - 7200))
    assert cache.sweep() == 1 and not stage.exists()


def test_lock_of_a_killed_holder_does_not_hang(tmp_path):
    cache = BuildCache(tmp_path)
    key = content_key("z")
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from kernelmill.verify.build.buildcache import BuildCache\n"
         f"c = BuildCache({str(tmp_path)!r})\n"
         f"with c.lock('obj', {key!r}):\n    print('held', flush=True); time.sleep(600)\n"],
        stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    assert cache.try_lock("obj", key) is None  # really held
    os.kill(holder.pid, signal.SIGKILL)  # a build killed at its timeout
    holder.wait()
    with cache.lock("obj", key):  # would block forever with a lock *file* protocol
        pass


def test_use_counter_counts_across_instances(tmp_path):
    a, b = BuildCache(tmp_path), BuildCache(tmp_path)
    assert [a.count_use("pch", "k"), b.count_use("pch", "k"), a.count_use("pch", "k")] == [0, 1, 2]


def test_a_precompiled_header_is_checked_by_size_other_entries_by_content(tmp_path):
    """Hashing a 0.45-0.8 GB header cost a build up to 1.5 s; GCC checks a header's validity
    itself (the builder compiles again without it), so a header entry is checked by size."""
    cache = BuildCache(tmp_path)
    key = content_key("h")
    stage = cache.staging("pch")
    (stage / "torch_ext.h.gch").write_bytes(b"header bytes")
    cache.publish("pch", key, stage)
    (cache.path("pch", key) / "torch_ext.h.gch").write_bytes(b"HEADER BYTES")  # same size
    assert cache.get("pch", key) is not None
    (cache.path("pch", key) / "torch_ext.h.gch").write_bytes(b"torn")  # cut short
    assert cache.get("pch", key) is None and cache.stats["corrupt"] == 1
