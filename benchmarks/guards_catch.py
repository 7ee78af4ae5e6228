"""Catch rate of the hostile corpus per catalogue class (docs/guards.md, classes 1-36), and the
honest corpora's false flags, on one device (issue 42: "the hostile corpus on the device with
all 36 classes: catch rate per class").

Every hostile candidate of tests/guards' corpus modules (imported from there, never copied:
hostile_corpus HOSTILE and HOSTILE_STRICT, gpu_corpus/gpu_hostile GPU_HOSTILE, runtime_corpus
HOSTILE_HOOKS, structure_corpus HOSTILE_STRUCTURE, reference_hunters HUNTERS; a name's prefix
`i6_`, `g15_`, `h36_`, `s32_`, `r14_` is its class) is verified with kernelmill's public API at
the guard level its class needs: `standard`, `strict` for the classes whose detector is
strict-only (32-34), a task policy rejecting for the policy classes (30, 35). Caught: status != ok and, where the corpus names the
flags it must get, those flags. A class with no candidate on the device is listed as such, one
with none anywhere as missing. The honest corpora (ours, the builtin suite's correct
candidates, the controls beside the moved candidates) give their false flags.

    python benchmarks/guards_catch.py --device cpu --json out.json --markdown out.md
    python benchmarks/guards_catch.py --device cuda --json out.json --resume   # after a cut call

Verdicts go to --json as each one lands; --resume keeps those whose candidate and settings are
unchanged and verifies only the rest.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GUARDS = REPO / "tests" / "guards"
sys.path[:0] = [str(GUARDS), str(GUARDS / "gpu_corpus")]

import reference_hunters  # noqa: E402
import runtime_corpus  # noqa: E402
import structure_corpus  # noqa: E402
from gpu_hostile import GPU_HOSTILE, TASKS as GPU_TASKS  # noqa: E402
from honest_corpus import HONEST  # noqa: E402
from hostile_corpus import HOSTILE, HOSTILE_STRICT  # noqa: E402

CLASSES = range(1, 37)
STRICT_CLASSES = {32, 33, 34}  # detectors that run only under --guards strict
POLICY_CLASSES = {30, 35}  # a task's policy: caught when it rejects (--policy reject)
BOTH = ("cpu", "cuda")


@dataclass
class Candidate:
    name: str
    classes: tuple[int, ...]  # () for an honest candidate
    task: object  # kernelmill.records.Task
    language: str
    code: str
    expect: tuple[frozenset, ...] | None  # any one of these flag sets is the catch; None: not ok is
    devices: tuple[str, ...]
    source: str  # corpus module and dict (hostile) or the honest corpus's name
    guards: str = "standard"

    @property
    def policy(self) -> str:
        return "reject" if POLICY_CLASSES & set(self.classes) else "flag"

    def key(self, device: str) -> str:
        """Changes when the candidate, its task, its settings or the harness do: --resume
        re-verifies it (a table never mixes two versions of the harness)."""
        from kernelmill.records import HARNESS_VERSION

        text = json.dumps([self.task.code, self.language, self.code, self.guards, self.policy, device,
                           HARNESS_VERSION])
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def class_of(name: str) -> int:
    m = re.match(r"[a-z](\d+)_", name)
    if not m or int(m.group(1)) not in CLASSES:
        raise ValueError(f"{name}: a hostile candidate's name starts with its class, e.g. i6_")
    return int(m.group(1))


def _expect(flags) -> tuple[frozenset, ...] | None:
    if flags is None:
        return None
    if isinstance(flags, str):
        flags = {flags}
    return tuple(frozenset(f) for f in (flags if isinstance(flags, tuple) else (flags,)))


def _hostile(name, task, language, code, flags, devices, source, also=()) -> Candidate:
    classes = (class_of(name), *also)
    strict = STRICT_CLASSES & set(classes) or source.endswith("HOSTILE_STRICT")  # that dict: strict-only catches
    guards = "strict" if strict else "standard"
    return Candidate(name, classes, task, language, code, _expect(flags), devices, source, guards)


def gather() -> tuple[list[Candidate], list[Candidate]]:
    """(hostile, honest): every candidate of the corpus modules, whatever the device."""
    hostile = [_hostile(n, *e, BOTH, "hostile_corpus.HOSTILE") for n, e in HOSTILE.items()]
    hostile += [_hostile(n, *e, BOTH, "hostile_corpus.HOSTILE_STRICT") for n, e in HOSTILE_STRICT.items()]
    hostile += [_hostile(n, GPU_TASKS[t], lang, code, flags, ("cuda",), "gpu_hostile.GPU_HOSTILE")
                for n, (t, lang, code, flags) in GPU_HOSTILE.items()]
    hostile += [_hostile(n, runtime_corpus.RELU, "torch", code, flag,
                         ("cpu",) if n in runtime_corpus.CPU_ONLY else BOTH, "runtime_corpus.HOSTILE_HOOKS",
                         runtime_corpus.ALSO_CLASSES.get(n, ())) for n, (code, flag) in runtime_corpus.HOSTILE_HOOKS.items()]
    hostile += [_hostile(n, *e, BOTH, "structure_corpus.HOSTILE_STRUCTURE")
                for n, e in structure_corpus.HOSTILE_STRUCTURE.items()]
    hostile += [_hostile(n, reference_hunters.TASK, lang, code, None, ("cuda",) if lang == "cuda" else BOTH,
                         "reference_hunters.HUNTERS") for n, (lang, code) in reference_hunters.HUNTERS.items()]

    from kernelmill.tasks import load_tasks
    from kernelmill.tasks.builtin import builtin_samples

    honest = [Candidate(f"honest/{n}", (), task, lang, code, None, BOTH, "honest", "strict")
              for n, (task, lang, code) in HONEST.items()]
    builtin = load_tasks("builtin").by_id()
    honest += [Candidate(s.sample_id, (), builtin[s.task_id], s.language, s.code, None, BOTH, "builtin", "strict")
               for s in builtin_samples() if s.meta.get("expect") == "ok"]
    honest += [Candidate(f"controls/{n}", (), runtime_corpus.RELU, "torch", code, None, BOTH, "controls", "standard")
               for n, code in runtime_corpus.CONTROLS.items()]
    honest += [Candidate(f"controls/{n}", (), task, lang, code, None, BOTH, "controls", "strict")
               for n, (task, lang, code) in structure_corpus.CONTROLS.items()]
    names = [c.name for c in hostile + honest]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise ValueError(f"candidate names used twice: {sorted(dup)}")
    return hostile, honest


def runnable(c: Candidate, device: str) -> bool:
    from kernelmill.languages import get_language

    return device in c.devices and not get_language(c.language).unsupported(device)


def class_names(doc: Path = REPO / "docs" / "guards.md") -> dict[int, str]:
    """Each class's trick, short: the catalogue row's first clause (a row of several classes
    split at '; ' where it has one part per class)."""
    names = {}
    for line in doc.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)]
        m = re.fullmatch(r"(\d+(?:, \d+)*)(?: \(issue[^)]*\))?", cells[1]) if len(cells) > 3 else None
        if not m:
            continue
        nums = [int(n) for n in m.group(1).split(", ")]
        parts = cells[2].split("; ")
        parts = parts if len(parts) == len(nums) else [cells[2]] * len(nums)
        for n, text in zip(nums, parts):
            text = re.split(r": | \(|; ", text)[0].replace("\\|", "|")
            names[n] = text if len(text) <= 80 else text[:77].rsplit(" ", 1)[0] + " ..."
    return names


def caught(c: Candidate, v: dict) -> bool:
    if v["status"] == "ok":
        return False
    return c.expect is None or any(e <= set(v["flags"]) for e in c.expect)


def false_flag(v: dict) -> bool:
    """Not ok, or a guard's flag. The measurement's notes (kernelbench_host_bound,
    events_disagree, sanitizer_incomplete, timing_skipped, ...) ride in the same list but
    are not in the guards' catalogue (`FLAGS`), and judge nothing."""
    from kernelmill.verify.guards import FLAGS

    return v["status"] != "ok" or not FLAGS.keys().isdisjoint(v["flags"])


