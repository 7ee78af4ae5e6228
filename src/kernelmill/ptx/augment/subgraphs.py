"""Partition a model into subgraphs: TVM's Relax frontend imports the exported
torch program, operators are legalized to TIR, and FuseOps groups them.

Two partitions of the same model: `fused` (FuseOps' fusion groups, e.g.
conv2d+bias+batchnorm arithmetic, matmul+add) and `single` (every operator its own
PrimFunc, no fusion). Each subgraph is a TIR PrimFunc; its id is a hash of its
printed TIR, so the same subgraph met in two models (a repeated block, another
batch size giving the same shapes) is one subgraph, stable across runs.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from .models import ModelInstance


@dataclass
class Subgraph:
    sid: str              # stable id: sha1 of the TIR text, 16 hex digits
    name: str             # the PrimFunc name TVM gave it (fused_conv2d_add_relu, softmax, ...)
    func: object          # tvm.tirx.PrimFunc
    partition: str        # fused | single


def relax_module(model: ModelInstance):
    """The model exported and imported into Relax (FP16 instances converted): what
    `subgraphs` partitions. The passes return new modules, so one import serves both
    partitions and both pipelines of an instance."""
    import torch
    from tvm.relax.frontend.torch import from_exported_program

    with torch.no_grad():
        ep = torch.export.export(model.module, model.inputs)
    mod = from_exported_program(ep, keep_params_as_input=False)
    if model.config["dtype"] == "float16":
        # the importer keeps FP32 accumulators for conv/matmul of FP16 tensors, which its own
        # type check then rejects; import in FP32 and convert: FP16 storage and arithmetic,
        # FP32 accumulation in conv2d/matmul (the usual mixed precision)
        from tvm import relax
        mod = relax.transform.ToMixedPrecision(out_dtype="float16")(mod)
    return mod


def subgraphs(model: ModelInstance, partitions: tuple[str, ...] = ("fused", "single"),
              mod=None) -> list[Subgraph]:
    """The model's distinct subgraphs of each partition, in program order; `mod`: the
    model's Relax module if already imported (`relax_module`)."""
    import tvm
    from tvm import relax

    mod = relax_module(model) if mod is None else mod
    out: list[Subgraph] = []
    seen: set[str] = set()
    for part in partitions:
        passes = [relax.transform.DecomposeOpsForInference(), relax.transform.LegalizeOps(),
                  relax.transform.AnnotateTIROpPattern()]
        if part == "fused":
            passes += [relax.transform.FuseOps(), relax.transform.FuseTIR()]
        elif part != "single":
            raise ValueError(f"unknown partition {part!r} (fused or single)")
        lowered = tvm.ir.transform.Sequential(passes)(mod)
        for gv, func in lowered.functions.items():
            if not isinstance(func, tvm.tirx.PrimFunc):
                continue
            func = func.without_attr("global_symbol") if func.attrs and "global_symbol" in func.attrs else func
            sid = hashlib.sha1(func.script().encode()).hexdigest()[:16]
            if sid in seen:
                continue
            seen.add(sid)
            out.append(Subgraph(sid, gv.name_hint, func, part))
    return out
