"""`kernelmill ptx augment` on a tiny run: real TVM (apache-tvm 0.27), real nvcc, no GPU.

Skipped only where apache-tvm 0.27 cannot be imported (absent, or tilelang's own
bundled tvm, which has no `tvm.s_tir`) or nvcc is missing.
"""

from __future__ import annotations

import json
import shutil

import pytest
from optional_modules import import_or_skip

tvm = import_or_skip("tvm")
if not hasattr(tvm, "s_tir"):
    pytest.skip("this tvm is not apache-tvm 0.27 (tilelang's bundled one?)", allow_module_level=True)
if shutil.which("nvcc") is None:
    pytest.skip("needs nvcc", allow_module_level=True)

from typer.testing import CliRunner  # noqa: E402

from kernelmill.cli import app  # noqa: E402
from kernelmill.ptx.augment.codegen import lower  # noqa: E402
from kernelmill.ptx.augment.models import FAMILIES, build_model  # noqa: E402
from kernelmill.ptx.augment.schedules import Space, _factorizations, random_variants, tile_variants  # noqa: E402
from kernelmill.ptx.augment.subgraphs import subgraphs  # noqa: E402
from kernelmill.ptx.export import group_of  # noqa: E402
from kernelmill.records import Pair, read_jsonl  # noqa: E402


def test_factorizations_cover_the_tile_space():
    f = _factorizations(12, 2, 4)
    assert sorted(map(tuple, f)) == [(3, 4), (4, 3), (6, 2), (12, 1)]
    assert all(a * b * c == 8 for a, b, c in _factorizations(8, 3, 8))
    assert len(_factorizations(8, 3, 8)) == 10


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family_partitions_into_subgraphs(family):
    model = build_model(family, 0)
    sgs = subgraphs(model, ("fused",))
    assert sgs and len({s.sid for s in sgs}) == len(sgs)
    assert build_model(family, 0).config == model.config  # reproducible from (family, index, seed)


def _matmul_subgraph():
    # the first FP32 mixer with a batch of 4 or more: its matmul has a rich tile space
    model = next(m for m in map(lambda i: build_model("mixer", i), range(40))
                 if m.config["dtype"] == "float32" and m.config["batch"] >= 4)
    return next(s for s in subgraphs(model, ("fused",)) if s.name == "fused_matmul_add_gelu")


def test_variants_differ_and_lower_to_launchable_kernels():
    sg = _matmul_subgraph()
    space = Space(sg.func)
    rand = list(random_variants(space, 6, seed=1))
    tiles = list(tile_variants(space, 3, seed=1))
    assert len(rand) >= 2 and len({v.key for v in rand}) == len(rand)
    assert tiles and all(any(d[0] == "SamplePerfectTile" for d in v.decisions) for v in tiles)
    low = lower([(sg.name, v.func) for v in rand + tiles])
    assert low.kernels and "extern \"C\" __global__" in low.source
    for k in low.kernels:
        assert k.rename(k.name).startswith(sg.name + "_kernel")
        assert all(x >= 1 for x in k.grid + k.block) and k.block[0] * k.block[1] * k.block[2] <= 1024
        roles = {p["role"] for p in k.params}
        assert "out" in roles and "in" in roles
        assert k.source.startswith('extern "C" __global__') and k.source.rstrip().endswith("}")


