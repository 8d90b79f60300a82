"""Scalar and coordinate-wise quantizers: codes and the cells (boxes) they stand for."""

from __future__ import annotations

import numbers

import numpy as np

from statcore.validation import (
    as_float_array,
    check_positive,
    check_positive_int,
    check_scalar,
    describe,
)


class Quantizer:
    """A coordinate-wise quantizer with increasing thresholds (``-inf``/``+inf`` edges implied).

    Coordinate ``j`` has thresholds ``tau_1 < ... < tau_{K-1}``; code ``c`` (0-based,
    ``0 <= c <= K-1``) stands for the cell ``[tau_c, tau_{c+1})`` with ``tau_0 = -inf`` and
    ``tau_K = +inf``. A vector code is the box of its coordinates' cells.

    Parameters
    ----------
    thresholds : array_like or list of array_like
        One increasing array (a scalar quantizer, or the same quantizer for every coordinate
        when ``n_dims`` is given), or a list with one array per coordinate.
    n_dims : int, optional
        Number of coordinates when a single threshold array is shared.

    Notes
    -----
    A known dither ``u`` (subtractive-free: ``y = Q(x + u)``) shifts the cell of each
    observation to ``[tau_c - u, tau_{c+1} - u)``; pass it to :meth:`quantize` and
    :meth:`cells` (or to ``QuantizedNVMM.from_codes``). Dithering restores the scale that 1-bit
    codes with a zero threshold do not identify.

    References
    ----------
    Inference from quantized data under the normal variance-mean mixture (NVMM) framework
    (ICML 2026).
    """

    def __init__(self, thresholds, *, n_dims: int | None = None):
        if (
            isinstance(thresholds, list | tuple)
            and thresholds
            and not isinstance(thresholds[0], numbers.Real)
        ):
            arrays = [
                self._check_thresholds(t, f"thresholds[{j}]") for j, t in enumerate(thresholds)
            ]
            if n_dims is not None and n_dims != len(arrays):
                raise ValueError(
                    f"`n_dims` ({n_dims}) differs from the number of threshold arrays "
                    f"({len(arrays)})"
                )
            self._shared = False
        else:
            arr = self._check_thresholds(thresholds, "thresholds")
            n_dims = 1 if n_dims is None else check_positive_int(n_dims, name="n_dims")
            arrays = [arr] * n_dims
            self._shared = True
        self.thresholds = arrays
        self.step = None
        self.n_bits = None
        self.offset = None

    @staticmethod
    def _check_thresholds(t, name):
        arr = as_float_array(t, name=name, ndim=1)
        if len(arr) and np.any(np.diff(arr) <= 0):
            raise ValueError(f"`{name}` must be strictly increasing; got {arr}")
        return arr

    @classmethod
    def uniform(
        cls,
        step,
        n_bits: int | None = None,
        offset: float = 0.0,
        *,
        n_dims: int = 1,
        n_levels: int | None = None,
    ):
        """Uniform mid-rise quantizer with ``2**n_bits`` levels and saturating outer cells.

        Thresholds ``offset + (k - K/2) step`` for ``k = 1, ..., K-1``. Without ``n_bits`` the
        quantizer covers ``n_levels`` levels (default 2**16, effectively unsaturated).
        """
        step = check_positive(step, name="step")
        offset = check_scalar(offset, name="offset")
        if n_bits is not None:
            # the thresholds are stored: 2**24 of them take 128 MB
            n_bits = check_scalar(n_bits, name="n_bits", kind=numbers.Integral, low=1, high=24)
            levels = 2**n_bits
        else:
            levels = (
                2**16
                if n_levels is None
                else check_scalar(
                    n_levels, name="n_levels", kind=numbers.Integral, low=2, high=2**24
                )
            )
        k = np.arange(1, levels)
        q = cls((k - levels / 2) * step + offset, n_dims=n_dims)
        q.step, q.n_bits, q.offset = step, n_bits, offset
        return q

    @property
    def n_dims(self) -> int:
        return len(self.thresholds)

    @property
    def n_levels(self) -> list[int]:
        """Number of cells per coordinate."""
        return [len(t) + 1 for t in self.thresholds]

    def __repr__(self) -> str:
        if self.step is not None:
            bits = f", n_bits={self.n_bits}" if self.n_bits else ""
            return (
                f"Quantizer.uniform(step={self.step:g}{bits}, offset={self.offset:g}, "
                f"n_dims={self.n_dims})"
            )
        return f"Quantizer(n_dims={self.n_dims}, n_levels={self.n_levels})"

    def _shape(self, arr, name):
        if self.n_dims == 1 and arr.ndim == 1:
            return arr[:, None], True
        if arr.ndim != 2 or arr.shape[1] != self.n_dims:
            raise ValueError(
                f"`{name}` must have shape (n, {self.n_dims}) for this quantizer; got {arr.shape}"
            )
        return arr, False

    def _dither(self, dither, shape):
        if dither is None:
            return np.zeros(shape)
        u = as_float_array(dither, name="dither", ndim=(1, 2))
        u = u.reshape(-1, 1) if u.ndim == 1 else u
        try:
            return np.broadcast_to(u, shape)
        except ValueError:
            raise ValueError(f"`dither` must broadcast to {shape}; got {u.shape}") from None

    def quantize(self, x, dither=None) -> np.ndarray:
        """Integer codes of ``x`` ((n,) or (n, d)); with a known ``dither``, of ``x + dither``."""
        arr = as_float_array(x, name="x", ndim=(1, 2))
        arr2, flat = self._shape(arr, "x")
        shifted = arr2 + self._dither(dither, arr2.shape)
        codes = np.column_stack(
            [np.searchsorted(t, shifted[:, j], side="right") for j, t in enumerate(self.thresholds)]
        ).astype(np.int64)
        return codes[:, 0] if flat else codes

    def check_codes(self, codes) -> np.ndarray:
        """Codes as an int64 array, refusing NaN, non-integers and codes outside the range."""
        raw = np.asarray(codes)
        if raw.size == 0:
            raise ValueError("`codes` is empty: there is nothing to fit")
        if raw.dtype.kind not in "iuf":
            raise TypeError(f"`codes` must be integers; got {describe(codes)} of dtype {raw.dtype}")
        if raw.dtype.kind == "f":
            if np.isnan(raw).any():
                raise ValueError(f"`codes` must not contain NaN; found {int(np.isnan(raw).sum())}")
            if np.any(raw != np.round(raw)):
                raise ValueError("`codes` must be whole numbers")
        arr = raw.astype(np.int64)
        arr2, _ = self._shape(arr, "codes")
        for j, k in enumerate(self.n_levels):
            bad = (arr2[:, j] < 0) | (arr2[:, j] >= k)
            if bad.any():
                first = arr2[np.argmax(bad), j]
                raise ValueError(
                    f"`codes` of coordinate {j} must lie in 0..{k - 1}; found {int(bad.sum())} "
                    f"outside (first: {first})"
                )
        return arr

    def cells(self, codes, dither=None):
        """``(lower, upper)`` edges of the cells the codes stand for (``-inf``/``inf`` outside)."""
        arr = self.check_codes(codes)
        arr2, flat = self._shape(arr, "codes")
        lower = np.empty(arr2.shape)
        upper = np.empty(arr2.shape)
        for j, t in enumerate(self.thresholds):
            edges = np.concatenate([[-np.inf], t, [np.inf]])
            lower[:, j] = edges[arr2[:, j]]
            upper[:, j] = edges[arr2[:, j] + 1]
        u = self._dither(dither, arr2.shape)
        lower, upper = lower - u, upper - u
        if flat:
            return lower[:, 0], upper[:, 0]
        return lower, upper

    def midpoints(self, codes, dither=None):
        """cell centres; saturated cells at their finite edge -/+ half a cell."""
        lower, upper = self.cells(codes, dither)
        return midpoint_impute(lower, upper)


