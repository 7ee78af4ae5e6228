"""Executors run built-and-checked candidates somewhere: `local` (this machine's
cores and GPUs, the default) or `ray` (a Ray cluster). Same verdicts, same store:
the harness process owns the store and writes each verdict once."""

from __future__ import annotations

from .local import LocalExecutor

EXECUTORS = ("local", "ray")


def make_executor(name: str = "local", address: str | None = None):
    if name == "local":
        return LocalExecutor()
    if name == "ray":
        from .ray_executor import RayExecutor

        return RayExecutor(address)
    raise ValueError(f"unknown executor {name!r} (expected one of {', '.join(EXECUTORS)})")


__all__ = ["EXECUTORS", "LocalExecutor", "make_executor"]
