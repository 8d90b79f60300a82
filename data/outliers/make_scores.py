"""Write ``scores.npz``: the 40-detector pool of ``statcore.outliers`` scored on ADBench tables.

    .venv/bin/python data/outliers/make_scores.py SRC_DIR   # SRC_DIR holds the ADBench .npz files

Each table (arrays ``X``, ``y``; 1 = anomaly) is subsampled to at most ``MAX_ROWS`` rows,
stratified by label (seeded; at least ``MIN_OUTLIERS`` anomalies kept), standardised, and scored
by every detector of ``DetectorPool()`` (PyOD, seeded). The archive holds, for table ``t``,
``<t>__scores`` (float32, n x 40), ``<t>__y`` (int8) and ``<t>__shape`` (rows and columns of
the subsample), plus ``detectors`` (names) and ``tables`` (names, in order).
"""

import sys
import time
from pathlib import Path

import numpy as np

from statcore.outliers import DetectorPool, score_pool

MAX_ROWS = 800
MIN_OUTLIERS = 8
SKIP = {"34_smtp"}  # 30 anomalies in 95,156 rows: a subsample keeps too few to score AP
HERE = Path(__file__).resolve().parent


def subsample(X, y, rng):
    if len(y) <= MAX_ROWS:
        return X, y
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    n_pos = min(len(pos), max(MIN_OUTLIERS, round(MAX_ROWS * len(pos) / len(y))))
    keep = np.concatenate(
        [rng.choice(pos, n_pos, replace=False), rng.choice(neg, MAX_ROWS - n_pos, replace=False)]
    )
    keep.sort()
    return X[keep], y[keep]


def main(src):
    pool = DetectorPool()
    out = {"detectors": np.array(pool.names), "tables": []}
    for path in sorted(Path(src).glob("*.npz"), key=lambda p: int(p.stem.split("_")[0])):
        if path.stem in SKIP:
            continue
        rng = np.random.default_rng(int(path.stem.split("_")[0]))
        z = np.load(path)
        X, y = subsample(np.asarray(z["X"], float), np.asarray(z["y"]).astype(int), rng)
        t0 = time.perf_counter()
        S = score_pool(X, pool, random_state=rng)
        print(
            f"{path.stem}: {X.shape} {int(y.sum())} anomalies, {time.perf_counter() - t0:.1f} s",
            flush=True,
        )
        out[f"{path.stem}__scores"] = S.astype(np.float32)
        out[f"{path.stem}__y"] = y.astype(np.int8)
        out[f"{path.stem}__shape"] = np.array(X.shape)
        out["tables"].append(path.stem)
    out["tables"] = np.array(out["tables"])
    np.savez_compressed(HERE / "scores.npz", **out)


if __name__ == "__main__":
    main(sys.argv[1])
