"""Tent: test-time entropy minimisation on the normalisation layers' affine parameters."""

from __future__ import annotations

import copy

import torch
from torch import nn

from mlcore._checks import check_tensor
from mlcore._iterations import budget_result
from mlcore.functional import softmax_entropy
from mlcore.results import TrainingResult
from statcore.validation import check_callable, check_positive, check_positive_int, check_scalar

_BATCH_NORMS = (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)
_AFFINE_NORMS = (*_BATCH_NORMS, nn.LayerNorm, nn.GroupNorm, nn.InstanceNorm1d, nn.InstanceNorm2d)


def configure_norm_params(model: nn.Module) -> list[nn.Parameter]:
    """Prepare ``model`` for Tent in place; return the parameters Tent adapts.

    Everything is frozen except the affine weight and bias of normalisation layers
    (batch, layer, group and instance norms). Batch norms switch to the test batch's own
    statistics (no running estimates), as in Tent.

    Raises
    ------
    ValueError
        When the model has no normalisation layer with affine parameters.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"`model` must be a torch.nn.Module; got {type(model).__name__}")
    model.train()
    model.requires_grad_(False)
    params = []
    for module in model.modules():
        if not isinstance(module, _AFFINE_NORMS):
            continue
        if isinstance(module, _BATCH_NORMS):
            module.track_running_stats = False
            module.running_mean = None
            module.running_var = None
        for name in ("weight", "bias"):
            param = getattr(module, name, None)
            if isinstance(param, nn.Parameter):
                param.requires_grad_(True)
                params.append(param)
    if not params:
        raise ValueError(
            "`model` has no normalisation layer with affine parameters (BatchNorm, LayerNorm, "
            "GroupNorm, InstanceNorm with affine=True); Tent has nothing to adapt"
        )
    return params


class Tent(nn.Module):
    """Tent: fully test-time adaptation by entropy minimisation.

    Wraps a classifier; each ``forward(x)`` predicts on the batch and takes ``steps``
    gradient steps on the mean softmax entropy of those predictions, updating only the
    normalisation layers' affine parameters (batch norms use the batch's statistics). The
    returned logits are those of the last forward pass, before its update (Tent's online
    protocol). The wrapped model is adapted in place; :meth:`reset` restores its state at
    wrapping time.

    Parameters
    ----------
    model : nn.Module
        A classifier returning (batch, classes) logits.
    optimizer : callable, optional
        ``optimizer(params) -> torch.optim.Optimizer``; default SGD with ``lr`` and
        ``momentum`` (Tent's choice for its ImageNet runs).
    lr, momentum : float
        Used by the default optimizer.
    scheduler : callable, optional
        ``scheduler(optimizer) -> LRScheduler``. A scheduler with an ``observe`` method (such
        as :class:`~mlcore.tta.CONGA`) is fed each batch's logits after ``backward()``; its
        ``step()`` runs before ``optimizer.step()``. Other schedulers step after it.
    steps : int
        Gradient steps per batch.

    Attributes
    ----------
    optimizer : torch.optim.Optimizer
    scheduler : LRScheduler or None
    params : list of nn.Parameter
        The adapted parameters.

    References
    ----------
    Wang, D., Shelhamer, E., Liu, S., Olshausen, B. and Darrell, T. (2021). Tent: fully
    test-time adaptation by entropy minimization. *ICLR 2021*.

    Examples
    --------
    >>> net = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3))
    >>> tent = Tent(net, lr=1e-2)
    >>> tent(torch.randn(16, 4)).shape
    torch.Size([16, 3])
    """

    def __init__(
        self,
        model: nn.Module,
        optimizer=None,
        *,
        lr: float = 1e-3,
        momentum: float = 0.9,
        scheduler=None,
        steps: int = 1,
    ):
        super().__init__()
        self.params = configure_norm_params(model)
        self.model = model
        # batch norms normalise with the test batch's own statistics: one sample has none
        self._min_batch = 2 if any(isinstance(m, _BATCH_NORMS) for m in model.modules()) else 1
        self.lr = check_positive(lr, name="lr")
        self.momentum = check_scalar(momentum, name="momentum", low=0.0, high=1.0)
        self.steps = check_positive_int(steps, name="steps")
        self._make_optimizer = (
            check_callable(optimizer, name="optimizer")
            if optimizer is not None
            else (lambda params: torch.optim.SGD(params, lr=self.lr, momentum=self.momentum))
        )
        self._make_scheduler = (
            None if scheduler is None else check_callable(scheduler, name="scheduler")
        )
        self._initial_state = copy.deepcopy(model.state_dict())
        self._build()

    def _build(self):
        self.optimizer = self._make_optimizer(self.params)
        if not isinstance(self.optimizer, torch.optim.Optimizer):
            raise TypeError(
                "`optimizer(params)` must return a torch.optim.Optimizer; got "
                f"{type(self.optimizer).__name__}"
            )
        self.scheduler = (
            None if self._make_scheduler is None else self._make_scheduler(self.optimizer)
        )
        self.history = []

    def reset(self):
        """Restore the model's state at wrapping time and rebuild optimizer and scheduler."""
        self.model.load_state_dict(self._initial_state)
        self._build()

    def forward(self, x):
        """Adapt on the batch ``x`` and return its logits (see the class docstring).

        Raises
        ------
        ValueError
            For an empty batch, one sample where the model has batch norms, or NaN or
            infinite entries (one such batch would write NaN into the adapted parameters).
        """
        check_tensor(x, name="x", finite=True)
        if x.ndim == 0 or x.shape[0] < self._min_batch:
            why = (
                " (the batch norms need the batch's own statistics)" if self._min_batch > 1 else ""
            )
            raise ValueError(
                f"`x` must be a batch of at least {self._min_batch} sample(s){why}; got shape "
                f"{tuple(x.shape)}"
            )
        for _ in range(self.steps):
            logits = self.model(x)
            if logits.ndim != 2:
                raise ValueError(
                    "Tent needs (batch, classes) logits from the model; got shape "
                    f"{tuple(logits.shape)}"
                )
            loss = softmax_entropy(logits)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            observes = self.scheduler is not None and hasattr(self.scheduler, "observe")
            if observes:
                self.scheduler.observe(logits.detach())
                self.scheduler.step()
            lr = self.optimizer.param_groups[0]["lr"]
            self.optimizer.step()
            if self.scheduler is not None and not observes:
                self.scheduler.step()
            self.history.append({"step": len(self.history) + 1, "loss": loss.detach(), "lr": lr})
        return logits.detach()

    def result(self, method: str = "Tent") -> TrainingResult:
        """The adaptation so far (``step, lr, loss`` = batch mean entropy) as a TrainingResult.

        ``iterations`` counts the gradient steps; the caller's stream decides how many, so the
        record is converged unless the entropy went infinite or NaN ("diverged", with a
        ``ConvergenceWarning``).
        """
        if not self.history:
            raise ValueError("Tent has not adapted on any batch yet; call it on a batch first")
        return budget_result(
            self.history,
            method=method,
            function="Tent.forward",
            n_iter=len(self.history),
            maxiter=None,
            criterion="batch mean entropy; the caller's stream sets the steps (no tol)",
            remedy="lower `lr` or use a schedule such as CONGA",
        )

    def extra_repr(self) -> str:
        return f"steps={self.steps}, n_params={sum(p.numel() for p in self.params)}"
