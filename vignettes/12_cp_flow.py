# %% [markdown]
# # Gradient flow of CP tensor models: series, regimes and explicit solutions
#
# `statcore.theory`'s CP gradient-flow tools follow Yarotsky, Golikov and Gusev (2026,
# arXiv:2602.04548):
# gradient flow on a rank-`H` CP model `W = alpha sum_h u_h^(1) (x) ... (x) u_h^(nu)` of an
# order-`nu` target `T`, loss `L = ||W - T||^2 / 2`, Gaussian initialisation of scale `sigma`.
# The paper expands `L(t)` as a power series, reads learning regimes off its large-size limit and
# sums it, in some regimes, through a first-order PDE solved by characteristics. Here every
# theory curve is set against a simulation over seeds. Only the paper's abstract and first page
# were available: the regime map and the explicit solutions below are derived for statcore
# (see the class docstring's Fidelity section), not copied from the paper.

# %%
import matplotlib.pyplot as plt
import numpy as np

from statcore.theory import CPGradientFlow

# %% [markdown]
# ## The regime map
# Sizes scale as powers of one large `N`: `p ~ N^a_p`, `H ~ N^a_H`, `sigma ~ N^a_sigma`,
# `alpha ~ N^a_alpha`. `regime` compares the exponents of the initial output, the target, the
# tangent-kernel rate and the parameter movement a linearised fit would need.

# %%
rays = {
    "NTK: H ~ N, alpha = H^-1/2": (CPGradientFlow(3, 4, 64), {"rank": 1, "output": -0.5}),
    "large output: alpha = N^1/2 H^-1/2": (CPGradientFlow(3, 4, 64), {"rank": 1, "output": 0}),
    "mean field, p fixed": (
        CPGradientFlow(2, 4, 64, symmetric=True),
        {"rank": 1, "output": -1},
    ),
    "mean field, p ~ N, H ~ N^1/2": (
        CPGradientFlow(2, 4, 64, symmetric=True),
        {"dim": 1, "rank": 0.5, "output": -0.5},
    ),
}
for name, (flow, scaling) in rays.items():
    row = flow.regime(scaling)
    print(f"{name:>36}: {row['regime']:<32} movement exponent {row['movement']:+.2f}")

# %% [markdown]
# ## The exact power series of L(t)
# The vector field is polynomial, so the series of `u(t)` and `L(t)` follow by Cauchy products
# to any order. Its first coefficient is `-||grad L||^2`; truncated series track the simulated
# flow inside their radius of convergence.

# %%
flow = CPGradientFlow(3, 4, 16, target="modular")
tay = flow.taylor(12, n_seeds=1, random_state=0)
print("L'(0) =", tay.coefficients[0, 1], " -||grad L||^2 =", -tay.grad_norm2[0])
t = np.linspace(0, 0.15, 61)
sim = flow.simulate(t, n_seeds=1, random_state=0, tol=1e-12)
fig, ax = plt.subplots(figsize=(6.4, 4.0))
ax.plot(t, sim.loss[0], "k", lw=2, label="simulated flow")
for order in (2, 4, 8, 12):
    ax.plot(t, flow.taylor(order, random_state=0).evaluate(t)[0], "--", label=f"order {order}")
ax.set_ylim(0, 1.5 * sim.loss[0, 0])
ax.set_xlabel("t")
ax.set_ylabel("L(t)")
ax.legend(frameon=False)
plt.show()

# %% [markdown]
# ## NTK limit: L(t) -> L(0) exp(-2 nu t)
# Non-symmetric model, `alpha = H^-1/2`, `sigma = 1`: the mean tangent kernel is `nu I`, so the
# loss decays as `exp(-2 nu t)` once `H` is large against `p^(nu-1)`. The maximal relative error
# on `t <= 1` shrinks with `H` (the method notes measured 3.8 / 0.40 / 0.064 at
# H = 64 / 1024 / 8192).

# %%
t = np.linspace(0, 1, 21)
fig, ax = plt.subplots(figsize=(6.4, 4.0))
for i, H in enumerate((64, 1024, 8192)):
    res = CPGradientFlow(3, 4, H).simulate(t, n_seeds=6 if H < 8192 else 3, random_state=0)
    print(f"H = {H:>5}: max relative error {res.relative_error().max():.3f}")
    band = res.band("loss")
    ax.fill_between(t, band["seed_low"], band["seed_high"], color=f"C{i}", alpha=0.2, lw=0)
    ax.plot(t, band["mean"], color=f"C{i}", label=f"H = {H}")
