"""Every public entry of mlcore.federated refuses bad input with an error naming the argument
(issue 38); the harness and its kinds are in ``tests/_bad_input.py``."""

import numpy as np
import torch
import torch.nn.functional as nnf
from _bad_input import Row, make_table_tests

from mlcore import federated
from mlcore.encoders import tiny_clip, zero_shot_weights

C, D = 3, 64
NAMES = ["zero", "one", "two"]
ENC = tiny_clip()
TEXT = zero_shot_weights(ENC, NAMES).detach()
_g = torch.Generator().manual_seed(0)
Y = np.repeat(np.arange(C), 6)
X = nnf.normalize(TEXT[torch.as_tensor(Y)] + 0.8 * torch.randn(len(Y), D, generator=_g), dim=1)
DATA = federated.federated_partition(X, Y, 2, shots=2, alpha=None, random_state=0)
KEYS = federated.pooled_prototypes(DATA)
XT, YT = X[:6], torch.as_tensor(Y[:6])
FLIP, ARANGE = XT.flip(0), torch.arange(C)
STACK = torch.stack([KEYS, nnf.normalize(KEYS + 0.1, dim=1)])
OPTS = {"alpha": 1.0, "beta": 2.0, "logit_scale": 20.0}

ROWS = {
    "mlcore.federated.FedSPA": Row(
        lambda text_features=TEXT, rounds=1, alpha=1.0, beta=2.0, logit_scale=20.0,
        local_epochs=1, local_lr=1e-3, local_batch_size=4, server_epochs=1, server_lr=1e-3,
        server_batch_size=4, lam=1.0, temperature=0.1, server_optimizer="adamw",
        dp_clip=1.0, random_state=0: federated.FedSPA(DATA, text_features).fit(
            rounds=rounds, alpha=alpha, beta=beta, logit_scale=logit_scale,
            local_epochs=local_epochs, local_lr=local_lr, local_batch_size=local_batch_size,
            server_epochs=server_epochs, server_lr=server_lr,
            server_batch_size=server_batch_size, lam=lam, temperature=temperature,
            server_optimizer=server_optimizer, dp_sigma=0.1, dp_clip=dp_clip,
            random_state=random_state,
        ),
        {"text_features": ("tensor", TEXT), "rounds": ("positive_int", 1),
         "alpha": ("positive", 1.0), "beta": ("positive", 2.0),
         "logit_scale": ("positive", 20.0), "local_epochs": ("positive_int", 1),
         "local_lr": ("positive", 1e-3), "local_batch_size": ("positive_int", 4),
         "server_epochs": ("positive_int", 1), "server_lr": ("positive", 1e-3),
         "server_batch_size": ("positive_int", 4), "lam": ("positive", 1.0),
         "temperature": ("positive", 0.1), "server_optimizer": ("option", "adamw"),
         "dp_clip": ("positive", 1.0), "random_state": ("random_state", 0)},
        skip={("alpha", "positive=0.0"): "alpha = 0 drops the cache term",
              ("beta", "positive=0.0"): "beta = 0 gives a flat cache affinity",
              ("lam", "positive=0.0"): "lam = 0 drops the alignment to the text features"},
    ),
    "mlcore.federated.client_update": Row(
        lambda features=XT, labels=YT, keys=KEYS, semantic=TEXT, alpha=1.0, beta=2.0,
        logit_scale=20.0, epochs=1, lr=1e-3, batch_size=4, random_state=0: (
            federated.client_update(
                features, labels, keys, semantic, alpha=alpha, beta=beta,
                logit_scale=logit_scale, epochs=epochs, lr=lr, batch_size=batch_size,
                random_state=random_state,
            )
        ),
        {"features": ("tensor", XT), "labels": ("tensor", YT), "keys": ("tensor", KEYS),
         "semantic": ("tensor", TEXT), "alpha": ("positive", 1.0), "beta": ("positive", 2.0),
         "logit_scale": ("positive", 20.0), "epochs": ("positive_int", 1),
         "lr": ("positive", 1e-3), "batch_size": ("positive_int", 4),
         "random_state": ("random_state", 0)},
        skip={("alpha", "positive=0.0"): "alpha = 0 drops the cache term",
              ("beta", "positive=0.0"): "beta = 0 gives a flat cache affinity"},
    ),
    "mlcore.federated.compare_federated": Row(
        lambda features=X, labels=Y, text_features=TEXT, n_clients=2, shots=2, rotation=0.0,
        offset=0.0, n_seeds=1, rounds=1, local_epochs=1, ci_alpha=0.05, random_state=0: (
            federated.compare_federated(
                features, labels, text_features, n_clients=n_clients, dirichlet_alpha=None,
                shots=shots, rotation=rotation, offset=offset, n_seeds=n_seeds, rounds=rounds,
                local_epochs=local_epochs,
                fedspa_options={"server_epochs": 1, "logit_scale": 20.0},
                ci_alpha=ci_alpha, random_state=random_state,
            )
        ),
        {"features": ("tensor", X), "labels": ("labels", Y), "text_features": ("tensor", TEXT),
         "n_clients": ("positive_int", 2), "shots": ("positive_int", 2),
         "rotation": ("positive", 0.0), "offset": ("positive", 0.0),
         "n_seeds": ("positive_int", 1), "rounds": ("positive_int", 1),
         "local_epochs": ("positive_int", 1), "ci_alpha": ("fraction", 0.05),
         "random_state": ("random_state", 0)},
        skip={("rotation", "positive=0.0"): "0 is no rotation (the default)",
              ("offset", "positive=0.0"): "0 is no offset (the default)"},
    ),
    "mlcore.federated.fedavg_prompts": Row(
        lambda classnames=NAMES, rounds=1, local_steps=1, lr=5e-3, batch_size=4,
        random_state=0: federated.fedavg_prompts(
            DATA, ENC, classnames, rounds=rounds, local_steps=local_steps, lr=lr,
            batch_size=batch_size, random_state=random_state,
        ),
        {"rounds": ("positive_int", 1), "local_steps": ("positive_int", 1),
         "lr": ("positive", 5e-3), "batch_size": ("positive_int", 4),
         "random_state": ("random_state", 0)},
    ),
    "mlcore.federated.federated_partition": Row(
        lambda features=X, labels=Y, n_clients=2, shots=2, alpha=1.0, rotation=0.1,
        offset=0.1, random_state=0: federated.federated_partition(
            features, labels, n_clients, shots=shots, alpha=alpha, rotation=rotation,
            offset=offset, random_state=random_state,
        ),
        {"features": ("tensor", X), "labels": ("labels", Y), "n_clients": ("positive_int", 2),
         "shots": ("positive_int", 2), "alpha": ("positive", 1.0),
         "rotation": ("positive", 0.1), "offset": ("positive", 0.1),
         "random_state": ("random_state", 0)},
        skip={("rotation", "positive=0.0"): "0 is no rotation (the default)",
              ("offset", "positive=0.0"): "0 is no offset (the default)"},
    ),
    "mlcore.federated.info_nce": Row(
        lambda query=XT, positive_key=FLIP, temperature=0.1: federated.info_nce(
            query, positive_key, temperature=temperature
        ),
        {"query": ("tensor", XT), "positive_key": ("tensor", FLIP),
         "temperature": ("positive", 0.1)},
    ),
    "mlcore.federated.local_tip_adapter": Row(
        lambda text_features=TEXT, alpha=1.0, beta=2.0, logit_scale=20.0, epochs=1, lr=1e-3,
        batch_size=4, random_state=0: federated.local_tip_adapter(
            DATA, text_features, alpha=alpha, beta=beta, logit_scale=logit_scale,
            epochs=epochs, lr=lr, batch_size=batch_size, random_state=random_state,
        ),
        {"text_features": ("tensor", TEXT), "alpha": ("positive", 1.0),
         "beta": ("positive", 2.0), "logit_scale": ("positive", 20.0),
         "epochs": ("positive_int", 1), "lr": ("positive", 1e-3),
         "batch_size": ("positive_int", 4), "random_state": ("random_state", 0)},
        skip={("alpha", "positive=0.0"): "alpha = 0 drops the cache term",
              ("beta", "positive=0.0"): "beta = 0 gives a flat cache affinity"},
    ),
    "mlcore.federated.pooled_prototypes": Row(
        lambda dp_sigma=0.1, dp_clip=1.0, random_state=0: federated.pooled_prototypes(
            DATA, dp_sigma=dp_sigma, dp_clip=dp_clip, random_state=random_state
        ),
        {"dp_sigma": ("positive", 0.1), "dp_clip": ("positive", 1.0),
         "random_state": ("random_state", 0)},
        skip={("dp_sigma", "positive=0.0"): "0 adds no noise"},
    ),
    "mlcore.federated.prototype_divergence": Row(
        lambda keys=STACK: federated.prototype_divergence(keys),
        {"keys": ("tensor", STACK)},
    ),
    "mlcore.federated.server_align": Row(
        lambda prototypes=KEYS, labels=ARANGE, semantic=TEXT, text_features=TEXT,
        lam=1.0, temperature=0.1, epochs=1, lr=1e-3, batch_size=4, optimizer="adamw",
        random_state=0: federated.server_align(
            prototypes, labels, semantic, text_features, lam=lam, temperature=temperature,
            epochs=epochs, lr=lr, batch_size=batch_size, optimizer=optimizer,
            random_state=random_state,
        ),
        {"prototypes": ("tensor", KEYS), "labels": ("tensor", ARANGE),
         "semantic": ("tensor", TEXT), "text_features": ("tensor", TEXT),
         "lam": ("positive", 1.0), "temperature": ("positive", 0.1),
         "epochs": ("positive_int", 1), "lr": ("positive", 1e-3),
         "batch_size": ("positive_int", 4), "optimizer": ("option", "adamw"),
         "random_state": ("random_state", 0)},
        skip={("lam", "positive=0.0"): "lam = 0 drops the alignment to the text features"},
    ),
    "mlcore.federated.tip_logits": Row(
        lambda features=XT, keys=KEYS, semantic=TEXT, alpha=1.0, beta=2.0, logit_scale=20.0: (
            federated.tip_logits(
                features, keys, semantic, alpha=alpha, beta=beta, logit_scale=logit_scale
            )
        ),
        {"features": ("tensor", XT), "keys": ("tensor", KEYS), "semantic": ("tensor", TEXT),
         "alpha": ("positive", 1.0), "beta": ("positive", 2.0),
         "logit_scale": ("positive", 20.0)},
        skip={("alpha", "positive=0.0"): "alpha = 0 drops the cache term",
              ("beta", "positive=0.0"): "beta = 0 gives a flat cache affinity",
              ("features", "empty"): "no queries give a (0, C) result"},
    ),
    "mlcore.federated.zero_shot_accuracy": Row(
        lambda text_features=TEXT, logit_scale=20.0: federated.zero_shot_accuracy(
            DATA, text_features, logit_scale=logit_scale
        ),
        {"text_features": ("tensor", TEXT), "logit_scale": ("positive", 20.0)},
    ),
}  # fmt: skip

EXEMPT = {}

AREAS = ("mlcore.federated",)

(
    test_every_public_entry_has_a_row,
    test_bad_input_gives_an_error_naming_the_argument,
    test_good_row_runs,
    test_good_row_leaves_its_inputs_unmodified,
) = make_table_tests(ROWS, EXEMPT, AREAS)


def test_rows_do_not_modify_their_inputs():
    before = [t.clone() for t in (X, TEXT, KEYS, STACK)], Y.copy()
    for row in ROWS.values():
        row.call()
    assert all(torch.equal(a, b) for a, b in zip(before[0], (X, TEXT, KEYS, STACK), strict=True))
    np.testing.assert_array_equal(before[1], Y)
