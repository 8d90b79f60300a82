"""MetaEns selection for a new data set, its detector pool scored, beside the mega-ensemble.

The case: Pima (768 x 8, shipped in ``data/outliers``), raw rows in. Ours scores the 40-detector
PyOD pool and runs the MetaEns selection (meta-trained once, in setup, on the other 27 shipped
score tables); the anchor scores the same pool and averages every detector (the mega-ensemble),
so the ratio anchor / ours is the share of the pipeline's time not spent on selection.

``python benchmarks/bench_outliers.py [--seeds 0 1 2] [--trees 500 800] [--n-jobs 16]
[--out lodo.csv]`` also runs the full leave-one-data-set-out study at the paper's tree counts,
twice per seed: every meta-statistic refitted per fold (clean) and with the authors' leak
(rollout policy and partner ranking fitted on every table, the held-out one included), then
prints mean APs with paired t and bootstrap intervals and the leaky minus clean difference.
One clean pass takes about 7 minutes on 16 cores (28 folds, 1,300 trees fitted twice per fold).
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


def lodo_study(seeds=(0,), n_estimators=(500, 800), n_jobs=None, out=None):
    """The full leave-one-data-set-out study at the paper's tree counts: for every seed, the
    clean protocol (every meta-statistic refitted per fold) and the authors' leaky one (rollout
    policy and partner ranking fitted on every table, the held-out one included). Returns the
    long table (seed, protocol, dataset, method, AP, ROC-AUC, size); ``out`` also gets it as
    CSV after every run, so a run stopped early keeps what it finished."""
    import time

    import pandas as pd

    tables, names = load_score_tables()
    frames = []
    for seed in seeds:
        for leak in (False, True):
            t0 = time.perf_counter()
            res = MetaEns(names).lodo(
                tables,
                n_estimators=n_estimators,
                random_state=seed,
                authors_leak=leak,
                n_jobs=n_jobs,
            )
            protocol = "leaky" if leak else "clean"
            print(f"seed {seed} {protocol}: {time.perf_counter() - t0:.0f} s", flush=True)
            print(res.tidy().round(4).to_string(), flush=True)
            frames.append(res.table.assign(seed=seed, protocol=protocol))
            if out is not None:
                pd.concat(frames).to_csv(out, index=False)
    return pd.concat(frames)


def summarise(long, alpha=0.05, n_boot=10_000, random_state=0):
    """Per protocol: mean AP per method (averaged over seeds per data set first), MetaEns
    minus each method with a paired t interval and a bootstrap interval over data sets, the
    mean MetaEns size; and the leaky minus clean MetaEns difference."""
    import pandas as pd
    from scipy import stats as sps

    rng = np.random.default_rng(random_state)
    rows = []
    per = long.groupby(["protocol", "dataset", "method"]).mean(numeric_only=True).reset_index()
    for protocol, sub in per.groupby("protocol"):
        wide = sub.pivot(index="dataset", columns="method", values="average_precision")
        size = sub[sub.method == "MetaEns"]["size"].mean()
        boot = rng.integers(len(wide), size=(n_boot, len(wide)))
        for method in wide.columns:
            d = (wide["MetaEns"] - wide[method]).to_numpy()
            se = d.std(ddof=1) / np.sqrt(len(d))
            t = sps.t.ppf(1 - alpha / 2, len(d) - 1)
            b = d[boot].mean(axis=1)
            rows.append(
                {
                    "protocol": protocol,
                    "method": method,
                    "mean_ap": wide[method].mean(),
                    "metaens_minus": d.mean(),
                    "t_low": d.mean() - t * se,
                    "t_high": d.mean() + t * se,
                    "boot_low": np.quantile(b, alpha / 2),
                    "boot_high": np.quantile(b, 1 - alpha / 2),
                    "metaens_size": size,
                }
            )
    ap = per[per.method == "MetaEns"].pivot(
        index="dataset", columns="protocol", values="average_precision"
    )
    leak = (ap["leaky"] - ap["clean"]).to_numpy() if {"leaky", "clean"} <= set(ap) else None
    return pd.DataFrame(rows), leak


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="MetaEns leave-one-data-set-out study")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--trees", type=int, nargs=2, default=[500, 800])
    parser.add_argument("--n-jobs", type=int, default=None)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    long = lodo_study(args.seeds, tuple(args.trees), args.n_jobs, args.out)
    table, leak = summarise(long)
    print(table.round(4).to_string())
    if leak is not None:
        se = leak.std(ddof=1) / np.sqrt(len(leak))
        print(
            f"leaky minus clean MetaEns AP: mean {leak.mean():+.4f} (se {se:.4f}), "
            f"tables changed {int((np.abs(leak) > 1e-12).sum())}/{len(leak)}"
        )
