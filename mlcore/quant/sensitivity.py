"""Relative sensitivity of a model's loss to quantising one op at a time (CoCoQuant's calibration).

Fidelity: reconstruction. The CoCoQuant abstract (ICML 2026) names "relative
sensitivity calibration"; the definition ``s_i(b) = (L(op i at b) − L) / L`` with every other op
at full precision is this library's reconstruction (one-op-at-a-time probing as in HAWQ, Dong et
al., ICCV 2019, with the loss change in place of the Hessian trace), not the paper's text.
"""

from __future__ import annotations

import contextlib
import math
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd
import torch
from torch import nn

from mlcore._device import module_device
from mlcore.quant.cost import QuantOp, check_ops
from mlcore.quant.quantizers import check_bits, check_bits_set, fake_quantize, quantized_linear
from mlcore.quant.tp_model import causal_lm_loss
from statcore.base import Estimator
from statcore.progress import progress as progress_bar
from statcore.results import Results
from statcore.results.plotting import get_ax
from statcore.validation import check_bool, check_callable, check_positive_int, describe


def linear_ops(
    model: nn.Module,
    *,
    tokens: int,
    tp_size: int = 1,
    row_parallel: Sequence[str] = (),
    consumers: Mapping[str, str] | None = None,
    exclude: Sequence[str] = (),
    bits: Sequence[int] = (16, 8, 4),
) -> list[QuantOp]:
    """The op list of any model: a GEMM per ``nn.Linear``, a communication op per row-parallel one.

    Parameters
    ----------
    model : nn.Module
    tokens : int
        Rows ``M`` of every GEMM (batch × sequence length of the pass being costed).
    tp_size : int
        Tensor-parallel ranks. Row-parallel linears split their inputs, the others their outputs.
    row_parallel : sequence of str
        Module names whose partial outputs are all-reduced (each gets an op ``"<name>.allreduce"``).
    consumers : mapping, optional
        Row-parallel name -> the linear that reads the reduced tensor (the alignment partner).
    exclude : sequence of str
        Linears left at full precision and out of the op list (e.g. the LM head).
    bits : sequence of int
        Precisions every op may take.

    Raises
    ------
    ValueError
        When ``tp_size`` does not divide a split width, or a named module is not a linear.
    """
    tokens = check_positive_int(tokens, name="tokens")
    tp_size = check_positive_int(tp_size, name="tp_size")
    consumers = dict(consumers or {})
    linears = {n: m for n, m in model.named_modules() if isinstance(m, nn.Linear)}
    for name in [*row_parallel, *consumers, *consumers.values(), *exclude]:
        if name not in linears:
            raise ValueError(f"{name!r} is not an nn.Linear of the model")
    bits = tuple(check_bits(b) for b in bits)
    ops = []
    for name, mod in linears.items():
        if name in exclude:
            continue
        K, N = mod.in_features, mod.out_features
        split, axis = (K, "in_features") if name in row_parallel else (N, "out_features")
        if split % tp_size:
            raise ValueError(
                f"`tp_size`={tp_size} does not divide {axis}={split} of {name!r}; the world size "
                "must divide every tensor-parallel width"
            )
        if name in row_parallel:
            K //= tp_size
        else:
            N //= tp_size
        ops.append(QuantOp(name, "gemm", M=tokens, N=N, K=K, bits=bits))
        if name in row_parallel:
            consumer = consumers.get(name)
            if consumer is not None and consumer in exclude:
                consumer = None
            ops.append(
                QuantOp(
                    f"{name}.allreduce",
                    "comm",
                    M=tokens,
                    N=mod.out_features,
                    consumer=consumer,
                    module=name,
                    bits=bits,
                )
            )
    check_ops(ops)
    return ops