def check_quantizer(quantizer, *, n_dims: int | None = None) -> Quantizer:
    """A :class:`Quantizer` (with ``n_dims`` coordinates when given); anything else is refused
    with a word on what a quantizer is."""
    if not isinstance(quantizer, Quantizer):
        raise TypeError(
            "`quantizer` must be a statcore.quantized.Quantizer (the thresholds that turned "
            f"values into codes, e.g. Quantizer.uniform(step=0.5, n_bits=3)); got "
            f"{describe(quantizer)}"
        )
    if n_dims is not None and quantizer.n_dims != n_dims:
        raise ValueError(
            f"`quantizer` must be a {'scalar' if n_dims == 1 else f'{n_dims}-D'} quantizer "
            f"(n_dims={n_dims}); got n_dims={quantizer.n_dims}"
        )
    return quantizer


def midpoint_impute(lower, upper):
    """Cell centres; a half-infinite cell goes half a neighbouring cell width beyond its edge."""
    lower = as_float_array(lower, name="lower", allow_inf=True)
    upper = as_float_array(upper, name="upper", allow_inf=True)
    if lower.shape != upper.shape:
        raise ValueError(
            f"`lower` and `upper` must have the same shape; got {lower.shape} and {upper.shape}"
        )
    finite = np.isfinite(lower) & np.isfinite(upper)
    widths = upper - lower
    if finite.any():
        half = 0.5 * np.median(widths[finite])
    else:
        half = 0.5
    mid = np.where(finite, 0.5 * (lower + upper), np.nan)
    mid = np.where(~np.isfinite(lower) & np.isfinite(upper), upper - half, mid)
    mid = np.where(np.isfinite(lower) & ~np.isfinite(upper), lower + half, mid)
    return np.where(~np.isfinite(lower) & ~np.isfinite(upper), 0.0, mid)
