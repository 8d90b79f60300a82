"""SparseSSM: one-shot, OBS-style pruning of a Mamba mixer's state transition ``A``."""

from __future__ import annotations

import math

import torch

from mlcore._checks import check_finite_parameters, check_tensor
from mlcore._device import as_numpy
from mlcore.nn.mamba import check_mixer, mixer_ssm_inputs, selective_scan
from mlcore.pruning._masks import check_nm, check_sparsity, lowest_mask, nm_mask, structure_name
from mlcore.pruning.results import PruningResult
from statcore.validation import (
    check_option,
    check_positive,
    check_positive_int,
    check_scalar,
    describe,
)

TIME_WEIGHTS = ("power", "discount", "linear", "window", "uniform")


def time_weights(
    length: int,
    mode: str = "power",
    *,
    gamma: float = 0.9,
    k_frac: float = 0.25,
    power: float = 1.0,
    device=None,
) -> torch.Tensor:
    r"""SparseSSM's weights :math:`w_t` for aggregating per-step saliencies (they sum to 1).

    ``power``: :math:`(t+1)^{-p}` (the authors' default); ``discount``: :math:`\gamma^t`;
    ``linear``: :math:`L - t`; ``window``: 1 on the first ``ceil(k_frac L)`` steps;
    ``uniform``: 1.

    References
    ----------
    Tuo, K. and Wang, H. (2025). SparseSSM: efficient selective structured state space models
    can be pruned in one-shot. arXiv:2506.09613 (code CFinTech/SparseSSM).
    """
    length = check_positive_int(length, name="length")
    check_option(mode, name="time_weight", options=TIME_WEIGHTS)
    t = torch.arange(length, dtype=torch.float64, device=device)
    if mode == "power":
        w = (t + 1.0) ** -check_positive(power, name="power")
    elif mode == "discount":
        w = check_scalar(gamma, name="gamma", low=0.0, high=1.0, low_inclusive=False) ** t
    elif mode == "linear":
        w = length - t
    elif mode == "window":
        k_frac = check_scalar(k_frac, name="k_frac", low=0.0, high=1.0, low_inclusive=False)
        w = (t < max(1, math.ceil(k_frac * length))).double()
    else:
        w = torch.ones_like(t)
    return w / w.sum()


@torch.no_grad()
def ssm_statistics(mixer, calib_inputs, *, batch_size: int = 8):
    r"""Calibration statistics of a mixer's scan: mean :math:`\bar A_t` and :math:`E[h_{t-1}^2]`.

    Parameters
    ----------
    mixer : nn.Module
        A Mamba mixer (see :func:`~mlcore.nn.mixer_ssm_inputs`); its ``ssm_mask``
        buffer, when present, is honoured.
    calib_inputs : Tensor (n, length, d_model)
        The mixer's inputs on calibration sequences.
    batch_size : int
        Sequences per scan.

    Returns
    -------
    dict
        ``deltaA`` and ``h2``, float64 (length, d_inner, d_state) averages over the samples,
        and ``n``.

    Raises
    ------
    ValueError
        When ``calib_inputs`` is empty, not finite, or does not fit the mixer (its width, dtype
        and device are those of ``mixer.in_proj``).
    """
    check_mixer(mixer)
    weight = mixer.in_proj.weight
    check_tensor(
        calib_inputs,
        name="calib_inputs",
        dims=("n_samples", "length", "d_model"),
        sizes={"d_model": weight.shape[1]},
        nonempty=True,
        finite=True,
        like=weight,
        like_name="mixer.in_proj.weight",
    )
    batch_size = check_positive_int(batch_size, name="batch_size")
    mask = getattr(mixer, "ssm_mask", None)
    sum_a = sum_h2 = None
    for chunk in calib_inputs.split(batch_size):
        p = mixer_ssm_inputs(mixer, chunk)
        _, deltaA, h_prev = selective_scan(
            p["u"], p["delta"], p["A"], p["B"], p["C"], p["D"], mask=mask, return_states=True
        )
        a, h2 = deltaA.double().sum(0), (h_prev.double() ** 2).sum(0)
        sum_a = a if sum_a is None else sum_a + a
        sum_h2 = h2 if sum_h2 is None else sum_h2 + h2
    n = calib_inputs.shape[0]
    return {"deltaA": sum_a / n, "h2": sum_h2 / n, "n": n}


#: ``A_log`` of a cut entry in a mixer without an ``ssm_mask`` buffer: ``A = -e^80`` makes
#: ``exp(delta * A)`` underflow to exactly 0 for any step ``delta > 2e-33``, in float32 and
#: bfloat16 (``e^80`` is finite in both), so the transition is cut as the buffer would cut it
_CUT_A_LOG = 80.0