ax.plot(t, res.prediction, "k--", label="L(0) exp(-6 t)")
ax.set_yscale("log")
ax.set_xlabel("t")
ax.set_ylabel("loss")
ax.legend(frameon=False)
plt.show()

# %% [markdown]
# The same limit holds for the modular-addition target `T_abc = 1[a + b = c mod p]`:

# %%
res = CPGradientFlow(3, 5, 2048, target="modular").simulate(t, n_seeds=4, random_state=1)
res.plot()
plt.show()
res.glance()

# %% [markdown]
# ## Mean field: a first-order PDE solved by characteristics
# For the symmetric order-2 model with the identity target, `M = alpha U U^T` obeys
# `dM/dt = -4 alpha (M^2 - M)`: each eigenvalue follows a logistic flow, and the eigenvalue
# density `F(x, t)` solves the continuity equation `F_t + v F_x = -v' F`,
# `v(x) = 4 alpha x (1 - x)`, from the Marchenko-Pastur law at `t = 0`. Its characteristics
# give the loss at large size; with `p > H` the `p - H` zero eigenvalues never move and the loss
# stays above `(p - H) / 2` (under-parameterised), with `p < H` it goes to 0 (over-).

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4.0))
for ax, (p, H) in zip(axes, [(48, 96), (96, 48)], strict=True):
    flow = CPGradientFlow(2, p, H, symmetric=True, output_scale="mean_field", init_scale=0.8)
    t = np.linspace(0, 1.5, 16) * H  # the flow's rate is 4 alpha = 4 / H
    res = flow.simulate(t, n_seeds=8, random_state=0)
    limit = flow.characteristics(t)
    band = res.band("loss")
    ax.fill_between(t / H, band["seed_low"], band["seed_high"], alpha=0.25, lw=0)
    ax.plot(t / H, band["mean"], label="simulation, 8 seeds")
    ax.plot(t / H, limit.loss, "k--", label="characteristics (Marchenko-Pastur start)")
    ax.axhline(max(0, p - H) / 2, color="0.5", lw=0.8)
    kind = "over-parameterised: L -> 0" if p < H else "under-parameterised: L >= (p - H) / 2"
    ax.set_title(f"p = {p}, H = {H}, {kind}")
    ax.set_xlabel("t / H")
    ax.set_ylabel("loss")
    ax.legend(frameon=False)
plt.show()

# %% [markdown]
# The characteristics themselves: the eigenvalue density carried towards 1.

# %%
flow = CPGradientFlow(2, 48, 96, symmetric=True, output_scale="mean_field", init_scale=0.8)
times = np.array([0.0, 0.1, 0.25, 0.5]) * flow.rank
sol = flow.characteristics(times).solution
x = np.linspace(0.01, 1.6, 400)
fig, ax = plt.subplots(figsize=(6.4, 4.0))
for i, ti in enumerate(times):
    ax.plot(x, sol.at(x, i), label=f"t / H = {ti / flow.rank:g}")
ax.set_xlabel("eigenvalue of alpha U U^T")
ax.set_ylabel("eigenvalue density F(x, t)")
ax.legend(frameon=False)
plt.show()

# %% [markdown]
# ## Lazy against rich: relative parameter movement
# `||u(t) - u(0)|| / ||u(0)||` at the end of the flow: it falls like `H^-1/2` on the NTK ray and
# stays of order one on the mean-field ray.

# %%
Hs = (64, 256, 1024)
lazy = [
    CPGradientFlow(3, 4, H).simulate([0, 1], n_seeds=3, random_state=0).movement[:, -1].mean()
    for H in Hs
]
rich = [
    CPGradientFlow(2, 4, H, symmetric=True, output_scale="mean_field", init_scale=0.5)
    .simulate(np.array([0, 1]) * H, n_seeds=3, random_state=0)
    .movement[:, -1]
    .mean()
    for H in Hs
]
fig, ax = plt.subplots(figsize=(6.4, 4.0))
ax.loglog(Hs, lazy, "o-", label="NTK ray (nu = 3, alpha = H^-1/2)")
ax.loglog(Hs, rich, "s-", label="mean-field ray (nu = 2, alpha = 1/H)")
ax.set_xlabel("H")
ax.set_ylabel("relative parameter movement")
ax.legend(frameon=False)
plt.show()
