# %% [markdown]
# # MetaEns: which outlier detectors to trust on a new, unlabelled data set?
#
# `statcore.outliers.MetaEns` (Phan, Vu, Kieu, Ha Xuan, Yang & Jensen, ICML 2026) learns from
# labelled benchmark tables how much the average precision (AP) of a mean ensemble of
# min-max normalised detector scores rises when one more detector joins it, using only
# label-free statistics of the score matrix (63 features: correlations, top-10% Jaccard
# overlaps, tail disagreement, pseudo-AP against a partner's top set, ...). On a new data set
# it starts from a primary detector chosen by similarity to the meta-data sets and adds
# partners greedily: predicted gain, less a family risk prior, times a diversity discount
# 1 / (1 + beta max Jaccard), stopping when nothing is predicted to help.
#
# The shipped score tables: 40 PyOD detectors (ABOD, COF, HBOS, IForest, kNN, LODA, LOF,
# OCSVM; 5 settings each) on 28 ADBench tables, at most 800 rows each
# (`data/outliers/README.md`).

# %%
import matplotlib.pyplot as plt
import numpy as np

from statcore.outliers import MetaEns, load_score_tables

tables, detectors = load_score_tables()
print(len(tables), "tables,", len(detectors), "detectors:", ", ".join(detectors[::5]), "...")

# %% [markdown]
# ## Leave one data set out
# Each table in turn is held out; the gain model, the rollout policy that generates its
# training rows, the family prior, the partner ranking and the primary selector are all
# refitted on the other 27 (the authors' released code lets the held-out table into the
# rollout policy and the partner ranking; `benchmarks/bench_outliers.py` measures that
# leak). The held-out table is then scored by MetaEns and the baselines: the mega-ensemble
# of all 40 detectors, the best single detector on average, ELECT-style top-1 and top-k (k =
# MetaEns's size there) and random ensembles of MetaEns's size. Fewer trees than the paper's
# 500 / 800 keep this under a minute.

# %%
lodo = MetaEns(detectors).lodo(tables, n_estimators=(30, 30), n_random=5, random_state=0)
lodo.tidy()

# %% [markdown]
# `difference` is MetaEns minus the row's method, with a paired t interval over the 28
# tables. The headline comparison, MetaEns against the mega-ensemble:

# %%
d = lodo.paired_difference("MetaEns", "mega-ensemble")
size = lodo.table.query("method == 'MetaEns'")["size"]
print(
    f"mean AP difference {d['estimate']:+.4f}, 95% CI [{d['conf_low']:+.4f}, "
    f"{d['conf_high']:+.4f}], p = {d['p_value']:.3f}; mean ensemble size {size.mean():.2f}"
)

# %%
wide = lodo.wide()
diff = (wide["MetaEns"] - wide["mega-ensemble"]).sort_values()
fig, ax = plt.subplots(figsize=(7, 5))
ax.barh(diff.index, diff.to_numpy(), color=np.where(diff > 0, "tab:blue", "tab:red"))
ax.axvline(0, color="k", lw=0.8)
ax.set_xlabel("AP(MetaEns) - AP(mega-ensemble), held-out table")
plt.show()

# %% [markdown]
# ## One selection, step by step
# Meta-train on every table but Pima and pick Pima's ensemble from its score matrix alone;
# the labels only grade the choice afterwards.

# %%
train = {name: v for name, v in tables.items() if name != "29_Pima"}
fit = MetaEns(detectors).fit(train, n_estimators=(30, 30), random_state=0)
scores, y = tables["29_Pima"]
sel = fit.select(scores=scores)
print(sel)
sel.steps

# %%
sel.evaluate(y)

# %% [markdown]
# The family risk prior (pi_f = max(0, -10th percentile of the marginal gains of family f's
# candidates in the training rollouts); multiplied by `penalty` = 0.2 from the second partner
# on):

# %%
fit.tidy()
