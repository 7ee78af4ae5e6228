"""Write benchmarks/ptx_external/manifest.json: each .cu file's origin, style and split.

The held-out split is fixed by a rule, not by looking at results: within each origin group
(`cudal1/`, `hand/`), files are ordered by sha256(SEED + ":" + group/file) and the first
round(n / 4) are `heldout`, the rest `tuning`. Rerunning this script after adding files
keeps every old file's split only if the rule gives the same answer, so the rule and seed
are stored in the manifest and never changed once results were seen.

    python benchmarks/ptx_external/make_manifest.py
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent
SEED = "issue44-session8"
RULE = ("per origin group, files sorted by sha256(seed + ':' + group/file); "
        "the first round(n/4) are heldout, the rest tuning")


def first_comment(path: Path) -> str:
    m = re.match(r"\s*//\s*(.*)", path.read_text())
    return m.group(1).strip() if m else ""


def main() -> None:
    files = []
    for group, origin, llm in (("cudal1", "CUDA-L1 (RL-trained LLM, MIT licence), load_inline device code", True),
                               ("hand", "written for this benchmark (issue 44 session 8)", False)):
        paths = sorted((ROOT / group).glob("*.cu"))
        order = sorted(paths, key=lambda p: hashlib.sha256(f"{SEED}:{group}/{p.name}".encode()).hexdigest())
        held = {p.name for p in order[:round(len(paths) / 4)]}
        for p in paths:
            files.append({"file": f"{group}/{p.name}", "origin": origin, "llm_written": llm,
                          "style": first_comment(p), "split": "heldout" if p.name in held else "tuning"})
    out = {"seed": SEED, "rule": RULE, "files": files}
    (ROOT / "manifest.json").write_text(json.dumps(out, indent=1) + "\n")
    n = sum(f["split"] == "heldout" for f in files)
    print(f"{len(files)} files, {n} heldout, {len(files) - n} tuning")


if __name__ == "__main__":
    main()
