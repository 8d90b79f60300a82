"""Entropic optimal transport: log-domain Sinkhorn on cost matrices and on point clouds.

``sinkhorn`` solves a problem given its cost matrix; ``sinkhorn_points`` and
``sinkhorn_divergence`` work on two point clouds with costs recomputed inside numba kernels, in
O(n + m) memory. All iterate to a tolerance on the plan's marginals, with epsilon-scaling, and
report how they stopped in one iteration record (``result.iterations``). ``sinkhorn_box``
solves the problem whose column marginals lie between two bounds (double-bounded OT). The
solver layer other areas build on is public in :mod:`statcore.ot.solver`,
:mod:`statcore.ot.box` and :mod:`statcore.ot.costs`.

Between Gaussians, optimal transport is closed-form: :func:`bures_wasserstein_barycentre`
(fixed point), :func:`bures_wasserstein_map` and :func:`gaussian_w2`; :class:`SLOTAlign` aligns
the features of federated clients to their barycentre from sufficient statistics alone.
Data-generating designs for SLOT-Align are in :mod:`statcore.ot.simulate`.

Vocabulary: ``barycentre`` (the spelling "centre" throughout; the ``barycenter`` names before it
warn ``FutureWarning`` for one release), ``epsilon`` the entropic regularisation, ``a`` and ``b``
the source and target weights, ``tau`` the share of a map a client moves.

References
----------
Álvarez-Esteban, P. C., del Barrio, E., Cuesta-Albertos, J. A. and Matrán, C. (2016). A fixed-point
approach to barycenters in Wasserstein space. J. Math. Anal. Appl. 441, 744-762.
Cuturi, M. (2013). Sinkhorn distances: lightspeed computation of optimal transport. NeurIPS.
Feydy, J. et al. (2019). Interpolating between optimal transport and MMD using Sinkhorn
divergences. AISTATS.
"""

from statcore.compat import renamed_names
from statcore.ot._costs import METRICS, cost_matrix
from statcore.ot.box import BoxSinkhornResult, sinkhorn_box
from statcore.ot.bures import (
    RENAMED,
    BuresBarycentreResult,
    GaussianMap,
    bures_wasserstein_barycentre,
    bures_wasserstein_map,
    gaussian_w2,
)
from statcore.ot.results import SinkhornDivergenceResult, SinkhornResult
from statcore.ot.slot_align import (
    ClientStatistics,
    CommonPCA,
    LinearProbeResult,
    SLOTAlign,
    SLOTAlignResult,
    cosine_tau_schedule,
    federated_linear_probe,
    ledoit_wolf,
)
from statcore.ot.solver import sinkhorn, sinkhorn_divergence, sinkhorn_points

__all__ = [
    "METRICS",
    "BoxSinkhornResult",
    "BuresBarycentreResult",
    "ClientStatistics",
    "CommonPCA",
    "GaussianMap",
    "LinearProbeResult",
    "SLOTAlign",
    "SLOTAlignResult",
    "bures_wasserstein_barycentre",
    "bures_wasserstein_map",
    "cosine_tau_schedule",
    "federated_linear_probe",
    "gaussian_w2",
    "ledoit_wolf",
    "SinkhornDivergenceResult",
    "SinkhornResult",
    "cost_matrix",
    "sinkhorn",
    "sinkhorn_box",
    "sinkhorn_divergence",
    "sinkhorn_points",
]

__getattr__ = renamed_names(__name__, RENAMED)
