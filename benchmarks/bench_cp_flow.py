"""CP gradient flow: all seeds in one batched ODE system against a per-seed loop.

Both sides integrate the same flow from the same initialisations with the same solver
(``scipy.integrate.solve_ivp``, DOP853, rtol 1e-6) and the same einsum vector field; "ours" is
``CPGradientFlow.simulate`` with the seeds batched into one system (one adaptive step sequence
shared by all seeds, one einsum per factor over the whole batch), the anchor the same call
with ``n_chunks=n_seeds``, i.e. one solve per seed, as a loop over seeds would do. The ratio
measures what batching saves in solver and Python overhead per right-hand-side evaluation.
Batching pays where a model is small and the per-call overhead dominates; at H = 1024 each
seed's state (12k entries) is already large enough to keep BLAS busy and the batched system
(13 DOP853 stages of 200k entries) leaves the caches, so the two are about even there. Measured
with single-threaded BLAS (``OPENBLAS_NUM_THREADS=1``): a multi-threaded BLAS on a loaded
machine thrashes on the solver's long stage vectors and penalises the batched side.
"""

import numpy as np

from statcore.theory import CPGradientFlow

T_GRID = np.linspace(0.0, 1.0, 11)
_flows = {}


def setup():
    if not _flows:
        _flows["tiny"] = CPGradientFlow(3, 3, 16)
        _flows["small"] = CPGradientFlow(3, 4, 64)
        _flows["ntk"] = CPGradientFlow(3, 4, 1024)


def _run(key, n_seeds, n_chunks):
    res = _flows[key].simulate(T_GRID, n_seeds=n_seeds, n_chunks=n_chunks, tol=1e-6, random_state=0)
    return res.loss[:, -1].mean()


CASES = [
    {
        "name": "CP gradient flow, nu=3, p=3, H=16, 128 seeds, t in [0, 1]",
        "setup": setup,
        "ours": lambda: _run("tiny", 128, 1),
        "anchor": lambda: _run("tiny", 128, 128),
        "anchor_name": "per-seed loop (same solver and field)",
    },
    {
        "name": "CP gradient flow, nu=3, p=4, H=64, 64 seeds, t in [0, 1]",
        "setup": setup,
        "ours": lambda: _run("small", 64, 1),
        "anchor": lambda: _run("small", 64, 64),
        "anchor_name": "per-seed loop (same solver and field)",
    },
    {
        "name": "CP gradient flow, nu=3, p=4, H=1024, 16 seeds, t in [0, 1]",
        "setup": setup,
        "ours": lambda: _run("ntk", 16, 1),
        "anchor": lambda: _run("ntk", 16, 16),
        "anchor_name": "per-seed loop (same solver and field)",
        "repeat": 2,
    },
]