def apply_ssm_mask(mixer, keep) -> None:
    """Cut the state entries where ``keep`` is False: their discretised transitions become 0.

    A mixer with an ``ssm_mask`` buffer (:class:`~mlcore.nn.MambaBlock`) gets the buffer zeroed
    there and ``A_log`` set to 0 (as the authors do). A mixer without one (the Hugging Face
    ``MambaMixer``, mamba-minimal) gets ``A_log = 80`` there, which makes
    ``exp(delta * A)`` exactly 0: setting ``A_log`` to 0 alone would leave ``A = -1``, a live
    state.

    ``keep`` is boolean, or numeric with entries 0 and 1 only (a 0.5 would silently count as
    kept)."""
    if not isinstance(getattr(mixer, "A_log", None), torch.Tensor):
        raise TypeError(f"`mixer` must be a Mamba mixer with `A_log`; got {type(mixer).__name__}")
    try:
        keep = torch.as_tensor(keep, device=mixer.A_log.device)
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(f"`keep` must be a boolean mask; got {describe(keep)}") from None
    if keep.dtype != torch.bool:
        if not bool(((keep == 0) | (keep == 1)).all()):
            raise ValueError("`keep` must be boolean, or hold only 0 and 1; got other values")
        keep = keep.to(torch.bool)
    if keep.shape != mixer.A_log.shape:
        raise ValueError(
            f"the keep-mask must have A_log's shape {tuple(mixer.A_log.shape)}; got "
            f"{tuple(keep.shape)}"
        )
    with torch.no_grad():
        if getattr(mixer, "ssm_mask", None) is not None:
            mixer.A_log.masked_fill_(~keep, 0.0)
            mixer.ssm_mask.mul_(keep.to(mixer.ssm_mask.dtype))
        else:
            mixer.A_log.masked_fill_(~keep, _CUT_A_LOG)


def _check_structure(structure, d_state):
    if structure is None or structure in ("row", "col"):
        return structure
    if isinstance(structure, str):
        raise ValueError(f"`structure` must be None, 'row', 'col' or (n, m); got {structure!r}")
    return check_nm(structure, name="structure", width=d_state)


