"""Rolled-PTX on public hand-written CUDA that nobody in this project wrote (issue 16 item 3).

The .cu files are not in this repository (their code must not be committed): fetch them
into a folder outside it and pass that folder; `--manifest` (JSON list of
{"file", "repo", "path", "commit", "note"}) attaches provenance to the results.
docs/results/ptx_public/manifest.json lists the files measured for docs/results/benchmarks_history.md.

Each file is compiled alone with nvcc -O3 -arch=sm_90 (no -I, no -D): a file that needs
headers this machine lacks (cuBLAS, torch, the repository's own utility headers) or does not
compile alone is reported as skipped with nvcc's first error line and never counted; a file
whose PTX holds no kernel entry (only uninstantiated templates) is skipped too. Per kernel
entry the measurement is the one of benchmarks/ptx_heldout_reroll.py (its `rows_for`,
imported): debug info stripped, rerolled with the default RerollConfig, tokens counted with
kernelmill.ptx.lexer.count_tokens, round trip expand(reroll(P)) == P checked.

"With unrolled loops" is decided from the CUDA source, independently of the reroll, per
kernel: the kernel's definition plus the __device__ helpers it calls, transitively
(kernelmill.cudasrc.tsparse.kernel_source; the PTX entry is matched to its source function
by its demangled name), counts as unrolled when it contains
  (a) a `#pragma unroll` that is not `#pragma unroll 1`, or
  (b) a `for` loop whose start, bound and step are all compile-time constants: integer
      literals, object-like #define's, `const`/`constexpr` variables initialised with
      constants, and non-type template parameters (any template of the file), combined
      with arithmetic and sizeof (`for (int i = 0; i < TM; ++i)` with a template TM,
      `for (s = 1; s <= BLOCK_DIM / 2; s *= 2)` with a #define), or a loop
      `for (i = start; i < start + C; ...)` with a runtime start and a constant C.
Everything else is "without unrolled loops": loops over runtime bounds (blockDim, n,
arguments), grid-stride loops, and code a person unrolled by hand (six written-out
`cache[tid] += cache[tid + k]` lines are not a loop in the source). nvcc -O3 still unrolls
some runtime loops by 4 and a stride loop over `warpSize` is not counted as constant, so the
reroller can find loops in that set. When a kernel's source function cannot be found the
rule is applied to the whole file and the row says `attribution: file`.

    nice -n 15 python benchmarks/ptx_public_reroll.py /tmp/public_cuda \\
        --manifest docs/results/ptx_public/manifest.json --json docs/results/ptx_public/results.json
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ptx_heldout_reroll import line, rows_for  # noqa: E402

from kernelmill.ptx import (CompileFailed, NvccOptions, RerollConfig, RerollStats, expand_module,  # noqa: E402
                            fmt_module, nvcc_ptx, parse_module, reroll_module, split_kernels, strip_debug)
from kernelmill.ptx.nvcc import bare_name, demangle_full  # noqa: E402

_PRAGMA = re.compile(r"#[ \t]*pragma[ \t]+unroll\b(?:[ \t]*\(?[ \t]*(\w+))?")
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)[ \t]+([^\n]*?)[ \t]*(?://[^\n]*)?$", re.M)
_CONSTDECL = re.compile(r"\b(?:static\s+)?(?:constexpr|const)\s+(?:static\s+)?[\w:]+(?:\s+[\w:]+)?\s+(\w+)\s*=\s*([^;,{}]+)[;,]")
_TPARAM = re.compile(r"(?:^|[<,])\s*(?:const\s+)?(?:unsigned\s+int|unsigned|int|uint|uint32_t|int32_t|int64_t|size_t|"
                     r"bool|long|short|char)\s+(\w+)")
_NUMBER = re.compile(r"^(?:0[xX][0-9a-fA-F]+|\d+\.?\d*(?:[eE][-+]?\d+)?)[uUlLfF]*$")
_CAST = re.compile(r"static_cast\s*<[^<>]*>|\(\s*(?:unsigned\s+int|unsigned|int|uint|uint32_t|int32_t|int64_t|size_t|"
                   r"float|long)\s*\)")


def unroll_pragmas(text: str) -> list[str]:
    """The `#pragma unroll` forms in text that ask for unrolling (not `#pragma unroll 1`)."""
    return [m.group(0) for m in _PRAGMA.finditer(text) if m.group(1) != "1"]


def constant_names(src: str, kernel: str | None = None) -> set[str]:
    """Names that are compile-time constants for a kernel (approximate): the file's #define's
    and non-type template parameters, `const`/`constexpr` variables declared at file level
    (unindented) and, when given, inside the kernel's own source (its helpers included), so
    that a host `const int r = 3;` in main() does not make a kernel parameter `r` constant."""
    cands: dict[str, str] = {}
    for m in _DEFINE.finditer(src):
        cands[m.group(1)] = m.group(2)
    for m in _CONSTDECL.finditer(src):
        if m.start() == src.rfind("\n", 0, m.start()) + 1:  # unindented: file level
            cands.setdefault(m.group(1), m.group(2))
    for m in _CONSTDECL.finditer(kernel or ""):
        cands.setdefault(m.group(1), m.group(2))
    consts: set[str] = set()
    for m in re.finditer(r"template\s*<([^{};]*?)>\s*(?:__|struct|class|void|static|inline|[A-Za-z])", src):
        consts.update(_TPARAM.findall(m.group(1)))
    changed = True
    while changed:
        changed = False
        for name, expr in cands.items():
            if name not in consts and is_constant(expr, consts):
                consts.add(name)
                changed = True
    return consts


def is_constant(expr: str, consts: set[str]) -> bool:
    expr = re.sub(r"\bsizeof\s*\([^()]*\)", " 1 ", expr)
    expr = _CAST.sub(" ", expr)
    toks = re.findall(r"[A-Za-z_]\w*|\d[\w.]*|\S", expr)
    if not toks:
        return False
    for t in toks:
        if t[0].isdigit():
            if not _NUMBER.match(t):
                return False
        elif t[0].isalpha() or t[0] == "_":
            if t not in consts:
                return False
        elif t not in "+-*/%()<>&|^~?:":
            return False
    return True


def _split_top(s: str, sep: str = ";") -> list[str]:
    out, depth, cur = [], 0, []
    for c in s:
        depth += c in "([{"
        depth -= c in ")]}"
        if c == sep and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    out.append("".join(cur))
    return out


def constant_for(header: str, consts: set[str]) -> bool:
    """`for (init; cond; step)`: start, bound and step compile-time constants."""
    parts = _split_top(header)
    if len(parts) != 3:
        return False
    init, cond, step = (p.strip() for p in parts)
    m = re.match(r"^(?:[\w:]+\s+)*(\w+)\s*=\s*(.+)$", init)
    if not m:
        return False
    var, start = m.group(1), " ".join(m.group(2).split())
    m = (re.match(rf"^{var}\s*(?:<=|<|>=|>|!=)\s*(?P<bound>.+)$", cond)
         or re.match(rf"^(?P<bound>.+?)\s*(?:<=|<|>=|>|!=)\s*{var}$", cond))
    if not m:
        return False
    bound = " ".join(m.group("bound").split())
    if not is_constant(start, consts):  # `i = s; i < s + C`: a constant trip count from a runtime start
        if not (bound.startswith(start + " +") and is_constant(bound[len(start) + 2:], consts)):
            return False
    elif not is_constant(bound, consts):
        return False
    if re.match(rf"^(?:\+\+|--)\s*{var}$|^{var}\s*(?:\+\+|--)$", step):
        return True
    m = re.match(rf"^{var}\s*(?:\+|-|\*|/|>>|<<)=\s*(.+)$", step) or re.match(
        rf"^{var}\s*=\s*{var}\s*(?:\+|-|\*|/|>>|<<)\s*(.+)$", step)
    return bool(m) and is_constant(m.group(1), consts)


def for_headers(text: str) -> list[str]:
    """The `(...)` headers of the for loops in text (tree-sitter when it parses, else a scan)."""
    try:
        from kernelmill.cudasrc.tsparse import parse_cuda
        heads, data = [], text.encode()

        def walk(n):
            if n.type == "for_statement":
                body = n.child_by_field_name("body")
                head = data[n.start_byte:body.start_byte if body is not None else n.end_byte].decode()
                i, j = head.find("("), head.rfind(")")
                if 0 <= i < j:
                    heads.append(head[i + 1:j])
            for c in n.children:
                walk(c)

        walk(parse_cuda(text).root_node)
        return heads
    except Exception:  # noqa: BLE001 - optional parser or a grammar failure: fall back to a scan
        heads = []
        for m in re.finditer(r"\bfor\s*\(", text):
            depth, i = 1, m.end()
            while i < len(text) and depth:
                depth += (text[i] == "(") - (text[i] == ")")
                i += 1
            heads.append(text[m.end():i - 1])
        return heads


def classify(text: str, consts: set[str]) -> tuple[bool, str]:
    """(with unrolled loops?, why) for a kernel's source text."""
    prag = unroll_pragmas(text)
    if prag:
        return True, f"pragma: {prag[0].strip()}"
    for h in for_headers(text):
        if constant_for(h, consts):
            return True, "constant loop: for (" + " ".join(h.split()) + ")"
    return False, ""


