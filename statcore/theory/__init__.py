"""Predict-and-simulate tools of the theory papers.

Each tool computes a paper's prediction (``predict`` and closed forms) and runs the experiment that
checks it (``simulate``); its results compare the two with Monte Carlo intervals.

- Gradient flow of CP tensor models: :mod:`~statcore.theory.cp_simulator` (the model and its
  simulator), :mod:`~statcore.theory.cp_taylor` (exact Taylor series of the loss),
  :mod:`~statcore.theory.cp_regimes` (the regime map), :mod:`~statcore.theory.cp_characteristics`
  (the summed series by characteristics) and :mod:`~statcore.theory.cp_field` (the vector field).
- One-shot magnitude pruning and compute-adaptive early exit:
  :mod:`~statcore.theory.pruning_closed_forms` (alignment m(kappa), sign disagreement, excess
  error E(tau), the NNGP depth recursion), :mod:`~statcore.theory.pruning_simulators` (the
  experiments) and :mod:`~statcore.theory.pruning_results`.
- Learning a new task on the Pareto frontier of benchmark risks:
  :mod:`~statcore.theory.pareto_masks` (skyline, covers), :mod:`~statcore.theory.frontier_selector`
  (frontier ERM, aggregation with a fallback prior) and :mod:`~statcore.theory.frontier_design`
  (a simulation design).

Vocabulary
----------
The same quantity has one name across the area: ``n_seeds`` is the number of independent
initialisations of a gradient flow, ``n_reps`` the number of Monte Carlo replicates of an
experiment, ``n_models`` the size ``|F|`` of a model class (``M`` in formulas), ``n_resamples`` the
number of bootstrap replicates, ``random_state`` the seed (None, an int, a SeedSequence or a
Generator) and ``wall_time_s`` the seconds a run took.
"""

from statcore.theory.cp_characteristics import CharacteristicsResults, solve_characteristics
from statcore.theory.cp_simulator import CPFlowResults, CPGradientFlow
from statcore.theory.cp_taylor import CPTaylorResults
from statcore.theory.frontier_design import FrontierDesign, FrontierSimulationResults
from statcore.theory.frontier_selector import FrontierResults, FrontierSelector
from statcore.theory.pareto_masks import pareto_cover, pareto_frontier
from statcore.theory.pruning_closed_forms import (
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
from statcore.theory.pruning_results import (
    DepthResults,
    EarlyExitResults,
    PruningAlignmentResults,
    TheoryCheckResults,
)
from statcore.theory.pruning_simulators import (
    ConditionalPerceptron,
    MagnitudePruning,
    PrunedReLUNetwork,
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
