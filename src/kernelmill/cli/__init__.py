"""The `kernelmill` command: thin typer commands over the library.

All typer code lives in this package, one module per stage (`tasks`, `verify`,
`curate`, `report`, `generate`, `train`, `ptx`, `cuda`, and `demo`, a
composition of the others' library calls), each registered below. What they
share is written once: `common` (consoles, the error exit, the load-or-exit
helpers) and `runs` (the verify run that `verify` and `demo` both report). No
stage module imports another stage's module.
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
from .tasks import app as _tasks_app  # noqa: E402

app.add_typer(_tasks_app, name="tasks")

from .verify import prepare_builds_command, serve_command, verify_command  # noqa: E402

app.command("verify")(verify_command)
app.command("serve")(serve_command)
app.command("prepare-builds")(prepare_builds_command)

from .curate import register as _register_curate  # noqa: E402

_register_curate(app)  # curate, subset, dedup, decontaminate, difficulty, analyze, export, task-types

from .report import metrics_command, report_command, show_command  # noqa: E402

app.command("metrics")(metrics_command)
app.command("report")(report_command)
app.command("show")(show_command)

from .demo import demo_command  # noqa: E402

app.command("demo")(demo_command)

from .generate import generate_command, refine_command  # noqa: E402

app.command("generate")(generate_command)
app.command("refine")(refine_command)

from .train import app as _train_app  # noqa: E402

app.add_typer(_train_app, name="train")


from .ptx import app as _ptx_app  # noqa: E402
from .cuda import app as _cuda_app  # noqa: E402

app.add_typer(_ptx_app, name="ptx")
app.add_typer(_cuda_app, name="cuda")

from .bootstrap import align_command, bootstrap_command  # noqa: E402

app.command("bootstrap")(bootstrap_command)
app.command("align")(align_command)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
