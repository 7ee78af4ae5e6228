"""DNN model families, written here in plain torch, built with random weights.

torchvision's wheels on PyPI are built against CUDA torch and do not load next to
the CPU torch this toolkit pins, so the families are small definitions of the same
building blocks (ResNet basic blocks, MobileNetV2 inverted residuals, VGG stages,
SqueezeNet fire modules, ConvNeXt blocks, a pre-norm transformer encoder block,
an MLP-Mixer block and a DLRM-style recommendation MLP with embedding bags).
What varies per instance: batch size, input shape, widths, MLP ratios and precision
(FP32/FP16), all drawn from a seeded generator so an instance is reproducible
from `(family, index, seed)`. The choices are wide on purpose: a subgraph is the same
subgraph in two instances only when every shape and the precision agree, and with a
few choices per dimension later instances mostly repeat earlier subgraphs (an hour's
run of 32 instances per family fell from 59 to 25-35 new pairs per job).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable

import torch
from torch import nn

DTYPES = {"float32": torch.float32, "float16": torch.float16}


@dataclass(frozen=True)
class ModelInstance:
    family: str
    index: int
    config: dict              # what was drawn: batch, shapes, widths, dtype
    module: nn.Module         # FP32; `config["dtype"]` says the precision of its subgraphs
    inputs: tuple[torch.Tensor, ...]

    @property
    def name(self) -> str:
        return f"{self.family}#{self.index}"


def _conv_bn(cin, cout, k=3, stride=1, groups=1, act=True):
    layers = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    if act:
        layers.append(nn.ReLU())
    return layers


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.body = nn.Sequential(*_conv_bn(cin, cout, 3, stride), *_conv_bn(cout, cout, 3, 1, act=False))
        self.skip = (nn.Sequential(*_conv_bn(cin, cout, 1, stride, act=False))
                     if stride != 1 or cin != cout else nn.Identity())

    def forward(self, x):
        return torch.relu(self.body(x) + self.skip(x))


def resnet(r: random.Random):
    w = r.choice([16, 24, 32, 48, 64])
    blocks = [nn.Conv2d(3, w, 7, 2, 3), nn.BatchNorm2d(w), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
    cin = w
    for i in range(r.choice([2, 3])):
        cout = w * 2 ** i
        blocks.append(BasicBlock(cin, cout, 1 if i == 0 else 2))
        cin = cout
    blocks += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, r.choice([10, 100, 1000]))]
    return nn.Sequential(*blocks), {"width": w}, (3, r.choice([32, 48, 56, 64, 80, 96, 112]))


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        mid = cin * expand
        self.use_res = stride == 1 and cin == cout
        self.body = nn.Sequential(*_conv_bn(cin, mid, 1), *_conv_bn(mid, mid, 3, stride, groups=mid),
                                  *_conv_bn(mid, cout, 1, act=False))

    def forward(self, x):
        y = self.body(x)
        return x + y if self.use_res else y


def mobilenet(r: random.Random):
    w = r.choice([8, 12, 16, 24, 32])
    e = r.choice([2, 3, 4, 6])
    layers = [*_conv_bn(3, w, 3, 2)]
    cin = w
    for stride, mult in ((1, 1), (2, 2), (1, 2)):
        layers.append(InvertedResidual(cin, w * mult, stride, e))
        cin = w * mult
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, r.choice([10, 1000]))]
    return nn.Sequential(*layers), {"width": w, "expand": e}, (3, r.choice([32, 48, 64, 80, 96]))


def vgg(r: random.Random):
    w = r.choice([16, 24, 32, 48, 64])
    layers, cin = [], 3
    for i in range(r.choice([2, 3])):
        cout = w * 2 ** i
        layers += [nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU(), nn.Conv2d(cout, cout, 3, padding=1),
                   nn.ReLU(), nn.MaxPool2d(2)]
        cin = cout
    side = r.choice([16, 24, 32, 40, 48])
    flat = cin * (side // 2 ** (len(layers) // 5)) ** 2
    hidden = r.choice([128, 256, 512])
    layers += [nn.Flatten(), nn.Linear(flat, hidden), nn.ReLU(), nn.Linear(hidden, 10)]
    return nn.Sequential(*layers), {"width": w, "hidden": hidden}, (3, side)


class Fire(nn.Module):
    def __init__(self, cin, squeeze, expand):
        super().__init__()
        self.s = nn.Sequential(nn.Conv2d(cin, squeeze, 1), nn.ReLU())
        self.e1 = nn.Sequential(nn.Conv2d(squeeze, expand, 1), nn.ReLU())
        self.e3 = nn.Sequential(nn.Conv2d(squeeze, expand, 3, padding=1), nn.ReLU())

    def forward(self, x):
        s = self.s(x)
        return torch.cat([self.e1(s), self.e3(s)], 1)


def squeezenet(r: random.Random):
    sq = r.choice([8, 12, 16, 24])
    ex = sq * 4
    stem = r.choice([32, 48, 64])
    m = nn.Sequential(nn.Conv2d(3, stem, 3, 2), nn.ReLU(), nn.MaxPool2d(3, 2), Fire(stem, sq, ex),
                      Fire(2 * ex, sq, ex), nn.Conv2d(2 * ex, 10, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                      nn.Flatten())
    return m, {"squeeze": sq, "expand": ex, "stem": stem}, (3, r.choice([32, 48, 64, 80, 96]))


class LayerNorm2d(nn.LayerNorm):
    def forward(self, x):
        return super().forward(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


class ConvNeXtBlock(nn.Module):
    def __init__(self, dim, ratio=4):
        super().__init__()
        self.dw = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, ratio * dim), nn.GELU(), nn.Linear(ratio * dim, dim))
        self.gamma = nn.Parameter(torch.rand(dim))

    def forward(self, x):
        y = self.dw(x).permute(0, 2, 3, 1)
        y = self.mlp(self.norm(y)) * self.gamma
        return x + y.permute(0, 3, 1, 2)


def convnext(r: random.Random):
    dim, ratio = r.choice([32, 40, 48, 64, 80, 96]), r.choice([2, 4])
    m = nn.Sequential(nn.Conv2d(3, dim, 4, 4), LayerNorm2d(dim), ConvNeXtBlock(dim, ratio),
                      ConvNeXtBlock(dim, ratio), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(dim, 10))
    return m, {"dim": dim, "mlp_ratio": ratio}, (3, r.choice([32, 48, 64, 96, 128]))


class EncoderBlock(nn.Module):
    """Pre-norm transformer encoder block written out (q/k/v projections, scaled
    scores, softmax, GELU MLP) so every op is visible to the exporter."""

    def __init__(self, dim, heads, ratio=4):
        super().__init__()
        self.h = heads
        self.n1, self.n2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, ratio * dim), nn.GELU(), nn.Linear(ratio * dim, dim))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.n1(x)).reshape(b, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        a = torch.softmax(q @ k.transpose(-1, -2) * (d // self.h) ** -0.5, dim=-1)
        x = x + self.proj((a @ v).transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.n2(x))


def transformer(r: random.Random):
    dim, heads = r.choice([(64, 2), (96, 3), (128, 4), (192, 6), (256, 4), (256, 8)])
    ratio = r.choice([2, 4])
    return (EncoderBlock(dim, heads, ratio), {"dim": dim, "heads": heads, "mlp_ratio": ratio},
            ("seq", r.choice([16, 24, 32, 48, 64, 96, 128]), dim))


class MixerBlock(nn.Module):
    def __init__(self, tokens, dim, ratio=4):
        super().__init__()
        self.n1, self.n2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.tok = nn.Sequential(nn.Linear(tokens, 2 * tokens), nn.GELU(), nn.Linear(2 * tokens, tokens))
        self.ch = nn.Sequential(nn.Linear(dim, ratio * dim), nn.GELU(), nn.Linear(ratio * dim, dim))

    def forward(self, x):
        x = x + self.tok(self.n1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.ch(self.n2(x))


def mixer(r: random.Random):
    tokens, dim, ratio = r.choice([16, 25, 36, 49, 64]), r.choice([32, 48, 64, 96, 128]), r.choice([2, 4])
    return MixerBlock(tokens, dim, ratio), {"tokens": tokens, "dim": dim, "mlp_ratio": ratio}, ("seq", tokens, dim)


class Recommender(nn.Module):
    """DLRM-style: bottom MLP on dense features, sum-pooled embedding bags,
    pairwise dot-product interaction, top MLP, sigmoid."""

    def __init__(self, dense, emb, tables, rows, hidden=64):
        super().__init__()
        self.bottom = nn.Sequential(nn.Linear(dense, hidden), nn.ReLU(), nn.Linear(hidden, emb), nn.ReLU())
        self.tables = nn.ParameterList([nn.Parameter(torch.randn(rows, emb)) for _ in range(tables)])
        n = tables + 1
        iu = torch.triu_indices(n, n, 1)  # a buffer: the exporter has no triu_indices
        self.register_buffer("iu", iu[0] * n + iu[1], persistent=False)
        self.top = nn.Sequential(nn.Linear(emb + n * (n - 1) // 2, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, dense, idx):
        z = [self.bottom(dense)] + [t[idx[:, i]].sum(1) for i, t in enumerate(self.tables)]
        f = torch.stack(z, 1)
        inter = (f @ f.transpose(1, 2)).flatten(1)
        return torch.sigmoid(self.top(torch.cat([z[0], inter[:, self.iu]], 1)))


def recommender(r: random.Random):
    dense, emb, tables, rows = r.choice([13, 16, 32]), r.choice([8, 16, 32]), r.choice([2, 3, 4, 5]), r.choice([100, 500, 1000])
    hidden = r.choice([32, 64, 128])
    return (Recommender(dense, emb, tables, rows, hidden),
            {"dense": dense, "emb": emb, "tables": tables, "rows": rows, "hidden": hidden},
            ("rec", dense, tables, rows))


FAMILIES: dict[str, Callable] = {
    "resnet": resnet, "mobilenet": mobilenet, "vgg": vgg, "squeezenet": squeezenet,
    "convnext": convnext, "transformer": transformer, "mixer": mixer, "recommender": recommender,
}


def build_model(family: str, index: int, seed: int = 0) -> ModelInstance:
    """The `index`-th instance of a family: random weights, batch, shapes and precision."""
    if family not in FAMILIES:
        raise ValueError(f"unknown model family {family!r} (known: {', '.join(FAMILIES)})")
    r = random.Random(f"{seed}:{family}:{index}")
    torch.manual_seed(r.getrandbits(32))
    module, cfg, shape = FAMILIES[family](r)
    batch = r.choice([1, 2, 3, 4, 6, 8, 12, 16])
    dtype = r.choice(list(DTYPES))
    if shape[0] == "seq":
        inputs = (torch.randn(batch, shape[1], shape[2]),)
    elif shape[0] == "rec":
        _, dense, tables, rows = shape
        inputs = (torch.randn(batch, dense), torch.randint(0, rows, (batch, tables, r.choice([2, 4]))))
    else:
        inputs = (torch.randn(batch, shape[0], shape[1], shape[1]),)
    module = module.eval()  # FP32 here; subgraphs.py converts an FP16 instance after import
    cfg = {**cfg, "batch": batch, "dtype": dtype,
           "input_shapes": [list(x.shape) for x in inputs]}
    return ModelInstance(family, index, cfg, module, inputs)
