"""Fixtures shared by the builder's tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def fake_compiler(monkeypatch):
    """The builder's compiler calls (inline_build._run) replaced by one that writes its -o
    output and succeeds: the cache protocol is checked without a 10-40 s compile. The list
    of commands it was given is returned."""
    from kernelmill.verify import inline_build

    calls = []

    def run(cmd, cwd):
        calls.append(cmd)
        (cwd / cmd[cmd.index("-o") + 1]).write_bytes(b"obj")
        return 0, ""

    monkeypatch.setattr(inline_build, "_run", run)
    return calls
