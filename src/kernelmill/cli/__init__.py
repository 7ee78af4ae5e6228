"""The `kernelmill` command: thin typer commands over the library.

All typer code lives in this package, one module per stage (`tasks`, `verify`,
`curate`, `report`, `generate`, `train`, `ptx`, `cuda`, and `demo`, a
composition of the others' library calls), each registered below. What they
share is written once: `common` (consoles, the error exit, the load-or-exit
helpers) and `runs` (the verify run that `verify` and `demo` both report). No
stage module imports another stage's module.

A stage's module is imported only when its command runs (or its own `--help` is
asked for): `kernelmill --help` and `--version` import neither torch nor numpy and
answer in a fraction of a second. `COMMANDS` below names each command's module, the
object that holds it and its one-line help (a test checks that line against the
command's own docstring).
"""

from __future__ import annotations

import importlib

from typer import _click as click  # typer carries its own click (0.29): its Context and Command types
import typer


# name -> (module, attribute, kind, the command's one-line help). kind: "command" (a
# function), "group" (a Typer app of subcommands), "registered" (a function that
# registers several commands on an app: curate's)
COMMANDS: dict[str, tuple[str, str, str, str]] = {
    "tasks": ("tasks", "app", "group", "List and inspect tasks (KernelBench folders, JSONL/Parquet tables, 'builtin')."),
    "verify": ("verify", "verify_command", "command",
               "Build, run, check and time every sample in isolated processes; write verdicts."),
    "serve": ("verify", "serve_command", "command",
              "Serve verification over HTTP: POST /verify {tasks, samples} -> {verdicts}; GET /health."),
    "prepare-builds": ("verify", "prepare_builds_command", "command",
                       "Build the precompiled torch headers that verification runs compile candidates with, and "
                       "(with SAMPLES) the binding objects of their extensions' signature lists."),
    "curate": ("curate", "register", "registered", "Select a training set from verified generations."),
    "subset": ("curate", "register", "registered", "Random size subsets of a curated set."),
    "dedup": ("curate", "register", "registered", "Remove exact and near-duplicate records, keeping the first occurrence."),
    "decontaminate": ("curate", "register", "registered", "Flag or drop rows that overlap a benchmark task."),
    "difficulty": ("curate", "register", "registered", "Task difficulty by average reasoning length (ARL)."),
    "analyze": ("curate", "register", "registered", "Figures and numbers of the ConCuR observations on reasoning length."),
    "export": ("curate", "register", "registered", "Write a dataset in a trainer's format, with a dataset card."),
    "task-types": ("curate", "register", "registered", "Task type (single / fusion / network) of each task."),
    "audit": ("audit", "audit_command", "command",
              "Verify every kernel of a published set (guards on) and report which claims hold."),
    "regrade": ("audit", "regrade_command", "command",
                "Judge stored verdicts again under this harness and list every one that changed."),
    "metrics": ("report", "metrics_command", "command",
                "Exec, fast_p, pass@k (Exec and fast_1) and geometric-mean speedup, per level, with 95% intervals."),
    "report": ("report", "report_command", "command",
               "One self-contained HTML page over a verdicts file (metrics per level, language and op_type with 95% "
               "intervals, fast_p curve, speedup histogram, statuses and flags, every task's samples with search and "
               "sort), plus Markdown and CSV summaries."),
    "show": ("report", "show_command", "command",
             "Print one sample with its task, its verdict and the reasons (message, flags and what they mean)."),
    "demo": ("demo", "demo_command", "command",
             "Verify the builtin suite's example candidates on this machine and print the metrics."),
    "generate": ("generate", "generate_command", "command",
                 "Sample N kernels (with reasoning) per task from an LLM; resumable."),
    "refine": ("generate", "refine_command", "command",
               "Multi-turn generate -> verify -> feedback, up to T turns per chain; resumable."),
    "train": ("train", "app", "group", "Train on the curated exports with TRL (SFT/LoRA/QLoRA, KTO, multi-turn GRPO)."),
    "ptx": ("ptx", "app", "group", "PTX toolkit: lossless Rolled-PTX, CUDA/Triton -> PTX pairs."),
    "cuda": ("cuda", "app", "group", "CUDA source tools."),
    "bootstrap": ("bootstrap", "bootstrap_command", "command",
                  "Grow a verified corpus in a DSL: retrieve, prompt, generate, verify, add; easy to hard; resumable."),
    "align": ("bootstrap", "align_command", "command",
              "Stages 2-3 data from a bootstrap run: post-hoc traces from a pool of models, scored by log P(trace | "
              "task) under the base model (top fraction kept); negatives with injected errors kept only when the "
              "verifier confirms a failure, plus the loop's failed attempts; the KTO export at the ratio; GRPO prompts "
              "for the run's training tasks."),
}


def load_command(name: str) -> click.Command:
    """The click command of `name`, its stage module imported now."""
    module, attr, kind, _ = COMMANDS[name]
    obj = getattr(importlib.import_module(f"{__name__}.{module}"), attr)
    holder = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    if kind == "group":
        holder.add_typer(obj, name=name)
    elif kind == "registered":
        obj(holder)
    else:
        holder.command(name)(obj)
    holder.command("-")(lambda: None)  # a second command keeps typer from collapsing the holder into one
    group = typer.main.get_command(holder)
    return group.get_command(click.Context(group), name)


class _Commands(typer.core.TyperGroup):
    """The root group: lists every command of `COMMANDS`, loads one when it is used."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        if name not in self.commands:
            self.commands[name] = load_command(name)
        return self.commands[name]

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, help_line) for name, (_, _, _, help_line) in COMMANDS.items()]
        width = formatter.width - 6 - max(len(n) for n, _ in rows)
        with formatter.section("Commands"):
            formatter.write_dl([(n, h if len(h) <= width else h[:max(10, width - 3)] + "...") for n, h in rows])


def _version(value: bool) -> None:
    if value:
        from ..records import HARNESS_VERSION  # read here: most commands never need records

        typer.echo(f"kernelmill {HARNESS_VERSION}")
        raise typer.Exit()


app = typer.Typer(
    name="kernelmill",
    cls=_Commands,
    help="Generate, verify, curate and train on LLM-written GPU kernels.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode=None,
)


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print kernelmill's version and exit.")) -> None:
    """Generate, verify, curate and train on LLM-written GPU kernels."""


def main() -> None:
    app()


if __name__ == "__main__":
    main()
