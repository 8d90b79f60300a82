"""Every public entry of mlcore.transfer refuses bad input with an error naming the argument
(issue 38); the harness and its kinds are in ``tests/_bad_input.py``."""

import numpy as np
import pytest
import torch
from _bad_input import Row, make_table_tests
from torch import nn

from mlcore import transfer
from mlcore.transfer import SourceModel


def _toy_source():
    torch.manual_seed(0)
    layers = (
        ("conv", nn.Sequential(nn.Conv1d(3, 4, 5, padding=2), nn.GELU())),
        ("down", nn.Sequential(nn.Conv1d(4, 4, 3, stride=2, padding=1), nn.GELU())),
    )
    ref = torch.randn(24, 3, 32)
    return SourceModel("toy", layers, (3, 32), ref, np.arange(24) % 6)


TOY = _toy_source()
ARCH = ((0, 0), (0, 1))
_d = transfer.synthetic_imu(4, n_users=2, length=32, random_state=3)
_idx, _ = _d.few_shot(2, random_state=3)
XF, YF = _d.X[_idx], _d.y[_idx]
XT = torch.from_numpy(XF).float()
_g = torch.Generator().manual_seed(0)
SRC_ACTS, TGT_ACTS = torch.randn(24, 5, generator=_g), torch.randn(12, 5, generator=_g)
SRC_Y, TGT_Y = np.arange(24) % 6, np.arange(12) % 6
A, B = torch.randn(10, 3, generator=_g), torch.randn(8, 3, generator=_g) + 1.0

ROWS = {
    "mlcore.transfer.XTransfer": Row(
        lambda budget=1e6, budget_metric="params", beam=2, max_depth=2, n_pca=4, lam=1e-3,
        anchors="source", rank=0, steps=2, lr=1e-2, removal_tol=0.05, random_state=0,
        X_few=XF, y_few=YF: transfer.XTransfer(
            [TOY], budget=budget, budget_metric=budget_metric, beam=beam, max_depth=max_depth,
            n_pca=n_pca, lam=lam, anchors=anchors, rank=rank, steps=steps, lr=lr,
            removal_tol=removal_tol, architecture=ARCH, random_state=random_state,
        ).fit(X_few, y_few),
        {"budget": ("positive", 1e6), "budget_metric": ("option", "params"),
         "beam": ("positive_int", 2), "max_depth": ("positive_int", 2),
         "n_pca": ("positive_int", 4), "lam": ("positive", 1e-3),
         "anchors": ("option", "source"), "rank": ("nonneg_int", 0),
         "steps": ("positive_int", 2), "lr": ("positive", 1e-2),
         "removal_tol": ("positive", 0.05), "random_state": ("random_state", 0),
         "X_few": ("matrix", XF), "y_few": ("labels", YF)},
        skip={("lam", "positive=0.0"): "lam = 0 trains on cross-entropy alone",
              ("removal_tol", "positive=0.0"): "0 removes no layer"},
    ),
    "mlcore.transfer.anchor_separability": Row(
        lambda features=TGT_ACTS, y=TGT_Y: transfer.anchor_separability(features, y),
        {"features": ("tensor", TGT_ACTS), "y": ("labels", TGT_Y)},
    ),
    "mlcore.transfer.build_model": Row(
        lambda X=XT, n_classes=6, rank=0, seed=0: transfer.build_model(
            [TOY], ARCH, X, n_classes, rank=rank, seed=seed
        ),
        {"X": ("tensor", XT), "n_classes": ("positive_int", 6), "rank": ("nonneg_int", 0),
         "seed": ("nonneg_int", 0)},
    ),
    "mlcore.transfer.cnn1d_source": Row(
        lambda random_state=0, steps=1, length=16: transfer.cnn1d_source(
            random_state=random_state, steps=steps, length=length
        ),
        {"random_state": ("nonneg_int", 0), "steps": ("positive_int", 1),
         "length": ("positive_int", 16)},
    ),
    "mlcore.transfer.fit_anchors": Row(
        lambda source_acts=SRC_ACTS, source_labels=SRC_Y, target_acts=TGT_ACTS, y=TGT_Y,
        n_classes=6, n_pca=3, mode="source": transfer.fit_anchors(
            "l", source_acts, source_labels, target_acts, y, n_classes, n_pca=n_pca, mode=mode
        ),
        {"source_acts": ("tensor", SRC_ACTS), "source_labels": ("labels", SRC_Y),
         "target_acts": ("tensor", TGT_ACTS), "y": ("labels", TGT_Y),
         "n_classes": ("positive_int", 6), "n_pca": ("positive_int", 3),
         "mode": ("option", "source")},
    ),
    "mlcore.transfer.mmd2": Row(
        lambda a=A, b=B, bandwidth=1.0: transfer.mmd2(a, b, bandwidth),
        {"a": ("tensor", A), "b": ("tensor", B), "bandwidth": ("positive", 1.0)},
    ),
    "mlcore.transfer.module_cost": Row(
        lambda module=TOY.layers[0][1], in_shape=(3, 32): transfer.module_cost(module, in_shape),
        {},
    ),
    "mlcore.transfer.synthetic_imu": Row(
        lambda n_per_class=2, n_users=2, length=16, fs=32.0, noise=0.3, user_shift=1.0,
        random_state=0: transfer.synthetic_imu(
            n_per_class, n_users=n_users, length=length, fs=fs, noise=noise,
            user_shift=user_shift, random_state=random_state,
        ),
        {"n_per_class": ("positive_int", 2), "n_users": ("positive_int", 2),
         "length": ("positive_int", 16), "fs": ("positive", 32.0),
         "noise": ("positive", 0.3), "user_shift": ("positive", 1.0),
         "random_state": ("random_state", 0)},
        skip={("noise", "positive=0.0"): "0 gives noise-free windows",
              ("user_shift", "positive=0.0"): "0 gives identical users"},
    ),
}  # fmt: skip

