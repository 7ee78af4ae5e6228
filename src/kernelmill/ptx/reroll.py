"""Loop rerolling: plain PTX -> Rolled-PTX (SPEC.md section 3), lossless.

Within a basic block, `p` consecutive statements repeated `c` times form a loop
when their skeletons repeat exactly and every numeric hole follows a model in
the copy index (holes.py): linear `a + t*d` as in the paper, or, our grammar
extension, geometric `(m>>t*k)` / `(m<<t*k)` for the halving offsets and
thresholds of tree reductions and the doubling ones of scans. The template is
copy 0 with each varying hole written as a VarExpr in the loop variable.

Lossless by construction: expanding the template at `var = t` re-creates every
hole value of copy t, and everything else is the shared skeleton. It is also
checked: each loop is expanded and compared with the statements it replaces
before it is applied, and every rerolled function is expanded and compared
with the original (`RerollStats.checked / .failed`).

Which loops to apply is search.py's business: exact token scores, and either the
set that saves the most per segment (`dp`) or PtxDec's top-down order
(`greedy`). Passes are repeated on the output to fold nested unrolls (an inner
loop becomes a statement of the outer template, its VarExprs gain a term for the
outer var). The best plan per pass is not always the best after folding, so the
default (`best`) runs both plans and keeps the shorter text per function.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

from .expand import expand_stmts
from .firsts import rewrite as rewrite_firsts
from .peeled import rewrite as rewrite_peeled
from .lexer import count_tokens
from .holes import split
from .whole_statements import offer as offer_presence, roll_stream as roll_presence
from .search import Segment
from .syntax import Block, Directive, Function, Instr, Loop, Module, Stmt, VarExpr, fmt_stmt, map_segments

# opcodes that end a basic block (never inside a loop body)
_CONTROL = {"brx", "ret", "exit", "trap", "call", "brkpt"}


@dataclass
class RerollConfig:
    max_period: int = 256      # longest loop body (in statements) searched
    max_candidates: int = 48   # candidate periods tried per position
    max_passes: int = 6        # re-applications for nested loops
    geometric: bool = True     # allow `(m>>i)` / `(m<<i)` terms (our grammar extension)
    tables: bool = True        # allow table terms `[v0,v1,...][i]` (format 2) for holes no model fits
    max_table: int = 32        # longest table (copies of a loop with a table term)
    strategy: str = "best"     # "dp" | "greedy" | "best" (run both, keep the shorter)
    presence: bool = True      # copies that differ by whole statements, with presence guards (presence.py,
    #                            aligned.py); only with tables
    firsts: bool = True        # loops whose copy 0 is off the model of the others, with pinned values
    #                            (`%f28+i*2!111`, first_copy.py); only with tables

    def __post_init__(self):
        if self.strategy not in ("dp", "greedy", "best"):
            raise ValueError(f"unknown reroll strategy {self.strategy!r} (dp, greedy, best)")


@dataclass
class RerollStats:
    functions: int = 0
    checked: int = 0     # functions whose expand(reroll(f)) == f was verified
    failed: int = 0      # functions kept unrolled because the check failed
    loops: int = 0
    geometric_loops: int = 0  # loops with at least one `(m>>i)` / `(m<<i)` term
    table_loops: int = 0      # loops with at least one table term `[v0,v1,...][i]`
    first_loops: int = 0      # loops whose copy 0 has first values (first_copy.py)
    rejected_templates: int = 0
    failures: list[str] = field(default_factory=list)

    def add(self, other: "RerollStats") -> "RerollStats":
        """Count `other`'s figures in too (every field: counts add, failures extend)."""
        for fd in fields(self):
            if fd.name == "failures":
                self.failures.extend(other.failures)
            else:
                setattr(self, fd.name, getattr(self, fd.name) + getattr(other, fd.name))
        return self


def _is_barrier(s: Stmt) -> bool:
    if isinstance(s, Directive):
        # declarations end a segment; `.pragma "nounroll";` does not: nvcc puts one at the head
        # of every loop it keeps, so each copy of an outer loop unrolled around an inner one
        # holds one, and the copies roll only with it in the body (expand copies it as it is)
        return s.name in (".reg", ".shared", ".local", ".param")
    return isinstance(s, Instr) and s.opcode in _CONTROL


