"""A tiny randomly initialised chat model, built locally (no downloads).

For smoke runs of the recipes (tests, the GPU benchmark, a user's first
`kernelmill train` on a laptop): a byte-level BPE tokenizer trained on the
given texts, a ChatML template with `{% generation %}` markers, and a Qwen2
model from a config. It learns whatever it is shown and knows nothing else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|pad|>"]

# ChatML; the assistant's content and its end-of-turn token are inside the
# generation block, so the model is trained on what it says and on stopping.
CHAT_TEMPLATE = (
    "{%- for message in messages -%}"
    "{%- if message['role'] == 'assistant' -%}"
    "{{- '<|im_start|>assistant\\n' -}}"
    "{%- generation -%}{{- message['content'] + '<|im_end|>' -}}{%- endgeneration -%}"
    "{{- '\\n' -}}"
    "{%- else -%}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' -}}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)

# The same template with the markers removed: what many hub templates look like.
CHAT_TEMPLATE_NO_MARKERS = CHAT_TEMPLATE.replace("{%- generation -%}", "").replace("{%- endgeneration -%}", "")


def train_tokenizer(texts: Iterable[str], vocab_size: int = 600, chat_template: str = CHAT_TEMPLATE):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tk.train_from_iterator(list(texts), trainer=trainer)
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, eos_token="<|im_end|>", pad_token="<|pad|>",
                                  bos_token=None, unk_token=None, additional_special_tokens=["<|im_start|>"])
    tok.chat_template = chat_template
    return tok


def build_tiny_model(out_dir: str | Path, texts: Iterable[str], hidden: int = 64, layers: int = 2,
                     vocab_size: int = 600, seed: int = 0, chat_template: str = CHAT_TEMPLATE,
                     max_positions: int = 4096) -> Path:
    """Write a tokenizer + random Qwen2 model to `out_dir` (HF layout); return it."""
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    out = Path(out_dir)
    tok = train_tokenizer(texts, vocab_size=vocab_size, chat_template=chat_template)
    torch.manual_seed(seed)
    config = Qwen2Config(vocab_size=len(tok), hidden_size=hidden, intermediate_size=2 * hidden,
                         num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=max_positions, tie_word_embeddings=True,
                         eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id, bos_token_id=None)
    model = Qwen2ForCausalLM(config)
    model.generation_config = GenerationConfig(eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out
