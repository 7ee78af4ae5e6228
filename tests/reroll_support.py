"""The Rolled-PTX round trip the reroll shape tests share (tests/ptx/test_reroll_*.py)."""

from __future__ import annotations

from kernelmill.ptx import RerollConfig, count_tokens, expand_stmts, fmt_stmts, parse_statements, reroll_stmts


def roundtrip(stmts: list, cfg: RerollConfig | None = None) -> list:
    """`stmts` rolled: the printed Rolled-PTX reads back to the same tree, expands to exactly
    `stmts`, and is no longer in tokens."""
    rolled = reroll_stmts(stmts, cfg)
    again = parse_statements(fmt_stmts(rolled))
    assert again == rolled  # the printed Rolled-PTX reads back to the same tree
    assert expand_stmts(again) == stmts
    assert count_tokens(fmt_stmts(rolled)) <= count_tokens(fmt_stmts(stmts))
    return rolled
