# %% [markdown]
# # Disagreement-guided token intervention: a reasoner corrects a few decision tokens
#
# Shen, Sheng, Chen, Zhang and Wang ("Reasoning can be restored by correcting a few decision
# tokens", arXiv 2605.16874, ICML 2026) compare a base language model with a stronger reasoning
# model token by token. The disagreement between their next-token distributions is sparse: it
# sits on a few early "planning" tokens where the base is uncertain. Their decoding scheme lets
# the base generate and hands single tokens to the reasoner only where the two disagree most,
# under a small budget. `mlcore.decoding.intervene_generate` implements that loop for any two
# causal language models sharing a vocabulary (Hugging Face models with KV caches, or plain
# modules mapping ids to logits). Only the paper's abstract was readable: the divergence
# (KL(p_R ‖ p_B) by default), the thresholds and the budget rule are our reconstruction.
#
# No language model weights can be downloaded here, so two tiny transformers are trained on a
# "plan, then execute" task. The prompt `[BOS, a, b, SEP]` asks for a plan token P_p with
# p = (a + b) mod 3, then the progression x_k = (a + k (p + 1)) mod 10 for k = 1..8, then EOS.
# The reasoner learns from clean data; the base sees the shortcut plan p = a mod 3 in 60 % of
# its examples (executed correctly), so it executes well and decides badly.

# %%
import matplotlib.pyplot as plt
import numpy as np
import torch

from mlcore import seed_everything
from mlcore.decoding import intervene_generate
from mlcore.decoding.simulate import EOS, N_NEW, plan_execute_task, train_plan_execute_model

torch.set_num_threads(1)
seed_everything(0)
NEW = N_NEW
base = train_plan_execute_model(0.6, random_state=0)
reasoner = train_plan_execute_model(0.0, random_state=1)
prompts, answers = plan_execute_task()


def accuracy(tokens):
    return float((torch.as_tensor(tokens) == answers).all(1).float().mean())


# %% [markdown]
# ## Accuracy against the budget
#
# Budget 0 is the base's own greedy decoding; "no limit" hands over every step whose KL exceeds
# the threshold (0.5 nats). The reasoner alone is the ceiling.

# %%
rows = []
for budget in (0, 1, 2, None):
    res = intervene_generate(base, reasoner, prompts, budget=budget, max_new_tokens=NEW)
    rows.append((budget, accuracy(res.tokens), res.intervention_rate))
alone = intervene_generate(reasoner, base, prompts, budget=0, max_new_tokens=NEW)
for budget, acc, rate in rows:
    print(f"budget {budget!s:>5}: accuracy {acc:.2f}, reasoner tokens {rate:.1%}")
print(f"reasoner alone: accuracy {accuracy(alone.tokens):.2f}")

# %% [markdown]
# One reasoner token per answer (a tenth of the tokens, fewer in practice since most prompts
# never cross the threshold) recovers the reasoner's accuracy. The same budget spent at a random
# position does not:

# %%
where = torch.randint(0, NEW, (100,), generator=torch.Generator().manual_seed(0))
seq = prompts
with torch.no_grad():
    for t in range(NEW):
        logits = torch.where((where == t)[:, None], reasoner(seq)[:, -1], base(seq)[:, -1])
        seq = torch.cat([seq, logits.argmax(-1, keepdim=True)], 1)
print(f"one reasoner token at a random position: accuracy {accuracy(seq[:, 4:]):.2f}")

# %% [markdown]
# ## Where the two models disagree
#
# The disagreement trace of one prompt whose shortcut plan is wrong, and the positions of all
# interventions: everything happens on the first generated token, the plan.

# %%
res = intervene_generate(base, reasoner, prompts, budget=1, max_new_tokens=NEW, eos_token_id=EOS)
print(res.summary().as_text(max_rows=8))
wrong = int(np.flatnonzero(res.n_changed)[0])
fig, axes = plt.subplots(1, 2, figsize=(11, 3.6), layout="constrained")
res.plot("trace", ax=axes[0], sequence=wrong)
res.plot("positions", ax=axes[1])
plt.show()

# %% [markdown]
# The paper observes that high disagreement coincides with high base uncertainty. Here too: the
# base's entropy at the intervened steps against the rest.

# %%
tidy = res.tidy()
print(tidy.groupby("intervened")[["disagreement", "base_entropy"]].mean())

# %% [markdown]
# ## Other measures and sampling
#
# Jensen–Shannon divergence and top-1 mismatch give the same picture here. The base's entropy
# alone is a cheaper trigger (the reasoner runs only where it fires); with sampling
# (temperature 0.7) the base keeps its diversity on the execution tokens and the reasoner still
# fixes the plan.

# %%
for measure, threshold in (("js", 0.1), ("top1", 0.5), ("entropy", 0.5)):
    r = intervene_generate(
        base,
        reasoner,
        prompts,
        budget=1,
        disagreement=measure,
        threshold=threshold,
        max_new_tokens=NEW,
    )
    print(
        f"{measure}: accuracy {accuracy(r.tokens):.2f}, rate {r.intervention_rate:.1%}, "
        f"reasoner forward passes {r.n_reasoner_calls} of {r.n_forward}"
    )
for budget in (0, 1):
    r = intervene_generate(
        base,
        reasoner,
        prompts,
        budget=budget,
        max_new_tokens=NEW,
        do_sample=True,
        temperature=0.7,
        random_state=0,
    )
    print(f"sampled, budget {budget}: accuracy {accuracy(r.tokens):.2f}")
