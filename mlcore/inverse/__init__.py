"""Zero-shot inverse problems: the Lottery Prior (randomized neural compression) and baselines.

- :class:`LotteryPriorSolver` / :class:`LotteryPriorResult`: fit compressible random networks
  to one measurement ``y = A(x) + noise``; :func:`deep_image_prior`: the same without the rate
  and complexity terms.
- Building blocks: :class:`MaskedRandomConv` (frozen random weights, learned binary mask),
  :class:`RandomSynthesis`, :class:`LatentPyramid`, :class:`AutoregressiveEntropyModel` (the
  default rate model) and :class:`FactorizedEntropyModel`.
- Forward operators (replaceable ``nn.Module``\\ s): :class:`Identity` (denoising),
  :class:`Downsample` (blur + decimation: super-resolution), :class:`PixelMask` (inpainting).
- Baselines: :func:`tv_reconstruct` (any operator), :func:`bicubic_upsample`, and
  scikit-image's :func:`inpaint_biharmonic` and :func:`nl_means` where installed;
  :func:`psnr`, :func:`estimate_noise_sigma`.
"""

from mlcore.inverse.baselines import (
    bicubic_upsample,
    inpaint_biharmonic,
    nl_means,
    total_variation,
    tv_reconstruct,
)
from mlcore.inverse.lottery_prior import (
    LotteryPriorResult,
    LotteryPriorSolver,
    deep_image_prior,
    estimate_noise_sigma,
    psnr,
)
from mlcore.inverse.networks import (
    AutoregressiveEntropyModel,
    FactorizedEntropyModel,
    LatentPyramid,
    MaskedRandomConv,
    RandomSynthesis,
)
from mlcore.inverse.operators import (
    Downsample,
    ForwardOperator,
    Identity,
    PixelMask,
    random_pixel_mask,
)

__all__ = [
    "AutoregressiveEntropyModel",
    "Downsample",
    "FactorizedEntropyModel",
    "ForwardOperator",
    "Identity",
    "LatentPyramid",
    "LotteryPriorResult",
    "LotteryPriorSolver",
    "MaskedRandomConv",
    "PixelMask",
    "RandomSynthesis",
    "bicubic_upsample",
    "deep_image_prior",
    "estimate_noise_sigma",
    "inpaint_biharmonic",
    "nl_means",
    "psnr",
    "random_pixel_mask",
    "total_variation",
    "tv_reconstruct",
]
