"""The `kernelmill` command: thin typer commands over the library.

Each stage keeps its commands in its own `cli.py` and is registered below.
"""

from __future__ import annotations

import typer

app = typer.Typer(
    name="kernelmill",
    help="Generate, verify, curate and train on LLM-written GPU kernels.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

# --- command groups, one per stage (keep this list sorted by stage) ---------
from .tasks.cli import app as _tasks_app  # noqa: E402

app.add_typer(_tasks_app, name="tasks")

from .verify.cli import serve_command, verify_command  # noqa: E402

app.command("verify")(verify_command)
app.command("serve")(serve_command)

from .curate.cli import register as _register_curate  # noqa: E402

_register_curate(app)  # curate, subset, dedup, decontaminate, difficulty, analyze, export, task-types

from .report.cli import metrics_command, report_command, show_command  # noqa: E402

app.command("metrics")(metrics_command)
app.command("report")(report_command)
app.command("show")(show_command)

from .demo import demo_command  # noqa: E402

app.command("demo")(demo_command)

from .generate.cli import generate_command, refine_command  # noqa: E402

app.command("generate")(generate_command)
app.command("refine")(refine_command)

from .train.cli import app as _train_app  # noqa: E402

app.add_typer(_train_app, name="train")


from .ptx.cli import app as _ptx_app  # noqa: E402
from .cudasrc.cli import app as _cuda_app  # noqa: E402

app.add_typer(_ptx_app, name="ptx")
app.add_typer(_cuda_app, name="cuda")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
