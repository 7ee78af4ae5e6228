"""Each guard flag kernelmill gave an external kernel, explained: real hazard or false flag (issue 42).

Reads a verdicts JSONL (kernelmill's verdict records: sample_id, status, flags, message, ...), the
external kernels' table (JSONL rows of id, custom_code, ...: ../shared/external/cuda-l1/kernels.jsonl)
and a hand-written explanations file (benchmarks/corpus/external_flags.json):

    {"_about": "...",                                   # keys starting with "_" are comments,
     "_findings": ["..."],                              # except this list, printed in a section
     "cudal1-a100-L1-9": {"lazy_output": {"judgement": "real hazard" | "false flag",
                                          "why": "one or two sentences naming the lines"}}, ...}

and writes a markdown table, one row per (kernel, guard flag): its judgement, why, and the evidence
the verdict itself recorded (the flag's part of the verdict's message). Then the totals per flag
class (real hazards, false flags, unexplained) and two lists:

* unexplained: a guard flag in the verdicts that the explanations file does not explain (a new
  harness version flagging something new); the exit code is then 1;
* stale: an explanation whose flag the verdicts no longer carry (a flag the harness dropped, or a
  kernel not in these verdicts); listed, exit 0 unless --fail-on-stale.

Only the guards' flags count (kernelmill.verify.guards.FLAGS); notes such as events_disagree,
kernelbench_host_bound, weak_task or extension_build_failed are counted apart, never asked about.
A verdict row is matched to a kernel by its sample_id: the kernel's id itself, or the id with every
character outside [A-Za-z0-9_] made "_" (the name benchmarks/timing_fidelity.py gives the row,
cudal1-a100-L1-9 -> cudal1_a100_L1_9). Rows that match no kernel (a corpus of our own) are reported
under their sample_id, and a guard flag on them is unexplained like any other. A sample_id that
appears more than once (a resumed run) counts by its last line.

The line numbers in a verdict's message are the sample file's; timing_fidelity.py writes two header
lines above an external kernel's custom_code, so "line 36" is the kernel's source line 34. The
evidence column shows both (--sample-header-lines, 2 by default; 0 for `kernelmill audit`'s samples,
which are the code as it is). The explanations cite the kernel's own source lines (custom_code).

Malformed input (a line that is not JSON, a row without sample_id or flags, an explanation without a
valid judgement or why) stops the run with the file and line named (exit 2).

    python benchmarks/flag_audit.py \\
        --verdicts docs/results/session_2026-11-30c/logs_f1/fid.verdicts.jsonl \\
        --kernels ../shared/external/cuda-l1/kernels.jsonl \\
        --out docs/results/issue42/cuda_l1_flags_0.5.12.md
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import shlex
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_KERNELS = REPO.parent / "shared" / "external" / "cuda-l1" / "kernels.jsonl"
DEFAULT_EXPLANATIONS = REPO / "benchmarks" / "corpus" / "external_flags.json"
JUDGEMENTS = ("real hazard", "false flag")


class InputError(Exception):
    """Malformed input, the message naming the file and line."""


def guard_flags() -> dict[str, tuple]:
    """The guards' catalogue (flag -> (status, item, meaning)), from the harness in this tree."""
    try:
        from kernelmill.verify.guards.flags import FLAGS
    except ImportError:
        sys.path.insert(0, str(REPO / "src"))
        from kernelmill.verify.guards.flags import FLAGS
    return FLAGS


