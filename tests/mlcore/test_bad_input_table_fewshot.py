"""Every public entry of mlcore.fewshot refuses bad input with an error naming the argument
(issue 38); the harness and its kinds are in ``tests/_bad_input.py``."""

import numpy as np
import torch
from _bad_input import Row, make_table_tests

from mlcore import fewshot

TASK = fewshot.simulate_fewshot(n_classes=3, n_per_class=4, dim=6, layer_dims=(), random_state=0)
F, Y, W, SCALE = TASK.features, TASK.labels, TASK.text_weights, TASK.logit_scale
KEYS = torch.nn.functional.normalize(F, dim=1)
Y_T = torch.as_tensor(Y)

ROWS = {
    "mlcore.fewshot.BOIF": Row(
        lambda text_weights=W, logit_scale=SCALE, cache="prototype", beta=5.0, alpha=1.0,
        features=F, labels=Y, epochs=1, lr=0.001, random_state=0: fewshot.BOIF(
            text_weights, logit_scale, cache=cache, beta=beta, alpha=alpha
        ).fit(features, labels, epochs=epochs, lr=lr, random_state=random_state),
        {"text_weights": ("tensor", W), "logit_scale": ("positive", SCALE),
         "cache": ("option", "prototype"), "beta": ("positive", 5.0),
         "alpha": ("positive", 1.0), "features": ("tensor", F), "labels": ("labels", Y),
         "epochs": ("positive_int", 1), "lr": ("positive", 0.001),
         "random_state": ("random_state", 0)},
        skip={("alpha", "positive=0.0"): "alpha = 0 is the zero-shot classifier alone",
              ("epochs", "positive_int=0"): "no training: the training-free cache model"},
    ),
    "mlcore.fewshot.TipAdapter": Row(
        lambda text_weights=W, logit_scale=SCALE, beta=1.0, alpha=1.0, features=F, labels=Y: (
            fewshot.TipAdapter(text_weights, logit_scale, beta=beta, alpha=alpha).fit(
                features, labels
            )
        ),
        {"text_weights": ("tensor", W), "logit_scale": ("positive", SCALE),
         "beta": ("positive", 1.0), "alpha": ("positive", 1.0), "features": ("tensor", F),
         "labels": ("labels", Y)},
        skip={("alpha", "positive=0.0"): "alpha = 0 is the zero-shot classifier alone"},
    ),
    "mlcore.fewshot.cache_likelihood": Row(
        lambda features=F, keys=KEYS, key_labels=Y_T, n_classes=3, cache="prototype", beta=5.0: (
            fewshot.cache_likelihood(
                features, keys, key_labels, n_classes, cache=cache, beta=beta
            )
        ),
        {"features": ("tensor", F), "keys": ("tensor", KEYS), "key_labels": ("tensor", Y_T),
         "n_classes": ("positive_int", 3), "cache": ("option", "prototype"),
         "beta": ("positive", 5.0)},
        skip={("features", "empty"): "no queries give a (0, n_classes) result, as numpy would"},
    ),
    "mlcore.fewshot.compare_fewshot": Row(
        lambda features=F, labels=Y, text_weights=W, logit_scale=SCALE, shots=(1,), n_seeds=1,
        epochs=1, ci_alpha=0.05, random_state=0: fewshot.compare_fewshot(
            features, labels, text_weights, logit_scale, shots=shots, n_seeds=n_seeds,
            epochs=epochs, tune_beta=False, ci_alpha=ci_alpha, random_state=random_state,
        ),
        {"features": ("tensor", F), "labels": ("labels", Y), "text_weights": ("tensor", W),
         "logit_scale": ("positive", SCALE), "n_seeds": ("positive_int", 1),
         "epochs": ("positive_int", 1), "ci_alpha": ("fraction", 0.05),
         "random_state": ("random_state", 0)},
        skip={("epochs", "positive_int=0"): "no training: the training-free cache model"},
    ),
    "mlcore.fewshot.simulate_fewshot": Row(
        lambda n_classes=3, n_per_class=4, dim=6, within=1.5, text_noise=1.5, logit_scale=20.0,
        random_state=0: fewshot.simulate_fewshot(
            n_classes=n_classes, n_per_class=n_per_class, dim=dim, within=within,
            text_noise=text_noise, logit_scale=logit_scale, random_state=random_state,
        ),
        {"n_classes": ("positive_int", 3), "n_per_class": ("positive_int", 4),
         "dim": ("positive_int", 6), "within": ("positive", 1.5),
         "text_noise": ("positive", 1.5), "logit_scale": ("positive", 20.0),
         "random_state": ("random_state", 0)},
        skip={("text_noise", "positive=0.0"): "0 gives the exact class directions",
              ("within", "positive=0.0"): "0 puts every image on its class mean"},
    ),
    "mlcore.fewshot.vmf_concentration": Row(
        lambda embeddings=F, labels=Y_T: fewshot.vmf_concentration(embeddings, labels),
        {"embeddings": ("tensor", F), "labels": ("tensor", Y_T)},
    ),
}  # fmt: skip

EXEMPT = {
    "mlcore.fewshot.BOIFHead": "a torch module; its fit is the one-release shim that hands over "
    "to BOIF (tabled above)",
    "mlcore.fewshot.TipAdapterClassifier": "a torch module; its fit is the one-release shim that "
    "hands over to TipAdapter (tabled above)",
}

AREAS = ("mlcore.fewshot",)

(
    test_every_public_entry_has_a_row,
    test_bad_input_gives_an_error_naming_the_argument,
    test_good_row_runs,
    test_good_row_leaves_its_inputs_unmodified,
) = make_table_tests(ROWS, EXEMPT, AREAS)


def test_rows_do_not_modify_their_inputs():
    before = [t.clone() for t in (F, W, KEYS)], Y.copy()
    for row in ROWS.values():
        row.call()
    assert all(torch.equal(a, b) for a, b in zip(before[0], (F, W, KEYS), strict=True))
    np.testing.assert_array_equal(before[1], Y)
