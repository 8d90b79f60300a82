"""Generalised zero-shot learning post-processing: PUFE and its calibrated-stacking baseline.

- :class:`PUFE` / :class:`PUFEResult`: the seen-class posterior and labelling propensity of a
  PU dual head, the gate, and adaptive prototype calibration;
- :func:`pu_gate`, :func:`calibrate_prototypes`, :func:`class_scores`: its steps, usable alone;
- :class:`CalibratedStacking` / :class:`CalibratedStackingResult`, :func:`stack`: Chao et al.
  (2016);
- :func:`simulate_pu`, :func:`simulate_gzsl`, :func:`ridge_semantic_map`: designs with known
  truth and a seen-biased base model.
"""

from mlcore.gzsl.pufe import PUFE, PUFEResult, calibrate_prototypes, class_scores, pu_gate
from mlcore.gzsl.simulate import (
    GZSLSimulation,
    PUSimulation,
    ridge_semantic_map,
    simulate_gzsl,
    simulate_pu,
)
from mlcore.gzsl.stacking import CalibratedStacking, CalibratedStackingResult, stack

__all__ = [
    "PUFE",
    "CalibratedStacking",
    "CalibratedStackingResult",
    "GZSLSimulation",
    "PUFEResult",
    "PUSimulation",
    "calibrate_prototypes",
    "class_scores",
    "pu_gate",
    "ridge_semantic_map",
    "simulate_gzsl",
    "simulate_pu",
    "stack",
]
