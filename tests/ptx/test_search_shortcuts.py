"""Session 16's speed shortcuts in the search (issue 44 item 2): each one rests on a fact about
the run tables that these tests check against the definitions. None changes an output; the
identity check over 339 files (docs/results/issue44/session16_speed) is the end-to-end proof."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernelmill.ptx.search import _Runs, kind_numbers, pack_values

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def segment(draw):
    """Skeletons (few, so bodies repeat), hole values near a linear model, one kind of hole
    per skeleton (sometimes a float literal, whose change ends a run at once)."""
    n = draw(st.integers(2, 48))
    sk = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    width = {s: draw(st.integers(0, 2)) for s in set(sk)}
    kind = {s: draw(st.sampled_from(["imm", "reg", "fimm"])) for s in set(sk)}
    step = draw(st.integers(-2, 2))
    vals = [tuple(x * step + draw(st.sampled_from([0, 0, 0, 1, -1, 9])) for _ in range(width[s]))
            for x, s in enumerate(sk)]
    return sk, vals, [(kind[s],) * width[s] for s in sk], draw(st.integers(1, 6))


def _repeats(sk, pos, p):
    return pos + 2 * p <= len(sk) and sk[pos:pos + p] == sk[pos + p:pos + 2 * p]


@SETTINGS
@given(segment(), st.lists(st.integers(0, 47), min_size=1, max_size=8))
def test_a_filled_window_knows_every_copy_its_skeleton_reaches(case, windows):
    """fill(pos, pos + p) also fills the later copies while the skeletons repeat: a filled
    statement whose skeleton recurs p later has that copy filled. So the search need not fill
    copy 1 (first_copy.offer) nor copy c (_table_options) of a body that repeats."""
    sk, vals, kinds, p = case
    r = _Runs(sk, vals, kinds, p)
    n = len(sk)
    for pos in windows:  # in any order, as the search, offer and the tables ask them
        pos = min(pos, n - 1)
        r.fill(pos, min(pos + p, n))
        for x in range(n - p):
            if r.lin[x] and sk[x] == sk[x + p]:
                assert r.lin[x + p], (x, p)
        if _repeats(sk, pos, p):
            cs = 2
            while pos + (cs + 1) * p <= n and sk[pos + cs * p:pos + (cs + 1) * p] == sk[pos:pos + p]:
                cs += 1
            assert all(r.lin[pos:pos + cs * p])


@SETTINGS
@given(segment())
def test_statements_off_the_model_of_copies_1_2_are_those_with_a_run_of_2(case):
    """first_copy.offer: where copy 0's windows have a linear run of 2 (c == 2) and copy 1's of 3
    or more, the statements whose step differs from copy 1's are those with lin == 2."""
    sk, vals, kinds, p = case
    r = _Runs(sk, vals, kinds, p)
    n = len(sk)
    for pos in range(n - 2 * p, -1, -1):
        if not _repeats(sk, pos, p):
            continue
        q = pos + p
        r.fill(pos, q)
        if min(r.lin[pos:q]) != 2 or 1 + min(r.lin[q:q + p]) <= 2:
            continue
        off = [k for k in range(p) if r.step[pos + k] != r.step[q + k]]
        assert off == [x - pos for x in range(pos, q) if r.lin[x] == 2]


@SETTINGS
@given(st.lists(st.lists(st.integers(-2**40, 2**40) | st.integers(-9, 9), max_size=5).map(tuple), max_size=12))
def test_packed_values_are_the_sum_per_hole(vals):
    """pack_values (map and shifts at C speed) is sum(v << (w * h)) with w from the largest |value|."""
    w = max((max(map(abs, v)) for v in vals if v), default=0).bit_length() + 4
    assert pack_values(vals) == [sum(v << (w * h) for h, v in enumerate(vs)) for vs in vals]


def test_kind_numbers_are_equal_where_the_kinds_are():
    kinds = [("reg", "imm"), ("reg",), ("reg", "imm"), (), ("reg",), ()]
    ks = kind_numbers(kinds)
    assert all((ks[a] == ks[b]) == (kinds[a] == kinds[b]) for a in range(6) for b in range(6))
