# %% [markdown]
# # Choosing in-context demonstrations: process-aware coreset selection
#
# `statcore.select.CoresetSelector` picks `budget` examples of an unlabeled pool to annotate
# as few-shot demonstrations, from their embeddings alone (Unsupervised process-aware coreset
# selection for in-context learning, ICML 2026, poster 64776). Each step takes the example
# with the largest local density (representativeness) minus a penalty for its similarity to
# the examples already chosen; the penalty's weight grows as the selection proceeds. The
# paper's constants were not available: the objective here is a **reconstruction** (see the
# class docstring). Baselines run through the same call: facility location (exact greedy),
# Sub-SA's graph cut, vote-k, k-centre greedy and random.

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import TfidfVectorizer

from statcore.select import CoresetSelector

# %% [markdown]
# ## An offline text pool
# Provenance: the pool is generated here, from the word lists below, with a seeded generator
# (no download, no shipped file). Five topics of unequal size, each sentence a template filled
# with topic words and shared filler words, plus 5 % off-topic sentences drawn from all
# topics' words at once: the sparse, peripheral examples that geometry-only selectors favour.

# %%
TOPICS = {
    "sport": "match goal team coach league season striker keeper referee final score",
    "finance": "market stock bond rate inflation bank loan price investor yield dividend",
    "health": "doctor patient vaccine clinic symptom therapy nurse dose trial hospital",
    "weather": "rain storm wind forecast cloud snow temperature sunny humid front",
    "cooking": "recipe oven flour sauce garlic butter simmer bake pepper onion",
}
FILLER = "the a today new report says after before many some very this week".split()
TEMPLATES = [
    "{0} {1} {f} {2} {3}",
    "{f} {0} and {1} {2} {f} {3}",
    "{0} {f} {1} {2} {3} {4}",
]
SIZES = {"sport": 400, "finance": 300, "health": 200, "weather": 150, "cooking": 100}

rng = np.random.default_rng(2026)
texts, topics = [], []
for topic, size in SIZES.items():
    words = TOPICS[topic].split()
    for _ in range(size):
        template = TEMPLATES[rng.integers(len(TEMPLATES))]
        texts.append(template.format(*rng.choice(words, 5), f=rng.choice(FILLER)))
        topics.append(topic)
all_words = " ".join(TOPICS.values()).split()
for _ in range(60):
    texts.append(" ".join(rng.choice(all_words, 6)))
    topics.append("off-topic")
pool = pd.DataFrame(
    {"text": texts, "topic": topics}, index=[f"ex{i:04d}" for i in range(len(texts))]
)
pool["topic"].value_counts()

# %% [markdown]
# ## Embeddings: TF-IDF and a truncated SVD
# Any embedding matrix works (sentence-transformers output in practice); a DataFrame keeps
# its index, so the picks come back as example ids.

# %%
tfidf = TfidfVectorizer().fit_transform(pool["text"])
emb = pd.DataFrame(
    TruncatedSVD(n_components=20, random_state=0).fit_transform(tfidf), index=pool.index
)
selector = CoresetSelector(emb, metric="cosine", n_neighbors=10)
selector

# %% [markdown]
# ## Twelve demonstrations
# The result lists the picks in order with each step's gain, its representativeness and its
# redundancy penalty.

# %%
res = selector.select(12)
res.summary()

# %%
pool.loc[res.selected, ["topic", "text"]]

# %% [markdown]
# The map shows the pool on its first two principal axes with the picks numbered; the gains
# fall as the penalty's weight rises from `balance` to twice that.

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
res.plot("map", ax=axes[0])
res.plot("gains", ax=axes[1])
plt.show()

# %% [markdown]
# ## Against the baselines
# One row per selector: the share of peripheral picks (points in the lowest decile of local
# density, so the pool's share is 10 %), the mean similarity of a point to its nearest pick
# (`coverage_value`) and nearest-pick distances. Sub-SA's graph cut scores representativeness
# by a point's similarity summed over the whole pool, and the off-topic sentences, which mix
# every topic's words, are a little similar to everything: here it spends its budget on them.

# %%
table = selector.compare(12, random_state=0)
table[["method", "peripheral_share", "coverage_value", "nearest_mean", "nearest_max"]]

# %% [markdown]
# How many topics each selector reaches with its 12 picks, and how many off-topic sentences
# it takes:

# %%
rows = []
for method in ["process_aware", "facility_location", "graph_cut", "vote_k", "k_centre", "random"]:
    picked = pool.loc[selector.select(12, method=method, random_state=0).selected, "topic"]
    rows.append(
        {
            "method": method,
            "topics": picked[picked != "off-topic"].nunique(),
            "off_topic": int((picked == "off-topic").sum()),
        }
    )
pd.DataFrame(rows)

# %% [markdown]
# ## The schedule and the penalty
# `schedule="constant"` keeps the weight at `balance`; `penalty="sum"` adds up the
# similarities to all picks, so crowded regions are penalised more and more.

# %%
for schedule, penalty in [("linear", "max"), ("constant", "max"), ("linear", "sum")]:
    r = selector.select(12, schedule=schedule, penalty=penalty)
    print(
        f"{schedule:8s} {penalty:3s} peripheral share {r.peripheral_share:.2f}, "
        f"coverage {r.coverage_value:.3f}"
    )

# %% [markdown]
# ## Three facility-location optimizers, one answer
# The default `optimizer="incremental"` keeps every candidate's gain exact, lowering it only
# by what the last pick's newly covered points take away; Minoux's `"lazy"` greedy
# re-evaluates stale heap tops; `"naive"` re-evaluates every gain at every step. All three
# pick the same points; `n_evaluations` counts the similarity rows each one read.

# %%
fl = {
    opt: selector.select(12, method="facility_location", optimizer=opt)
    for opt in ["incremental", "lazy", "naive"]
}
pd.DataFrame(
    {
        "optimizer": list(fl),
        "same picks as naive": [
            np.array_equal(r.indices, fl["naive"].indices) for r in fl.values()
        ],
        "rows read": [r.n_evaluations for r in fl.values()],
    }
)