@contextlib.contextmanager
def quantized(
    model: nn.Module,
    ops: Sequence[QuantOp],
    bits: Mapping[str, int],
    *,
    group_size: int | None = None,
    activation_bits: Sequence[int] = (8,),
):
    """Run ``model`` with ops fake-quantised at ``bits`` (forward hooks; weights untouched).

    A GEMM op recomputes its linear with :func:`quantized_linear`; a communication op
    fake-quantises the linear's output without its bias (the reduced partial sums; the bias is
    added after the collective), in groups of ``group_size`` along the hidden axis.
    """
    ops = check_ops(ops)
    if not isinstance(bits, Mapping):
        raise TypeError(f"`bits` must be a mapping of op names to bit-widths; got {describe(bits)}")
    if group_size is not None:
        group_size = check_positive_int(group_size, name="group_size")
    activation_bits = check_bits_set(activation_bits)
    modules = dict(model.named_modules())
    handles = []

    def gemm_hook(b):
        def hook(mod, args, output):
            return quantized_linear(
                args[0],
                mod.weight,
                mod.bias,
                bits=b,
                group_size=group_size,
                activation_bits=tuple(activation_bits),
            )

        return hook

    def comm_hook(b):
        def hook(mod, args, output):
            bias = 0 if mod.bias is None else mod.bias
            return fake_quantize(output - bias, b, group_size=group_size, name="output") + bias

        return hook

    try:
        for op in ops:
            b = check_bits(bits.get(op.name, 16), name=f"bits[{op.name!r}]")
            if b == 16:
                continue
            mod = modules.get(op.module)
            if not isinstance(mod, nn.Linear):
                raise ValueError(f"the op {op.name!r} names {op.module!r}, not an nn.Linear")
            hook = gemm_hook(b) if op.kind == "gemm" else comm_hook(b)
            handles.append(mod.register_forward_hook(hook))
        yield model
    finally:
        for h in handles:
            h.remove()


def evaluate_loss(model: nn.Module, batches: Iterable, loss_fn: Callable | None = None) -> float:
    """Mean of ``loss_fn(model, batch)`` over ``batches`` without gradients (default: the causal
    LM next-token cross-entropy)."""
    loss_fn = causal_lm_loss if loss_fn is None else check_callable(loss_fn, name="loss_fn")
    device = module_device(model)
    values = []
    was_training = model.training
    model.eval()
    with torch.no_grad():
        for batch in batches:
            if isinstance(batch, torch.Tensor):
                batch = batch.to(device)
            values.append(float(loss_fn(model, batch)))
    model.train(was_training)
    if not values:
        raise ValueError("`batches` is empty")
    value = float(np.mean(values))
    if not math.isfinite(value):
        raise ValueError(f"the calibration loss is not finite ({value}); check the model")
    return value


def _plot_heatmap(result, ax=None, **kwargs):
    """Relative Δloss per op (rows) and bit-width (columns), log colour scale."""
    ax = get_ax(ax)
    table = result.table
    values = np.log10(np.clip(table.to_numpy(dtype=float), 1e-6, None))
    image = ax.imshow(values, aspect="auto", cmap="magma", **kwargs)
    ax.set_yticks(range(len(table)), table.index)
    ax.set_xticks(range(table.shape[1]), [f"{b}-bit" for b in table.columns])
    ax.figure.colorbar(image, ax=ax, label="log10 relative Δloss")
    ax.set_title(result.method)
    return ax


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class SensitivityResult(Results):
    """Relative sensitivities ``s_i(b)`` from one-op-at-a-time fake quantisation.

    Parameters
    ----------
    table : DataFrame
        ``s_i(b)`` with ops as rows and bit-widths as columns (16 is 0 by definition).
    raw : DataFrame
        The same before negative values were clipped to 0.
    losses : DataFrame
        The calibration loss with each op quantised.
    base_loss : float
        The loss with nothing quantised.
    ops : tuple of QuantOp
    """

    table: pd.DataFrame = field(repr=False)
    raw: pd.DataFrame = field(repr=False)
    losses: pd.DataFrame = field(repr=False)
    base_loss: float
    ops: tuple = field(default=(), repr=False)
    wall_time_s: float | None = None

    _plots: ClassVar[dict] = {"heatmap": _plot_heatmap}

    def tidy(self) -> pd.DataFrame:
        """One row per op and bit-width: ``op, bits, loss, sensitivity, raw``."""
        frames = {"loss": self.losses, "sensitivity": self.table, "raw": self.raw}
        long = pd.concat({k: v.stack() for k, v in frames.items()}, axis=1)
        return long.rename_axis(["op", "bits"]).reset_index()

    def glance(self) -> pd.DataFrame:
        """``method, n_ops, base_loss, most_sensitive``."""
        low = self.table.columns.min()
        return pd.DataFrame(
            [
                {
                    "method": self.method,
                    "n_ops": len(self.table),
                    "base_loss": self.base_loss,
                    "most_sensitive": str(self.table[low].idxmax()),
                }
            ]
        )


