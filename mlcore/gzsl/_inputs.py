"""Input checks shared by PUFE and calibrated stacking: arrays or tensors, one device, float64."""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from mlcore._device import as_numpy
from mlcore.encoders.metrics import ausuc, gzsl_scores
from statcore.validation import describe


def input_device(*values) -> torch.device:
    """The device of the tensor inputs (the CPU when all are arrays); they must agree."""
    devices = {v.device for v in values if isinstance(v, torch.Tensor)}
    if len(devices) > 1:
        shown = ", ".join(sorted(str(d) for d in devices))
        raise ValueError(f"tensor inputs must be on one device; got {shown}")
    return devices.pop() if devices else torch.device("cpu")


def as_matrix(x, *, name: str, device: torch.device, columns: int | None = None) -> torch.Tensor:
    """A finite, non-empty 2-D float64 copy on ``device``: the input stays as it was."""
    if x is None:
        raise TypeError(f"`{name}` must be a 2-D array or tensor; got None")
    if isinstance(x, torch.Tensor):
        if x.is_complex() or x.dtype == torch.bool:
            raise TypeError(f"`{name}` must be real-valued; got dtype {x.dtype}")
        out = x.detach().to(device=device, dtype=torch.float64, copy=True)
    else:
        kind = np.asarray(x).dtype.kind
        if kind not in "biuf":
            # np.array(..., dtype=float) would parse text ("0.5") and drop imaginary parts
            raise TypeError(
                f"`{name}` must be a real numeric 2-D array or tensor; got {describe(x)}"
            )
        try:
            arr = np.array(x, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(
                f"`{name}` must be a numeric 2-D array or tensor; got {describe(x)}"
            ) from None
        out = torch.as_tensor(arr, device=device)
    if out.ndim != 2:
        raise ValueError(f"`{name}` must be 2-D; got shape {tuple(out.shape)}")
    if out.shape[0] == 0 or out.shape[1] == 0:
        raise ValueError(f"`{name}` must be non-empty; got shape {tuple(out.shape)}")
    if columns is not None and out.shape[1] != columns:
        raise ValueError(f"`{name}` must have {columns} columns; got shape {tuple(out.shape)}")
    if not torch.isfinite(out).all():
        raise ValueError(f"`{name}` must be finite; found NaN or infinite entries")
    return out


def as_probabilities(p, *, name: str, device: torch.device) -> torch.Tensor:
    """Probabilities (scalar or 1-D) in [0, 1] as a float64 tensor on ``device``: real only (a
    complex posterior would lose its imaginary part silently)."""
    arr = as_numpy(p, name=name)
    if arr.dtype.kind not in "biuf" or arr.dtype == np.bool_:
        raise TypeError(f"`{name}` must hold real probabilities; got dtype {arr.dtype}")
    out = torch.as_tensor(arr, dtype=torch.float64, device=device)
    if not torch.isfinite(out).all() or (out < 0).any() or (out > 1).any():
        raise ValueError(f"`{name}` must hold probabilities in [0, 1]")
    return out


def as_seen_mask(seen_mask, *, n_classes: int | None = None) -> np.ndarray:
    """A boolean mask over the classes with at least one seen and one unseen class."""
    mask = as_numpy(seen_mask, name="seen_mask")
    if mask.dtype != np.bool_:
        raise TypeError(
            f"`seen_mask` must be a boolean array over the classes; got dtype {mask.dtype}"
        )
    if mask.ndim != 1:
        raise ValueError(f"`seen_mask` must be 1-D; got shape {mask.shape}")
    if n_classes is not None and mask.size != n_classes:
        raise ValueError(
            f"`seen_mask` has {mask.size} entries but the scores/prototypes have "
            f"{n_classes} classes"
        )
    if mask.all() or not mask.any():
        raise ValueError("`seen_mask` must mark at least one seen and one unseen class")
    return mask


def gzsl_accuracy(y_true: np.ndarray, scores: np.ndarray, seen_mask: np.ndarray) -> pd.Series:
    """Per-class mean accuracy on seen (S) and unseen (U) test classes, their harmonic mean H,
    and the area under the seen-unseen curve of these scores (AUSUC)."""
    classes = np.arange(seen_mask.size)
    present = np.isin(classes, y_true)
    out = gzsl_scores(
        y_true, scores.argmax(axis=1), classes[seen_mask & present], classes[~seen_mask & present]
    )
    out["ausuc"] = ausuc(scores, y_true, classes[seen_mask], classes[~seen_mask])
    return out
