"""`kernelmill ptx ...`: reroll, expand, pairs, stats."""

from __future__ import annotations

import time
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from .common import console, err, fail

app = typer.Typer(help="PTX toolkit: lossless Rolled-PTX, CUDA/Triton -> PTX pairs.",
                  no_args_is_help=True)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError as exc:
        fail(f"{path}: {exc.strerror}")


_STRATEGY = typer.Option("best", "--strategy", help="Loop choice: dp (most tokens saved per pass), "
                         "greedy (PtxDec's top-down order), best (both, keep the shorter).")
_GEOMETRIC = typer.Option(True, "--geometric/--linear-only",
                          help="Allow the geometric terms (m>>i) / (m<<i) of our grammar extension.")


def _config(strategy: str, geometric: bool):
    from ..ptx.reroll import RerollConfig
    try:
        return RerollConfig(strategy=strategy, geometric=geometric)
    except ValueError as exc:
        fail(f"{exc}")


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    tmp.replace(path)


@app.command()
def reroll(src: Path = typer.Argument(..., help="PTX file."),
           out: Path = typer.Option(..., "-o", "--out", help="Rolled-PTX output file."),
           strategy: str = _STRATEGY, geometric: bool = _GEOMETRIC) -> None:
    """Reroll unrolled loops into Rolled-PTX (checked: expand(out) == input)."""
    from ..ptx.lexer import PtxSyntaxError, count_tokens
    from ..ptx.reroll import RerollStats, reroll_text
    cfg = _config(strategy, geometric)
    text = _read(src)
    st = RerollStats()
    try:
        rolled = reroll_text(text, str(src), cfg, stats=st)
    except PtxSyntaxError as exc:
        fail(f"{exc}", 1)
    _write_atomic(out, rolled)
    a, b = count_tokens(text), count_tokens(rolled)
    console.print(f"{src} -> {out}: {st.loops} loops ({st.geometric_loops} geometric), {a} -> {b} tokens "
                  f"({100 * (a - b) / max(a, 1):.1f}% shorter), round trip "
                  f"{st.checked}/{st.functions} functions checked"
                  + (f", [red]{st.failed} kept unrolled[/red]" if st.failed else ""))


@app.command()
def expand(src: Path = typer.Argument(..., help="Rolled-PTX file."),
           out: Path = typer.Option(..., "-o", "--out", help="PTX output file.")) -> None:
    """Expand Rolled-PTX back to plain PTX."""
    from ..ptx.expand import ExpandError, expand_text
    from ..ptx.lexer import PtxSyntaxError
    try:
        text = expand_text(_read(src), str(src))
    except (PtxSyntaxError, ExpandError) as exc:
        fail(f"{exc}", 1)
    _write_atomic(out, text)
    console.print(f"{src} -> {out}")


@app.command()
def pairs(sources: list[Path] = typer.Argument(..., help=".cu files, Python candidates with "
                                               "load_inline, Triton modules with TRITON_PTX_SPECS."),
          out: Path = typer.Option(..., "-o", "--out", help="Pairs JSONL (appended; re-runs resume)."),
          arch: list[str] = typer.Option(["sm_90"], "--arch", help="Target(s), repeatable."),
          opt: list[int] = typer.Option([3], "-O", "--opt", help="Optimisation level(s)."),
          unroll: str = typer.Option("on", help="on | off | both: loop unrolling."),
          keep_debug: bool = typer.Option(False, help="Keep .loc/.file and debug labels."),
          include: list[Path] = typer.Option([], "-I", "--include",
                                             help="Header directory (repeatable; each source's own "
                                                  "directory is always searched)."),
          ) -> None:
    """Compile sources to PTX per kernel and write Pair records with Rolled-PTX."""
    from ..ptx.pairs import PairConfig, build_pairs
    modes = {"on": (True,), "off": (False,), "both": (True, False)}
    if unroll not in modes:
        fail(f"--unroll must be on, off or both, not {unroll!r}")
    missing = [str(p) for p in sources if not p.exists()]
    if missing:
        fail(f"no such file: {', '.join(missing)}")
    cfg = PairConfig(tuple(arch), tuple(opt), modes[unroll], strip_debug=not keep_debug)

    def report(unit_id, ps):
        for p in ps:
            if p.meta.get("status") == "failed":
                lines = p.meta["error"].splitlines() or [""]
                lines = [next((ln for ln in lines[1:] if "error" in ln), lines[0])]
                what = f"{p.origin}{' ' + p.kernel_name if p.kernel_name else ''} {' '.join(p.options)}"
                err.print(f"[yellow]failed[/yellow] {escape(what)}: {escape(lines[0])}", highlight=False)

    s = build_pairs(sources, out, cfg, on_unit=report, include=tuple(str(d) for d in include))
    console.print(f"{s.pairs} pairs written to {out} ({s.units} compile units, "
                  f"{s.skipped} already done, {s.failed} failed)")


