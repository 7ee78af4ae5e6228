"""The `kernelmill` command's entry point: starts what a GPU verification run will fork
its workers from (verify/early.py) before importing the commands (which import torch),
then runs them (kernelmill/cli)."""

from __future__ import annotations

import sys


def main() -> None:
    if sys.argv[1:2] == ["verify"]:  # only `verify` may start zygotes early; other commands skip its imports
        from .verify import start_from_argv

        start_from_argv(sys.argv[1:])
    from .cli import main as cli_main

    cli_main()
