"""The environment a worker starts with (verify/sandbox.py: scrubbed_env)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import kernelmill
from kernelmill.verify.sandbox import scrubbed_env


def test_the_worker_finds_this_kernelmill_without_an_install(tmp_path):
    """A script that puts `src/` on its own sys.path (benchmarks/ do) starts workers that
    must import the same package: the first PYTHONPATH entry is the folder holding it."""
    env = scrubbed_env(home=str(tmp_path))
    first = env["PYTHONPATH"].split(os.pathsep)[0]
    assert (Path(first) / "kernelmill" / "__init__.py").resolve() == Path(kernelmill.__file__).resolve()
    # from a folder where nothing else could supply it, with site-packages off
    r = subprocess.run([sys.executable, "-S", "-c", "import kernelmill, sys; print(kernelmill.__file__)"],
                       env=env, cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert Path(r.stdout.strip()).resolve() == Path(kernelmill.__file__).resolve()


def test_the_watch_wakes_on_an_exit_descriptor(tmp_path):
    """Sandbox.watch waits on a pidfd (readable once the process exits) rather
    than sleeping up to 0.1 s past the exit of every phase."""
    import select
    import subprocess
    import sys

    from kernelmill.verify.sandbox import _exit_fd

    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.2)"])
    fd = _exit_fd(proc.pid)
    assert fd is not None  # Linux >= 5.3, as on every machine this runs on
    try:
        assert select.select([fd], [], [], 0)[0] == []  # still running
        assert select.select([fd], [], [], 30)[0] == [fd]  # woken by the exit
        assert proc.wait(timeout=5) == 0
    finally:
        os.close(fd)