class SensitivityCalibrator(Estimator):
    """Measure ``s_i(b) = (L(op i at b) − L) / L`` for every op and precision on calibration data.

    Works on any ``nn.Module``: each op names an ``nn.Linear`` (its ``module``), and a forward
    hook fake-quantises that one op (weights and activations for a GEMM, the reduced output for
    a communication op) while everything else stays at full precision.

    Parameters
    ----------
    model : nn.Module
        Not modified (hooks are removed after every pass).
    calib_batches : iterable
        Batches for ``loss_fn`` (for the default: token-id tensors ``(batch, length)``).
    ops : sequence of QuantOp
        E.g. from :func:`linear_ops`.
    bits : sequence of int
        Precisions to calibrate (16 is always 0).
    group_size : int, optional
        Entries per scale.
    activation_bits : sequence of int
        GEMM precisions that also quantise activations.
    loss_fn : callable, optional
        ``loss_fn(model, batch) -> scalar``; default :func:`mlcore.quant.causal_lm_loss`.
    clip_negative : bool
        Clip measured decreases to 0: a drop in calibration loss from quantising is noise of a
        finite calibration set, and the additive budget would let the allocator spend it on
        other ops. The unclipped values stay in ``raw``.
    progress : bool, optional
        Deprecated here (``FutureWarning``): pass ``progress`` to :meth:`fit`.

    Notes
    -----
    Fidelity: reconstruction (see the module docstring). Costs ``1 + n_ops · (len(bits) - 1)``
    passes over ``calib_batches``.
    """

    def __init__(
        self,
        model: nn.Module,
        calib_batches: Iterable,
        ops: Sequence[QuantOp],
        *,
        bits: Sequence[int] = (16, 8, 4),
        group_size: int | None = None,
        activation_bits: Sequence[int] = (8,),
        loss_fn: Callable | None = None,
        clip_negative: bool = True,
        progress: bool | None = None,
    ):
        if not isinstance(model, nn.Module):
            raise TypeError(f"`model` must be an nn.Module; got {describe(model)}")
        self.model = model
        self.calib_batches = list(calib_batches)
        if not self.calib_batches:
            raise ValueError("`calib_batches` is empty")
        self.ops = check_ops(ops)
        self.bits = tuple(sorted({check_bits(b) for b in bits} | {16}, reverse=True))
        self.group_size = (
            None if group_size is None else check_positive_int(group_size, name="group_size")
        )
        self.activation_bits = check_bits_set(activation_bits)
        self.loss_fn = None if loss_fn is None else check_callable(loss_fn, name="loss_fn")
        self.clip_negative = check_bool(clip_negative, name="clip_negative")
        if progress is not None:
            check_bool(progress, name="progress")
            warnings.warn(
                "SensitivityCalibrator(progress=...) is now an option of fit(); the constructor "
                "argument will be removed in the next release",
                FutureWarning,
                stacklevel=2,
            )
        self._default_progress = bool(progress)

    method_name = "CoCoQuant relative sensitivity"

    @property
    def nobs(self) -> int:
        """Calibration batches."""
        return len(self.calib_batches)

    def _repr_spec(self) -> str:
        return f"n_ops={len(self.ops)}, bits={self.bits}"

    def fit(self, *, progress: bool = False) -> SensitivityResult:
        """Run the calibration passes; returns a new :class:`SensitivityResult`.

        Parameters
        ----------
        progress : bool
            Show a progress bar over the ``n_ops · (len(bits) - 1)`` quantised passes.
        """
        progress = check_bool(progress, name="progress") or self._default_progress
        start = time.perf_counter()
        base = evaluate_loss(self.model, self.calib_batches, self.loss_fn)
        if base <= 0:
            raise ValueError(f"relative sensitivity needs a positive calibration loss; got {base}")
        low = [b for b in self.bits if b != 16]
        losses = pd.DataFrame(base, index=[op.name for op in self.ops], columns=list(self.bits))
        jobs = [(op, b) for op in self.ops for b in low if b in op.bits]
        for op, b in progress_bar(jobs, enabled=progress, desc="SensitivityCalibrator"):
            with quantized(
                self.model,
                self.ops,
                {op.name: b},
                group_size=self.group_size,
                activation_bits=self.activation_bits,
            ):
                losses.loc[op.name, b] = evaluate_loss(self.model, self.calib_batches, self.loss_fn)
        raw = (losses - base) / base
        table = raw.clip(lower=0.0) if self.clip_negative else raw.copy()
        return SensitivityResult(
            method=self.method_name,
            **self._result_fields(),
            table=table,
            raw=raw,
            losses=losses,
            base_loss=base,
            ops=self.ops,
            wall_time_s=time.perf_counter() - start,
        )
