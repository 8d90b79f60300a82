"""DataShifts: covariate and gamma*-concept shifts, and the target-error bound they give.

References
----------
Chen, H. and Xia, L. C. (2025). General and estimable learning bound unifying covariate and
concept shifts. arXiv:2506.12829.
"""

from statcore.shift import simulate
from statcore.shift.model import DataShifts
from statcore.shift.results import DataShiftsResults, ShiftBoundResults

__all__ = ["DataShifts", "DataShiftsResults", "ShiftBoundResults", "simulate"]
