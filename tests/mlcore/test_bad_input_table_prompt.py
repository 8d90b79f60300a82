"""Every public entry of mlcore.prompt refuses bad input with an error naming the argument
(issue 38); the harness and its kinds are in ``tests/_bad_input.py``. The stand-in encoder and
its data are test_manipt.py's."""

import numpy as np
from _bad_input import Row, make_table_tests
from test_manipt import CLASSES, StandIn, _data

from mlcore import prompt

ENCODER = StandIn()
IMAGES, LABELS = _data(ENCODER, n_per_class=4)
FROZEN = np.random.default_rng(0).standard_normal((12, 5))
TUNED = FROZEN + 0.1 * np.random.default_rng(1).standard_normal((12, 5))

ROWS = {
    "mlcore.prompt.ManiPT": Row(
        lambda method="manipt", n_ctx=None, adapter_reduction=4, inputs=IMAGES, labels=LABELS,
        maxiter=2, lr=0.005, batch_size=8, log_every=1, random_state=0: prompt.ManiPT(
            ENCODER, CLASSES, n_ctx, method, adapter_reduction=adapter_reduction
        ).fit(
            inputs, labels, maxiter=maxiter, lr=lr, batch_size=batch_size, log_every=log_every,
            random_state=random_state,
        ),
        {"method": ("option", "manipt"), "adapter_reduction": ("positive_int", 4),
         "inputs": ("tensor", IMAGES), "labels": ("labels", LABELS),
         "maxiter": ("positive_int", 2), "lr": ("positive", 0.005),
         "batch_size": ("positive_int", 8), "log_every": ("positive_int", 1),
         "random_state": ("random_state", 0)},
    ),
    "mlcore.prompt.base_to_novel": Row(
        lambda images=IMAGES, labels=LABELS, shots=2, n_seeds=1, maxiter=2, lr=0.005,
        batch_size=8, random_state=0: prompt.base_to_novel(
            ENCODER, images, labels, CLASSES, methods=("zero_shot", "coop"), shots=shots,
            n_seeds=n_seeds, maxiter=maxiter, lr=lr, batch_size=batch_size, drift_k=2,
            random_state=random_state,
        ),
        {"images": ("tensor", IMAGES), "labels": ("labels", LABELS),
         "shots": ("positive_int", 2), "n_seeds": ("positive_int", 1),
         "maxiter": ("positive_int", 2), "lr": ("positive", 0.005),
         "batch_size": ("positive_int", 8), "random_state": ("random_state", 0)},
    ),
    "mlcore.prompt.manifold_drift": Row(
        lambda frozen=FROZEN, tuned=TUNED, k=2: prompt.manifold_drift(frozen, tuned, k),
        {"frozen": ("matrix", FROZEN), "tuned": ("matrix", TUNED)},
    ),
}  # fmt: skip

EXEMPT = {
    "mlcore.prompt.PromptLearner": "a torch module; its fit is the one-release shim that hands "
    "over to ManiPT (tabled above)",
}

AREAS = ("mlcore.prompt",)

(
    test_every_public_entry_has_a_row,
    test_bad_input_gives_an_error_naming_the_argument,
    test_good_row_runs,
    test_good_row_leaves_its_inputs_unmodified,
) = make_table_tests(ROWS, EXEMPT, AREAS)