def test_augment_cli_writes_pairs_with_config_resumes_and_dedups(tmp_path):
    out, distinct = tmp_path / "aug.jsonl", tmp_path / "distinct.jsonl"
    args = ["ptx", "augment", str(out), "--families", "mixer,transformer", "--models", "1", "--variants", "2",
            "--tiles", "2", "--workers", "1", "--batch", "16", "--distinct", str(distinct)]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    rows = [p for p in read_jsonl(out, Pair) if p.meta["status"] == "ok"]
    assert len({p.pair_id for p in rows}) == len(rows)
    assert {p.meta["model_family"] for p in rows} == {"mixer", "transformer"}
    assert {p.meta["pipeline"] for p in rows} == {"schedule", "subgraph"}
    for p in rows:
        c = p.meta["config"]
        assert p.ptx.count(".entry") == 1 and f".entry {p.kernel_name}(" in p.ptx
        assert p.kernel_name in p.source and "_v" not in p.kernel_name.rsplit("_kernel", 1)[0][-4:]
        assert c["grid"] == p.launch["grid"] and c["block"] == p.launch["block"]
        assert [q["name"] for q in c["params"]] == p.launch["args"]
        assert c["outputs"] and all(len(q["shape"]) >= 1 for q in c["inputs"] + c["outputs"])
        for role, side in (("in", "inputs"), ("out", "outputs")):
            assert c[side] == [q for q in c["params"] if q["role"] == role]
        assert all(q["name"] in p.source for q in c["params"])
        assert p.rolled_ptx and p.meta["refactor"] in ("kept", "rejected", "unchecked")
        assert group_of(p) == p.meta["subgraph"]  # ptx export splits by subgraph
    assert any(p.meta["refactor"] == "kept" for p in rows)
    preludes = json.loads((tmp_path / "aug.jsonl.preludes.json").read_text())
    assert all(p.meta["config"]["prelude"] in preludes for p in rows)
    kept = list(read_jsonl(distinct, Pair))
    assert 0 < len(kept) <= len(rows)
    assert len({p.source for p in kept}) == len(kept)
    n = len(out.read_text().splitlines())
    r = CliRunner().invoke(app, args[:-2])  # a re-run has nothing left to do
    said = " ".join(r.output.split())
    assert r.exit_code == 0 and "0 new pairs from 0 jobs (4 already done" in said, said
    assert len(out.read_text().splitlines()) == n


def test_thread_check_never_drops_a_variant_the_postprocessors_accept():
    """`Space.threads_ok` rejects tile configurations before their replay: on a sample of
    random configurations of a matmul and a conv2d, none that the postprocessors accept is
    rejected, and most that they reject are caught."""
    import random

    from kernelmill.ptx.augment.schedules import _fixed_tiles

    sgs = [_matmul_subgraph(), next(s for s in subgraphs(build_model("resnet", 1), ("fused",))
                                    if s.name.startswith("fused_conv2d"))]
    accepted = caught = rejected = 0
    r = random.Random(0)
    for sg in sgs:
        space = Space(sg.func)
        for sk in range(len(space.sketches)):
            tiles = space.tiles(sk)
            if not tiles:
                continue
            choices = [_factorizations(e, n, m if m > 0 else e) for e, n, m in tiles]
            for _ in range(40):
                combo = [r.choice(c) for c in choices]
                ok = space.replay(sk, 1, _fixed_tiles(combo)) is not None
                if ok:
                    accepted += 1
                    assert space.threads_ok(sk, combo), (sg.name, combo)
                else:
                    rejected += 1
                    caught += not space.threads_ok(sk, combo)
    assert accepted and rejected and caught >= rejected // 2, (accepted, rejected, caught)


def test_random_variants_stop_when_an_elementwise_space_is_spent():
    from kernelmill.ptx.augment import schedules

    sg = next(s for s in subgraphs(build_model("mixer", 1), ("single",)) if s.name.startswith("add"))
    space = Space(sg.func)
    calls = []
    replay = space.replay
    space.replay = lambda *a, **k: calls.append(1) or replay(*a, **k)
    got = list(schedules.random_variants(space, 8, seed=1))
    assert got and len({v.key for v in got}) == len(got)
    if len(got) < 8:  # a small space: stopped after 16 repeats, not after 64 replays
        assert len(calls) <= len(got) + 16 + len(space.sketches)


def test_claims_skip_variants_and_kernels_another_job_took():
    from kernelmill.ptx.augment.runner import AugmentConfig, Claims, _set_claims, jobs, run_job

    job = next(j for j in jobs(AugmentConfig(families=("mixer",), models=1, variants=2, tiles=2, batch=16))
               if j.pipeline == "schedule")
    claims = Claims()
    c = Claims()
    assert c.claim(["a", "b", "a"]) == [True, True, False] and c.claim(["b", "c"]) == [False, True]
    _set_claims(claims)
    try:
        _, first, _, s1 = run_job(job)
        ok = [p for p in first if p["meta"]["status"] == "ok"]
        assert ok and all(p["meta"]["kernel_key"].startswith("k:") for p in ok)
        # the same job again: the variants it made are taken, so it samples others, and
        # every pair it makes is new
        _, again, _, s2 = run_job(job)
        assert s2["duplicate_variants"] >= len(ok)
        again = [p for p in again if p["meta"]["status"] == "ok"]
        assert not {p["meta"]["kernel_key"] for p in again} & {p["meta"]["kernel_key"] for p in ok}
        assert not {json.dumps(p["meta"]["schedule"]) + p["meta"]["subgraph"] for p in again} \
            & {json.dumps(p["meta"]["schedule"]) + p["meta"]["subgraph"] for p in ok}
        # only the first run's kernels known: its variants are lowered again, and every
        # kernel is skipped before nvcc
        _set_claims(Claims(p["meta"]["kernel_key"] for p in ok))
        _, third, _, s3 = run_job(job)
        assert not [p for p in third if p["meta"]["status"] == "ok"]
        assert s3["duplicate_kernels"] >= len(ok) and s3["duplicate_variants"] == 0
    finally:
        _set_claims(None)


