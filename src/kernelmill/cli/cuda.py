"""`kernelmill cuda refactor`: readability refactoring checked against PTX."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from .console import console, err, fail

app = typer.Typer(help="CUDA source tools.", no_args_is_help=True)


@app.command()
def refactor(src: Path = typer.Argument(..., help="CUDA source (.cu)."),
             out: Path = typer.Option(..., "-o", "--out", help="Refactored source."),
             arch: str = typer.Option("sm_90", help="Target used for the PTX check."),
             no_check: bool = typer.Option(False, help="Skip the PTX check (not recommended)."),
             cse: bool = typer.Option(True, help="Common-subexpression extraction in indices."),
             vcse: bool = typer.Option(True, help="Common-subexpression extraction in value expressions."),
             parens: bool = typer.Option(True, help="Redundant-parenthesis removal."),
             strict: bool = typer.Option(False, help="Keep a step only when the PTX is token-identical "
                                                     "(no reordering accepted)."),
             include: list[Path] = typer.Option([], "-I", "--include",
                                                help="Header directory (repeatable; the source's own "
                                                     "directory is always searched).")) -> None:
    """CSE in index expressions + redundant-parenthesis removal, inside the functions
    whose code is in the PTX; each step kept only when original and refactored
    compile to the same PTX (registers renumbered, symbol hashes blanked), or, unless
    --strict, to the same instructions in an order their dependences allow."""
    from ..ptx.nvcc import NvccOptions
    from ..cudasrc.check import refactor_cuda
    try:
        text = src.read_text()
    except OSError as exc:
        fail(f"{src}: {exc.strerror}")
    inc = (str(src.resolve().parent), *(str(d) for d in include))
    res = refactor_cuda(text, NvccOptions(arch=arch, include=inc), check=not no_check, cse=cse, parens=parens,
                       reorder=not strict, vcse=vcse)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(res.source)
    tmp.replace(out)
    for s in res.steps:
        if s.changes == 0:
            console.print(f"{s.step}: nothing to change")
        elif s.kept and not s.checked:
            console.print(f"{s.step}: {s.changes} changes, not checked (--no-check): kept")
        elif s.kept and s.left:
            console.print(f"{s.step}: {s.changes} changes, kept except in {', '.join(s.left)} (their PTX differed)")
        elif s.kept and s.reordered:
            console.print(f"{s.step}: {s.changes} changes, same PTX up to a dependence-preserving reordering: kept")
        elif s.kept:
            console.print(f"{s.step}: {s.changes} changes, PTX identical: kept")
        else:
            err.print(f"[yellow]{s.step}: {s.changes} changes rejected[/yellow], original kept: "
                      f"{escape(s.reason.splitlines()[0]) if s.reason else ''}")
    console.print(f"{src} -> {out}: {len(text)} -> {len(res.source)} characters")