EXEMPT = {
    "mlcore.transfer.basic_motions": "takes no argument (loads the shipped UEA set)",
    "mlcore.transfer.tiny_clip_source": "builds the pretrained tiny-CLIP source; its one "
    "argument n_reference goes through check_positive_int",
}

AREAS = ("mlcore.transfer",)

(
    test_every_public_entry_has_a_row,
    test_bad_input_gives_an_error_naming_the_argument,
    test_good_row_runs,
    test_good_row_leaves_its_inputs_unmodified,
) = make_table_tests(ROWS, EXEMPT, AREAS)


@pytest.mark.parametrize(
    ("module", "in_shape"),
    [("conv", (3, 32)), (TOY.layers[0][1], (3, -1)), (TOY.layers[0][1], "3"),
     (TOY.layers[0][1], (5, 32)), (TOY.layers[0][1], (3.5, 32))],
)  # fmt: skip
def test_module_cost_names_its_bad_argument(module, in_shape):
    name = "module" if module == "conv" else "in_shape"
    with pytest.raises((TypeError, ValueError), match=f"`{name}`"):
        transfer.module_cost(module, in_shape)


def test_rows_do_not_modify_their_inputs():
    tensors = (XT, SRC_ACTS, TGT_ACTS, A, B, TOY.reference)
    arrays = (XF, YF, SRC_Y, TGT_Y)
    before = [t.clone() for t in tensors], [a.copy() for a in arrays]
    params = [p.detach().clone() for _, layer in TOY.layers for p in layer.parameters()]
    for row in ROWS.values():
        row.call()
    assert all(torch.equal(a, b) for a, b in zip(before[0], tensors, strict=True))
    for a, b in zip(before[1], arrays, strict=True):
        np.testing.assert_array_equal(a, b)
    after = [p.detach() for _, layer in TOY.layers for p in layer.parameters()]
    assert all(torch.equal(a, b) for a, b in zip(params, after, strict=True))