def config(device: str, cache_dir: str, guards: str, policy: str):
    from kernelmill.verify import TimingConfig, VerifyConfig

    if device == "cpu":  # tests/guards/test_corpus.py's settings: a short timing loop, 2 runners
        return VerifyConfig(device="cpu", trials=2, build_timeout=300, run_timeout=60, workers=2, memory_limit_gb=4,
                            max_procs=64, cache_dir=cache_dir, guards=guards, policy=policy,
                            timing=TimingConfig(warmup_ms=5, round_ms=3, budget_ms=20, min_rounds=4, max_rounds=6))
    return VerifyConfig(device=device, trials=3, cache_dir=cache_dir, guards=guards, policy=policy)  # test_gpu_corpus


def verify(todo: list[Candidate], device: str, cache_dir: str, record) -> None:
    """Verify `todo` in one verify_samples call per (guards, policy); `record(candidate,
    verdict)` as each verdict lands."""
    from kernelmill.records import Sample
    from kernelmill.verify import verify_samples

    runtime_corpus.plant_neighbour(cache_dir)  # what h29_read_a_neighbour looks for
    tasks = {}
    for c in todo:
        if tasks.setdefault(c.task.task_id, c.task).code != c.task.code:
            raise ValueError(f"two tasks named {c.task.task_id}")
    groups: dict[tuple[str, str], list[Candidate]] = {}
    for c in todo:
        groups.setdefault((c.guards, c.policy), []).append(c)
    for (guards, policy), cands in sorted(groups.items()):
        by_name = {c.name: c for c in cands}
        print(f"-- {len(cands)} candidates, guards={guards} policy={policy}", flush=True)
        samples = [Sample(c.name, c.task.task_id, c.language, c.code) for c in cands]
        verify_samples(tasks, samples, config(device, cache_dir, guards, policy),
                       on_verdict=lambda v: record(by_name[v.sample_id], v))


