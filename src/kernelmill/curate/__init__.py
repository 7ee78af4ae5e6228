"""Curation: turn verified generations into a training set people trust.

Selection recipes (ConCuR and its ablations), task types, difficulty by
reasoning length, the paper's analyses, dedup, decontamination, and export to
the formats TRL's trainers take.
"""

from .analysis import analyze
from .card import dataset_card, read_meta, write_meta
from .dataset import curated_rows, read_rows
from .decontam import DecontamConfig, DecontamResult, decontaminate
from .dedup import DedupConfig, DedupResult, dedup
from .difficulty import bucket_of, difficulty_table, task_difficulty
from .export import FORMATS, ExportConfig, ExportResult, build_rows, write_export
from .fim import fim_pairs, translation_pairs
from .inputs import CurateInputError, Generation, JoinReport, join, load_generations
from .normalize import normalize_code, normalize_text, sha1_key, shingle_hashes
from .optype import TaskType, canonical_op, classify, task_types, trace_ops
from .recipes import RECIPES, Selection, concur, select, subsets

__all__ = [
    "analyze", "dataset_card", "read_meta", "write_meta", "curated_rows", "read_rows",
    "DecontamConfig", "DecontamResult", "decontaminate", "DedupConfig", "DedupResult", "dedup",
    "bucket_of", "difficulty_table", "task_difficulty", "FORMATS", "ExportConfig", "ExportResult",
    "build_rows", "write_export", "fim_pairs", "translation_pairs", "CurateInputError", "Generation",
    "JoinReport", "join", "load_generations", "normalize_code", "normalize_text", "sha1_key",
    "shingle_hashes", "TaskType", "canonical_op", "classify", "task_types", "trace_ops",
    "RECIPES", "Selection", "concur", "select", "subsets",
]