# --- drivers --------------------------------------------------------------------
def _tokens(s: Stmt) -> int:
    return count_tokens("\n".join(fmt_stmt(s)))


# hole kinds whose printed number is one token, with a `-` token before it when negative
# (registers, labels and parameters are never negative; float literals carry no sign), and
# address offsets: `+N` two tokens (`+-N` three), none where the offset is 0 (`[%r8]`)
_COUNTED_HOLES = frozenset({"reg", "sym", "psym", "imm", "off", "off0", "fimm"})


# skeleton key -> tokens less those of the hole values: a function of the key alone, so
# shared by all rerolls of a process (cleared when large)
_SKELETON_TOKENS: dict = {}


def _hole_tokens(vals: tuple, kinds: tuple) -> int:
    """Tokens that a statement's hole values add to those of its skeleton (_COUNTED_HOLES)."""
    n = sum(v < 0 for v in vals) if vals and min(vals) < 0 else 0
    if "off" in kinds or "off0" in kinds:
        n += 2 * sum(1 for v, kd in zip(vals, kinds) if v and (kd == "off" or kd == "off0"))
    return n


class _Known:
    """What one reroll knows of each statement object: its tokens as printed and its
    holes.split. Passes and plans hand the same objects on (only new loops are new),
    so each statement is printed and split once, not once per segment and pass.

    An instruction whose holes are all of _COUNTED_HOLES has the tokens of its skeleton
    plus those of its hole values (_hole_tokens): counted once per skeleton, not printed
    each time."""

    def __init__(self):
        self._toks: dict[int, tuple[Stmt, int]] = {}   # id -> (the statement, keeping it alive)
        self._split: dict[int, tuple[Stmt, tuple]] = {}
        # skeleton keys numbered: a segment compares skeletons by number, so a key (a nested
        # tuple, whose hash is not kept) is hashed once per statement, not once per segment
        self._number: dict = {}
        self._keys: list = []
        self._skeleton_tokens: dict[int, int] = {}  # _SKELETON_TOKENS by the key's number: no key hashed again

    def tokens(self, s: Stmt) -> int:
        e = self._toks.get(id(s))
        if e is None:
            e = self._toks[id(s)] = (s, self._count(s))
        return e[1]

    def _count(self, s: Stmt) -> int:
        if type(s) is Instr:
            number, vals, kinds, _ = self.split(s)
            if _COUNTED_HOLES.issuperset(kinds):
                extra = _hole_tokens(vals, kinds)
                n = self._skeleton_tokens.get(number)
                if n is None:
                    key = self._keys[number]
                    n = _SKELETON_TOKENS.get(key)
                    if n is None:
                        if len(_SKELETON_TOKENS) > 200_000:
                            _SKELETON_TOKENS.clear()
                        n = _SKELETON_TOKENS[key] = _tokens(s) - extra
                    self._skeleton_tokens[number] = n
                return n + extra
        return _tokens(s)

    def split(self, s: Stmt) -> tuple:
        """holes.split(s), with the skeleton key's number in place of the key."""
        e = self._split.get(id(s))
        if e is None:
            key, vals, kinds, shapes = split(s)
            number = self._number.get(key)
            if number is None:
                number = self._number[key] = len(self._keys)
                self._keys.append(key)
            e = self._split[id(s)] = (s, (number, vals, kinds, shapes))
        return e[1]

    def length(self, stmts) -> int:
        """count_tokens(fmt_stmts(stmts)): tokens never span lines, so the sum per statement."""
        return sum(map(self.tokens, stmts))


def _roll_stream(stmts, cfg: RerollConfig, stats: RerollStats, strategy: str,
                 cache: dict, known: _Known, free: tuple = (), check: bool = True,
                 offer: bool = False) -> list[Stmt]:
    def roll(seg: list, free: tuple) -> list[Stmt]:
        # the plans start from the same segments, of the same statement objects (a loop
        # a plan made is shared too: Segment.built/made): keyed by the objects' identities,
        # kept alive by the cache (a statement's hash walks its whole tree, 10% of a reroll)
        items = tuple(seg)
        h = tuple(map(id, items))
        key = (h, free, cfg.tables, cfg.presence, cfg.firsts)
        found = cache.get(key)
        if found is None:
            # the search of the same statements under another config: its options, filtered
            twin = next((t for t in (cache.get((h, free, a, b, c)) for a in (True, False) for b in (True, False)
                                     for c in (True, False)) if t is not None), None)
            found = (twin[1].with_config(cfg) if twin is not None else
                     Segment(list(items), cfg, [known.tokens(s) for s in items], free,
                             [known.split(s) for s in items]))
            cache[key] = (items, found)
            if offer and twin is None:
                offer_presence(found, items, cfg, known, free, check)
        else:
            found = found[1]
        return found.roll(stats, strategy, check)

    return map_segments(stmts, roll, _is_barrier, free)