def tables(hostile, honest, verdicts: dict, device: str, classes) -> tuple[list[dict], list[dict]]:
    from kernelmill.verify.guards import FLAGS as guard_flags

    names = class_names()
    rows = []
    for k in classes:
        mine = [c for c in hostile if k in c.classes]
        here = [c for c in mine if runnable(c, device)]
        done = [c for c in here if c.name in verdicts]
        missed = [c.name for c in done if not caught(c, verdicts[c.name])]
        state = ("missing" if not mine else f"not on {device}" if not here else
                 "pending" if not done else f"{len(done) - len(missed)}/{len(done)}")
        rows.append({"class": k, "name": names.get(k, "?"), "candidates": len(here), "verified": len(done),
                     "caught": len(done) - len(missed), "missed": missed, "state": state,
                     "pending": [c.name for c in here if c.name not in verdicts],
                     "other_device": [c.name for c in mine if c not in here]})
    corpora = []
    for corpus in dict.fromkeys(c.source for c in honest):
        here = [c for c in honest if c.source == corpus and runnable(c, device)]
        done = [c for c in here if c.name in verdicts]
        flagged = [f"{c.name} ({verdicts[c.name]['status']} {','.join(verdicts[c.name]['flags'])})".replace(" )", ")")
                   for c in done if false_flag(verdicts[c.name])]
        notes = Counter(f for c in done for f in verdicts[c.name]["flags"] if f not in guard_flags)
        corpora.append({"corpus": corpus, "candidates": len(here), "verified": len(done),
                        "false_flags": len(flagged), "flagged": flagged, "notes": dict(sorted(notes.items())),
                        "pending": [c.name for c in here if c.name not in verdicts]})
    return rows, corpora


