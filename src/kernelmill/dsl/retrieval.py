"""The growing corpus of verified kernels and k-nearest retrieval over it.

A corpus is a JSONL file of `CorpusEntry` lines (append-only). Each entry is
embedded as its task's feature summary, the PyTorch program and the kernel;
a query is a task's feature summary and program. Retrieval is the k most
similar entries by cosine similarity of sentence-transformers embeddings
(paper 002: k = 5), never entries of the task being asked about.

The default embedding model is `DEFAULT_EMBEDDER`, a code embedding model
users download from the Hugging Face Hub (its custom code needs
`trust_remote_code`); any sentence-transformers model name or local path works.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..records import Task, append_jsonl, read_jsonl

DEFAULT_EMBEDDER = "jinaai/jina-embeddings-v2-base-code"
DEFAULT_K = 5


@dataclass
class CorpusEntry:
    entry_id: str
    task_id: str
    task_code: str
    code: str
    language: str
    origin: str = ""  # "seed:<where>" | "bootstrap"
    round: int = 0  # 0 for seeds, else the round that verified it
    features: str = ""  # the task's feature summary
    sample_id: str | None = None
    speedup: float | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def document(self) -> str:
        return f"{self.features}\n\n{self.task_code.strip()}\n\n{self.code.strip()}"


def query_text(task_code: str, features: str) -> str:
    return f"{features}\n\n{task_code.strip()}"


def code_digest(code: str) -> str:
    """Identity of a kernel for de-duplication: whitespace at line ends and
    blank lines do not make a new kernel."""
    lines = [ln.rstrip() for ln in code.strip().splitlines() if ln.strip()]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]


class Corpus:
    """Entries in memory, appended to `path` (when given) as they are added."""

    def __init__(self, entries: Sequence[CorpusEntry] = (), path: str | Path | None = None):
        self.path = Path(path) if path else None
        self.entries: list[CorpusEntry] = []
        self._digests: set[tuple[str, str]] = set()
        self._ids: set[str] = set()
        for e in entries:
            self._remember(e)

    @classmethod
    def load(cls, path: str | Path) -> "Corpus":
        path = Path(path)
        return cls(read_jsonl(path, CorpusEntry) if path.exists() else [], path)

    def _remember(self, e: CorpusEntry) -> None:
        self.entries.append(e)
        self._ids.add(e.entry_id)
        self._digests.add((e.task_id, code_digest(e.code)))

    def __len__(self) -> int:
        return len(self.entries)

    def has(self, task_id: str, code: str) -> bool:
        return (task_id, code_digest(code)) in self._digests

    def add(self, entry: CorpusEntry) -> bool:
        """Add a kernel unless the same kernel for the same task (or the same
        entry id) is there already; True when it was added."""
        if entry.entry_id in self._ids or self.has(entry.task_id, entry.code):
            return False
        self._remember(entry)
        if self.path is not None:
            append_jsonl(self.path, [entry])
        return True

    def before_round(self, round_: int) -> list[CorpusEntry]:
        """The entries a round retrieves from: seeds and earlier rounds only,
        so a re-run of an interrupted round sees the corpus its first run saw."""
        return [e for e in self.entries if e.round < round_]


class Embedder:
    """sentence-transformers embeddings, L2-normalised, cached by text."""

    def __init__(self, model: str = DEFAULT_EMBEDDER, device: str | None = None, batch_size: int = 16,
                 trust_remote_code: bool = False, max_seq_length: int | None = None):
        from sentence_transformers import SentenceTransformer

        self.name = model
        self.model = SentenceTransformer(model, device=device, trust_remote_code=trust_remote_code)
        if max_seq_length:
            self.model.max_seq_length = max_seq_length
        self.batch_size = batch_size
        self._cache: dict[str, Any] = {}

    def encode(self, texts: Sequence[str]):
        import numpy as np

        todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if todo:
            vecs = self.model.encode(list(todo), batch_size=self.batch_size, convert_to_numpy=True,
                                     normalize_embeddings=True, show_progress_bar=False)
            for t, v in zip(todo, vecs):
                self._cache[t] = np.asarray(v, dtype=np.float32)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts])


def cosine_top_k(query, matrix, k: int = DEFAULT_K) -> list[tuple[int, float]]:
    """Indices and cosine similarities of the k rows of `matrix` nearest to
    `query`, best first (ties: lower index first)."""
    import numpy as np

    if len(matrix) == 0 or k <= 0:
        return []
    q = np.asarray(query, dtype=np.float64)
    m = np.asarray(matrix, dtype=np.float64)
    qn = np.linalg.norm(q)
    mn = np.linalg.norm(m, axis=1)
    sims = (m @ q) / np.maximum(mn * qn, 1e-12)
    order = sorted(range(len(sims)), key=lambda i: (-sims[i], i))[:k]
    return [(i, float(sims[i])) for i in order]


@dataclass
class Retrieved:
    entry: CorpusEntry
    score: float


def retrieve(embedder: Embedder, task: Task, features: str, entries: Sequence[CorpusEntry],
             k: int = DEFAULT_K) -> list[Retrieved]:
    """The k entries most similar to the task, never entries of the same task."""
    pool = [e for e in entries if e.task_id != task.task_id]
    if not pool:
        return []
    mat = embedder.encode([e.document() for e in pool])
    q = embedder.encode([query_text(task.code, features)])[0]
    return [Retrieved(pool[i], s) for i, s in cosine_top_k(q, mat, k)]


def seed_entries(language: str, glob: str, suite_dir: str | Path | None = None,
                 extra: str | Path | None = None) -> list[CorpusEntry]:
    """Seed kernels: the builtin suite's verified candidates matching `glob`
    (`candidates/<task_id>/<glob>`), plus a user's corpus JSONL (`extra`)."""
    from ..tasks import BUILTIN_DIR, load_tasks

    out: list[CorpusEntry] = []
    root = Path(suite_dir or BUILTIN_DIR)
    cand_dir = root / "candidates"
    if glob and cand_dir.is_dir():
        ts = load_tasks("builtin" if root == BUILTIN_DIR else root / "tasks")
        for task_id, task in sorted(ts.by_id().items()):
            for f in sorted((cand_dir / task_id).glob(glob)):
                out.append(CorpusEntry(f"seed:{task_id}/{f.name}", task_id, task.code, f.read_text(encoding="utf-8"),
                                       language, origin=f"seed:{root.name}/candidates"))
    if extra:
        for e in read_jsonl(extra, CorpusEntry):
            e.round = 0
            out.append(e)
    return out
