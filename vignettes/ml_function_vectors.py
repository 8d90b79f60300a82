# %% [markdown]
# # Function vectors and how few-shot examples add up
#
# A *function vector* (FV; Todd et al., ICLR 2024) is a direction in a transformer's residual
# stream that carries "the task" of a few-shot prompt: the mean outputs of the few attention
# heads whose patching most restores the task in shuffled prompts, summed through the
# out-projection. Added to a zero-shot prompt, it makes the model do the task.
#
# Wang, Wang, Bakalova and Hahn (ICML 2026) ask how the demonstrations build it: the n-shot FV
# is close to a linear combination of per-demonstration sub-FVs; attention moves toward the
# informative, unambiguous demonstrations; and the gains of context come mostly through the
# query-key routing, not the values. (Only the abstract was available: the decomposition in
# `mlcore.interp` is a reconstruction, documented in its docstrings.)
#
# Here: a 2-layer `TinyTransformer` trained for 300 steps on a toy in-context task family,
# and every step of the analysis with `mlcore.interp.HeadHooks`.

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch

from mlcore import seed_everything
from mlcore.interp import (
    HeadHooks,
    contextual_reweighting,
    extract_function_vector,
    fit_additivity,
    isolated_sub_vectors,
    qk_v_hybrid_patch,
    span_decomposition,
)
from mlcore.nn import TinyTransformer

torch.set_num_threads(1)
seed_everything(0)

# %% [markdown]
# ## The toy tasks
#
# Inputs x are tokens 0-15, outputs tokens 16-47; a prompt is `x1 y1 x2 y2 ... xq` and the
# model must answer yq. Task t maps x to output x + 8t, except that all three tasks map x < 4
# to output x (a demonstration that fits every task) and tasks 0 and 1 agree on 4 <= x < 8.
# So a demonstration's *ambiguity*, the number of tasks it fits, is 1, 2 or 3.

# %%
NX, N_TASKS, VOCAB = 16, 3, 48


def task_output(task, x):
    out = np.where(x < 4, x, x + 8 * task)
    out = np.where((x >= 4) & (x < 8) & (task == 1), x, out)
    return NX + out


def make_prompts(n, shots, rng, task=None, ambiguous=False):
    tasks = rng.integers(0, N_TASKS, n) if task is None else np.full(n, task)
    xs = rng.integers(0, NX, (n, shots + 1))
    xs[:, -1] = rng.integers(8, NX, n)  # queries the tasks answer differently
    if ambiguous:  # every demonstration fits several tasks but one, at a random place
        xs[:, :shots] = rng.integers(0, 8, (n, shots))
        xs[np.arange(n), rng.integers(0, shots, n)] = rng.integers(8, NX, n)
    ys = task_output(tasks[:, None], xs)
    ids = np.empty((n, 2 * shots + 1), dtype=np.int64)
    ids[:, 0 : 2 * shots : 2], ids[:, 1 : 2 * shots : 2] = xs[:, :shots], ys[:, :shots]
    ids[:, -1] = xs[:, -1]
    fits = sum((task_output(t, xs[:, :shots]) == ys[:, :shots]).astype(int) for t in range(3))
    return torch.from_numpy(ids), torch.from_numpy(ys[:, -1]), fits


def spans_of(shots):
    return [(2 * i, 2 * i + 2) for i in range(shots)]


def corrupt(prompts, rng):
    """Random demonstration outputs: the prompt no longer shows a task."""
    out = prompts.clone()
    out[:, 1:-1:2] = torch.from_numpy(rng.integers(NX, VOCAB, out[:, 1:-1:2].shape))
    return out


model = TinyTransformer(VOCAB, 32, 2, 4, pos="rope")
opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
rng = np.random.default_rng(0)
for _step in range(300):
    ids, answers, _ = make_prompts(32, 10, rng)
    full = torch.cat([ids, answers[:, None]], 1)
    logits = model(full[:, :-1])[:, 0::2]  # each input predicts its output
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), full[:, 1::2].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
model.eval()
hooks = HeadHooks(model)
print(f"final training loss {loss.item():.3f}; heads: {hooks.n_layers} layers x {hooks.n_heads}")

# %% [markdown]
# ## The function vector
#
# Per task: mean head activations over 10-shot prompts, each head's average indirect effect
# on corrupted prompts, the top 3 heads, and the FV added after layer 0 of zero-shot prompts.
# The control adds an FV of 3 heads drawn outside the top set.

# %%
rows = []
for task in range(N_TASKS):
    prompts, answers, _ = make_prompts(64, 10, rng, task=task)
    zero, zero_answers, _ = make_prompts(256, 0, rng, task=task)
    fv = extract_function_vector(
        hooks,
        prompts,
        corrupt(prompts, rng),
        answers,
        n_top_heads=3,
        zero_shot=zero,
        zero_shot_answers=zero_answers,
        random_state=task,
    )
    rows.append(fv.accuracy.set_index("condition")["accuracy"].rename(f"task {task}"))
print(pd.DataFrame(rows).round(3))
fv.plot()
plt.show()

# %% [markdown]
# ## Additivity: the n-shot FV from 1-shot sub-FVs
#
# With the top heads of a mixed-task FV, each n-shot prompt's FV is regressed on the FVs of
# its n one-shot prompts (each demonstration alone before the query). The span-attributed
# decomposition (attention weights grouped by demonstration) is exact by construction.

# %%
prompts, answers, _ = make_prompts(96, 10, rng)
heads = extract_function_vector(hooks, prompts, corrupt(prompts, rng), answers, n_top_heads=3).heads
fits = []
for shots in (2, 4, 8):
    prompts, _, _ = make_prompts(64, shots, rng)
    decomp = span_decomposition(hooks, prompts, spans_of(shots), heads)
    additivity = fit_additivity(
        decomp.total, isolated_sub_vectors(hooks, prompts, spans_of(shots), heads)
    )
    fits.append(additivity.glance().assign(n_shots=shots, span_error=decomp.max_error))
print(pd.concat(fits)[["n_shots", "r2", "cos", "baseline_r2", "baseline_cos", "span_error"]])
additivity.plot()
plt.show()

# %% [markdown]
# ## Contextual reweighting: where the last token looks

# %%
prompts, _, ambiguity = make_prompts(128, 8, rng)
reweighting = contextual_reweighting(
    span_decomposition(hooks, prompts, spans_of(8), heads), ambiguity
)
print(reweighting.summary())
reweighting.plot()
plt.show()

# %% [markdown]
# ## QK routing vs values
#
# Hybrid FVs take the attention weights (QK) and the values (V) over the demonstrations either
# from the n-shot run ("context") or from each demonstration's 1-shot run ("isolated"); each is
# scored by the mean probability of the right answer on zero-shot prompts. On the ambiguous
# prompts only one demonstration shows the task.

# %%
tables = []
for kind in ("regular", "ambiguous"):
    for task in range(N_TASKS):
        prompts, _, _ = make_prompts(64, 6, rng, task=task, ambiguous=kind == "ambiguous")
        zero, zero_answers, _ = make_prompts(256, 0, rng, task=task)
        hybrid = qk_v_hybrid_patch(hooks, prompts, spans_of(6), heads, zero, zero_answers)
        tables.append(hybrid.tidy().assign(prompts=kind, task=task))
table = pd.concat(tables).groupby(["prompts", "qk", "v"])[["accuracy", "probability"]].mean()
print(table.round(3))
