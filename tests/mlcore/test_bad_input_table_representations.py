"""Every public entry of mlcore's newer areas refuses bad input with an error naming the
argument (issue 38); the harness and its kinds are in ``tests/_bad_input.py``. The specific
faults the issue names are tested in ``test_bad_input_faults.py``."""

import numpy as np
import torch
from _bad_input import Row, make_table_tests

from mlcore import adapt, analysis, decoding, gzsl, interp, merging, mi, weak
from mlcore.mi.infoatlas import InfoAtlas
from mlcore.nn import TinyTransformer

_rng = np.random.default_rng(0)
_g = torch.Generator().manual_seed(0)


def _t(*shape):
    return torch.randn(*shape, generator=_g)


# ---- mi
XV = _rng.normal(size=24)
YV = XV + 0.5 * _rng.normal(size=24)
Z3 = _t(2, 16, 2)
_ATLAS = InfoAtlas.pretrained()


def _score(z):
    return z[..., 0] * z[..., 1]


# ---- decoding
torch.manual_seed(0)
_BASE, _REASONER = TinyTransformer(12, 16, 1, 2).eval(), TinyTransformer(12, 16, 1, 2).eval()
PROMPT = torch.tensor([[1, 2, 3]])
LOGITS_B, LOGITS_R = _t(3, 6), _t(3, 6)

# ---- adapt
TASK = adapt.entangled_features(3, 4, n_shot=2, n_query=2, random_state=0)
SUP, SUP_Y, TEXT = TASK.support_feats, TASK.support_labels, TASK.text_feats
_FLOW = dict(width=8, n_blocks=1, epochs=1, batch_size=4)
TRAJ = (
    adapt.FlowMatchingAdapter(**_FLOW, random_state=0)
    .fit(SUP, SUP_Y, TEXT)
    .predict(SUP, SUP_Y, steps=2)
    .trajectories
)
TRAJ = np.asarray(TRAJ)
YL = np.asarray(SUP_Y)

# ---- merging
W0, W1, W2 = _t(3, 2), _t(3, 2), _t(3, 2)
HIST = np.array([[0.5, 0.8, 0.92, 0.97], [0.7, 0.95, 0.96, 0.99]])
LORA_A, LORA_B = _t(1, 3), _t(2, 1)
torch.manual_seed(0)
_NET = torch.nn.Linear(3, 2)
XB, YB = _t(6, 3), torch.tensor([0, 1, 0, 1, 1, 0])
SCORES = np.linspace(0.0, 1.0, 6)


def _ce(out, y):
    return torch.nn.functional.cross_entropy(out, y, reduction="none")


# ---- interp
torch.manual_seed(0)
_TT = TinyTransformer(12, 16, 2, 2).eval()
HOOKS = interp.HeadHooks(_TT)
PROMPTS = torch.randint(0, 12, (3, 6), generator=_g)
CORRUPT = torch.randint(0, 12, (3, 6), generator=_g)
ANSWERS = torch.tensor([1, 2, 3])
ZS, ZS_ANS = torch.randint(0, 12, (3, 2), generator=_g), torch.tensor([4, 5, 6])
SPANS, HEADS = [(0, 2), (2, 4)], [(0, 0), (1, 1)]
ACTS = interp.mean_head_activations(HOOKS, PROMPTS)
DECOMP = interp.span_decomposition(HOOKS, PROMPTS, SPANS, HEADS)
TOTAL, SUBS = (
    DECOMP.total.detach().numpy(),
    interp.isolated_sub_vectors(HOOKS, PROMPTS, SPANS, HEADS).detach().numpy(),
)
AMBIG = np.array([[1.0, 2.0], [2.0, 1.0], [1.0, 1.0]])
FV = interp.function_vector(HOOKS, ACTS, HEADS).detach()

# ---- gzsl
SIM = gzsl.simulate_gzsl(6, n_classes=4, n_unseen=2, n_attributes=3, dim=5, random_state=0)
GX, GY, ATTR, MASK = SIM.x, SIM.labels, SIM.attributes, SIM.seen_mask
GZ = torch.as_tensor(GX @ SIM.weights)
PROTOS = torch.as_tensor(ATTR)
GSCORES = np.asarray(gzsl.class_scores(GZ, PROTOS, metric="cosine", scale=10.0))
ETA = np.full(len(GX), 0.6)
SEEN_ROWS = np.isin(GY, np.flatnonzero(MASK))

_CRITIC = dict(hidden=4, batch_size=8, maxiter=3)

