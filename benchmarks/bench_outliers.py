"""MetaEns selection for a new data set, its detector pool scored, beside the mega-ensemble.

The case: Pima (768 x 8, shipped in ``data/outliers``), raw rows in. Ours scores the 40-detector
PyOD pool and runs the MetaEns selection (meta-trained once, in setup, on the other 27 shipped
score tables); the anchor scores the same pool and averages every detector (the mega-ensemble),
so the ratio anchor / ours is the share of the pipeline's time not spent on selection.

``python benchmarks/bench_outliers.py`` also runs the full leave-one-data-set-out comparison
twice, meta-statistics refitted per fold and with the authors' leak (rollout policy and partner
ranking fitted on every table, the held-out one included), and prints the difference.
"""

from pathlib import Path

import numpy as np

from statcore.outliers import DetectorPool, MetaEns, load_score_tables, score_pool

HERE = Path(__file__).resolve().parent.parent / "data" / "outliers"
STATE = {}


def setup():
    if STATE:
        return
    tables, names = load_score_tables()
    train = {k: v for k, v in tables.items() if k != "29_Pima"}
    STATE["fit"] = MetaEns(DetectorPool()).fit(train, n_estimators=(200, 200), random_state=0)
    with np.load(HERE / "29_Pima.npz") as z:
        STATE["X"] = np.asarray(z["X"], dtype=float)


def ours():
    return STATE["fit"].select(STATE["X"], random_state=0)


def anchor():
    return score_pool(STATE["X"], DetectorPool(), random_state=0).mean(axis=1)


CASES = [
    {
        "name": "MetaEns select, Pima 768x8, 40-detector pool scored",
        "ours": ours,
        "anchor": anchor,
        "anchor_name": "pool scoring + mean (mega-ensemble)",
        "setup": setup,
    }
]


if __name__ == "__main__":
    import time

    tables, names = load_score_tables()
    for leak in (False, True):
        t0 = time.perf_counter()
        res = MetaEns(names).lodo(
            tables, n_estimators=(500, 800), random_state=0, authors_leak=leak
        )
        print(f"authors_leak={leak}: {time.perf_counter() - t0:.0f} s")
        print(res.tidy().to_string())
        STATE[leak] = res.wide()["MetaEns"]
    d = STATE[True] - STATE[False]
    print(
        f"leaky minus hygienic MetaEns AP: mean {d.mean():+.4f}, sd {d.std():.4f}, "
        f"tables changed {int((d.abs() > 1e-12).sum())}/{len(d)}"
    )
