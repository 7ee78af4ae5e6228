"""Fixtures shared by the builder's tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def fake_compiler(monkeypatch):
    """The builder's compiler calls (inline_build._run) replaced by one that writes its -o
    output and succeeds: the cache protocol is checked without a 10-40 s compile. The list
    of commands it was given is returned."""
    from kernelmill.verify.build import inline_build

    calls = []

    def run(cmd, cwd):
        calls.append(cmd)
        (cwd / cmd[cmd.index("-o") + 1]).write_bytes(b"obj")
        return 0, ""

    monkeypatch.setattr(inline_build, "_run", run)
    return calls


@pytest.fixture
def unit_compiler(monkeypatch):
    """A compiler stand-in for the builder's units: writes its -o output and fails on a unit
    whose text holds FAIL_ME; compiler versions are their names and no header is built.
    Returns the list of unit files compiled (None for a link)."""
    from kernelmill.verify.build import inline_build

    calls = []

    def run(cmd, cwd):
        src = next((c for c in cmd if c.endswith((".cpp", ".cu"))), None)
        stop = getattr(inline_build._TLS, "stop", None)
        if stop is not None and stop.stopped:
            return -9, ""  # as the real one: a decided build's compiler is killed as it starts
        calls.append(src)
        if src and "FAIL_ME" in (cwd / src).read_text():
            return 1, f"{src}: error: FAIL_ME"
        (cwd / cmd[cmd.index("-o") + 1]).write_bytes(b"obj")
        return 0, ""

    monkeypatch.setattr(inline_build, "_run", run)
    monkeypatch.setattr(inline_build, "tool_id", lambda tool: tool)
    monkeypatch.setattr(inline_build, "_PCH_AFTER_USES", 10 ** 6)
    return calls