# ---- weak
LOGITS_W = _t(6, 3)
CAND = torch.tensor([[1, 0, 1], [0, 1, 0], [1, 1, 0], [0, 0, 1], [1, 0, 0], [0, 1, 1]]).bool()
PRIOR = torch.tensor([0.5, 0.3, 0.2])
SOFT = torch.softmax(_t(6, 3), dim=1)
LABELS_W = np.repeat(np.arange(3), 20)
XW, YW, XWT, YWT = weak.long_tailed_mixture(
    n_classes=3, n_max=20, imbalance_ratio=2.0, n_features=4, n_test_per_class=5, random_state=0
)
SW = weak.partial_label_candidates(YW, 3, q=0.3, random_state=0)

# ---- analysis
torch.manual_seed(0)
_CNN = torch.nn.Sequential(
    torch.nn.Conv2d(1, 2, 3, padding=1), torch.nn.ReLU(), torch.nn.Flatten(),
    torch.nn.Linear(2 * 16 * 16, 3),
).eval()  # fmt: skip
REAL = torch.rand(8, 1, 16, 16, generator=_g)
FAKE = (REAL + 0.1 * torch.rand(8, 1, 16, 16, generator=_g)).clamp(0, 1)
DIGIT_LABELS = np.arange(8) % 3
CURVE = np.array([10.0, 6.0, 3.0, 1.5, 1.0, 0.8, 0.7])


