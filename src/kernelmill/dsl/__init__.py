"""Teaching a model a low-resource kernel DSL (SPEC.md section 2, paper 002),
with the DSL as a parameter (TileLang first; docs/tilelang.md):

* `features`   task features by tracing the reference: op types, shapes,
               compute- vs memory-bound; the easy -> hard order;
* `retrieval`  the corpus of verified kernels, sentence-transformers
               embeddings, k nearest by cosine;
* `prompt`     the in-context prompt (the DSL's template in the one chat format);
* `bootstrap`  the loop: retrieve, prompt, generate, verify, grow; resumable;
               growth curve; held-out evaluation after every round;
* `evaluate`   compile rate, correctness rate (the paper's rtol), pass@k on
               held-out tasks; the per-round table and figure;
* `traces`     post-hoc reasoning traces: prompts for a pool of models, scoring
               by log P(trace | task) under a base model, the top quartile;
* `negatives`  injected errors of three kinds, kept only when the verifier
               confirms a failure;
* `kto`        the KTO export at a desirable:undesirable ratio;
* `align`      stages 2-3 data from a finished loop: traces from a pool,
               scoring, negatives, the KTO export and the GRPO prompts;
* `tiny`       a tiny local embedder (tests, dry runs; no downloads);
* `spec`       `DSLSpec`: what a DSL provides; `get_dsl`, `register_dsl`.
"""

from .bootstrap import Bootstrap, BootstrapConfig, growth, plot_growth, verifier_fn, write_growth
from .evaluate import PAPER_RTOL, pass_at_k, summarize, with_rtol
from .features import Features, difficulty_key, order_easy_to_hard, task_features
from .prompt import format_examples, rag_input, rag_messages, rag_variables
from .retrieval import (DEFAULT_EMBEDDER, DEFAULT_K, Corpus, CorpusEntry, Embedder, Retrieved, cosine_top_k,
                        retrieve, seed_entries)
from .spec import DSLS, DSLSpec, get_dsl, register_dsl

__all__ = [
    "Bootstrap", "BootstrapConfig", "Corpus", "CorpusEntry", "DEFAULT_EMBEDDER", "DEFAULT_K", "DSLS", "DSLSpec",
    "Embedder", "Features", "PAPER_RTOL", "Retrieved", "cosine_top_k", "difficulty_key", "format_examples", "get_dsl", "growth",
    "order_easy_to_hard", "pass_at_k", "plot_growth", "rag_input", "rag_messages", "rag_variables", "register_dsl", "retrieve",
    "seed_entries", "summarize", "task_features", "verifier_fn", "with_rtol", "write_growth",
]
