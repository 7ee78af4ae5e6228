"""From a completion to the parts a Sample keeps: reasoning, answer, code.

Reasoning comes either in a separate field (`reasoning_content`) or inline as
`<think>...</think>`. Reasoning models whose chat template already opens the
think block emit only the closing tag; a reply cut off mid-thought has only
the opening one. Code is the last fenced block that defines the class the
task asks for (`ModelNew`), else the last block in an expected language, else
the last block; an answer with no fences that parses as such code is taken
whole. Anything else is a `parse_error`, and the sample is still kept.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([\w+#.-]*)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.M | re.S)
_OPEN_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([\w+#.-]*)[^\n]*\n", re.M)

# which fence tags count as the expected language of the answer file
LANGUAGE_TAGS = {
    "python": {"python", "py", "python3"},
    "cuda": {"cuda", "cu", "cpp", "c++", "c"},
}


@dataclass
class CodeBlock:
    lang: str
    code: str
    closed: bool = True


@dataclass
class ParsedCompletion:
    reasoning: str | None
    answer: str
    code: str
    truncated: bool
    parse_error: str | None = None


def split_reasoning(content: str, reasoning: str | None = None) -> tuple[str | None, str]:
    """Return (reasoning, answer)."""
    if reasoning is not None and reasoning.strip():
        # the server split it; some still echo an empty think block in the answer
        return reasoning.strip(), _drop_think(content).strip()
    close = content.find(THINK_CLOSE)
    open_ = content.find(THINK_OPEN)
    if close >= 0 and (open_ < 0 or open_ < close):
        start = open_ + len(THINK_OPEN) if open_ >= 0 else 0
        return content[start:close].strip(), content[close + len(THINK_CLOSE):].strip()
    if open_ >= 0:
        # opened and never closed: the reply ended while thinking
        return content[open_ + len(THINK_OPEN):].strip(), content[:open_].strip()
    return None, content.strip()


def _drop_think(text: str) -> str:
    return re.sub(r"<think>.*?</think>", "", text, flags=re.S)


def code_blocks(text: str) -> list[CodeBlock]:
    """Every fenced block in order; a final block opened but never closed
    (a cut-off reply) is returned with `closed=False`."""
    blocks, end = [], 0
    for m in _FENCE.finditer(text):
        blocks.append(CodeBlock(m.group(2).lower(), m.group(3).rstrip("\n")))
        end = m.end()
    tail = _OPEN_FENCE.search(text, end)
    if tail:
        blocks.append(CodeBlock(tail.group(2).lower(), text[tail.end():].rstrip(), closed=False))
    return blocks


def _defines(code: str, name: str) -> bool:
    return re.search(rf"^\s*class\s+{re.escape(name)}\b", code, re.M) is not None


def extract_code(answer: str, tags: set[str], require: str | None) -> tuple[str, str | None]:
    """Pick the code of an answer. Returns (code, parse_error or None)."""
    blocks = code_blocks(answer)
    closed = [b for b in blocks if b.closed]
    if require:
        hits = [b for b in closed if _defines(b.code, require)]
        if hits:
            return hits[-1].code, None
    tagged = [b for b in closed if b.lang in tags]
    pick = tagged[-1] if tagged else (closed[-1] if closed else None)
    if pick is None and blocks and not blocks[-1].closed:
        return blocks[-1].code, "reply ended inside a code block (truncated code)"
    if pick is None:
        if require and _defines(answer, require) and _parses(answer):
            return answer.strip(), None  # bare code without fences
        return "", ("no code block in the answer" if answer.strip() else "empty answer")
    if require and not _defines(pick.code, require):
        return pick.code, f"no code block defines {require}"
    return pick.code, None


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True


def parse_completion(content: str, reasoning: str | None, finish_reason: str | None,
                     tags: set[str], require: str | None) -> ParsedCompletion:
    thought, answer = split_reasoning(content, reasoning)
    truncated = finish_reason == "length"
    code, error = extract_code(answer, tags, require)
    if error and truncated and not answer:
        error = "reply ended while reasoning (no answer)"
    return ParsedCompletion(reasoning=thought, answer=answer, code=code, truncated=truncated, parse_error=error)


def approx_tokens(text: str) -> int:
    """A tokenizer-free estimate (about 4 characters a token for code and
    English in BPE vocabularies); always marked approximate where used."""
    return max(1, round(len(text) / 4)) if text else 0
