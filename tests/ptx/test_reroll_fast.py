"""The fast reroll path (issue 44): run tables per body size, the table-free plan's shared
options, per-statement token sums, and the parallel batch over kernels used by
`ptx stats` and `ptx export --rolled`. Each fast path must give what the plain one gives."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kernelmill.cli import app
from kernelmill.ptx import (RerollConfig, count_tokens, expand_text, fmt_stmts, parse_statements,
                            reroll_stmts, reroll_text)
from kernelmill.ptx.batch import reroll_texts
from kernelmill.ptx.reroll import _is_barrier, _Known, _tokens
from kernelmill.ptx.search import Segment, _Runs, pack_values
from kernelmill.records import Pair, write_jsonl

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --- run tables -------------------------------------------------------------------
@st.composite
def runs_input(draw):
    n = draw(st.integers(1, 40))
    sk = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    width = {s: draw(st.integers(0, 2)) for s in set(sk)}  # a skeleton fixes the hole count
    vals = [tuple(draw(st.integers(-3, 3)) for _ in range(width[s])) for s in sk]
    return sk, vals, [("imm",) * len(v) for v in vals], draw(st.integers(1, 8))


@SETTINGS
@given(runs_input(), st.lists(st.integers(0, 39), max_size=6))
def test_run_tables_match_their_definition(case, windows):
    sk, vals, kinds, p = case
    r = _Runs(sk, vals, kinds, p)
    n = len(sk)
    for lo in windows:  # filled on demand, in any order, then all of it
        r.fill(min(lo, n), min(lo + p, n))
    r.fill(0, n)
    seg = object.__new__(Segment)  # the skeleton string alone, for the copies by skeleton
    seg.sk, seg.text, seg._last_copies = sk, "".join(map(chr, sk)), {}
    sames = []
    for x in range(n):
        same = 1
        while x + same * p < n and sk[x + same * p] == sk[x]:
            same += 1
        sames.append(same)
        if same < 2:
            assert r.lin[x] == 1 and r.step[x] is None
            continue
        d = tuple(b - a for a, b in zip(vals[x], vals[x + p]))
        lin = 2
        while lin < same and vals[x + lin * p] == tuple(a + lin * s for a, s in zip(vals[x], d)):
            lin += 1
        assert r.delta(x) == d and r.lin[x] == lin
        # the packed step (one int per statement) is equal where the steps are
        assert all((r.step[x] == r.step[y]) == (r.delta(x) == r.delta(y))
                   for y in range(x) if r.step[y] is not None and sk[y] == sk[x])
    for xs in (range(n - 2 * p, -1, -1), range(n - 2 * p + 1)):  # as the search goes, and back
        seg._last_copies = {}
        for x in xs:
            if min(sames[x:x + p]) >= 2:
                assert seg._copies_by_skeleton(x, p) == min(sames[x:x + p])


@SETTINGS
@example([(-2**5, 0, 0), (2**5, 0, 0), (-2**5, 1, 0)])  # steps (64, 0) and (-64, 1): a carry apart
@given(st.integers(0, 70).flatmap(lambda b: st.lists(
    st.lists(st.sampled_from([-2**b, 1 - 2**b, -1, 0, 1, 2**b - 1, 2**b]) | st.integers(-2**b, 2**b),
             min_size=3, max_size=3).map(tuple), min_size=3, max_size=12)))  # extremes: carries
def test_packed_steps_are_equal_where_the_value_steps_are(vals):
    packed = pack_values(vals)
    steps = [(packed[x + 1] - packed[x], tuple(b - a for a, b in zip(vals[x], vals[x + 1])))
             for x in range(len(vals) - 1)]
    for a, da in steps:
        for b, db in steps:
            assert (a == b) == (da == db)


# --- streams with loops, breaks in them, and barriers -------------------------------
@st.composite
def stream(draw):
    lines = []
    for _ in range(draw(st.integers(1, 4))):
        copies = draw(st.integers(2, 9))
        body = draw(st.lists(st.tuples(st.sampled_from(["add.s32", "mul.lo.s32", "ld.shared.f32"]),
                                       st.integers(0, 30), st.sampled_from([0, 1, 2, 4, -4])),
                             min_size=1, max_size=4))
        breaks = draw(st.dictionaries(st.tuples(st.integers(0, copies - 1), st.integers(0, 3)),
                                      st.integers(0, 60), max_size=2))
        for t in range(copies):
            for k, (op, base, d) in enumerate(body):
                v = breaks.get((t, k), base + t * d + 40)
                lines.append(f"{op} %r{v}, %r{base + 2 * t}, [%rd2+{4 * v}];" if op == "ld.shared.f32"
                             else f"{op} %r{v}, %r{base + 2 * t}, {v - 50};")
        if draw(st.booleans()):
            lines.append("bar.sync 0;")
    return "\n".join(lines).replace("+0]", "]")


def _segments(stmts):
    seg = []
    for s in stmts + [None]:
        if s is None or _is_barrier(s):
            if len(seg) >= 4:
                yield seg
            seg = []
        else:
            seg.append(s)


def _key(cands):
    return [(c.gain, c.pos, c.period, c.copies, c.tables) for c in cands]


@SETTINGS
@given(stream())
def test_table_free_plan_shares_the_options_it_would_compute(text):
    with_tables, without = RerollConfig(), RerollConfig(tables=False)
    for seg in _segments(parse_statements(text)):
        toks = [_tokens(s) for s in seg]
        shared = Segment(seg, with_tables, toks).with_config(without)
        own = Segment(seg, without, toks)
        assert shared.tabled is not None
        for pos in range(len(seg)):
            assert _key(shared.options(pos)) == _key(own.options(pos))
            assert not any(c.tables for c in shared.options(pos))


@SETTINGS
@given(stream(), st.sampled_from(["dp", "greedy", "best"]))
def test_token_sums_are_the_printed_length_and_the_reroll_is_lossless(text, strategy):
    stmts = parse_statements(text)
    rolled = reroll_stmts(stmts, RerollConfig(strategy=strategy))
    known = _Known()
    for xs in (stmts, rolled):
        assert known.length(xs) == count_tokens(fmt_stmts(xs))
    module = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n" + text + "\n\tret;\n}\n"
    (one,) = reroll_texts([(module, "k.ptx")], RerollConfig(strategy=strategy), jobs=1)
    assert one.text == reroll_text(module, "k.ptx", RerollConfig(strategy=strategy))
    assert expand_text(one.text) == expand_text(module)  # expand(reroll(P)) == P, as printed


# --- parallel over kernels ------------------------------------------------------------
def _module(kernels: list[tuple[str, int, int]]) -> str:
    """A module of kernels `name`, each `copies` unrolled copies of a body of `width` loads."""
    out = ".version 8.0\n.target sm_90\n.address_size 64\n"
    for name, copies, width in kernels:
        body = "".join(f"\tld.global.f32 %f{t * width + k + 1}, [%rd1+{4 * (t * width + k)}];\n"
                       f"\tadd.f32 %f{t * width + k + 100}, %f{t * width + k + 1}, %f{t + 1};\n"
                       for t in range(copies) for k in range(width)).replace("+0]", "]")
        out += f".visible .entry {name}(\n\t.param .u64 p\n)\n{{\n{body}\tret;\n}}\n"
    return out


TEXTS = [(_module([("a", 12, 1), ("b", 5, 3)]), "one.ptx"),
         (_module([("c", 30, 2)]), "two.ptx"),
         (_module([("d", 3, 1), ("e", 16, 2), ("f", 7, 1)]), "three.ptx")]


def test_batch_over_processes_is_the_plain_reroll_in_order():
    cfg = RerollConfig()
    done = reroll_texts(TEXTS, cfg, jobs=2)
    assert [r.text for r in done] == [reroll_text(t, s, cfg) for t, s in TEXTS]
    assert [r.stats.functions for r in done] == [2, 1, 3]
    assert all(r.stats.checked == r.stats.functions and r.stats.loops >= 1 for r in done)
    assert [expand_text(r.text) for r in done] == [expand_text(t) for t, _ in TEXTS]


def test_a_text_over_a_workers_share_is_rerolled_in_parts_as_the_plain_reroll():
    # one file of many kernels beside a small one: it is cut into ranges of whole functions,
    # one per worker (batch._cuts), each parsed alone; the text comes back whole
    cfg = RerollConfig()
    big = _module([("a", 12, 1), ("b", 5, 3), ("c", 30, 2), ("d", 3, 1), ("e", 16, 2)])
    texts = [(TEXTS[1][0], "two.ptx"), (big, "big.ptx"), (_module([]), "empty.ptx")]
    for jobs in (2, 3):
        done = reroll_texts(texts, cfg, jobs=jobs)
        assert [r.text for r in done] == [reroll_text(t, s, cfg) for t, s in texts]
        assert [r.stats.functions for r in done] == [1, 5, 0]
        # tokens counted in the workers, the parts' counts summed: as counting the whole texts
        counted = reroll_texts(texts, cfg, jobs=jobs, count=True)
        assert [r.tokens for r in counted] == [(count_tokens(t), count_tokens(r.text)) for (t, _), r in zip(texts, done)]
        assert counted[1].tokens[0] > counted[1].tokens[1] > 0
    assert [r.tokens for r in reroll_texts(texts, cfg, jobs=1, count=True)] == [r.tokens for r in counted]
    assert all(r.tokens is None for r in done)


def _mixed() -> str:
    """Kernels with the items nvcc writes between them: comments, declarations, globals, and a
    header over two lines (`.visible` on its own line: two lines that look like a start)."""
    a, b, c = (_module([(n, k, w)]).split(".address_size 64\n")[1] for n, k, w in
               (("a", 12, 1), ("b", 5, 3), ("c", 30, 2)))
    return (".version 8.0\n.target sm_90\n.address_size 64\n\n// .globl\ta\n" + a
            + "\n.extern .func (.param .b32 r) vprintf\n(\n\t.param .b64 f\n)\n;\n"
            + ".global .align 4 .b8 tbl[8] = {1, 2, 3, 4,\n 5, 6, 7, 8};\n// .globl\tb\n"
            + b.replace(".visible .entry", ".visible\n.entry") + "\n// .globl\tc\n" + c)


def test_each_cut_of_a_text_gives_the_plain_reroll(monkeypatch):
    # the ranges that start at each line that looks like a function's start (batch._cuts), parsed
    # alone, give the whole text's Rolled-PTX and token counts; a cut between `.visible` and
    # `.entry` (its range does not parse alone) sends the text back to be rerolled whole
    from kernelmill.ptx import batch

    cfg = RerollConfig()
    text = _mixed()
    small = [(_module([("s", 2, 1)]), "small.ptx")]
    want = reroll_text(text, "mixed.ptx", cfg)
    starts = [m.start() for m in batch._FUNCTION_LINE.finditer(text)]
    assert len(starts) == 4  # a, vprintf, b (from its `.visible` line), c
    assert batch._cuts(text, 2)[1] in starts and batch._cuts("/**/" + text, 2) == [0, 0, len(text) + 4]
    for cut in starts + [text.index(".entry b")]:  # (and a cut that is no item's start)
        monkeypatch.setattr(batch, "_cuts", lambda t, n, cut=cut: [0, cut, len(t)])
        [done, _] = reroll_texts([(text, "mixed.ptx")] + small, cfg, jobs=2, count=True)
        assert done.text == want
        assert done.tokens == (count_tokens(text), count_tokens(want))
        assert done.stats.functions == 3 and done.stats.loops >= 3


def test_an_error_in_a_range_is_named_as_in_the_whole_text(monkeypatch):
    from kernelmill.ptx import batch
    from kernelmill.ptx.lexer import PtxSyntaxError

    text = _mixed()
    bad = text.replace("\tret;\n}\n\n// .globl\tc", "\tadd.s32 %r1, ;\n\tret;\n}\n\n// .globl\tc")
    line = bad[:bad.index("add.s32 %r1, ;")].count("\n") + 1
    monkeypatch.setattr(batch, "_cuts", lambda t, n: [0, t.index("// .globl\tb"), len(t)])
    try:
        reroll_texts([(bad, "bad.ptx"), (_module([("s", 2, 1)]), "small.ptx")], jobs=2)
    except PtxSyntaxError as exc:
        assert (exc.source, exc.line) == ("bad.ptx", line)
    else:
        raise AssertionError("no PtxSyntaxError")


def test_a_text_that_does_not_parse_is_named_from_a_worker():
    from kernelmill.ptx.lexer import PtxSyntaxError

    bad = ".version 8.0\n.target sm_90\n.visible .entry k()\n{\n\tadd.s32 %r1, ;\n}\n"
    try:
        reroll_texts(TEXTS + [(bad, "bad.ptx")], jobs=2)
    except PtxSyntaxError as exc:
        assert (exc.source, exc.line) == ("bad.ptx", 5)
    else:
        raise AssertionError("no PtxSyntaxError")


def test_stats_cli_same_table_for_any_jobs(tmp_path):
    files = []
    for text, name in TEXTS:
        (tmp_path / name).write_text(text)
        files.append(str(tmp_path / name))
    outs = []
    for jobs in ("1", "2"):
        r = CliRunner().invoke(app, ["ptx", "stats", *files, "--jobs", jobs], env={"COLUMNS": "200"})
        assert r.exit_code == 0, r.output
        outs.append(r.output.rsplit("rerolled", 1)[0])  # the last line holds the timing
    assert outs[0] == outs[1] and "total" in outs[0]
    r = CliRunner().invoke(app, ["ptx", "stats", *files, "--jobs", "-1"])
    assert r.exit_code == 2 and "--jobs must be >= 0" in r.output


def test_export_rolled_rows_do_not_depend_on_jobs(tmp_path):
    from kernelmill.ptx.export import with_rolled

    pairs = [Pair(f"p{i}", name, "cuda", f'extern "C" __global__ void {name}(float* x) {{}}',
                  _module([(name, copies, width)]), target="sm_90", meta={"subgraph": f"m/sg{i}"})
             for i, (name, copies, width) in enumerate([("a", 12, 1), ("b", 5, 3), ("c", 20, 2), ("d", 9, 1)])]
    write_jsonl(tmp_path / "pairs.jsonl", pairs)
    rows = {}
    for jobs in ("1", "2"):
        out = tmp_path / f"sft{jobs}"
        r = CliRunner().invoke(app, ["ptx", "export", str(tmp_path / "pairs.jsonl"), "-o", str(out),
                                     "--test-frac", "0", "--rolled", "--reroll", "fast", "--jobs", jobs])
        assert r.exit_code == 0, r.output
        rows[jobs] = (out / "train.jsonl").read_text()
    assert rows["1"] == rows["2"]
    got = [json.loads(line) for line in rows["2"].splitlines()]
    for row, pair in zip(got, pairs):
        want = with_rolled(Pair(**{**pair.__dict__, "meta": dict(pair.meta)}), "fast").rolled_ptx
        assert row["input"] == "rolled_ptx" and want.strip() in row["messages"][-2]["content"]


# --- loops checked per function ----------------------------------------------------
UNROLLED = "\n".join(f"\tld.global.f32 \t%f{i + 1}, [%rd1+{4 * i}];" for i in range(16)) + "\n\tret;\n"
KERNEL = (".version 8.0\n.target sm_90\n.address_size 64\n\n.visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n"
          "\t.reg .f32 \t%f<20>;\n\t.reg .b64 \t%rd<2>;\n\n" + UNROLLED + "}\n")


def test_loops_are_checked_one_by_one_only_when_the_function_check_fails(monkeypatch):
    # issue 44: a reroll builds its loops unchecked and checks the whole function; a
    # function whose check fails is rolled again with every loop checked before it is used
    from kernelmill.ptx.search import Loop, Segment as Seg

    plain = reroll_text(KERNEL)
    assert "for" in plain and expand_text(plain).split() == expand_text(KERNEL).split()
    made = Seg._make

    def off_by_one(self, b):  # a template that does not expand to what it replaces
        loop = made(self, b)
        return Loop(loop.var, loop.start, loop.limit + 1, loop.step, loop.body)

    monkeypatch.setattr(Seg, "_make", off_by_one)
    checked = []
    same = Seg._same
    monkeypatch.setattr(Seg, "_same", lambda self, loop, span: checked.append(1) or same(self, loop, span))
    from kernelmill.ptx import RerollStats

    stats = RerollStats()
    out = reroll_text(KERNEL, stats=stats)
    # the unchecked pass made a wrong loop, the function check caught it, the checked pass
    # refused every such template: the output is the input, and still a round trip
    assert checked and stats.rejected_templates > 0 and stats.failed == 0 and stats.checked == 1
    assert expand_text(out).split() == expand_text(KERNEL).split() and "for" not in out


# --- the alignment's LCS (aligned._merge, session 14 speed) -------------------------
def _merge_by_table(slots, ref, sk, block, t, extra):
    """aligned._merge as it was written before the bit-parallel LCS: the full table."""
    new = [sk[x] for x in block]
    n, m = len(ref), len(new)
    if abs(n - m) > extra:
        return None
    if new == ref:
        return [r + [x] for r, x in zip(slots, block)], ref, True
    p = 0
    while p < n and p < m and ref[p] == new[p]:
        p += 1
    q = 0
    while q < n - p and q < m - p and ref[n - 1 - q] == new[m - 1 - q]:
        q += 1
    mid_r, mid_n = ref[p:n - q], new[p:m - q]
    nr, nn = len(mid_r), len(mid_n)
    L = [[0] * (nn + 1) for _ in range(nr + 1)]
    for i in range(nr - 1, -1, -1):
        for k in range(nn - 1, -1, -1):
            L[i][k] = L[i + 1][k + 1] + 1 if mid_r[i] == mid_n[k] else max(L[i + 1][k], L[i][k + 1])
    if nr - L[0][0] > extra or nn - L[0][0] > extra:
        return None
    out = [r + [x] for r, x in zip(slots[:p], block[:p])]
    oref = ref[:p]
    i = k = 0
    while i < nr or k < nn:
        if i < nr and k < nn and mid_r[i] == mid_n[k] and L[i][k] == L[i + 1][k + 1] + 1:
            out.append(slots[p + i] + [block[p + k]])
            oref.append(mid_r[i])
            i, k = i + 1, k + 1
        elif k == nn or (i < nr and L[i + 1][k] >= L[i][k + 1]):
            out.append(slots[p + i] + [None])
            oref.append(mid_r[i])
            i += 1
        else:
            out.append([None] * t + [block[p + k]])
            oref.append(mid_n[k])
            k += 1
    out += [r + [x] for r, x in zip(slots[n - q:], block[m - q:])]
    oref += ref[n - q:]
    return out, oref, False


@settings(max_examples=600, deadline=None)
@given(st.lists(st.integers(0, 4), max_size=70), st.lists(st.integers(0, 4), max_size=70),
       st.integers(0, 80))
@example([0, 1, 2, 3], [0, 2, 1, 3], 6)
def test_bit_parallel_alignment_is_the_table_alignment(ref, new, extra):
    from kernelmill.ptx.aligned import _merge
    sk = ref + new  # block = the indices of `new` in sk
    block = list(range(len(ref), len(ref) + len(new)))
    slots = [[k] for k in range(len(ref))]
    assert _merge(slots, ref, sk, block, 1, extra) == _merge_by_table(slots, ref, sk, block, 1, extra)