def _reroll_with(stmts, cfg: RerollConfig, stats: RerollStats, strategy: str,
                 cache: dict, known: _Known, check: bool) -> list[Stmt]:
    cur = list(stmts)
    for k in range(cfg.max_passes):
        before = stats.loops
        # the first pass's segments (the input's) are offered the loops over copies that
        # differ by whole statements (whole_statements.offer), with tables only (see reroll_stmts)
        cur = _roll_stream(cur, cfg, stats, strategy, cache, known, check=check,
                           offer=k == 0 and cfg.presence and cfg.tables)
        if stats.loops == before:
            break
    return cur


def reroll_stmts(stmts, cfg: RerollConfig | None = None,
                 stats: RerollStats | None = None, check_loops: bool = True) -> list[Stmt]:
    """Reroll a statement stream; repeated until no new loop folds (nesting).

    With `strategy="best"` both plans run and the shorter output is kept: which
    inner loops fold best into outer ones depends on the kernel, and the greedy
    plan's rotations sometimes nest better than the per-pass optimum.

    `check_loops`: each loop is expanded and compared with what it replaces before it
    is applied. False leaves that to the caller, who must compare the expansion of the
    whole output (reroll_function does, and rerolls again with the checks where it
    differs): no template of the corpora has ever failed its check, and the checks were
    a fifth of a reroll's time (issue 44)."""
    cfg = cfg or RerollConfig()
    stats = stats if stats is not None else RerollStats()
    plans = [("dp", cfg), ("greedy", cfg)] if cfg.strategy == "best" else [(cfg.strategy, cfg)]
    best, cache, known = None, {}, _Known()
    offered = set()  # the plans (with tables and presence) whose output holds an offered loop
    firsts = set()   # the plans whose output holds a loop with first values
    for k, (plan, c) in enumerate(plans):
        st = RerollStats()
        out = _reroll_with(stmts, c, st, plan, cache, known, check_loops)
        if c.tables and st.table_loops and cfg.strategy == "best" and len(plans) < 3:
            # a table over a whole run can win a pass and then block the nested fold that
            # the next pass would find: where tables were used, a plan without is tried too
            plans.append(("dp", replace(cfg, tables=False)))
        n = known.length(out)
        if best is None or n < best[0]:
            best = (n, out, st)
        if c is cfg and cfg.strategy == "best" and cfg.presence and cfg.tables and plan in _PRESENCE_FREE \
                and _has_guard(out):
            offered.add(plan)
        if c is cfg and cfg.strategy == "best" and st.first_loops:
            firsts.add(plan)
        if len(plans) == k + 1 and firsts:
            # a loop with first values (first_copy.py) can win a pass and block the nested fold of
            # the next (sgemm_t_8x8_sliced_k: 1519 tokens without, 2104 with): such plans run
            # again without them, as below for the offered loops
            plans.extend((x, replace(cfg, firsts=False)) for x in ("dp", "greedy") if x in firsts)
            firsts = set()
        if len(plans) == k + 1 and offered:
            # a loop offered in the first pass (whole_statements.offer) can win it and then block the
            # nested fold of the ordinary loops beside it (gelu_tanh_f16x8: 1767 tokens with the
            # offered loop, 1533 without). A plan whose output holds one (its presence guard) is
            # run again without the offered loops: only those plans can differ from their twin
            # without them (a plan that chose none of them chose as it would without them), and
            # their twin may win where another plan won over them (group_norm_kernel: the
            # table-free plan won over the dp plan's offered loops, and lost to dp without them)
            plans.extend((x, replace(cfg, presence=False)) for x in _PRESENCE_FREE if x in offered)
            offered = set()
    # presence guards need tables where the copies that lack a statement are not one run;
    # without tables (`--linear-only`: the paper's grammar) they are not written at all
    presence = cfg.presence and cfg.tables
    n, out, st = best
    if presence:
        before = st.loops
        out = roll_presence(out, cfg, known, st, _is_barrier, cache, check=check_loops)
        if st.loops != before:
            # the new loops may fold into outer ones, as the ordinary passes' loops do
            out = _reroll_with(out, replace(cfg, strategy="dp"), st, "dp", cache, known, check_loops)
            n = known.length(out)
    if cfg.tables and cfg.firsts:  # tables linear but for copy 0 or the last, as pinned values (firsts.py)
        out = rewrite_firsts(out)
        # peeled first and last copies taken back into the loop beside them (peeled.py)
        new = rewrite_peeled(out, presence=cfg.presence)
        if new != out and _may_fold(new, {id(x) for x in _loops(out)}):
            # the loops that took a peeled copy may now fold into an outer loop: one more pass
            again = _reroll_with(new, replace(cfg, strategy="dp"), RerollStats(), "dp", cache, known, check_loops)
            new = again if known.length(again) < known.length(new) else new
        out = new
        n = known.length(out)
    if n > known.length(stmts):  # scores are exact, but never make the text longer
        return list(stmts)
    stats.add(st)
    return out


