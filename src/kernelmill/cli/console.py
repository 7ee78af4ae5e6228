"""The consoles and the error exit every command shares. Apart from the readers in
common.py so that a command reading no records (`kernelmill ptx stats`) does not import
them at its start (issue 44: the command's start is part of its MB/s)."""

from __future__ import annotations

from typing import NoReturn

import typer
from rich.console import Console
from rich.markup import escape

console = Console(soft_wrap=True)  # a message naming long paths stays one line when piped (no terminal: 80 columns)
err = Console(stderr=True, soft_wrap=True)


def fail(message: str, code: int = 2) -> NoReturn:
    """Print `error: message` on stderr and end the command (2: bad input). The
    message is plain text: brackets in it (`pip install 'kernelmill[generate]'`) are shown."""
    err.print(f"[red]error:[/red] {escape(message)}")
    raise typer.Exit(code)


def warn(message: str, label: str = "warning") -> None:
    err.print(f"[yellow]{label}:[/yellow] {escape(message)}")
