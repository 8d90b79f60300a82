"""Self-distilled ridge: the lambda path and one-shot xi from one SVD, beside scikit-learn's
per-penalty Ridge fits, RidgeCV (efficient leave-one-out) and K-fold grid search over xi, and
beside per-penalty dense p x p solves with explicit trace corrections (the authors' scripts'
way of computing the same one-shot quantities)."""

import numpy as np
import sklearn
from sklearn.linear_model import Ridge, RidgeCV
from sklearn.model_selection import KFold

from statcore.ridge import SelfDistilledRidge, paper_design

N, P = 4000, 200
DESIGN = paper_design(P, random_state=2025)
X, Y = DESIGN.sample(N, random_state=1)
GRID = np.geomspace(1e-3, 10, 50)
XI_GRID = np.linspace(-3, 3, 21)
LAM = 0.5
SK = f"scikit-learn {sklearn.__version__}"


def per_penalty_ridge():
    return [Ridge(alpha=N * lam, solver="cholesky").fit(X, Y).coef_ for lam in GRID]


def kfold_xi_search(lam=LAM, folds=5):
    """5-fold CV over 21 values of xi: a teacher and 21 students (refits) per fold."""
    scores = np.zeros(len(XI_GRID))
    for train, test in KFold(folds, shuffle=True, random_state=0).split(X):
        teacher = Ridge(alpha=len(train) * lam).fit(X[train], Y[train])
        fitted = teacher.predict(X[train])
        for j, xi in enumerate(XI_GRID):
            mixed = (1 - xi) * Y[train] + xi * fitted
            student = Ridge(alpha=len(train) * lam).fit(X[train], mixed)
            scores[j] += np.mean((Y[test] - student.predict(X[test])) ** 2)
    return XI_GRID[np.argmin(scores)]


def dense_one_shot_path():
    """Per penalty: dense solves, M = (S + lambda)^-1 S, tr(M), tr(M^2) and the three GCV terms."""
    Xc, yc = X - X.mean(0), Y - Y.mean()
    gram, xty = Xc.T @ Xc / N, Xc.T @ yc / N
    out = []
    for lam in GRID:
        omega = gram + lam * np.eye(P)
        beta = np.linalg.solve(omega, xty)
        m = np.linalg.solve(omega, gram)
        distilled = m @ beta
        r1, r2 = yc - Xc @ beta, yc - Xc @ distilled
        df1, df2 = np.trace(m) / N, np.trace(m @ m) / N
        a = r1 @ r1 / N / (1 - df1) ** 2
        b = r2 @ r2 / N / (1 - df2) ** 2
        c = r1 @ r2 / N / ((1 - df1) * (1 - df2))
        out.append((a - c) / (a + b - 2 * c))
    return out


CASES = [
    {
        "name": f"ridge path, 50 penalties, n={N}, p={P} (one SVD vs per-penalty fits)",
        "ours": lambda: SelfDistilledRidge(Y, X, penalty=GRID).fit(xi=0.0),
        "anchor": per_penalty_ridge,
        "anchor_name": f"{SK} Ridge x 50",
    },
    {
        "name": f"one-shot tuned student, 50 penalties, n={N}, p={P} vs RidgeCV (LOO, 50)",
        "ours": lambda: SelfDistilledRidge(Y, X, penalty=GRID).fit(),
        "anchor": lambda: RidgeCV(alphas=N * GRID).fit(X, Y),
        "anchor_name": f"{SK} RidgeCV",
    },
    {
        "name": f"one-shot xi at one penalty vs 5-fold CV over 21 xi, n={N}, p={P}",
        "ours": lambda: SelfDistilledRidge(Y, X, penalty=LAM).fit(curve_penalty=LAM),
        "anchor": kfold_xi_search,
        "anchor_name": f"{SK} Ridge, 5-fold grid search",
    },
    {
        "name": f"paper-form one-shot xi, 50 penalties, n={N}, p={P} (one SVD vs dense solves)",
        "ours": lambda: SelfDistilledRidge(Y, X, penalty=GRID).fit(xi_method="paper"),
        "anchor": dense_one_shot_path,
        "anchor_name": "numpy dense per-penalty solves (authors' scripts' approach)",
    },
]