def _loops(stmts):
    """Every loop of the statements, nested ones too."""
    for s in stmts:
        if type(s) is Loop or type(s) is Block:
            if type(s) is Loop:
                yield s
            yield from _loops(s.body)


def _may_fold(stmts, old: set) -> bool:
    """Is a loop that peeled.py made (not in `old`) beside another loop of its trip and its body's
    opcodes, in one stream? Only then can one more pass fold it into an outer loop."""
    loops = [s for s in stmts if type(s) is Loop]
    keys = [(s.trip, tuple(getattr(x, "opcode", None) for x in s.body)) for s in loops]
    if any(id(s) not in old and keys.count(k) > 1 for s, k in zip(loops, keys)):
        return True
    return any(_may_fold(s.body, old) for s in stmts if type(s) is Loop or type(s) is Block)


# the plans run again without the offered loops where their output holds one (reroll_stmts)
_PRESENCE_FREE = ("dp",)


def _has_guard(stmts) -> bool:
    """Does a statement hold a presence guard (a loop offered by presence.py)?"""
    for s in stmts:
        if isinstance(s, (Loop, Block)):
            if _has_guard(s.body):
                return True
        elif type(s) is Instr and type(s.guard) is VarExpr:
            return True
    return False


def reroll_function(f: Function, cfg: RerollConfig | None = None,
                    stats: RerollStats | None = None) -> Function:
    stats = stats if stats is not None else RerollStats()
    if f.body is None:
        return f
    stats.functions += 1
    # the invariant, on every output: expand(reroll(P)) == P; the loops are checked one by
    # one only when the whole function's check fails (then their checks decide, as before)
    original = expand_stmts(f.body)
    for check_loops in (False, True):
        st = RerollStats()
        body = reroll_stmts(f.body, cfg, st, check_loops=check_loops)
        if expand_stmts(body) == original:
            break
    else:
        stats.failed += 1
        stats.failures.append(f.name)
        return f
    stats.checked += 1
    stats.add(st)
    return Function(f.kind, f.name, f.pre, f.ret, f.params, f.post, tuple(body), f.line)


def reroll_module(m: Module, cfg: RerollConfig | None = None,
                  stats: RerollStats | None = None) -> Module:
    from .parser import gc_paused

    stats = stats if stats is not None else RerollStats()
    with gc_paused():  # many short-lived objects, few cycles: +20-35% (issue 44)
        return Module(tuple(reroll_function(x, cfg, stats) if isinstance(x, Function) else x
                            for x in m.items))


def reroll_text(text: str, source: str = "<ptx>", cfg: RerollConfig | None = None,
                stats: RerollStats | None = None) -> str:
    """Plain PTX text -> Rolled-PTX text (raises PtxSyntaxError on bad input)."""
    from .parser import gc_paused
    # paused over parse, reroll and print, and turned back on once the trees are freed:
    # turned on between them, the collector walks every tree still alive (batch._reroll_part)
    with gc_paused():
        return _reroll_text(text, source, cfg, stats)


def _reroll_text(text: str, source: str, cfg: RerollConfig | None, stats: RerollStats | None) -> str:
    from .parser import parse_module
    from .syntax import fmt_module
    return fmt_module(reroll_module(parse_module(text, source), cfg, stats))
