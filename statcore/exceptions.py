"""Warnings shared by every statcore and mlcore estimator."""


class ConvergenceWarning(UserWarning):
    """An iterative fit stopped before meeting its tolerance; results record ``converged=False``."""


class NotApplicableWarning(UserWarning):
    """A test or quantity does not apply here; the result is NaN and carries the reason."""