def summary(rows, hostile, verdicts, device: str) -> str:
    """Hostile candidates caught (each counted once, whatever its classes) and the classes' states."""
    shown = {r["class"] for r in rows}
    done = [c for c in hostile if c.name in verdicts and shown & set(c.classes) and runnable(c, device)]
    got = sum(caught(c, verdicts[c.name]) for c in done)
    run = sum(r["verified"] > 0 for r in rows)
    absent = [str(r["class"]) for r in rows if r["state"] == "missing"]
    elsewhere = [str(r["class"]) for r in rows if r["state"].startswith("not on")]
    return (f"{got} of {len(done)} hostile candidates caught, {run} classes run"
            + (f", not runnable here: {', '.join(elsewhere)}" if elsewhere else "")
            + (f", no candidate anywhere: {', '.join(absent)}" if absent else ""))


def machine(device: str) -> str:
    if device == "cuda":
        import torch

        return torch.cuda.get_device_name(0)
    return f"CPU, {os.cpu_count()} cores"


def markdown(rows, corpora, head: str) -> str:
    out = [head, "", "| # | class (docs/guards.md) | candidates | caught | missed | not run here |", "|---|---|---|---|---|---|"]
    for r in rows:
        caught_cell = r["state"] if r["state"] in ("missing", "pending") or r["state"].startswith("not on") else (
            f"{r['caught']}/{r['verified']}" + (f" ({len(r['pending'])} pending)" if r["pending"] else ""))
        other = f"{len(r['other_device'])} (other device)" if r["other_device"] else ""
        out.append(f"| {r['class']} | {r['name']} | {r['candidates']} | {caught_cell} | "
                   f"{', '.join(r['missed']) or ''} | {other} |")
    out += ["", "| honest corpus | candidates | verified | false flags | flagged | measurement notes (not guard flags) |",
            "|---|---|---|---|---|---|"]
    for c in corpora:
        notes = ", ".join(f"{k} {n}" for k, n in c.get("notes", {}).items())
        out.append(f"| {c['corpus']} | {c['candidates']} | {c['verified']}"
                   + (f" ({len(c['pending'])} pending)" if c["pending"] else "")
                   + f" | {c['false_flags']} | {'; '.join(c['flagged'])} | {notes} |")
    return "\n".join(out) + "\n"