def sparsessm_prune(
    mixer,
    calib_inputs,
    sparsity: float = 0.5,
    time_weight: str = "power",
    structure=None,
    *,
    gamma: float = 0.9,
    k_frac: float = 0.25,
    power: float = 1.0,
    batch_size: int = 8,
) -> PruningResult:
    r"""SparseSSM: prune a Mamba mixer's state matrix in one shot, from calibration data.

    With a diagonal-Hessian optimal-brain-surgeon approximation of the layer-wise loss, the
    cost of removing state entry (d, n) at step t is proportional to
    :math:`\bar A_t[d,n]^2\,E[h_{t-1}[d,n]^2]` (both averaged over the calibration samples).
    The per-step saliencies are aggregated over time with :func:`time_weights`, and the
    lowest-scored ``round(sparsity * d_inner * d_state)`` entries are cut (``A_log`` set to 0
    and the entry's transition masked to 0, see :func:`apply_ssm_mask`). The mixer is
    modified in place.

    Parameters
    ----------
    mixer : nn.Module
        A Mamba mixer with ``in_proj, conv1d, x_proj, dt_proj, A_log, D, out_proj`` (such as
        :class:`~mlcore.nn.MambaBlock`); the reference scan recomputes its forward pass.
    calib_inputs : Tensor (n_samples, length, d_model)
        The mixer's inputs on calibration sequences.
    sparsity : float in [0, 1)
        Fraction of ``A`` to remove (unused with an ``(n, m)`` structure: it prunes n/m).
    time_weight : {"power", "discount", "linear", "window", "uniform"}
    structure : None, "row", "col" or (n, m)
        ``None``: unstructured. ``"row"`` / ``"col"``: whole channels ``d`` / state indices
        ``n``; as in the authors' structured variant, each step ranks them by
        :math:`\sum A_{log}^2 E[h_{t-1}^2]` and those most often among the lowest
        ``round(sparsity * count)`` go. ``(n, m)``: the ``n`` lowest-scored of every ``m``
        consecutive state entries of each channel.
    gamma, k_frac, power : float
        Parameters of the ``discount``, ``window`` and ``power`` time weights.
    batch_size : int
        Calibration sequences per scan.

    Returns
    -------
    PruningResult
        ``mask`` (True = kept) and ``scores`` of shape (d_inner, d_state).

    Raises
    ------
    ValueError
        For a sparsity outside [0, 1), badly shaped, empty or non-finite calibration inputs,
        a bad structure, a mixer whose parameters hold NaN or infinite entries, or calibration
        statistics that overflow: saliencies that are not numbers rank nothing.

    Notes
    -----
    Fidelity: paper, from the authors' code (CFinTech/SparseSSM: ``prune/sparsessm_dev.py``,
    ``prune/structure_ts.py``); the paper's body was not read. The diagonal-Hessian saliency
    :math:`\bar A_t^2\, E[h_{t-1}^2]`, the time weights (``power`` by default), the
    ``A_log``-to-zero masking and the row/column structured variant follow that code; the N:M
    variant is this package's (the authors' ``sparsessm_semi.py`` was not read). The calibration
    set and checkpoints (WikiText-2, state-spaces Mamba) are replaced by `mlcore.nn.MambaBlock`
    and synthetic inputs in the tests.

    References
    ----------
    Tuo, K. and Wang, H. (2025). SparseSSM: efficient selective structured state space models
    can be pruned in one-shot. arXiv:2506.09613; *ICML 2026* (code CFinTech/SparseSSM).
    """
    sparsity = check_sparsity(sparsity)
    check_mixer(mixer)
    d_inner, d_state = mixer.A_log.shape
    structure = _check_structure(structure, d_state)
    check_option(time_weight, name="time_weight", options=TIME_WEIGHTS)
    check_finite_parameters(mixer, name="mixer")
    stats = ssm_statistics(mixer, calib_inputs, batch_size=batch_size)
    _check_statistics(stats, mixer)
    length = stats["h2"].shape[0]
    w = time_weights(
        length, time_weight, gamma=gamma, k_frac=k_frac, power=power, device=stats["h2"].device
    )
    metric = stats["deltaA"] ** 2 * stats["h2"]  # (length, d_inner, d_state)
    scores = torch.einsum("t,tdn->dn", w, metric)
    if structure is None:
        keep = lowest_mask(scores, sparsity)
        target = sparsity
    elif isinstance(structure, tuple):
        keep = nm_mask(scores, *structure)
        target = structure[0] / structure[1]
    else:
        keep = _structured_mask(mixer.A_log.detach().double(), stats["h2"], sparsity, structure)
        target = sparsity
    apply_ssm_mask(mixer, keep)
    return PruningResult(
        method=f"SparseSSM ({time_weight} time weights)",
        nobs=stats["n"],
        mask=as_numpy(keep),
        scores=as_numpy(scores),
        target_sparsity=target,
        structure=structure_name(structure),
        parameter="A_log",
    )


def _check_statistics(stats, mixer) -> None:
    """Finite inputs and weights can still overflow the scan (float32 states): refuse to rank
    on saliencies that are not numbers (a NaN sorts as the largest, so it would be kept)."""
    for key, what in (("deltaA", "mean transition deltaA"), ("h2", "state second moment E[h^2]")):
        bad = ~torch.isfinite(stats[key])
        if bool(bad.any()):
            raise ValueError(
                f"SparseSSM cannot score the states of `mixer` ({type(mixer).__name__} with "
                f"A_log {tuple(mixer.A_log.shape)}): its calibration {what} has "
                f"{int(bad.sum())} non-finite entries of {bad.numel()}; the scan overflows on "
                "these `calib_inputs` (rescale them, or run the mixer in float64)"
            )


def _structured_mask(a_log, h2, sparsity, axis):
    """The authors' structured vote: per step, the bottom-k rows (or columns) by
    ``sum A_log^2 E[h^2]``; prune the k most often voted."""
    dim = 1 if axis == "row" else 0  # sum over states for rows, over channels for columns
    count = a_log.shape[0] if axis == "row" else a_log.shape[1]
    k = int(round(sparsity * count))
    keep_struct = torch.ones(count, dtype=torch.bool, device=a_log.device)
    if k:
        per_step = (a_log**2 * h2).sum(dim=dim + 1)  # (length, count)
        votes = torch.zeros(count, dtype=torch.float64, device=a_log.device)
        votes.scatter_add_(
            0,
            per_step.topk(k, dim=1, largest=False).indices.reshape(-1),
            torch.ones(per_step.shape[0] * k, dtype=torch.float64, device=a_log.device),
        )
        # ties in the vote go to the lower total saliency, not to index order
        total = per_step.sum(0)
        order = torch.argsort(votes * (1 + total.max()) - total, descending=True)
        keep_struct[order[:k]] = False
    if axis == "row":
        return keep_struct.unsqueeze(1).expand_as(a_log).clone()
    return keep_struct.unsqueeze(0).expand_as(a_log).clone()
