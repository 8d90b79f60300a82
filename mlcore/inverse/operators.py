"""Forward operators of inverse problems: ``y = A(x) + noise``, as replaceable ``nn.Module``\\ s.

Every operator maps a signal batch ``(batch, channels, height, width)`` to measurements, and says
which signal shape a measurement shape came from (:meth:`ForwardOperator.signal_shape`), so that a
solver knows what to reconstruct. Any ``nn.Module`` with a ``forward`` does as an operator; one
without ``signal_shape`` needs the solver's ``signal_shape`` argument.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from mlcore._checks import check_tensor
from statcore.validation import check_positive, check_positive_int, check_random_state


class ForwardOperator(nn.Module):
    """Base of the operators here: ``forward(x) -> y`` and the shape bookkeeping.

    Attributes
    ----------
    image_measurements : bool
        The measurements are an image on a regular grid, so their noise level can be estimated
        from them (:func:`mlcore.inverse.estimate_noise_sigma`).
    """

    image_measurements: bool = True

    def signal_shape(self, measurement_shape: tuple[int, ...]) -> tuple[int, ...]:
        """The ``(..., height, width)`` shape of the signal behind measurements of this shape."""
        return tuple(measurement_shape)

    def n_measurements(self, measurement_shape: tuple[int, ...]) -> int:
        """How many measured values a measurement tensor of this shape holds."""
        return math.prod(measurement_shape)


class Identity(ForwardOperator):
    """Denoising: the signal is measured directly, ``y = x + noise``."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


def gaussian_kernel(sigma: float, radius: int | None = None) -> torch.Tensor:
    """A normalised 1-D Gaussian kernel of standard deviation ``sigma`` (pixels)."""
    sigma = check_positive(sigma, name="sigma")
    radius = max(1, math.ceil(3 * sigma)) if radius is None else radius
    t = torch.arange(-radius, radius + 1, dtype=torch.float64)
    k = torch.exp(-0.5 * (t / sigma) ** 2)
    return k / k.sum()


class Downsample(ForwardOperator):
    """Super-resolution: Gaussian blur (anti-aliasing), then keep every ``factor``-th pixel.

    Parameters
    ----------
    factor : int
        The decimation factor along each axis (4 for 4x super-resolution).
    blur : float, optional
        Standard deviation of the Gaussian blur in high-resolution pixels; default
        ``factor / 2`` (a common anti-aliasing choice). ``0`` decimates without blur.

    Notes
    -----
    The blur pads by reflection about the edge pixel (torch's ``"reflect"``), so the operator
    equals ``scipy.ndimage.gaussian_filter(x, blur, mode="mirror", truncate=3)`` followed by
    ``[::factor, ::factor]``.
    """

    def __init__(self, factor: int, blur: float | None = None):
        super().__init__()
        self.factor = check_positive_int(factor, name="factor")
        self.blur = (
            self.factor / 2 if blur is None else check_positive(blur, name="blur", strict=False)
        )
        kernel = gaussian_kernel(self.blur) if self.blur > 0 else torch.ones(1, dtype=torch.float64)
        self.register_buffer("kernel", kernel.float(), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[-2] % self.factor or x.shape[-1] % self.factor:
            raise ValueError(
                f"the signal's height and width must be multiples of `factor`={self.factor}; "
                f"got shape {tuple(x.shape)}"
            )
        lead, (h, w) = x.shape[:-2], x.shape[-2:]
        z = x.reshape(-1, 1, h, w)
        k = self.kernel.to(dtype=x.dtype, device=x.device)
        r = (k.numel() - 1) // 2
        if r:
            z = F.conv2d(F.pad(z, (r, r, 0, 0), mode="reflect"), k.view(1, 1, 1, -1))
            z = F.conv2d(F.pad(z, (0, 0, r, r), mode="reflect"), k.view(1, 1, -1, 1))
        z = z[..., :: self.factor, :: self.factor]
        return z.reshape(*lead, h // self.factor, w // self.factor)

    def signal_shape(self, measurement_shape):
        *lead, h, w = measurement_shape
        return (*lead, h * self.factor, w * self.factor)

    def extra_repr(self) -> str:
        return f"factor={self.factor}, blur={self.blur:g}"


class PixelMask(ForwardOperator):
    """Inpainting: only the pixels where ``mask`` is True are observed.

    The measurements are the full image with the missing pixels set to 0 (so a user's holed image
    is a valid ``y``); only the observed pixels count in a data-fit term.

    Parameters
    ----------
    mask : Tensor of bool, shape (height, width)
        True where the pixel is observed; at least one pixel must be.

    See Also
    --------
    random_pixel_mask : a mask keeping each pixel with a given probability.
    """

    image_measurements = False

    def __init__(self, mask):
        super().__init__()
        check_tensor(mask, name="mask", ndim=2, nonempty=True)
        if mask.dtype != torch.bool:
            raise TypeError(f"`mask` must be a bool tensor; got dtype {mask.dtype}")
        if not bool(mask.any()):
            raise ValueError(
                f"`mask` must observe at least one pixel; got an all-False mask of shape "
                f"{tuple(mask.shape)}"
            )
        self.register_buffer("mask", mask.clone(), persistent=False)

    @property
    def observed_fraction(self) -> float:
        """The fraction of observed pixels."""
        return float(self.mask.float().mean())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if tuple(x.shape[-2:]) != tuple(self.mask.shape):
            raise ValueError(
                f"the signal's last two axes must match the mask's shape {tuple(self.mask.shape)}; "
                f"got shape {tuple(x.shape)}"
            )
        return x * self.mask.to(device=x.device, dtype=x.dtype)

    def n_measurements(self, measurement_shape):
        per_image = math.prod(measurement_shape[:-2])
        return per_image * int(self.mask.sum())


def random_pixel_mask(shape, keep: float, *, random_state=None) -> torch.Tensor:
    """A bool mask of ``shape`` (height, width) keeping each pixel with probability ``keep``.

    ``random_state``: None, int or numpy Generator.
    """
    keep = check_positive(keep, name="keep")
    if keep > 1:
        raise ValueError(f"`keep` must lie in (0, 1]; got {keep!r}")
    rng = check_random_state(random_state)
    h, w = (check_positive_int(s, name="shape") for s in shape)
    return torch.from_numpy(rng.random((h, w)) < keep)