def row_name(kernel_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", kernel_id)


def _jsonl(path: Path, what: str):
    """(line number, record) for every non-blank line of `path`; a bad line is an InputError."""
    try:
        text = (gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()).decode("utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot read the {what} ({exc.strerror})") from None
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError as exc:
            raise InputError(f"{path}:{n}: not a JSON line of the {what} ({exc})") from None
        if not isinstance(rec, dict):
            raise InputError(f"{path}:{n}: a {what} line must be a JSON object, not {type(rec).__name__}")
        yield n, rec


def read_verdicts(path: Path) -> dict[str, dict]:
    """sample_id -> its last verdict record (with `_line`)."""
    out: dict[str, dict] = {}
    for n, rec in _jsonl(path, "verdicts"):
        sid, flags = rec.get("sample_id"), rec.get("flags")
        if not isinstance(sid, str) or not sid:
            raise InputError(f"{path}:{n}: a verdict without a sample_id")
        if flags is None:
            flags = []
        if not isinstance(flags, list) or not all(isinstance(f, str) for f in flags):
            raise InputError(f"{path}:{n}: {sid}: flags must be a list of names, not {flags!r}")
        if not isinstance(rec.get("status"), str):
            raise InputError(f"{path}:{n}: {sid}: a verdict without a status")
        out[sid] = {**rec, "flags": flags, "_line": n}
    return out


def read_kernels(path: Path) -> dict[str, dict]:
    """Kernel id -> its row; a row needs an id and its custom_code."""
    out: dict[str, dict] = {}
    for n, rec in _jsonl(path, "kernels table"):
        kid = rec.get("id")
        if not isinstance(kid, str) or not kid or not isinstance(rec.get("custom_code"), str):
            raise InputError(f"{path}:{n}: a kernel row needs an id and its custom_code")
        out[kid] = rec
    return out


def _line_of(text: str, key: str, after: int = 0) -> int:
    """The 1-based line of the first `"key"` at or after character `after` (for error messages)."""
    at = text.find(json.dumps(key), after)
    return text.count("\n", 0, at) + 1 if at >= 0 else 0


def read_explanations(path: Path) -> tuple[dict[str, dict[str, dict]], list[str]]:
    """(kernel id -> flag -> {judgement, why, _line}, the file's "_findings": what the reading found
    that is not a flag's judgement, printed in a section of its own)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot read the explanations ({exc.strerror})") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        where = f":{exc.lineno}" if hasattr(exc, "lineno") else ""
        raise InputError(f"{path}{where}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}:1: the explanations must be an object of kernel id -> flag -> explanation")
    findings = data.get("_findings", [])
    if not isinstance(findings, list) or not all(isinstance(f, str) for f in findings):
        raise InputError(f"{path}:{_line_of(text, '_findings')}: _findings must be a list of strings")
    out: dict[str, dict[str, dict]] = {}
    for kid, flags in data.items():
        if kid.startswith("_"):
            continue
        kline = _line_of(text, kid)
        if not isinstance(flags, dict) or not flags:
            raise InputError(f"{path}:{kline}: {kid}: must map each flag to its explanation")
        start = text.find(json.dumps(kid))
        out[kid] = {}
        for flag, ex in flags.items():
            line = _line_of(text, flag, max(start, 0)) or kline
            if not isinstance(ex, dict):
                raise InputError(f"{path}:{line}: {kid} / {flag}: an explanation is an object "
                                 "with judgement and why")
            if ex.get("judgement") not in JUDGEMENTS:
                raise InputError(f"{path}:{line}: {kid} / {flag}: judgement must be one of "
                                 f"{' or '.join(repr(j) for j in JUDGEMENTS)}, not {ex.get('judgement')!r}")
            if not isinstance(ex.get("why"), str) or not ex["why"].strip():
                raise InputError(f"{path}:{line}: {kid} / {flag}: why is missing or empty")
            extra = set(ex) - {"judgement", "why"}
            if extra:
                raise InputError(f"{path}:{line}: {kid} / {flag}: unknown keys {sorted(extra)}")
            out[kid][flag] = {"judgement": ex["judgement"], "why": ex["why"].strip(), "_line": line}
    return out, findings


def evidence(message: str, flag: str, header_lines: int) -> str:
    """The flag's own part of a verdict's message (parts are "flag: detail", joined by "; "),
    its "line N" also given as the kernel's source line."""
    parts = re.split(r"; (?=[a-z_0-9]+: )", message or "")
    mine = next((p[len(flag) + 2:] for p in parts if p.startswith(flag + ": ")), "")

    def both(m: re.Match) -> str:
        n = int(m[1])
        return f"line {n} (source line {n - header_lines})" if header_lines and n > header_lines else m[0]

    return re.sub(r"\bline (\d+)", both, mine)


@dataclass
class Audit:
    rows: list[dict] = field(default_factory=list)  # one per (kernel, guard flag)
    unexplained: list[dict] = field(default_factory=list)
    stale: list[dict] = field(default_factory=list)
    notes: Counter = field(default_factory=Counter)  # non-guard flags on the kernels' rows
    kernels_seen: int = 0
    other_rows: int = 0
    other_guard_flags: int = 0
    versions: Counter = field(default_factory=Counter)


def audit(verdicts: dict[str, dict], kernels: dict[str, dict], explanations: dict[str, dict[str, dict]],
          flags_catalogue: dict, header_lines: int = 2) -> Audit:
    by_row = {row_name(k): k for k in kernels}
    a = Audit()
    flagged: set[tuple[str, str]] = set()
    seen: set[str] = set()
    for sid, v in verdicts.items():
        kid = sid if sid in kernels else by_row.get(sid)
        seen.add(kid or sid)
        a.versions[v.get("harness_version") or "?"] += 1
        if kid is None:
            a.other_rows += 1
            kid = sid  # a row of our own: explained (if ever) under its sample_id
        else:
            a.kernels_seen += 1
        for flag in v["flags"]:
            if flag not in flags_catalogue:
                if kid in kernels:
                    a.notes[flag] += 1
                continue
            if kid not in kernels:
                a.other_guard_flags += 1
            flagged.add((kid, flag))
            row = {"kernel": kid, "flag": flag, "status": v["status"], "item": flags_catalogue[flag][1],
                   "evidence": evidence(v.get("message") or "", flag, header_lines if kid in kernels else 0),
                   "verdict_line": v["_line"]}
            ex = explanations.get(kid, {}).get(flag)
            if ex is None:
                a.unexplained.append(row)
            else:
                a.rows.append({**row, "judgement": ex["judgement"], "why": ex["why"]})
    for kid, flags in explanations.items():
        for flag, ex in flags.items():
            if (kid, flag) not in flagged:
                why = ("the verdict no longer carries this flag" if kid in seen
                       else "no verdict of this kernel in these verdicts")
                a.stale.append({"kernel": kid, "flag": flag, "judgement": ex["judgement"], "line": ex["_line"],
                                "reason": why})
    a.rows.sort(key=lambda r: (r["flag"], r["kernel"]))
    a.unexplained.sort(key=lambda r: (r["flag"], r["kernel"]))
    return a


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown(a: Audit, sources: dict[str, str], command: str, flags_catalogue: dict,
             findings: list[str] = ()) -> str:
    versions = ", ".join(f"{v} ({n} rows)" for v, n in a.versions.most_common())
    out = [
        "# Guard flags on external kernels, each explained: real hazard or false flag (issue 42)",
        "",
        f"Made by `{command}` (benchmarks/flag_audit.py; rerun it on a new run's verdicts to see what changed). "
        f"Verdicts: `{sources['verdicts']}`, harness {versions}. Kernels' sources: `{sources['kernels']}`. "
        f"Explanations (written by reading each flagged kernel's source and the verdict's evidence): "
        f"`{sources['explanations']}`. Only the guards' flags (`kernelmill.verify.guards.FLAGS`) are asked "
        "about; notes are counted at the end. Lines in *why* are the kernel's own source lines (the table's "
        "custom_code); the evidence column is the verdict's own message for the flag, its sample-file line "
        "also given as the source line.",
        "",
        f"{a.kernels_seen} verdict rows are the table's kernels, {a.other_rows} are other rows "
        f"(guard flags on those: {a.other_guard_flags}).",
        "",
        "## Totals",
        "",
        "| flag | item | status it gives | flags | real hazard | false flag | unexplained |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    classes = sorted({r["flag"] for r in a.rows} | {r["flag"] for r in a.unexplained},
                     key=lambda f: (-sum(r["flag"] == f for r in a.rows + a.unexplained), f))
    tot = Counter()
    for f in classes:
        real = sum(r["flag"] == f and r["judgement"] == "real hazard" for r in a.rows)
        false = sum(r["flag"] == f and r["judgement"] == "false flag" for r in a.rows)
        unex = sum(r["flag"] == f for r in a.unexplained)
        tot.update(flags=real + false + unex, real=real, false=false, unex=unex)
        out.append(f"| {f} | {flags_catalogue[f][1]} | {flags_catalogue[f][0]} | {real + false + unex} | {real} | "
                   f"{false} | {unex} |")
    out.append(f"| **all** | | | **{tot['flags']}** | **{tot['real']}** | **{tot['false']}** | **{tot['unex']}** |")
    kernels = {r["kernel"] for r in a.rows + a.unexplained}
    out += ["", f"{tot['flags']} guard flags on {len(kernels)} kernels: {tot['real']} real hazards, "
                f"{tot['false']} false flags, {tot['unex']} unexplained.", ""]
    out += ["## Each flag", "", "| kernel | flag | verdict | judgement | why | evidence (the verdict's message) |",
            "| --- | --- | --- | --- | --- | --- |"]
    for r in a.rows:
        out.append(f"| {r['kernel']} | {r['flag']} | {r['status']} | {r['judgement']} | {_cell(r['why'])} | "
                   f"{_cell(r['evidence'])} |")
    out += ["", "## Unexplained flags", ""]
    if a.unexplained:
        out += ["Guard flags in the verdicts that the explanations file does not explain (read the kernel, "
                "then add them):", ""]
        out += [f"- {r['kernel']} / **{r['flag']}** ({r['status']}; verdicts line {r['verdict_line']}): "
                f"{_cell(r['evidence']) or '(no message)'}" for r in a.unexplained]
    else:
        out.append("None.")
    out += ["", "## Stale explanations", ""]
    if a.stale:
        out += [f"- {s['kernel']} / {s['flag']} (explanations line {s['line']}, {s['judgement']}): {s['reason']}"
                for s in a.stale]
    else:
        out.append("None.")
    out += ["", "## Notes on the same rows (not guard flags, not asked about)", ""]
    out.append(", ".join(f"{k} {n}" for k, n in a.notes.most_common()) or "None.")
    if findings:
        out += ["", "## Found while reading the flagged kernels (the explanations file's _findings)", ""]
        out += [f"- {f}" for f in findings]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__,
        epilog="Exit codes: 0 every guard flag explained; 1 some flag unexplained (listed; also with "
               "--fail-on-stale, an explanation with no flag left); 2 malformed input (file:line named).",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--verdicts", type=Path, required=True,
                    help="kernelmill's verdicts JSONL (one verdict record a line: sample_id, status, flags, message)")
    ap.add_argument("--kernels", type=Path, default=DEFAULT_KERNELS,
                    help="the external kernels' table, JSONL rows of id and custom_code (default: %(default)s)")
    ap.add_argument("--explanations", type=Path, default=DEFAULT_EXPLANATIONS,
                    help="kernel id -> flag -> {judgement: 'real hazard'|'false flag', why} (default: %(default)s)")
    ap.add_argument("--out", type=Path, default=None, help="write the markdown here (without it: printed on stdout)")
    ap.add_argument("--sample-header-lines", type=int, default=2,
                    help="lines the samples carry above the kernel's custom_code: the verdict's 'line N' is "
                         "source line N minus this (2: benchmarks/timing_fidelity.py's samples; 0: the code as is)")
    ap.add_argument("--fail-on-stale", action="store_true",
                    help="exit 1 also when an explanation has no flag left in the verdicts")
    args = ap.parse_args(argv)
    try:
        flags_catalogue = guard_flags()
        verdicts = read_verdicts(args.verdicts)
        kernels = read_kernels(args.kernels)
        explanations, findings = read_explanations(args.explanations)
    except InputError as exc:
        print(f"flag_audit: {exc}", file=sys.stderr)
        return 2
    a = audit(verdicts, kernels, explanations, flags_catalogue, args.sample_header_lines)

    def shown(p: Path) -> str:
        try:
            return str(p.resolve().relative_to(REPO))
        except ValueError:
            return str(p) if not p.is_absolute() else p.name
    command = "python benchmarks/flag_audit.py " + " ".join(
        shlex.quote(x) for x in (argv if argv is not None else sys.argv[1:]))
    text = markdown(a, {"verdicts": shown(args.verdicts), "kernels": shown(args.kernels),
                        "explanations": shown(args.explanations)}, command, flags_catalogue, findings)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
        print(f"flag_audit: wrote {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    for r in a.unexplained:
        print(f"flag_audit: unexplained: {r['kernel']} {r['flag']}", file=sys.stderr)
    for s in a.stale:
        print(f"flag_audit: stale: {s['kernel']} {s['flag']} ({s['reason']})", file=sys.stderr)
    real = sum(r["judgement"] == "real hazard" for r in a.rows)
    print(f"flag_audit: {len(a.rows) + len(a.unexplained)} guard flags: {real} real hazards, "
          f"{len(a.rows) - real} false flags, {len(a.unexplained)} unexplained, {len(a.stale)} stale",
          file=sys.stderr)
    return 1 if a.unexplained or (args.fail_on_stale and a.stale) else 0


if __name__ == "__main__":
    sys.exit(main())
