"""Rolled-PTX of the 69 files (the speed corpus and the external-style set) written to a folder,
or compared with a folder written before: the check that a speed change keeps the output.

    PYTHONPATH=<tree>/src python same_output.py write DIR     # e.g. from a worktree of the base commit
    python same_output.py compare DIR                         # this tree against DIR: byte-identical?

Each file goes through `reroll_text` (one process) and through `batch.reroll_texts(jobs=2)`
(the CLI's path); both must equal DIR's text, and the round trip expand(reroll(P)) == P
is the reroll's own check (RerollStats.failed must stay what it was).
"""
import sys
from pathlib import Path

from kernelmill.ptx import RerollStats, reroll_text
from kernelmill.ptx.batch import reroll_texts

FILES = sorted(Path("/tmp/kernelmill-ptx-reroll-speed").glob("*.ptx")) + \
    sorted(Path("/tmp/kernelmill-ptx-external").glob("*.ptx"))


def main() -> None:
    mode, out = sys.argv[1], Path(sys.argv[2])
    texts = [(f.read_text(), str(f)) for f in FILES]
    batch = reroll_texts(texts, jobs=2)
    bad = 0
    for (t, name), b in zip(texts, batch):
        st = RerollStats()
        r = reroll_text(t, name, stats=st)
        key = f"{Path(name).parent.name}__{Path(name).name}"
        if b.text != r:
            print("batch differs from reroll_text:", name)
            bad += 1
        if mode == "write":
            out.mkdir(parents=True, exist_ok=True)
            (out / key).write_text(r)
            (out / (key + ".failed")).write_text(str(st.failed))
        elif (out / key).read_text() != r or (out / (key + ".failed")).read_text() != str(st.failed):
            print("differs from", out / key)
            bad += 1
    print(f"{len(FILES)} files, {bad} differ")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
