"""Sampling kernels and reasoning from LLMs: backends (OpenAI-compatible
servers, vLLM, transformers), prompt templates, parsing, the resumable
`generate` runner and the multi-turn `refine` loop."""

from .backend import (BACKENDS, AuthError, Backend, BackendError, ChatRequest, Completion, GenerationStats,
                      SamplingParams, ServerUnreachable)
from .factory import make_backend
from ..chat import ParsedCompletion, code_blocks, extract_code, parse_completion, split_reasoning
from ..chat import (TEMPLATES_DIR, FewShotExample, PromptTemplate, TemplateError, fewshot_example, list_templates,
                      load_template, ptx_variables, render_prompt, task_prompt, task_variables)
from .runner import (GenerateConfig, GenerateSummary, PromptInput, build_sample, generate, generate_async,
                     make_sample_id, prompt_inputs)

__all__ = [
    "BACKENDS", "AuthError", "Backend", "BackendError", "ChatRequest", "Completion", "FewShotExample",
    "GenerateConfig", "GenerateSummary", "GenerationStats", "ParsedCompletion", "PromptInput", "PromptTemplate",
    "SamplingParams", "ServerUnreachable", "TEMPLATES_DIR", "TemplateError", "build_sample", "code_blocks",
    "extract_code", "fewshot_example", "generate", "generate_async", "list_templates", "load_template",
    "make_backend", "make_sample_id", "parse_completion", "prompt_inputs", "ptx_variables", "render_prompt", "split_reasoning", "task_prompt",
    "task_variables",
]
