"""Copies between labels that differ by whole statements, aligned (issue 44 item 1, session 12).

A guarded tail unrolled (`if (i + k < n) y[i + k] = ...` for k = 0..3) or a window of guarded
loads is a run of basic blocks, one per copy, each starting (or ending) at the label its
branch skips to. nvcc computes an address once and reuses it in later copies, so the first
copies hold statements the others lack (`add.s32 %r24, %r23, %r7; mul.wide.s32 ...; add.s64
%rd2, ...`), and no body repeats statement for statement.

Here consecutive blocks, each from a label to the next, are aligned by their statements' skeletons (holes.py):
each new block is merged into the body built so far along their longest common subsequence,
so a statement some copies lack becomes a body statement with a presence guard (presence.py).
Only unguarded instructions may be missing from a copy (labels, branches and loops are in
every copy). The loop is kept where it expands to the statements it replaces and is shorter.
"""

from __future__ import annotations

from .presence import loop_of_rows
from .syntax import Label, Stmt

_MAX_BLOCK = 48   # longest block aligned (statements): the alignment is quadratic in it
_MAX_EXTRA = 6    # most statements one copy may have that the body so far lacks, or lack


def label_loops(items: list[Stmt], known, free: tuple, check: bool = True, sk: list | None = None,
                geometric: bool = True) -> list[tuple]:
    """(start, end, loop) for the runs of label-delimited blocks of `items` (a straight-line
    segment) that align, each shorter than items[start:end]; `sk`: the items' skeletons as
    numbers, where the caller has them."""
    labels = [k for k, s in enumerate(items) if type(s) is Label]
    if len(labels) < 2:
        return []
    if sk is None:
        sk = [known.split(s)[0] for s in items]
    # a block runs from its label (where the branch of the copy before lands) to the next;
    # blocks ending at their label were tried too (issue 44): 0.01-0.03 points, 1.5% time
    bounds = labels + [len(items)]
    blocks = [(a, b) for a, b in zip(bounds, bounds[1:]) if 0 < b - a <= _MAX_BLOCK]
    out = []
    j = 0
    while j < len(blocks):
        got = _group(items, sk, blocks, j, known, free, check, geometric)
        if got is None:
            j += 1
            continue
        start, end, loop, used = got
        out.append((start, end, loop))
        j += used
    return out


def _group(items, sk, blocks, j: int, known, free, check: bool, geometric: bool):
    """The loop over blocks j, j+1, ... (as many as align and pay), or None."""
    a0, b0 = blocks[j]
    slots = [[x] for x in range(a0, b0)]  # body statement -> per copy: item index or None
    ref = sk[a0:b0]  # their skeletons
    ends = [b0]
    same = True
    for t in range(1, len(blocks) - j):
        a, b = blocks[j + t]
        if a != ends[-1]:
            break  # blocks must follow one another
        merged = _merge(slots, ref, sk, list(range(a, b)), t)
        if merged is None:
            break
        slots, ref, exact = merged
        same = same and exact
        ends.append(b)
    c = len(ends)
    if c < 2 or same:  # copies alike statement for statement: the ordinary search's
        return None
    for cc in range(c, max(1, c - 2), -1):  # the longest group that pays (one copy less at most)
        rows = [r[:cc] for r in slots if any(x is not None for x in r[:cc])]
        # (a statement missing from a copy must be an unguarded instruction: presence._models)
        built = loop_of_rows(items, rows, a0, ends[cc - 1], cc, known, free, check, geometric)
        if built is not None:
            return a0, ends[cc - 1], built, cc
    return None


def _merge(slots: list, ref: list, sk, block: list[int], t: int, extra: int = _MAX_EXTRA):
    """`slots` (t copies; `ref`: their skeletons) with the block as copy t, along their longest
    common subsequence by skeleton: (slots, ref, the block is the body statement for
    statement), or None where the block has or lacks more than `extra` statements."""
    new = [sk[x] for x in block]
    n, m = len(ref), len(new)
    if abs(n - m) > extra:
        return None
    if new == ref:
        return [r + [x] for r, x in zip(slots, block)], ref, True
    # the common prefix and suffix match as they are; the LCS is of what lies between
    p = 0
    while p < n and p < m and ref[p] == new[p]:
        p += 1
    q = 0
    while q < n - p and q < m - p and ref[n - 1 - q] == new[m - 1 - q]:
        q += 1
    mid_r, mid_n = ref[p:n - q], new[p:m - q]
    nr, nn = len(mid_r), len(mid_n)
    # the LCS of the suffixes, L(i, k) = lcs(mid_r[i:], mid_n[k:]), one row per i as a bit
    # vector over mid_n read backwards (Hyyro's bit-parallel LCS: row i's bits below w are
    # the lcs of mid_r[i:] with the last w of mid_n as w less their count), so the walk
    # below goes forward and reads the few values it needs (by hand: difflib.SequenceMatcher
    # pairs longest contiguous blocks, not a longest common subsequence, and would leave
    # statements unaligned that the copies share)
    full = (1 << nn) - 1
    masks: dict = {}
    for j in range(nn):
        x = mid_n[nn - 1 - j]
        masks[x] = masks.get(x, 0) | (1 << j)
    rows = [full] * (nr + 1)
    v = full
    for i in range(nr - 1, -1, -1):
        mk = masks.get(mid_r[i])
        if mk:
            u = v & mk
            v = ((v + u) | (v - u)) & full
        rows[i] = v
    lcs = nn - v.bit_count()
    if nr - lcs > extra or nn - lcs > extra:
        return None
    out = [r + [x] for r, x in zip(slots[:p], block[:p])]
    oref = ref[:p]
    i = k = 0
    while i < nr or k < nn:
        # (where the two match, L(i, k) = L(i+1, k+1) + 1 always)
        if i < nr and k < nn and mid_r[i] == mid_n[k]:
            out.append(slots[p + i] + [block[p + k]])
            oref.append(mid_r[i])
            i, k = i + 1, k + 1
        elif k == nn or (i < nr and (nn - k) - (rows[i + 1] & ((1 << (nn - k)) - 1)).bit_count()
                         >= (nn - k - 1) - (rows[i] & ((1 << (nn - k - 1)) - 1)).bit_count()):
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