ROWS = {
    "mlcore.mi.mutual_information": Row(
        lambda x=XV, y=YV, method="infoatlas": mi.mutual_information(
            x, y, method=method, model=_ATLAS, n_resamples=0, random_state=0
        ),
        {"x": ("vector", XV), "y": ("vector", YV), "method": ("option", "infoatlas")},
    ),
    "mlcore.mi.independence_test": Row(
        lambda x=XV, y=YV, method="infoatlas", n_resamples=3, random_state=0: (
            mi.independence_test(
                x, y, method=method, n_resamples=n_resamples, model=_ATLAS,
                random_state=random_state,
            )
        ),
        {"x": ("vector", XV), "y": ("vector", YV), "method": ("option", "infoatlas"),
         "n_resamples": ("positive_int", 3), "random_state": ("random_state", 0)},
    ),
    "mlcore.mi.critic_mutual_information": Row(
        lambda x=XV, y=YV, method="mine", hidden=4, batch_size=8, maxiter=3, lr=1e-3, clip=5.0,
        test_size=0.5, alpha=0.05, random_state=0: mi.critic_mutual_information(
            x, y, method=method, hidden=hidden, batch_size=batch_size, maxiter=maxiter, lr=lr,
            clip=clip, test_size=test_size, alpha=alpha, random_state=random_state,
        ),
        {"x": ("vector", XV), "y": ("vector", YV), "method": ("option", "mine"),
         "hidden": ("positive_int", 4), "batch_size": ("positive_int", 8),
         "maxiter": ("positive_int", 3), "lr": ("positive", 1e-3), "clip": ("positive", 5.0),
         "test_size": ("fraction", 0.5), "alpha": ("fraction", 0.05),
         "random_state": ("random_state", 0)},
    ),
    "mlcore.mi.critic_independence_test": Row(
        lambda x=XV, y=YV, method="infonce", n_resamples=3, test_size=0.5, random_state=0: (
            mi.critic_independence_test(
                x, y, method=method, n_resamples=n_resamples, test_size=test_size,
                random_state=random_state, **_CRITIC,
            )
        ),
        {"x": ("vector", XV), "y": ("vector", YV), "method": ("option", "infonce"),
         "n_resamples": ("positive_int", 3), "test_size": ("fraction", 0.5),
         "random_state": ("random_state", 0)},
    ),
    "mlcore.mi.dv_readout": Row(
        lambda z=Z3, m=1, n_permutations=2: mi.dv_readout(
            _score, z, m, n_permutations, torch.Generator().manual_seed(0)
        ),
        {"z": ("tensor", Z3), "m": ("positive_int", 1), "n_permutations": ("positive_int", 2)},
    ),
    "mlcore.mi.gaussian_log_ratio": Row(
        lambda z=Z3, m=1, ridge=1e-3: mi.gaussian_log_ratio(z, m, ridge),
        {"z": ("tensor", Z3), "m": ("positive_int", 1), "ridge": ("positive", 1e-3)},
        skip={("ridge", "positive=0.0"): "ridge 0 is the unregularised fit"},
    ),
    "mlcore.decoding.token_disagreement": Row(
        lambda base_logits=LOGITS_B, reasoner_logits=LOGITS_R, measure="kl": (
            decoding.token_disagreement(base_logits, reasoner_logits, measure)
        ),
        {"base_logits": ("tensor", LOGITS_B), "reasoner_logits": ("tensor", LOGITS_R),
         "measure": ("option", "kl")},
    ),
    "mlcore.decoding.intervene_generate": Row(
        lambda prompt_ids=PROMPT, budget=2, disagreement="kl", max_new_tokens=3, do_sample=True,
        temperature=1.0, eos_token_id=None, use_cache=None, random_state=0: (
            decoding.intervene_generate(
                _BASE, _REASONER, prompt_ids, budget=budget, disagreement=disagreement,
                max_new_tokens=max_new_tokens, do_sample=do_sample, temperature=temperature,
                eos_token_id=eos_token_id, use_cache=use_cache, random_state=random_state,
            )
        ),
        {"prompt_ids": ("tensor", PROMPT), "budget": ("nonneg_int", 2),
         "disagreement": ("option", "kl"), "max_new_tokens": ("positive_int", 3),
         "do_sample": ("bool", True), "temperature": ("positive", 1.0),
         "eos_token_id": ("nonneg_int", 11), "use_cache": ("bool", False),
         "random_state": ("random_state", 0)},
        skip={("use_cache", "bool=None"): "None picks the cache by model kind"},
    ),
    "mlcore.adapt.entangled_features": Row(
        lambda n_classes=3, dim=4, n_shot=2, n_query=2, overlap=1.0, gap=1.0, anisotropy=4.0,
        random_state=0: adapt.entangled_features(
            n_classes, dim, n_shot=n_shot, n_query=n_query, overlap=overlap, gap=gap,
            anisotropy=anisotropy, random_state=random_state,
        ),
        {"n_classes": ("positive_int", 3), "dim": ("positive_int", 4),
         "n_shot": ("positive_int", 2), "n_query": ("positive_int", 2),
         "overlap": ("positive", 1.0), "gap": ("positive", 1.0),
         "anisotropy": ("positive", 4.0), "random_state": ("random_state", 0)},
        skip={("overlap", "positive=0.0"): "no overlap is a legitimate task",
              ("gap", "positive=0.0"): "no modality gap is a legitimate task"},
    ),
    "mlcore.adapt.crossing_pairs": Row(
        lambda trajectories=TRAJ, labels=YL, eps=0.5, scale=1.0: adapt.crossing_pairs(
            trajectories, labels, eps, scale=scale
        ),
        {"trajectories": ("matrix", TRAJ), "labels": ("labels", YL), "eps": ("positive", 0.5),
         "scale": ("positive", 1.0)},
    ),
    "mlcore.adapt.FlowMatchingAdapter": Row(
        lambda image_feats=SUP, labels=SUP_Y, text_feats=TEXT, width=8, n_blocks=1, epochs=1,
        batch_size=4, lr=1e-3, weight_decay=0.01, step_size=0.1, gamma=0.0, random_state=0: (
            adapt.FlowMatchingAdapter(
                width=width, n_blocks=n_blocks, epochs=epochs, batch_size=batch_size, lr=lr,
                weight_decay=weight_decay, step_size=step_size, gamma=gamma,
                random_state=random_state,
            ).fit(image_feats, labels, text_feats)
        ),
        {"image_feats": ("tensor", SUP), "labels": ("labels", SUP_Y),
         "text_feats": ("tensor", TEXT), "width": ("positive_int", 8),
         "n_blocks": ("positive_int", 1), "epochs": ("positive_int", 1),
         "batch_size": ("positive_int", 4), "lr": ("positive", 1e-3),
         "weight_decay": ("positive", 0.01), "step_size": ("positive", 0.1),
         "gamma": ("positive", 0.0), "random_state": ("random_state", 0)},
        skip={("weight_decay", "positive=0.0"): "no weight decay is legitimate",
              ("gamma", "positive=0.0"): "gamma 0 is the deterministic path (the default)"},
    ),
    "mlcore.adapt.HyperbolicFlowMatcher": Row(
        lambda image_feats=SUP, labels=SUP_Y, text_feats=TEXT, curvature=1.0, lam_path=0.1,
        margin=0.5, tau=0.1, align_steps=2, learn_scale=True, random_state=0: (
            adapt.HyperbolicFlowMatcher(
                curvature=curvature, lam_path=lam_path, margin=margin, tau=tau,
                align_steps=align_steps, learn_scale=learn_scale, random_state=random_state,
                **_FLOW,
            ).fit(image_feats, labels, text_feats)
        ),
        {"image_feats": ("tensor", SUP), "labels": ("labels", SUP_Y),
         "text_feats": ("tensor", TEXT), "curvature": ("positive", 1.0),
         "lam_path": ("positive", 0.1), "margin": ("positive", 0.5), "tau": ("positive", 0.1),
         "align_steps": ("nonneg_int", 2), "learn_scale": ("bool", True),
         "random_state": ("random_state", 0)},
        skip={("lam_path", "positive=0.0"): "no path term is legitimate",
              ("margin", "positive=0.0"): "margin 0 is legitimate"},
    ),
    "mlcore.merging.task_vectors": Row(
        lambda base=W0, experts=W1: merging.task_vectors({"w": base}, [{"w": experts}]),
        {"base": ("tensor", W0), "experts": ("tensor", W1)},
    ),
    "mlcore.merging.merge": Row(
        lambda base=W0, experts=W1, method="dare", density=0.5, drop_rate=0.5,
        combine="ties", trim_scope="model", random_state=0: merging.merge(
            {"w": base}, [{"w": experts}, {"w": W2}], method, density=density,
            drop_rate=drop_rate, combine=combine, trim_scope=trim_scope,
            random_state=random_state,
        ),
        {"base": ("tensor", W0), "experts": ("tensor", W1), "method": ("option", "dare"),
         "density": ("unit_interval", 0.5), "drop_rate": ("fraction_or_zero", 0.5),
         "combine": ("option", "ties"), "trim_scope": ("option", "model"),
         "random_state": ("random_state", 0)},
    ),
    "mlcore.merging.lora_task_vector": Row(
        lambda adapter=LORA_A, scaling=0.5: merging.lora_task_vector(
            {"layer.lora_A.weight": adapter, "layer.lora_B.weight": LORA_B}, scaling=scaling
        ),
        {"adapter": ("tensor", LORA_A)},
    ),
    "mlcore.merging.select_stops": Row(
        lambda histories=HIST, criterion="plateau", threshold=0.01, patience=2: (
            merging.select_stops(
                histories, criterion=criterion, threshold=threshold, patience=patience
            )
        ),
        {"histories": ("matrix", HIST), "criterion": ("option", "plateau"),
         "patience": ("positive_int", 2)},
    ),
    "mlcore.merging.late_gradient_share": Row(
        lambda inputs=XB, targets=YB, top_q=0.5, scores=SCORES: merging.late_gradient_share(
            _NET, _ce, inputs, targets, top_q=top_q, scores=scores
        ),
        {"inputs": ("tensor", XB), "targets": ("tensor", YB),
         "top_q": ("fraction_or_one", 0.5), "scores": ("vector", SCORES)},
    ),
    "mlcore.merging.digits_merging_toy": Row(
        lambda random_state=0, n_epochs=1, label_noise=0.1, hidden=4, pretrain_epochs=1,
        lr=0.1: merging.digits_merging_toy(
            random_state, n_epochs=n_epochs, label_noise=label_noise, hidden=hidden,
            pretrain_epochs=pretrain_epochs, lr=lr,
        ),
        {"random_state": ("random_state", 0), "n_epochs": ("positive_int", 1),
         "label_noise": ("unit_interval", 0.1), "hidden": ("positive_int", 4),
         "pretrain_epochs": ("nonneg_int", 1), "lr": ("positive", 0.1)},
    ),
    "mlcore.interp.mean_head_activations": Row(
        lambda prompts=PROMPTS: interp.mean_head_activations(HOOKS, prompts),
        {"prompts": ("tensor", PROMPTS)},
    ),
    "mlcore.interp.indirect_effects": Row(
        lambda corrupted=CORRUPT, answers=ANSWERS, source=ACTS: interp.indirect_effects(
            HOOKS, corrupted, answers, source
        ),
        {"corrupted": ("tensor", CORRUPT), "answers": ("tensor", ANSWERS),
         "source": ("tensor", ACTS)},
    ),
    "mlcore.interp.function_vector": Row(
        lambda activations=ACTS: interp.function_vector(HOOKS, activations, HEADS),
        {"activations": ("tensor", ACTS)},
    ),
    "mlcore.interp.steered_accuracy": Row(
        lambda prompts=ZS, answers=ZS_ANS, vector=FV, layer=0: interp.steered_accuracy(
            HOOKS, prompts, answers, vector, layer=layer
        ),
        {"prompts": ("tensor", ZS), "answers": ("tensor", ZS_ANS), "vector": ("tensor", FV),
         "layer": ("nonneg_int", 0)},
    ),
    "mlcore.interp.extract_function_vector": Row(
        lambda prompts=PROMPTS, corrupted=CORRUPT, answers=ANSWERS, n_top_heads=2, layer=0,
        zero_shot=ZS, zero_shot_answers=ZS_ANS, n_random=1, random_state=0: (
            interp.extract_function_vector(
                HOOKS, prompts, corrupted, answers, n_top_heads=n_top_heads, layer=layer,
                zero_shot=zero_shot, zero_shot_answers=zero_shot_answers, n_random=n_random,
                random_state=random_state,
            )
        ),
        {"prompts": ("tensor", PROMPTS), "corrupted": ("tensor", CORRUPT),
         "answers": ("tensor", ANSWERS), "n_top_heads": ("positive_int", 2),
         "layer": ("nonneg_int", 0), "zero_shot": ("tensor", ZS),
         "zero_shot_answers": ("tensor", ZS_ANS), "n_random": ("positive_int", 1),
         "random_state": ("random_state", 0)},
    ),
    "mlcore.interp.span_decomposition": Row(
        lambda prompts=PROMPTS: interp.span_decomposition(HOOKS, prompts, SPANS, HEADS),
        {"prompts": ("tensor", PROMPTS)},
    ),
    "mlcore.interp.isolated_sub_vectors": Row(
        lambda prompts=PROMPTS: interp.isolated_sub_vectors(HOOKS, prompts, SPANS, HEADS),
        {"prompts": ("tensor", PROMPTS)},
    ),
    "mlcore.interp.fit_additivity": Row(
        lambda total=TOTAL, sub_vectors=SUBS, baseline_beta=0.5: interp.fit_additivity(
            total, sub_vectors, baseline_beta=baseline_beta
        ),
        {"total": ("matrix", TOTAL), "sub_vectors": ("matrix", SUBS),
         "baseline_beta": ("positive", 0.5)},
        skip={("baseline_beta", "positive=0.0"): "a zero baseline weight is legitimate",
              ("baseline_beta", "positive=-1.0"): "a negative baseline weight is legitimate"},
    ),
    "mlcore.interp.contextual_reweighting": Row(
        lambda ambiguity=AMBIG: interp.contextual_reweighting(DECOMP, ambiguity),
        {"ambiguity": ("matrix", AMBIG)},
    ),
    "mlcore.interp.qk_v_hybrid_patch": Row(
        lambda prompts=PROMPTS, zero_shot=ZS, zero_shot_answers=ZS_ANS, layer=0: (
            interp.qk_v_hybrid_patch(
                HOOKS, prompts, SPANS, HEADS, zero_shot, zero_shot_answers, layer=layer
            )
        ),
        {"prompts": ("tensor", PROMPTS), "zero_shot": ("tensor", ZS),
         "zero_shot_answers": ("tensor", ZS_ANS), "layer": ("nonneg_int", 0)},
    ),
    "mlcore.gzsl.simulate_gzsl": Row(
        lambda n_per_class=6, n_classes=4, n_unseen=2, n_attributes=3, dim=5, noise=1.0,
        random_state=0: gzsl.simulate_gzsl(
            n_per_class, n_classes=n_classes, n_unseen=n_unseen, n_attributes=n_attributes,
            dim=dim, noise=noise, random_state=random_state,
        ),
        {"n_per_class": ("positive_int", 6), "n_classes": ("positive_int", 4),
         "n_unseen": ("positive_int", 2), "n_attributes": ("positive_int", 3),
         "dim": ("positive_int", 5), "noise": ("positive", 1.0),
         "random_state": ("random_state", 0)},
        skip={("noise", "positive=0.0"): "noise-free data are legitimate"},
    ),
    "mlcore.gzsl.simulate_pu": Row(
        lambda n=40, c=0.4, dim=3, slope=3.0, random_state=0: gzsl.simulate_pu(
            n, c=c, dim=dim, slope=slope, random_state=random_state
        ),
        {"n": ("positive_int", 40), "c": ("fraction", 0.4), "dim": ("positive_int", 3),
         "random_state": ("random_state", 0)},
    ),
    "mlcore.gzsl.ridge_semantic_map": Row(
        lambda x_train=GX, y_train=GY, attributes=ATTR, x_test=GX, penalty=1.0, n_folds=2,
        random_state=0: gzsl.ridge_semantic_map(
            x_train, y_train, attributes, x_test, penalty=penalty, n_folds=n_folds,
            random_state=random_state,
        ),
        {"x_train": ("matrix", GX), "y_train": ("labels", GY), "attributes": ("matrix", ATTR),
         "x_test": ("matrix", GX), "penalty": ("positive", 1.0),
         "n_folds": ("positive_int", 2), "random_state": ("random_state", 0)},
        skip={("penalty", "positive=0.0"): "penalty 0 is the least-squares map"},
    ),
    "mlcore.gzsl.class_scores": Row(
        lambda z=GZ, prototypes=PROTOS, metric="cosine", scale=10.0: gzsl.class_scores(
            z, prototypes, metric=metric, scale=scale
        ),
        {"z": ("tensor", GZ), "prototypes": ("tensor", PROTOS), "metric": ("option", "cosine"),
         "scale": ("positive", 10.0)},
    ),
    "mlcore.gzsl.stack": Row(
        lambda scores=GSCORES, seen_mask=MASK, gamma=0.5: gzsl.stack(scores, seen_mask, gamma),
        {"scores": ("matrix", GSCORES), "seen_mask": ("bool", MASK),
         "gamma": ("positive", 0.5)},
        skip={("gamma", "positive=0.0"): "gamma 0 is no stacking",
              ("gamma", "positive=-1.0"): "a negative gamma favours the seen classes"},
    ),
    "mlcore.gzsl.pu_gate": Row(
        lambda scores=GSCORES, seen_mask=MASK, eta=ETA: gzsl.pu_gate(scores, seen_mask, eta),
        {"scores": ("matrix", GSCORES), "eta": ("vector", ETA)},
    ),
    "mlcore.gzsl.calibrate_prototypes": Row(
        lambda z=GZ, prototypes=PROTOS, unseen_posterior=1 - ETA, tau=0.3, margin=0.0, k=2.0,
        rounds=1, metric="cosine", scale=10.0, assign="balanced": gzsl.calibrate_prototypes(
            z, prototypes, MASK, unseen_posterior, tau=tau, margin=margin, k=k, rounds=rounds,
            metric=metric, scale=scale, assign=assign,
        ),
        {"z": ("tensor", GZ), "prototypes": ("tensor", PROTOS),
         "unseen_posterior": ("vector", 1 - ETA), "tau": ("unit_interval", 0.3),
         "margin": ("unit_interval", 0.0), "rounds": ("positive_int", 1),
         "metric": ("option", "cosine"), "scale": ("positive", 10.0),
         "assign": ("option", "balanced")},
    ),
    "mlcore.gzsl.CalibratedStacking": Row(
        lambda scores_val=GSCORES, y_val=GY, n_candidates=5, criterion="harmonic": (
            gzsl.CalibratedStacking(n_candidates=n_candidates, criterion=criterion).fit(
                scores_val, y_val, seen_mask=MASK
            )
        ),
        {"scores_val": ("matrix", GSCORES), "y_val": ("labels", GY),
         "n_candidates": ("positive_int", 5), "criterion": ("option", "harmonic")},
    ),
    "mlcore.gzsl.PUFE": Row(
        lambda z_seen_train=GZ[SEEN_ROWS], z_test=GZ, prototypes=PROTOS, tau=0.5, maxiter=5,
        hidden=(4,), random_state=0: gzsl.PUFE(
            hidden=hidden, tau=tau, maxiter=maxiter, tol=1.0, random_state=random_state
        ).fit(z_seen_train, z_test, prototypes=prototypes, seen_mask=MASK, y_test=GY),
        {"z_seen_train": ("tensor", GZ[SEEN_ROWS]), "z_test": ("tensor", GZ),
         "prototypes": ("tensor", PROTOS), "tau": ("unit_interval", 0.5),
         "maxiter": ("positive_int", 5), "random_state": ("random_state", 0)},
    ),
    # ---- weak
    "mlcore.weak.candidate_targets": Row(
        lambda logits=LOGITS_W, candidates=CAND, eps_out=0.0: weak.candidate_targets(
            logits, candidates, eps_out=eps_out
        ),
        {"logits": ("tensor", LOGITS_W), "eps_out": ("fraction_or_zero", 0.0)},
    ),
    "mlcore.weak.logit_adjusted_cross_entropy": Row(
        lambda logits=LOGITS_W, soft_targets=SOFT, prior=PRIOR, tau=1.0: (
            weak.logit_adjusted_cross_entropy(logits, soft_targets, prior, tau=tau)
        ),
        {"logits": ("tensor", LOGITS_W), "soft_targets": ("tensor", SOFT),
         "prior": ("tensor", PRIOR), "tau": ("positive", 1.0)},
        skip={("tau", "positive=0.0"): "tau = 0 is the unadjusted cross-entropy"},
    ),
    "mlcore.weak.long_tailed_counts": Row(
        lambda n_max=50, n_classes=4, imbalance_ratio=10.0: weak.long_tailed_counts(
            n_max, n_classes, imbalance_ratio
        ),
        {"n_max": ("positive_int", 50), "n_classes": ("positive_int", 4),
         "imbalance_ratio": ("positive", 10.0)},
    ),
    "mlcore.weak.long_tailed_indices": Row(
        lambda labels=LABELS_W, imbalance_ratio=4.0, random_state=0: weak.long_tailed_indices(
            labels, imbalance_ratio, random_state=random_state
        ),
        {"labels": ("labels", LABELS_W), "imbalance_ratio": ("positive", 4.0),
         "random_state": ("random_state", 0)},
    ),
    "mlcore.weak.long_tailed_mixture": Row(
        lambda n_classes=3, n_max=20, imbalance_ratio=2.0, n_features=4, separation=2.5,
        n_test_per_class=5, random_state=0: weak.long_tailed_mixture(
            n_classes=n_classes, n_max=n_max, imbalance_ratio=imbalance_ratio,
            n_features=n_features, separation=separation, n_test_per_class=n_test_per_class,
            random_state=random_state,
        ),
        {"n_classes": ("positive_int", 3), "n_max": ("positive_int", 20),
         "imbalance_ratio": ("positive", 2.0), "n_features": ("positive_int", 4),
         "separation": ("positive", 2.5), "n_test_per_class": ("positive_int", 5),
         "random_state": ("random_state", 0)},
    ),
    "mlcore.weak.long_tailed_split": Row(
        lambda labels=LABELS_W, imbalance_ratio=2.0, n_test_per_class=5, random_state=0: (
            weak.long_tailed_split(
                labels, imbalance_ratio, n_test_per_class=n_test_per_class,
                random_state=random_state,
            )
        ),
        {"labels": ("labels", LABELS_W), "imbalance_ratio": ("positive", 2.0),
         "n_test_per_class": ("positive_int", 5), "random_state": ("random_state", 0)},
    ),
    "mlcore.weak.partial_label_candidates": Row(
        lambda labels=LABELS_W, n_classes=3, q=0.3, eta=0.0, random_state=0: (
            weak.partial_label_candidates(labels, n_classes, q=q, eta=eta, random_state=random_state)
        ),
        {"labels": ("labels", LABELS_W), "n_classes": ("positive_int", 3),
         "q": ("unit_interval", 0.3), "eta": ("unit_interval", 0.0),
         "random_state": ("random_state", 0)},
    ),
    "mlcore.weak.partial_label_study": Row(
        lambda X_train=XW, y_train=YW, X_test=XWT, y_test=YWT, q=0.3, eta=0.2, n_head=1,
        n_tail=1: weak.partial_label_study(
            X_train, y_train, X_test, y_test, seeds=(0,), q=q, eta=eta, n_head=n_head,
            n_tail=n_tail, epochs=1,
        ),
        {"X_train": ("matrix", XW), "y_train": ("labels", YW), "X_test": ("matrix", XWT),
         "y_test": ("labels", YWT), "q": ("unit_interval", 0.3),
         "eta": ("unit_interval", 0.2), "n_head": ("positive_int", 1),
         "n_tail": ("positive_int", 1)},
    ),
    "mlcore.weak.sinkhorn_targets": Row(
        lambda logits=LOGITS_W, candidates=CAND, prior=PRIOR, exponent=3.0, eps_out=0.0,
        maxiter=2000, tol=0.01: weak.sinkhorn_targets(
            logits, candidates, prior, exponent=exponent, eps_out=eps_out, maxiter=maxiter,
            tol=tol,
        ),
        {"logits": ("tensor", LOGITS_W), "prior": ("tensor", PRIOR),
         "exponent": ("positive", 3.0), "eps_out": ("fraction_or_zero", 0.0),
         "maxiter": ("positive_int", 2000), "tol": ("positive", 0.01)},
    ),
    "mlcore.weak.train_partial_label_classifier": Row(
        lambda features=XW, candidates=SW, method="clapor", epochs=1, batch_size=16, lr=0.01,
        tau=1.0, kappa=20.0, n_samples=2, random_state=0: weak.train_partial_label_classifier(
            features, candidates, method=method, epochs=epochs, batch_size=batch_size, lr=lr,
            tau=tau, kappa=kappa, n_samples=n_samples, random_state=random_state,
        ),
        {"features": ("matrix", XW), "method": ("option", "clapor"),
         "epochs": ("positive_int", 1), "batch_size": ("positive_int", 16),
         "lr": ("positive", 0.01), "tau": ("positive", 1.0), "kappa": ("positive", 20.0),
         "n_samples": ("positive_int", 2), "random_state": ("random_state", 0)},
        skip={("tau", "positive=0.0"): "tau = 0 trains without logit adjustment"},
    ),
    # ---- analysis
    "mlcore.analysis.ForgeryDetector": Row(
        lambda real=REAL, fake=FAKE, pool="mean", batch_size=4, penalty=1.0: (
            analysis.ForgeryDetector(
                _CNN, real, fake, units={"1": None}, pool=pool, batch_size=batch_size
            ).fit(penalty=penalty)
        ),
        {"real": ("tensor", REAL), "fake": ("tensor", FAKE), "pool": ("option", "mean"),
         "batch_size": ("positive_int", 4), "penalty": ("positive", 1.0)},
    ),
    "mlcore.analysis.ForgeryUnits": Row(
        lambda real=REAL, fake=FAKE, real_labels=DIGIT_LABELS, pool="mean", batch_size=4,
        n_critical=1, normalize="minmax", shift_weight=0.5, penalty=1.0, n_folds=2,
        random_state=0: analysis.ForgeryUnits(
            _CNN, real, fake, layers=["1", "3"], real_labels=real_labels,
            fake_labels=DIGIT_LABELS, pool=pool, batch_size=batch_size,
        ).fit(
            n_critical=n_critical, normalize=normalize, shift_weight=shift_weight,
            penalty=penalty, n_folds=n_folds, random_state=random_state,
        ),
        {"real": ("tensor", REAL), "fake": ("tensor", FAKE),
         "real_labels": ("labels", DIGIT_LABELS), "pool": ("option", "mean"),
         "batch_size": ("positive_int", 4), "n_critical": ("positive_int", 1),
         "normalize": ("option", "minmax"), "shift_weight": ("positive", 0.5),
         "penalty": ("positive", 1.0), "n_folds": ("positive_int", 2),
         "random_state": ("random_state", 0)},
        skip={("shift_weight", "positive=0.0"): "0 scores layers by decoupling alone",
              ("real_labels", "negative label"): "labels are any class names, -1 included"},
    ),
    "mlcore.analysis.digit_backbone": Row(
        lambda images=REAL, labels=DIGIT_LABELS, n_train=4, epochs=1, batch_size=2, lr=0.003,
        random_state=0: analysis.digit_backbone(
            images, labels, n_train=n_train, epochs=epochs, batch_size=batch_size, lr=lr,
            random_state=random_state,
        ),
        {"images": ("tensor", REAL), "n_train": ("positive_int", 4),
         "epochs": ("positive_int", 1), "batch_size": ("positive_int", 2),
         "lr": ("positive", 0.003), "random_state": ("random_state", 0)},
    ),
    "mlcore.analysis.kneedle": Row(
        lambda values=CURVE, direction="decreasing": analysis.kneedle(values, direction=direction),
        {"values": ("vector", CURVE), "direction": ("option", "decreasing")},
    ),
}  # fmt: skip

#: Entries that take no argument a bad value could be given to, with the reason.
EXEMPT: dict[str, str] = {
    "mlcore.interp.detect_layout": "its one argument is a model, read by its attributes; a "
    "model of no known layout is refused by name (test_function_vectors)",
    "mlcore.analysis.upsampled_digits": "takes no argument",
    "mlcore.analysis.ablate_units": "a context manager over a model and a units mapping; "
    "refused by name in test_forgery_units.py::test_bad_input",
    "mlcore.analysis.extract_features": "takes a model and a data loader (no array kinds); its "
    "checks are tested in test_extract_features.py",
}

#: The areas whose every entry has a row (issue 38 adds the rest area by area).
AREAS = (
    "mlcore.mi",
    "mlcore.decoding",
    "mlcore.adapt",
    "mlcore.merging",
    "mlcore.interp",
    "mlcore.gzsl",
    "mlcore.weak",
    "mlcore.analysis",
)


(
    test_every_public_entry_has_a_row,
    test_bad_input_gives_an_error_naming_the_argument,
    test_good_row_runs,
    test_good_row_leaves_its_inputs_unmodified,
) = make_table_tests(ROWS, EXEMPT, AREAS)
