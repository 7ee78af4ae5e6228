"""PtxDec training data: CUDA-PTX pairs as SFT rows (SPEC.md 3), split so that
no test kernel's subgraph is in training.

Each row is the chat the `generate` PTX->CUDA template (``ptx2cuda``, in
`kernelmill.chat`) sends at inference, with the PTX (or Rolled-PTX) in the user
turn, and the pair's CUDA source in a ```cuda block as the assistant turn:
the prompt trained on is the prompt the decompiler is asked with.

The split is by group, never by row: a pair's group is its ``meta.subgraph``
(the augmentation pipeline's subgraph id) where it has one, else the source
unit it was compiled from (``meta.unit`` or ``origin``), so variants of one
subgraph (schedules, tile sizes, flags, unrolled or not) all fall on one side.
Groups are assigned by a hash of their id with the seed, so the split is
stable when pairs are added. Pairs that failed (no PTX) are skipped and counted.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from ..chat import load_template, ptx_variables
from ..records import Pair, read_jsonl


@dataclass
class ExportSummary:
    train: int = 0
    test: int = 0
    train_groups: int = 0
    test_groups: int = 0
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> count

    def to_dict(self) -> dict:
        return {"train": self.train, "test": self.test, "train_groups": self.train_groups,
                "test_groups": self.test_groups, "skipped": self.skipped}


def group_of(pair: Pair) -> str:
    meta = pair.meta or {}
    return str(meta.get("subgraph") or meta.get("unit") or pair.origin or pair.pair_id)


def in_test(group: str, test_frac: float, seed: int) -> bool:
    h = hashlib.sha256(f"{seed}:{group}".encode()).digest()
    return int.from_bytes(h[:8], "big") / 2**64 < test_frac


REROLL_MODES = ("best", "fast")


def _check_reroll_mode(mode: str) -> None:
    if mode not in REROLL_MODES:
        raise ValueError(f"reroll mode must be one of {', '.join(REROLL_MODES)}, not {mode!r}")


def _reroll_config(mode: str):
    from .reroll import RerollConfig
    return RerollConfig(strategy="greedy", tables=False) if mode == "fast" else RerollConfig()


def _needs_rolled(pair: Pair) -> bool:
    return not pair.rolled_ptx and bool((pair.ptx or "").strip())


def with_rolled(pair: Pair, mode: str = "best") -> Pair:
    """The pair with its Rolled-PTX: made here (lossless) when the pair was stored without it,
    as `kernelmill ptx augment --no-reroll` stores them. mode "best": the reroll's default
    settings; "fast": greedy without table terms, the settings `ptx augment` uses."""
    _check_reroll_mode(mode)
    if not _needs_rolled(pair):
        return pair
    from .parser import parse_module
    from .reroll import reroll_module
    from .syntax import fmt_module

    pair.rolled_ptx = fmt_module(reroll_module(parse_module(pair.ptx, pair.origin or pair.pair_id),
                                               _reroll_config(mode)))
    return pair


def fill_rolled(pairs: list[Pair], mode: str = "best", jobs: int | None = None) -> None:
    """`with_rolled` on many pairs at once: their kernels rerolled over `jobs` processes
    (default: one per CPU), each pair's text the same as `with_rolled` makes."""
    _check_reroll_mode(mode)
    from .batch import reroll_texts

    todo = [p for p in pairs if _needs_rolled(p)]
    done = reroll_texts([(p.ptx, p.origin or p.pair_id) for p in todo], _reroll_config(mode), jobs)
    for p, r in zip(todo, done):
        p.rolled_ptx = r.text


def sft_row(pair: Pair, rolled: bool, template: str = "ptx2cuda", reroll: str = "best") -> dict:
    tmpl = load_template(template)
    if rolled:
        pair = with_rolled(pair, reroll)
    field_name = "rolled_ptx" if rolled and pair.rolled_ptx else "ptx"
    messages = tmpl.render(ptx_variables(pair, field_name))
    messages.append({"role": "assistant", "content": f"```cuda\n{pair.source.strip()}\n```"})
    return {"messages": messages, "pair_id": pair.pair_id, "kernel_name": pair.kernel_name,
            "group": group_of(pair), "input": field_name, "target": pair.target, "options": pair.options}


def _skip_reason(pair: Pair) -> str:
    return ("no PTX (a failed pair)" if not (pair.ptx or "").strip()
            else "no CUDA source" if pair.source_language != "cuda" or not pair.source.strip()
            else "")


def _blocks(it, n: int):
    block = []
    for x in it:
        block.append(x)
        if len(block) == n:
            yield block
            block = []
    if block:
        yield block


def export_sft(pairs_path: Path, out_dir: Path, rolled: bool = False, test_frac: float = 0.1,
               seed: int = 0, reroll: str = "best", jobs: int | None = None) -> ExportSummary:
    """Write ``train.jsonl`` and ``test.jsonl`` (messages rows) under `out_dir`.

    With `rolled`, pairs stored without Rolled-PTX are rerolled in blocks of 512 over
    `jobs` processes (default: one per CPU); the rows and their order do not depend on it."""
    if not 0.0 <= test_frac < 1.0:
        raise ValueError(f"test_frac must be in [0, 1), not {test_frac}")
    _check_reroll_mode(reroll)  # before anything is written
    if jobs is not None and jobs < 1:
        raise ValueError(f"jobs must be >= 1, not {jobs}")
    out_dir.mkdir(parents=True, exist_ok=True)
    summary = ExportSummary()
    groups: dict[str, set[str]] = {"train": set(), "test": set()}
    with open(out_dir / "train.jsonl", "w", encoding="utf-8") as tr, open(out_dir / "test.jsonl", "w",
                                                                             encoding="utf-8") as te:
        for block in _blocks(read_jsonl(pairs_path, Pair), 512):
            if rolled:
                fill_rolled([p for p in block if not _skip_reason(p)], reroll, jobs)
            for pair in block:
                reason = _skip_reason(pair)
                if reason:
                    summary.skipped[reason] = summary.skipped.get(reason, 0) + 1
                    continue
                group = group_of(pair)
                side = "test" if in_test(group, test_frac, seed) else "train"
                (te if side == "test" else tr).write(json.dumps(sft_row(pair, rolled, reroll=reroll)) + "\n")
                groups[side].add(group)
                setattr(summary, side, getattr(summary, side) + 1)
    summary.train_groups, summary.test_groups = len(groups["train"]), len(groups["test"])
    (out_dir / "split.json").write_text(json.dumps({**summary.to_dict(), "test_frac": test_frac, "seed": seed,
                                                    "rolled": rolled, "reroll": reroll if rolled else None}, indent=2), encoding="utf-8")
    return summary
