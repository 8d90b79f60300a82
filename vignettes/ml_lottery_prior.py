# %% [markdown]
# # The Lottery Prior: zero-shot inverse problems by compressing with random networks
#
# The Lottery Prior (Wu, You, Dragotti & Gündüz, ICML 2026) solves denoising, super-resolution
# and inpainting with no training data and no pretrained weights. Each estimate is the decode
# of a *compressed code*: a synthesis network of frozen random weights (regenerated from a
# seed), of which only a binary mask is learned (the "winning ticket", as in LotteryCodec), fed
# by quantised multi-resolution latents whose code length is priced by an auto-regressive
# entropy model (LotteryCodec's context model: each latent's Laplace is predicted from its
# already-decoded neighbours). The fit minimises
#
# $$\|A(g_{W_0\odot\tau}(Q(z))) - y\|^2/m + \lambda_R\, R(Q(z))/n + \lambda_C\, C(\tau),$$
#
# so the rate-distortion trade-off is the regulariser, and different seeds give different
# implicit priors whose decodes are averaged.
#
# Only the abstract, project page and the lineage code (LotteryCodec, ZS-NCD) were read: the
# objective with a forward operator, the density penalty, the rate weight's tie to the noise
# level, the smaller entropy-model context and the plain ensemble average are reconstructions
# (marked "Fidelity: reconstruction" in the docstrings). Images are 64 x 64
# crops of scikit-image's bundled images so that this runs in about a minute on one CPU core;
# set `FULL = True` (a GPU helps) for 256 x 256 images, four seeds and longer fits.

# %%
import time

import matplotlib.pyplot as plt
import pandas as pd
import torch
from skimage import color, data

from mlcore.inverse import (
    Downsample,
    LotteryPriorSolver,
    PixelMask,
    bicubic_upsample,
    deep_image_prior,
    inpaint_biharmonic,
    nl_means,
    psnr,
    random_pixel_mask,
    tv_reconstruct,
)

torch.set_num_threads(1)
FULL = False
SIZE, SEEDS, STEPS = (256, 4, 3000) if FULL else (64, 2, 600)
SIGMA = 25 / 255
device = "cuda" if FULL and torch.cuda.is_available() else "cpu"


def crop(name, n=SIZE):
    """A centred n x n grey crop of a scikit-image test image, in [0, 1]."""
    img = getattr(data, name)()
    img = color.rgb2gray(img) if img.ndim == 3 else img / 255.0
    h, w = img.shape
    top, left = (h - n) // 2, (w - n) // 2
    return torch.tensor(img[top : top + n, left : left + n], dtype=torch.float32, device=device)


# %% [markdown]
# ## Denoising at σ = 25/255
# The Lottery Prior (λ_R = σ², σ estimated from the image; never below ZS-NCD's shipped
# λ = 150/255² ≈ 2.3e-3) against total variation (scikit-image's
# weight 0.08, minimised by our own TV solver, which takes any forward operator), non-local
# means and the same networks without the rate term (deep image prior), all at the same
# budget. One row per image and method; the members' PSNRs come next.

# %%
names = (
    ["camera", "astronaut", "coins", "moon", "coffee"] if FULL else ["camera", "astronaut", "coins"]
)
rows, member_rows, results = [], [], {}
start = time.perf_counter()
for name in names:
    x = crop(name)
    y = x + SIGMA * torch.randn(x.shape, generator=torch.Generator().manual_seed(0)).to(device)
    lottery = LotteryPriorSolver(n_seeds=SEEDS, steps=STEPS).fit(
        y, x_true=x, random_state=0, log_every=25
    )
    results[name] = lottery
    rows.append(
        {
            "image": name,
            "noisy": psnr(y, x),
            "TV": psnr(tv_reconstruct(y, weight=0.08), x),
            "NL-means": psnr(nl_means(y.cpu(), sigma=SIGMA), x),
            "Lottery Prior (ensemble)": lottery.psnr,
            "Lottery Prior (members' mean)": lottery.member_psnr.mean(),
        }
    )
    member_rows += [{"image": name, **r} for r in lottery.per_member().to_dict("records")]
denoise = pd.DataFrame(rows).set_index("image")
denoise.loc["mean"] = denoise.mean()
print(f"{time.perf_counter() - start:.0f} s")
denoise.round(2)

# %%
pd.DataFrame(member_rows)[
    ["image", "member", "psnr", "peak_psnr", "peak_step", "bpp", "density"]
].round(3)

# %% [markdown]
# ## No early stopping needed, unlike DIP
# The same network fitted without the rate and complexity terms (deep image prior) peaks early
# and then fits the noise; the rate-regularised fit ends near its best PSNR.