@app.command()
def stats(files: list[Path] = typer.Argument(..., help="PTX files (rerolled in memory)."),
          strategy: str = _STRATEGY, geometric: bool = _GEOMETRIC) -> None:
    """Length in tokens before/after rerolling, and reroll speed."""
    from ..ptx.lexer import PtxSyntaxError, count_tokens
    from ..ptx.reroll import RerollStats, reroll_text
    cfg = _config(strategy, geometric)
    table = Table(title="Rolled-PTX length")
    for c in ("file", "tokens", "rolled", "reduction", "loops", "round trip"):
        table.add_column(c)
    tot_a = tot_b = size = 0
    took = 0.0
    for f in files:
        text = _read(f)
        st = RerollStats()
        t0 = time.perf_counter()
        try:
            rolled = reroll_text(text, str(f), cfg, stats=st)
        except PtxSyntaxError as exc:
            fail(f"{exc}", 1)
        took += time.perf_counter() - t0
        size += len(text.encode())
        a, b = count_tokens(text), count_tokens(rolled)
        tot_a, tot_b = tot_a + a, tot_b + b
        table.add_row(str(f), str(a), str(b), f"{100 * (a - b) / max(a, 1):.1f}%", str(st.loops),
                      "ok" if st.failed == 0 else f"{st.failed} failed")
    if len(files) > 1:
        table.add_row("total", str(tot_a), str(tot_b), f"{100 * (tot_a - tot_b) / max(tot_a, 1):.1f}%", "", "")
    console.print(table)
    console.print(f"rerolled {size / 1e6:.3f} MB in {took:.2f} s ({size / 1e6 / max(took, 1e-9):.2f} MB/s, "
                  f"parse + reroll + round-trip check)")


@app.command("export")
def export_command(pairs: Path = typer.Argument(..., help="Pairs JSONL from `kernelmill ptx pairs`."),
                   out: Path = typer.Option(..., "-o", "--out", help="Folder for train.jsonl, test.jsonl, split.json."),
                   rolled: bool = typer.Option(False, help="Rolled-PTX in the prompt (pairs made with rerolling)."),
                   test_frac: float = typer.Option(0.1, help="Share of subgraphs (or source units) held out."),
                   seed: int = typer.Option(0, help="Seed of the split (stable as pairs are added).")) -> None:
    """PtxDec SFT rows: PTX (or Rolled-PTX) in the PTX->CUDA prompt, CUDA out; split by subgraph
    so no test kernel's subgraph is in training (configs/ptxdec_sft.yaml reads train.jsonl)."""
    from ..ptx.export import export_sft
    from ..records import RecordError

    if not pairs.is_file():
        fail(f"no pairs file at {pairs}")
    try:
        summary = export_sft(pairs, out, rolled=rolled, test_frac=test_frac, seed=seed)
    except (RecordError, ValueError) as exc:
        fail(str(exc))
    console.print(f"train {summary.train} rows ({summary.train_groups} groups), test {summary.test} rows "
                  f"({summary.test_groups} groups) -> {out}"
                  + "".join(f"; skipped {n}: {why}" for why, n in summary.skipped.items()))