def test_positions_in_the_unit_are_blanked_before_the_comparison():
    from kernelmill.ptx.augment.pairs import _named_back, _unlabelled

    a = ".entry k(\n.local .align 16 .b8 __local_depot3[64];\n$L__BB3_2:\nbra $L__BB3_2;\n"
    b = ".entry k__kmrf(\n.local .align 16 .b8 __local_depot7[64];\n$L__BB7_2:\nbra $L__BB7_2;\n"
    assert _unlabelled(_named_back(b, "k")) == _unlabelled(a)
    assert _unlabelled(a.replace("_2", "_3")) != _unlabelled(a)


def test_the_copies_check_the_refactoring_as_the_refactored_batch_does(monkeypatch):
    """compile_batch compiles a batch, then the refactored copies of its changed kernels;
    it keeps the same refactorings as compiling the refactored batch on its own (the
    first way). Kernels whose PTX is longer than CHECK_MAX_PTX_CHARS are not checked and
    keep their original text."""
    from kernelmill.ptx.augment import pairs as pairs_mod
    from kernelmill.cudasrc.check import normalize_ptx
    from kernelmill.cudasrc.cse import extract_index_cse
    from kernelmill.cudasrc.parens import remove_redundant_parens
    from kernelmill.ptx.augment.codegen import _definitions
    from kernelmill.ptx.augment.pairs import OPTIONS, _ptx_by_entry, compile_batch
    from kernelmill.ptx.nvcc import nvcc_ptx

    funcs = []
    for sg in subgraphs(build_model("mixer", 1), ("fused",))[:6]:
        funcs += [(sg.name, v.func) for v in random_variants(Space(sg.func), 2, seed=2)]
    low = lower(funcs, 12000)
    low.kernels = [k for k in low.kernels if len(k.source) <= 12000]
    ptx, kept, note, unchecked = compile_batch(low, "test")
    body = "\n\n".join(k.source for k in low.kernels)
    alone = _ptx_by_entry(nvcc_ptx(low.prelude + body, OPTIONS), "test")
    assert ptx == alone and not note and not unchecked
    new = remove_redundant_parens(extract_index_cse(body)[0])[0]
    defs = _definitions(new)
    after = _ptx_by_entry(nvcc_ptx(low.prelude + new, OPTIONS), "test")
    former = {k.name for k in low.kernels if defs[k.name] != k.source
              and normalize_ptx(after[k.name]) == normalize_ptx(alone[k.name])}
    assert kept and set(kept) == former
    assert all(kept[n] == defs[n] for n in kept)
    assert compile_batch(low, "test", refactor=False) == (alone, {}, "", set())
    # a threshold between the shortest and the longest kept kernel's PTX: the longer ones
    # are reported unchecked and keep their original text, the others are kept as before
    sizes = sorted(len(alone[n]) for n in kept)
    assert sizes[0] < sizes[-1]
    limit = (sizes[0] + sizes[-1]) // 2
    monkeypatch.setattr(pairs_mod, "CHECK_MAX_PTX_CHARS", limit)
    ptx2, kept2, _, unchecked2 = compile_batch(low, "test")
    assert ptx2 == alone
    assert unchecked2 and all(len(alone[n]) > limit for n in unchecked2)
    assert set(kept2) == {n for n in kept if len(alone[n]) <= limit}
    assert not set(kept2) & unchecked2
    metas = [{"unit_id": "u", "pipeline": "schedule", "model_family": "mixer", "subgraph": "s",
              "subgraph_name": "n", "partition": "fused", "schedule": {}, "model": {}, "buffers": [],
              "provenance": {}} for _ in funcs]
    by_name = {p.meta["ptx_entry"]: p.meta["refactor"] for p in
               pairs_mod.batch_pairs(low, metas, "test", reroll=False)}
    renamed = {k.rename(k.name): k.name for k in low.kernels}
    for entry, how in by_name.items():
        name = renamed[entry]
        assert how == ("unchecked" if name in unchecked2 else "kept" if name in kept2 else "rejected"), (name, how)
