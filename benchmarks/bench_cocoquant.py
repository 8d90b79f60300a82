"""CoCoQuant's allocation ILP (cvxpy + HiGHS) against exhaustive enumeration.

Both sides solve the same 8- and 12-op × 3-precision instances (6,561 and 531,441
allocations) with the free coupling and return the same optimum (tests/mlcore/test_cocoquant.py
checks 20 instances); the anchor enumerates every allocation in numpy. The ILP's advantage grows
with the op count, which enumeration soon cannot reach (it refuses more than
``MAX_BRUTE_FORCE`` = 2,000,000 allocations: 3^14 for 14 ops is beyond it).
"""

import numpy as np
import pandas as pd

from mlcore.quant import QuantOp, RooflineCostModel, allocate_precision


def _instance(n_layers, seed):
    rng = np.random.default_rng(seed)
    ops = []
    for layer in range(n_layers):
        ops += [
            QuantOp(f"qkv{layer}", "gemm", M=2048, N=1536, K=4096),
            QuantOp(f"out{layer}", "gemm", M=2048, N=4096, K=512),
            QuantOp(f"ar{layer}", "comm", M=2048, N=4096, consumer=f"fc{layer}"),
            QuantOp(f"fc{layer}", "gemm", M=2048, N=2048, K=4096),
        ]
    s8 = rng.uniform(0.001, 0.05, size=len(ops))
    sens = pd.DataFrame(
        {16: 0.0, 8: s8, 4: s8 + rng.uniform(0.01, 0.3, size=len(ops))},
        index=[op.name for op in ops],
    )
    return ops, sens, 0.3 * float(sens[4].sum())


cost = RooflineCostModel("l40s-pcie", scale_group_size=128)
CASES = []
for n_layers in (2, 3):
    ops, sens, eps = _instance(n_layers, seed=n_layers)
    CASES.append(
        {
            "name": f"allocate_precision_{4 * n_layers}ops_x3",
            "ours": lambda ops=ops, sens=sens, eps=eps: allocate_precision(ops, cost, sens, eps),
            "anchor": lambda ops=ops, sens=sens, eps=eps: allocate_precision(
                ops, cost, sens, eps, backend="brute"
            ),
            "anchor_name": "exhaustive enumeration (numpy)",
            "repeat": 3,
        }
    )
