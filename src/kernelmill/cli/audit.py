"""`kernelmill audit` (verify a published kernel set against its claims; a report) and
`kernelmill regrade` (stored verdicts judged again under this harness): thin commands over
`kernelmill.audit`."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from ..verify import VerifyConfig, default_cache_dir
from .console import err, fail
from .options import with_verify_options


@with_verify_options()
def audit_command(
    source: Path = typer.Argument(..., help="The kernel set: a table (.jsonl/.csv/.parquet) with a task reference "
                                            "(ref_code), candidate code (custom_code) and optionally claimed_speedup, "
                                            "gpu_tuned_for, level, id; or a KernelBench run folder "
                                            "(level_L_problem_P_sample_S_kernel.py files; needs --kb-tasks)."),
    out_dir: Path = typer.Option(..., "-o", "--out", help="Folder for the audit: its inputs, verdicts.jsonl and "
                                                          "audit.{html,json,csv,md}. Run again to resume."),
    kb_tasks: Path = typer.Option(None, "--kb-tasks", help="KernelBench's tasks folder (level1/, level2/, ...) for a "
                                                           "run folder SOURCE."),
    store: Path = typer.Option(None, help="SQLite result store (default: the cache dir's verdicts.sqlite)."),
    rerun: bool = typer.Option(False, "--rerun", help="Verify every row again even where the audit folder has a verdict."),
    report_only: bool = typer.Option(False, "--report-only", help="Verify nothing: the report of the verdicts OUT "
                                                                  "already has (rows without one are marked "
                                                                  "not_verified), e.g. of an audit cut short."),
    verify_config: VerifyConfig = None,
) -> None:
    """Verify every kernel of a published set (guards on) and report which claims hold.

    Per kernel: claimed against measured speedup with its 95% interval, the verdict, the
    flags with their evidence and what ran. The summary: the share of claims that hold
    (inside the measured interval, or beaten), that are slower, wrong, broken, exploits by
    class and fallbacks to PyTorch, with plots of claimed against measured (log axes) by
    level and by outcome. Verdicts are appended to OUT/verdicts.jsonl, so an interrupted
    audit resumes where it stopped."""
    from ..audit.classify import summarize
    from ..audit.report import write_report
    from ..audit.run import audit_meta, audit_rows, write_inputs
    from ..audit.sources import AuditSourceError, read_source
    from .runs import run_verify

    try:
        rows = read_source(source, kb_tasks)
    except AuditSourceError as exc:
        fail(str(exc))
    tasks, samples = write_inputs(rows, out_dir)
    if verify_config.guards == "off":
        err.print("[yellow]note:[/yellow] --guards off: an audit without guards cannot tell an exploit from a kernel")
    if report_only:
        from ..records import Verdict, read_jsonl

        wanted = {s.sample_id for s in samples}
        verdicts = [v for v in read_jsonl(out_dir / "verdicts.jsonl", Verdict, []) if v.sample_id in wanted]
    else:
        verdicts = run_verify(str(tasks), samples, out_dir / "verdicts.jsonl", verify_config,
                              store or default_cache_dir() / "verdicts.sqlite", rerun=rerun)
    by_id = {v.sample_id: v for v in verdicts}
    table = audit_rows(rows, by_id)
    summary = summarize(table)
    paths = write_report(out_dir, table, summary, audit_meta(source, rows, by_id, verify_config.guards))
    print(paths["md"].read_text(encoding="utf-8"))
    err.print("audit: " + ", ".join(str(p) for p in paths.values()))


@with_verify_options()
def regrade_command(
    verdicts_path: Path = typer.Argument(..., metavar="VERDICTS_OR_STORE", help="Stored verdicts to judge again: a "
                                         "verdicts JSONL, or a result store (.sqlite; the newest verdict per sample)."),
    out_dir: Path = typer.Option(..., "-o", "--out", help="Folder for regrade.json (every change with its reason) and "
                                                          "verdicts.jsonl (the verdicts under this harness)."),
    samples_path: Path = typer.Option(None, "--samples", help="The samples the verdicts are of: needed to re-run "
                                                               "verdicts that stored facts cannot settle."),
    tasks: str = typer.Option(None, "--tasks", help="Their task source (folder, table, 'builtin'), for re-runs."),
    every: bool = typer.Option(False, "--all", help="Re-run every verdict, not only those of another harness version."),
    store: Path = typer.Option(None, help="SQLite result store (default: the cache dir's verdicts.sqlite)."),
    verify_config: VerifyConfig = None,
) -> None:
    """Judge stored verdicts again under this harness and list every one that changed.

    Verdicts of this harness version are re-judged from their stored flags under today's
    flag table and --fallback policy (nothing runs); verdicts of another version, and
    rejections today's rules no longer carry, are verified again (--samples and --tasks).
    `kernelmill curate --drop-changed OUT/regrade.json` then leaves the changed rows out."""
    from ..audit.regrade import compare, plan
    from ..records import Verdict, read_jsonl, write_jsonl
    from .common import load_samples_or_exit
    from .runs import run_verify

    if not verdicts_path.exists():
        fail(f"{verdicts_path}: no such file")
    if verdicts_path.suffix in (".sqlite", ".db"):
        from ..verify import ResultStore, StoreError

        try:
            store_in = ResultStore(verdicts_path)
            stored = store_in.all()
            store_in.close()
        except StoreError as exc:
            fail(str(exc))
        old = {v.sample_id: v for v in stored}  # a later verdict of the same sample wins
    else:
        old = {v.sample_id: v for v in read_jsonl(verdicts_path, Verdict, [])}
    if not old:
        fail(f"{verdicts_path}: no verdicts")
    p = plan(list(old.values()), verify_config.fallback, every)
    rerun: dict = {}
    if p.rerun:
        if samples_path is None or tasks is None:
            fail(f"{len(p.rerun)} verdict(s) must run again (e.g. {next(iter(p.rerun))}: "
                 f"{next(iter(p.rerun.values()))}): give --samples and --tasks")
        samples = [s for s in load_samples_or_exit(samples_path) if s.sample_id in p.rerun]
        lost = sorted(set(p.rerun) - {s.sample_id for s in samples})
        if lost:
            fail(f"{len(lost)} verdict(s) to re-run have no sample in {samples_path} (e.g. {lost[0]})")
        out_dir.mkdir(parents=True, exist_ok=True)
        fresh = run_verify(tasks, samples, out_dir / "rerun.jsonl", verify_config,
                           store or default_cache_dir() / "verdicts.sqlite", rerun=True)
        rerun = {v.sample_id: v for v in fresh}
    changes = p.changes + compare(old, rerun, p.rerun)
    out_dir.mkdir(parents=True, exist_ok=True)
    now = [rerun.get(sid) or p.rejudged.get(sid) or v for sid, v in old.items()]
    write_jsonl(out_dir / "verdicts.jsonl", now)
    report = {"source": str(verdicts_path), "verdicts": len(old), "rejudged": len(p.rejudged), "rerun": len(rerun),
              "changed": [c.to_dict() for c in changes]}
    (out_dir / "regrade.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    for c in changes:
        print(f"{c.sample_id}: {c.before['status']} -> {c.after['status']} ({c.how}: {c.reason})")
    err.print(f"regrade: {len(changes)} of {len(old)} verdicts changed ({len(p.rejudged)} re-judged from their flags, "
              f"{len(rerun)} re-run); {out_dir / 'regrade.json'}")
