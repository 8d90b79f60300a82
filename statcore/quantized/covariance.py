"""``QuantizedCovariance``: the scatter matrix of elliptical data seen through a quantizer.

The box ECM it runs is ``fit_boxes``, shared with multivariate
``QuantizedNVMM`` fits.
"""

from __future__ import annotations

import numpy as np

from statcore.quantized._common import MEAN_OPTIONS
from statcore.quantized.model import QuantizedNVMM
from statcore.quantized.quantizer import check_quantizer
from statcore.validation import check_option


class QuantizedCovariance(QuantizedNVMM):
    """Scatter matrix (and t degrees of freedom) of zero-mean elliptical data seen through a
    coordinate-wise quantizer: ``x_i ~ N_d(0, Sigma)`` or ``t_d(0, Sigma, nu)``, ``y_i = Q(x_i)``.

    The ECM's scatter update is ``Sigma = n^-1 sum_i E[U X X' | box_i]``. Distinct boxes are
    computed once (at b bits there are at most ``2^(b d)``).

    Parameters
    ----------
    codes : array_like of int, shape (n, d)
        Codes of :class:`Quantizer` ``quantizer``.
    quantizer : Quantizer
    family : {"gaussian", "t"}
    dither : array_like, optional
        Known dither added before quantization.
    mean : {"zero", "free"}
        Hold the location at zero (the covariance task) or estimate it too.
    names : sequence of str, optional
        Labels of the coordinates (default: a DataFrame's column labels, else 0, 1, ...).

    References
    ----------
    Inference from quantized data under the normal variance-mean mixture (NVMM) framework
    (ICML 2026).
    """

    method_name = "Quantized covariance"

    def __init__(
        self,
        codes,
        quantizer,
        *,
        family: str = "gaussian",
        dither=None,
        mean: str = "zero",
        names=None,
    ):
        self.mean = check_option(mean, name="mean", options=MEAN_OPTIONS)
        if names is None and hasattr(codes, "columns"):
            names = [str(c) for c in codes.columns]
        lower, upper = check_quantizer(quantizer).cells(codes, dither)
        if np.ndim(lower) != 2 or np.shape(lower)[1] < 2:
            raise ValueError("`codes` must be an (n, d) array with d >= 2")
        super().__init__(lower, upper, family=family, names=names, _dithered=dither is not None)

    @classmethod
    def from_codes(cls, codes, quantizer, **kwargs):
        """As the constructor (codes and their quantizer are what it takes); with it,
        ``QuantizedCovariance.from_formula("~ x1 + x2 + x3", data, quantizer=q)`` fits the
        columns a one-sided formula names, their labels naming the parameters."""
        return cls(codes, quantizer, **kwargs)

    def _repr_spec(self) -> str:
        return f"{super()._repr_spec()}, mean={self.mean!r}"

    def _model_fix(self) -> dict:
        """The location is held at zero unless ``mean="free"``."""
        return {"mu": np.zeros(self.n_dims)} if self.mean == "zero" else {}
