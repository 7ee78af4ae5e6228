"""`kernelmill demo`: the main job on built-in defaults.

A thin composition of the library: builtin tasks + the builtin example
candidates that can run on this machine -> verify -> metrics. Later stages
(sampling, curation, export) plug in here as steps of the same pipeline.
"""

from __future__ import annotations

from pathlib import Path

import typer

from ..languages import get_language
from ..records import write_jsonl
from ..report.output import print_metrics, write_report
from .console import err
from .runs import config_from_options, run_verify

def demo_command(
    out_dir: Path = typer.Option(Path("kernelmill-out"), "-o", "--out-dir", help="Where samples, verdicts and the store go."),
    device: str = typer.Option("auto", help="cpu, cuda, or auto."),
    trials: int = typer.Option(5, help="Correctness trials per candidate."),
    workers: int = typer.Option(0, help="Parallel build processes (0: one per core)."),
    run_timeout: float = typer.Option(None, help="Seconds to check and time one candidate (the suite has a hanging "
                                                 "one; default: 60 on a CPU, 300 on a GPU)."),
) -> None:
    """Verify the builtin suite's example candidates on this machine and print the metrics."""
    from ..tasks.builtin import builtin_samples

    config = config_from_options(device, trials, 600.0, run_timeout, workers)
    dev = config.resolved_device()
    samples, why_not = [], {}
    for s in builtin_samples():
        reason = get_language(s.language).unsupported(dev)
        if reason is None:
            samples.append(s)
        else:
            why_not[s.language] = reason
    err.print(f"demo: {len(samples)} builtin example candidates runnable on {dev}")
    for reason in sorted(set(why_not.values())):
        err.print(f"  skipped: {reason}")
    out_dir.mkdir(parents=True, exist_ok=True)
    samples_path = out_dir / "samples.jsonl"
    write_jsonl(samples_path, samples)
    verdicts_path = out_dir / "verdicts.jsonl"
    verdicts = run_verify("builtin", samples, verdicts_path, config, out_dir / "verdicts.sqlite")
    print_metrics(verdicts, ks=[1])
    from ..report.inputs import join
    from ..tasks import load_tasks

    report = write_report(join(verdicts, samples, list(load_tasks("builtin").tasks), "builtin"),
                          out_dir / "report.html")[0]
    err.print(f"samples:  {samples_path}\nverdicts: {verdicts_path}\nstore:    {out_dir / 'verdicts.sqlite'}\n"
              f"report:   {report} (open it in a browser; also report.md, report.csv)")
