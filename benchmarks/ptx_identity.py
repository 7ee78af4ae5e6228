"""Byte-identity check of the reroll's output across a code change (issue 44, speed work).

`collect DIR`: writes the plain PTX inputs once: the speed corpus of ptx_reroll_speed.py with
its --big unit, every kernel of ptx_external.py (both splits; their plain PTX only, nothing is
measured or printed from them) and the own corpus of ptx_lengths.py (one file per kernel).
`roll DIR OUT`: rerolls each input with `reroll_text` (default RerollConfig) into OUT, with
the code on PYTHONPATH. `compare A B`: the files that differ.

    python benchmarks/ptx_identity.py collect /tmp/ident/in [--split tuning]
    PYTHONPATH=/tmp/km_base/src python benchmarks/ptx_identity.py roll /tmp/ident/in /tmp/ident/before
    python benchmarks/ptx_identity.py roll /tmp/ident/in /tmp/ident/after
    python benchmarks/ptx_identity.py compare /tmp/ident/before /tmp/ident/after
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))


def collect(out: Path, split: str = "all") -> None:
    import ptx_external
    import ptx_lengths
    import ptx_reroll_speed

    from kernelmill.ptx import fmt_module

    out.mkdir(parents=True, exist_ok=True)
    for f in ptx_reroll_speed.build(Path("/tmp/kernelmill-ptx-reroll-speed"), big=True):
        (out / f"speed__{f.name}").write_text(f.read_text())
    manifest = json.loads((ptx_external.ROOT / "manifest.json").read_text())
    version = ptx_external.nvcc_version()
    for e in manifest["files"]:
        if split not in ("all", e["split"]):
            continue  # (`--split tuning`: while tuning, the held-out kernels' outputs are not looked at)
        try:
            rows = ptx_external.kernels_of(e, "sm_90", Path("/tmp/kernelmill-ptx-external"), version)
        except Exception as exc:  # noqa: BLE001 - nvcc refusals are skipped there too
            print(f"skipped {e['file']}: {str(exc)[:80]}")
            continue
        for r in rows:
            h = hashlib.sha1(f"{r['file']}:{r['kernel']}".encode()).hexdigest()[:12]
            (out / f"external__{h}.ptx").write_text(r["plain"])
    kernels, _ = ptx_lengths.compile_corpus("sm_90")
    for unit, entry, mod, plain in kernels:
        (out / f"own__{unit}__{entry[:60]}.ptx").write_text(plain)
    print(f"{len(list(out.iterdir()))} files in {out}")


def _roll(job: tuple[Path, Path]) -> float:
    from kernelmill.ptx import reroll_text
    src, dst = job
    c0 = time.process_time()
    dst.write_text(reroll_text(src.read_text(), src.name))
    return time.process_time() - c0


def roll(src: Path, out: Path, jobs: int = 2) -> None:
    out.mkdir(parents=True, exist_ok=True)
    files = sorted(src.iterdir(), key=lambda f: -f.stat().st_size)  # big first: the pool balances
    with ProcessPoolExecutor(jobs) as pool:
        cpu = sum(pool.map(_roll, [(f, out / f.name) for f in files]))
    print(f"rolled {len(files)} files into {out}: {cpu:.1f} s CPU")


def compare(a: Path, b: Path) -> int:
    names = sorted({f.name for f in a.iterdir()} | {f.name for f in b.iterdir()})
    bad = [n for n in names if not (a / n).exists() or not (b / n).exists()
           or (a / n).read_bytes() != (b / n).read_bytes()]
    print(f"{len(names)} files compared, {len(bad)} differ" + "".join(f"\n  {n}" for n in bad))
    return 1 if bad else 0


if __name__ == "__main__":
    cmd, *args = sys.argv[1:]
    if cmd == "collect":
        collect(Path(args[0]), args[2] if args[1:2] == ["--split"] else "all")
    elif cmd == "roll":
        roll(Path(args[0]), Path(args[1]))
    else:
        sys.exit(compare(Path(args[0]), Path(args[1])))