def kernel_text(src: str, name: str) -> tuple[str, str]:
    """(source of the kernel and its helpers, attribution) for a kernel's plain name."""
    try:
        from kernelmill.cudasrc.tsparse import kernel_source
        return kernel_source(src, name), "kernel"
    except Exception:  # noqa: BLE001 - not found by name, or no tree-sitter: per file
        return src, "file"


def first_error(stderr: str) -> str:
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    for ln in lines:
        if "error" in ln.lower():
            return re.sub(r"^\S*?kernelmill-nvcc-[^/\s]+/kernel\.cu", "<file>", ln)
    return lines[0] if lines else "nvcc failed without a message"


def failing_detail(path: Path, cfg: RerollConfig, arch: str, dump: Path | None) -> dict[str, list[str]]:
    """For files with a failed round trip: per kernel, the reroller's failure notes (and the
    stripped PTX written to dump/ as a reproducer)."""
    kernels = split_kernels(strip_debug(parse_module(nvcc_ptx(path.read_text(), NvccOptions(arch=arch)), str(path))))
    names = demangle_full(list(kernels))
    out = {}
    for entry, mod in kernels.items():
        st = RerollStats()
        rolled = reroll_module(mod, cfg, stats=st)
        if st.failed or fmt_module(expand_module(rolled)) != fmt_module(mod):
            out[names[entry]] = st.failures or ["expand(reroll(P)) != P"]
            if dump is not None:
                dump.mkdir(parents=True, exist_ok=True)
                (dump / f"{path.stem}__{entry}.ptx").write_text(fmt_module(mod))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path, help="folder of .cu files (outside the repository)")
    ap.add_argument("--manifest", type=Path, help="JSON list of {file, repo, path, commit}")
    ap.add_argument("--json", type=Path, help="write per-kernel rows and skipped files here")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--dump-failures", type=Path, help="write the PTX of kernels whose round trip failed here")
    args = ap.parse_args()
    cfg = RerollConfig()
    prov = {}
    if args.manifest:
        prov = {m["file"]: m for m in json.loads(args.manifest.read_text())}
    files = sorted(args.folder.glob("*.cu"))
    rows, skipped, t0 = [], [], time.time()
    for path in files:
        src = path.read_text(errors="replace")
        repo = prov.get(path.name, {}).get("repo", "")
        try:
            krows = rows_for(path, cfg, args.arch)
        except CompileFailed as exc:
            skipped.append({"file": path.name, "repo": repo, "reason": first_error(exc.stderr or str(exc))})
            print(f"skip {path.name}: {skipped[-1]['reason']}", flush=True)
            continue
        if not krows:
            skipped.append({"file": path.name, "repo": repo, "reason": "no kernel entry in the PTX (uninstantiated templates only)"})
            print(f"skip {path.name}: {skipped[-1]['reason']}", flush=True)
            continue
        for r in krows:
            for k in ("set", "split"):
                r.pop(k, None)
            text, attribution = kernel_text(src, bare_name(r["kernel"]))
            r["unrolled"], r["unrolled_reason"] = classify(text, constant_names(src, text if attribution == "kernel" else None))
            r["attribution"] = attribution
            r["repo"] = repo
            rows.append(r)
        print(f"ok   {path.name}: {len(krows)} kernels", flush=True)
    un = [r for r in rows if r["unrolled"]]
    pl = [r for r in rows if not r["unrolled"]]
    print()
    print(f"files: {len(files)}, compiled {len(files) - len(skipped)}, skipped {len(skipped)}; "
          f"kernels: {len(rows)} from {len({r['repo'] for r in rows})} repositories")
    print(line("with unrolled loops (source rule)", un))
    print(line("without unrolled loops (source rule)", pl))
    print(line("all kernels", rows))
    print(line("kernels where a loop was found", [r for r in rows if r["loops"]]))
    for repo in sorted({r["repo"] for r in rows} | {s["repo"] for s in skipped}):
        sel = [r for r in rows if r["repo"] == repo]
        nskip = sum(s["repo"] == repo for s in skipped)
        print(f"  {repo or '(no manifest)'}: {len({r['file'] for r in sel})} files compiled, {nskip} skipped, "
              f"{len(sel)} kernels ({sum(r['unrolled'] for r in sel)} with unrolled loops)")
    print(f"attribution per kernel: {sum(r['attribution'] == 'kernel' for r in rows)}, "
          f"per file: {sum(r['attribution'] == 'file' for r in rows)}")
    for f in sorted({r["file"] for r in rows}):
        sel = [r for r in rows if r["file"] == f]
        print("   ", line(f"{f} [{sum(r['unrolled'] for r in sel)} unrolled]", sel))
    ok = sum(r["roundtrip_ok"] for r in rows)
    print(f"round trip expand(reroll(P)) == P: {ok}/{len(rows)}")
    bad_files = sorted({r["file"] for r in rows if not r["roundtrip_ok"]})
    for f in bad_files:
        for kernel, notes in failing_detail(args.folder / f, cfg, args.arch, args.dump_failures).items():
            print(f"  ROUND TRIP FAILED: {f}: {kernel}: {'; '.join(notes)[:300]}")
    reasons: dict[str, int] = {}
    for s in skipped:
        reasons[s["reason"]] = reasons.get(s["reason"], 0) + 1
    print(f"skipped files: {len(skipped)}")
    for reason, n in sorted(reasons.items(), key=lambda x: -x[1]):
        print(f"  {n} x {reason}")
    secs, mb = sum(r["seconds"] for r in rows), sum(r["bytes"] for r in rows) / 1e6
    print(f"reroll: {mb:.2f} MB in {secs:.1f} s; wall {time.time() - t0:.0f} s")
    if args.json:
        keep = ("file", "repo", "kernel", "tokens", "rolled", "reduction", "loops", "unrolled",
                "unrolled_reason", "attribution", "roundtrip_ok", "bytes", "seconds")
        out = {"arch": args.arch, "config": "RerollConfig()",
               "kernels": [{k: (round(r[k], 4) if isinstance(r[k], float) else r[k]) for k in keep} for r in rows],
               "skipped": skipped,
               "summary": {name: _summary(sel) for name, sel in (
                   ("with unrolled loops", un), ("without unrolled loops", pl), ("all", rows),
                   ("kernels where a loop was found", [r for r in rows if r["loops"]]))}}
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")


def _summary(sel: list[dict]) -> dict:
    if not sel:
        return {"kernels": 0}
    red = [r["reduction"] for r in sel]
    a, b = sum(r["tokens"] for r in sel), sum(r["rolled"] for r in sel)
    return {"kernels": len(sel), "mean": round(statistics.mean(red), 4), "median": round(statistics.median(red), 4),
            "overall": round(1 - b / a, 4), "tokens": a, "rolled": b,
            "roundtrips_ok": sum(r["roundtrip_ok"] for r in sel)}


if __name__ == "__main__":
    main()
