"""Self-distilled ridge regression: optimal unconstrained mixing, exact asymptotics, one-shot xi.

References
----------
Dang, H., Patil, P. and Rinaldo, A. (2026). Optimal unconstrained self-distillation in ridge
regression: strict improvements, precise asymptotics, and one-shot tuning. arXiv:2602.17565.
"""

from statcore.ridge.asymptotics import AsymptoticRisk, asymptotic_risk, optimal_xi, solve_kappa
from statcore.ridge.model import SelfDistilledRidge
from statcore.ridge.results import SelfDistilledRidgeResults
from statcore.ridge.simulate import RidgeDesign, paper_design

__all__ = [
    "AsymptoticRisk",
    "RidgeDesign",
    "SelfDistilledRidge",
    "SelfDistilledRidgeResults",
    "asymptotic_risk",
    "optimal_xi",
    "paper_design",
    "solve_kappa",
]