def parse_classes(text: str) -> list[int]:
    got = set()
    for part in filter(None, text.split(",")):
        a, _, b = part.partition("-")
        got.update(range(int(a), int(b or a) + 1))
    if not got <= set(CLASSES):
        raise ValueError(f"classes are 1-36: {text}")
    return sorted(got)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cpu", choices=BOTH)
    ap.add_argument("--classes", default="1-36", help="e.g. 1,2,22-36: the hostile candidates of these classes")
    ap.add_argument("--only", default="", help="only these candidates (comma-separated names)")
    ap.add_argument("--no-honest", action="store_true", help="leave the honest corpora out")
    ap.add_argument("--json", type=Path, help="verdicts (written as each lands) and the tables")
    ap.add_argument("--markdown", type=Path, help="the tables as markdown")
    ap.add_argument("--resume", action="store_true",
                    help="keep --json's verdicts of unchanged candidates (none yet: start afresh)")
    ap.add_argument("--report", action="store_true",
                    help="verify nothing: make the tables again from --json (its verdicts of this harness and "
                         "these candidates only; the rest show as pending), e.g. a device run's file on a CPU")
    ap.add_argument("--cache-dir", help="kernelmill's cache (builds reused between runs); default: a temporary one")
    args = ap.parse_args(argv)
    classes = parse_classes(args.classes)
    only = {n for n in args.only.split(",") if n}
    hostile, honest = gather()
    unknown = only - {c.name for c in hostile + honest}
    if unknown:
        ap.error(f"--only: no candidate named {sorted(unknown)}")
    chosen = [c for c in hostile if set(c.classes) & set(classes)] + ([] if args.no_honest else honest)
    chosen = [c for c in chosen if (not only or c.name in only) and runnable(c, args.device)]

    state = {"device": args.device, "elapsed_s": 0.0, "verdicts": {}}
    if (args.resume or args.report) and not args.json:
        ap.error("--resume and --report need --json")
    if args.report:
        if not args.json.exists():
            ap.error(f"--report: no {args.json}")
        args.resume = True
    if args.resume and not args.json.exists():
        print(f"--resume: no {args.json} yet, starting afresh", flush=True)
    elif args.resume:
        old = json.loads(args.json.read_text(encoding="utf-8"))
        if old.get("device") != args.device:
            ap.error(f"--resume: {args.json} holds a {old.get('device')} run")
        keys = {c.name: c.key(args.device) for c in hostile + honest}
        state["elapsed_s"] = old.get("elapsed_s", 0.0)
        state["machine"] = old.get("machine") or state.get("machine")
        state["verdicts"] = {n: v for n, v in old.get("verdicts", {}).items() if keys.get(n) == v.get("key")}
    verdicts = state["verdicts"]
    todo = [c for c in chosen if c.name not in verdicts]
    if not args.report:
        print(f"{len(chosen)} candidates chosen on {args.device}, {len(chosen) - len(todo)} kept from {args.json}, "
              f"{len(todo)} to verify", flush=True)

    t0, base = time.monotonic(), state["elapsed_s"]

    def save(final: bool = False) -> None:
        state["elapsed_s"] = round(base + time.monotonic() - t0, 1)
        if final:
            state["classes"], state["honest"] = tables(hostile, honest, verdicts, args.device, classes)
        if args.json:
            _write(args.json, json.dumps(state, indent=1, sort_keys=True) + "\n")

    def record(c: Candidate, v) -> None:
        verdicts[c.name] = {"key": c.key(args.device), "classes": list(c.classes), "source": c.source,
                            "guards": c.guards, "status": v.status, "flags": list(v.flags),
                            "message": (v.message or "")[:300],
                            # what the verdict took: where a device call's time went (strict's sanitizer)
                            "seconds": {k: round(t, 2) for k, t in (v.phases or {}).items()
                                        if k in ("build_wall_s", "run_wall_s", "sanitize_s")}}
        mark = ("caught" if caught(c, verdicts[c.name]) else "MISSED") if c.classes else (
            "FALSE FLAG" if false_flag(verdicts[c.name]) else "clean")
        print(f"{c.name:48s} {v.status:13s} {','.join(v.flags):30s} {mark}", flush=True)
        save()

    if args.report:
        todo = []
    else:
        state["machine"] = machine(args.device)
    with tempfile.TemporaryDirectory(prefix="guards-catch-") as tmp:
        if todo:
            verify(todo, args.device, args.cache_dir or tmp, record)
    if args.report:  # the tables only; the file stays as the run left it
        state["classes"], state["honest"] = tables(hostile, honest, verdicts, args.device, classes)
    else:
        save(final=True)
    import kernelmill

    when = time.strftime("%Y-%m-%d", time.localtime(args.json.stat().st_mtime)) if args.report else time.strftime("%Y-%m-%d")
    head = (f"Hostile corpus by class on `{args.device}` ({state.get('machine') or 'machine not recorded'}; "
            f"kernelmill {kernelmill.__version__}, {when}{', tables made again by --report' if args.report else ''}): {summary(state['classes'], hostile, verdicts, args.device)}; "
            f"{len(verdicts)} verdicts, {state['elapsed_s']:.0f} s of verification in all")
    text = markdown(state["classes"], state["honest"], head)
    print(text)
    if args.markdown:
        _write(args.markdown, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
