"""Predict-and-simulate tools of the theory papers.

Each tool computes a paper's prediction (``predict`` and closed forms) and runs the experiment that
checks it (``simulate``); its results compare the two with Monte Carlo intervals.

- :mod:`statcore.theory.cp_flow`: gradient flow of CP tensor models (Taylor series of the loss,
  the NTK and mean-field curves, the regime map, characteristics of the summed series).
- :mod:`statcore.theory.pruning`: one-shot magnitude pruning and compute-adaptive early exit
  (alignment m(kappa), sign disagreement, excess error E(tau), the NNGP depth recursion).
- :mod:`statcore.theory.frontier`: learning a new task on the Pareto frontier of benchmark risks
  (skyline, covers, frontier ERM, aggregation with a fallback prior).
"""

from statcore.theory.cp_flow import (
    CharacteristicsResults,
    CPFlowResults,
    CPGradientFlow,
    CPTaylorResults,
    solve_characteristics,
)
from statcore.theory.frontier import (
    FrontierDesign,
    FrontierResults,
    FrontierSelector,
    FrontierSimulationResults,
    pareto_cover,
    pareto_frontier,
)
from statcore.theory.pruning import (
    ConditionalPerceptron,
    DepthResults,
    EarlyExitResults,
    MagnitudePruning,
    PrunedReLUNetwork,
    PruningAlignmentResults,
    TheoryCheckResults,
    compute_gap,
    depth_correlations,
    depth_fixed_point,
    early_exit_mass,
    excess_error,
    excess_error_exponent,
    fit_exponent,
    kappa_for_alignment,
    local_exponent,
    magnitude_prune,
    pruning_alignment,
    pruning_alignment_sd,
    relu_correlation,
    sign_disagreement,
)

__all__ = [
    "CPFlowResults",
    "CPGradientFlow",
    "CPTaylorResults",
    "CharacteristicsResults",
    "ConditionalPerceptron",
    "DepthResults",
    "EarlyExitResults",
    "FrontierDesign",
    "FrontierResults",
    "FrontierSelector",
    "FrontierSimulationResults",
    "MagnitudePruning",
    "PrunedReLUNetwork",
    "PruningAlignmentResults",
    "TheoryCheckResults",
    "compute_gap",
    "depth_correlations",
    "depth_fixed_point",
    "early_exit_mass",
    "excess_error",
    "excess_error_exponent",
    "fit_exponent",
    "kappa_for_alignment",
    "local_exponent",
    "magnitude_prune",
    "pareto_cover",
    "pareto_frontier",
    "pruning_alignment",
    "pruning_alignment_sd",
    "relu_correlation",
    "sign_disagreement",
    "solve_characteristics",
]
