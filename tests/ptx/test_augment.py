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
    model = build_model("mixer", 1)
    return next(s for s in subgraphs(model, ("fused",)) if s.name == "fused_matmul_add_gelu")


def test_variants_differ_and_lower_to_launchable_kernels():
    sg = _matmul_subgraph()
    space = Space(sg.func)
    rand = list(random_variants(space, 3, seed=1))
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
        assert p.rolled_ptx and p.meta["refactor"] in ("kept", "rejected")
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
