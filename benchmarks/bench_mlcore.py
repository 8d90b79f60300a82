"""mlcore's paper components beside their plain counterparts: HIPE vs RoPE, the scans, SparseGPT."""

import torch
from torch import nn

from mlcore.nn import HIPERotaryEmbedding, RotaryEmbedding, selective_scan
from mlcore.nn.mamba import selective_scan_chunked
from mlcore.pruning import sparsegpt_prune_linear, wanda_prune_linear
from mlcore.tta import CONGA

TORCH = f"torch {torch.__version__.split('+')[0]}"
gen = torch.Generator().manual_seed(0)

# attention-sized queries and keys: batch 2, 8 heads, 256 positions, head_dim 64
q = torch.randn(2, 8, 256, 64, generator=gen)
k = torch.randn(2, 8, 256, 64, generator=gen)
rope = RotaryEmbedding(64)
hipe = HIPERotaryEmbedding(64, 8, [22.9, 85, 85, 85, 85, 126.4, 126.4, 126.4])

# a selective scan: batch 2, length 64, d_inner 32, d_state 16
u = torch.randn(2, 64, 32, generator=gen)
delta = nn.functional.softplus(torch.randn(2, 64, 32, generator=gen))
A = -torch.rand(32, 16, generator=gen) * 8
B, C = torch.randn(2, 64, 16, generator=gen), torch.randn(2, 64, 16, generator=gen)

# a linear layer to prune: 128 -> 128 with 1,024 calibration rows
x_calib = torch.randn(1024, 128, generator=gen)


def _sparsegpt():
    sparsegpt_prune_linear(nn.Linear(128, 128), x_calib, 0.5)


def _wanda():
    wanda_prune_linear(nn.Linear(128, 128), x_calib, 0.5)


param = nn.Parameter(torch.zeros(4096))
conga_opt = torch.optim.SGD([param], lr=0.1)
conga = CONGA(conga_opt)
cosine_opt = torch.optim.SGD([nn.Parameter(torch.zeros(4096))], lr=0.1)
cosine = torch.optim.lr_scheduler.CosineAnnealingLR(cosine_opt, T_max=10**9)
cosine_opt.step()  # the usual order, so that torch does not warn
logits = torch.randn(64, 10, generator=gen)
param.grad = torch.randn(4096, generator=gen)


def _conga_step():
    conga.observe(logits)
    conga.step()


def _cosine_step():
    cosine.step()


CASES = [
    {
        "name": "hipe_forward_2x8x256x64",
        "ours": lambda: hipe(q, k),
        "anchor": lambda: rope(q, k),
        "anchor_name": f"mlcore RotaryEmbedding (plain RoPE), {TORCH}",
    },
    {
        "name": "selective_scan_2x64x32x16",
        "ours": lambda: selective_scan(u, delta, A, B, C),
        "anchor": lambda: selective_scan_chunked(u, delta, A, B, C),
        "anchor_name": f"mlcore selective_scan_chunked (segment sums, chunk 16), {TORCH}",
    },
    {
        "name": "sparsegpt_linear_128x128",
        "ours": _sparsegpt,
        "anchor": _wanda,
        "anchor_name": f"mlcore wanda_prune_linear (no weight update), {TORCH}",
    },
    {
        "name": "conga_observe_and_step",
        "ours": _conga_step,
        "anchor": _cosine_step,
        "anchor_name": f"CosineAnnealingLR.step, {TORCH}",
    },
]