# %%
x = crop("camera")
y = x + SIGMA * torch.randn(x.shape, generator=torch.Generator().manual_seed(0)).to(device)
dip = deep_image_prior(n_seeds=1, steps=STEPS).fit(y, x_true=x, random_state=0, log_every=25)
fig, ax = plt.subplots(figsize=(6, 3.5))
for member, rows_m in results["camera"].history.groupby("member"):
    ax.plot(rows_m["step"], rows_m["psnr"], label=f"Lottery Prior, seed {member}")
ax.plot(dip.history["step"], dip.history["psnr"], color="black", label="deep image prior")
ax.set_xlabel("step")
ax.set_ylabel("PSNR (dB)")
ax.legend()
plt.show()
peak = dip.per_member().iloc[0]
print(
    f"DIP: peak {peak['peak_psnr']:.2f} dB at step {peak['peak_step']}, final {peak['psnr']:.2f} dB"
)
print(results["camera"].per_member()[["psnr", "peak_psnr", "peak_step"]].round(2))

# %% [markdown]
# ## Inpainting (50 % of pixels missing) and 4x super-resolution
# Operators are modules: `PixelMask(mask)` observes the masked pixels, `Downsample(4)` blurs and
# decimates. Baselines: scikit-image's biharmonic inpainting, bicubic interpolation, and our TV
# with the same operator. The inpainting measurements are noiseless (`noise_sigma=0`), so the
# rate weight sits at its floor, ZS-NCD's λ: without a rate term nothing would choose among the
# many images that agree on the observed pixels.

# %%
x = crop("camera")
mask = random_pixel_mask(x.shape, 0.5, random_state=0).to(device)
op = PixelMask(mask)
y = op(x[None])[0]
inpaint = LotteryPriorSolver(op, n_seeds=1, steps=STEPS, noise_sigma=0.0).fit(
    y, x_true=x, random_state=0
)
sr_op = Downsample(4)
y_sr = sr_op(x[None])[0] + 0.01 * torch.randn(
    SIZE // 4, SIZE // 4, generator=torch.Generator().manual_seed(0)
).to(device)
sr = LotteryPriorSolver(sr_op, n_seeds=1, steps=STEPS, noise_sigma=0.01).fit(
    y_sr, x_true=x, random_state=0
)
pd.DataFrame(
    {
        "Lottery Prior": [inpaint.psnr, sr.psnr],
        "TV (same operator)": [
            psnr(tv_reconstruct(y, op, weight=0.01), x),
            psnr(tv_reconstruct(y_sr, sr_op, weight=0.01), x),
        ],
        "classical": [
            psnr(inpaint_biharmonic(y.cpu(), mask.cpu()), x),
            psnr(bicubic_upsample(y_sr, 4), x),
        ],
    },
    index=[
        "inpainting, 50 % missing (classical: biharmonic)",
        "4x SR, noise 0.01 (classical: bicubic)",
    ],
).round(2)

# %%
fig, axes = plt.subplots(1, 4, figsize=(10, 3))
for ax, img, title in zip(
    axes,
    [x, y, inpaint.x_hat, sr.x_hat],
    ["truth", "50 % observed", f"inpainted {inpaint.psnr:.1f} dB", f"4x SR {sr.psnr:.1f} dB"],
    strict=True,
):
    ax.imshow(torch.as_tensor(img).cpu(), cmap="gray", vmin=0, vmax=1)
    ax.set_title(title)
    ax.set_axis_off()
plt.show()

# %% [markdown]
# ## Reading the numbers
# At this size and budget the method beats DIP's final iterate clearly, gains from the seed ensemble
# (+0.6 to +0.8 dB here) and beats bicubic super-resolution by over 4 dB and TV with the same
# operator by 2 dB, but it stays below TV and NL-means on these three denoising crops (26.1 dB mean
# against 27.7 and 28.1) and below biharmonic inpainting (30.8 against 34.5 dB): the bars "at least
# TV" and "at least biharmonic inpainting" are not met here. A longer study (all five images, four
# seeds, 1000 steps) narrowed the gap without closing it: ensemble mean 29.46 dB against TV 29.66
# and NL-means 30.27, ahead of TV on `moon` (34.93 against 34.00) and `coffee` (31.94 against
# 31.12), behind on `camera`, `astronaut` and `coins` by 0.4 to 1.3 dB; inpainting on `camera` 31.9
# dB against biharmonic 34.5. The "no early stopping" property mostly holds (members end 0.1 to 0.3
# dB under their logged peak here), but not always: in that study single members ended up to 1 dB
# under their peak, and a 2000-step fit on a tuning crop lost 2 dB. Members differ a lot (the first
# seed's network is the worst on every image), which is why the ensemble helps. LotteryCodec's
# learned modulation network and learned upsampling, omitted here, are the next candidates; `FULL =
# True` (256 x 256) needs a GPU.
