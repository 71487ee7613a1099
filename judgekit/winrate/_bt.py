"""The Bradley-Terry fit behind judgekit's Arena ratings: Newton's method on battle counts.

The model, as Chatbot Arena and Arena-Hard-Auto fit it, for a battle of models a and b with
style covariates z (optional):

    logit P(a beats b) = α (c_a − c_b) + z·β,     α = ln(base),

fitted by maximum likelihood with a tie counted as half a win and half a loss (the published code
duplicates every battle and gives one copy of a tie to each side, which is the same likelihood).
The objective, over battles with soft outcome y ∈ {0, ½, 1} and count w, is

    Σ w [log(1 + e^η) − y η] + ½ λ (Σ c² + Σ β²).

Without a penalty (λ = 0) one model's c is held at 0 (the ratings are identified up to a shift);
with λ > 0 (scikit-learn's default C = 1, i.e. λ = ½ on the doubled battles, as the published
style-control fits use) every coefficient is penalised. The Hessian is assembled from bincounts
(model-model block, model-feature block, feature-feature block), so one Newton step costs
O(battles × features + models²). Tested against statsmodels' Logit in tests/winrate/test_winrate_arena.py.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from judgekit.winrate._glm import soft_log_loss


def check_connected(ia: np.ndarray, ib: np.ndarray, w: np.ndarray, models: list[str],
                    who: str) -> None:
    """Raise when the battles split the models into groups that never meet (no common scale)."""
    # here, not at import: scipy.sparse.csgraph pulls in scipy.linalg (about 0.2 s), which the
    # audit of a file without Arena battles never needs
    from scipy import sparse
    from scipy.sparse import csgraph

    n = len(models)
    used = w > 0
    graph = sparse.coo_matrix((np.ones(used.sum()), (ia[used], ib[used])), shape=(n, n))
    k, label = csgraph.connected_components(graph, directed=False)
    if k > 1:
        groups = [[models[i] for i in np.flatnonzero(label == g)][:4] for g in range(k)]
        raise ValueError(f"{who}: the battles split the models into {k} groups that never meet "
                         f"(e.g. {groups[0]} and {groups[1]}); Bradley-Terry ratings of different "
                         "groups are not comparable. Rate each group separately.")


def fit(ia: np.ndarray, ib: np.ndarray, y: np.ndarray, w: np.ndarray, n: int, *,
        Z: np.ndarray | None = None, l2: float = 0.0, alpha: float = np.log(10.0), ref: int = 0,
        start: np.ndarray | None = None, max_iter: int = 100, tol: float = 1e-10
        ) -> tuple[np.ndarray, bool]:
    """Coefficients (c_0..c_{n-1}, β...) maximising the penalised BT likelihood, and whether
    Newton converged. ``ref``'s c is fixed at 0 when ``l2`` is 0; models with no battle (weight 0)
    are fixed at 0 too and come back as NaN."""
    k = 0 if Z is None else Z.shape[1]
    p_all = n + k
    present = (np.bincount(ia, w, minlength=n) + np.bincount(ib, w, minlength=n)) > 0
    free = np.concatenate([present, np.ones(k, dtype=bool)])
    if l2 == 0:
        free[ref if present[ref] else int(np.flatnonzero(present)[0])] = False
    theta = np.zeros(p_all) if start is None else np.where(np.isfinite(start), start, 0.0)
    theta[:n][~present] = 0.0

    def eta_of(t: np.ndarray) -> np.ndarray:
        e = alpha * (t[ia] - t[ib])
        return e if Z is None else e + Z @ t[n:]

    def objective(t: np.ndarray) -> float:
        return float(soft_log_loss(eta_of(t), y, w) + 0.5 * l2 * (t @ t))

    value = objective(theta)
    same = ia == ib
    converged = False
    idx = np.flatnonzero(free)
    for _ in range(max_iter):
        eta = eta_of(theta)
        p = special.expit(eta)
        r = w * (p - y)
        s = w * p * (1.0 - p)
        grad = np.empty(p_all)
        grad[:n] = alpha * (np.bincount(ia, r, minlength=n) - np.bincount(ib, r, minlength=n))
        hess = np.zeros((p_all, p_all))
        sm = np.where(same, 0.0, s)   # a model against itself has no model term
        m = np.bincount(ia * n + ib, sm, minlength=n * n).reshape(n, n)
        hess[:n, :n] = -alpha**2 * (m + m.T)
        hess[np.arange(n), np.arange(n)] = alpha**2 * (np.bincount(ia, sm, minlength=n)
                                                       + np.bincount(ib, sm, minlength=n))
        if k:
            grad[n:] = Z.T @ r
            sz = Z * s[:, None]
            cross = alpha * np.stack([np.bincount(ia, sz[:, j], minlength=n)
                                      - np.bincount(ib, sz[:, j], minlength=n) for j in range(k)], 1)
            hess[:n, n:] = cross
            hess[n:, :n] = cross.T
            hess[n:, n:] = Z.T @ sz
        grad += l2 * theta
        hess[np.diag_indices(p_all)] += l2
        try:
            step = np.linalg.solve(hess[np.ix_(idx, idx)], grad[idx])
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(hess[np.ix_(idx, idx)], grad[idx], rcond=None)[0]
        t = 1.0
        while True:
            trial = theta.copy()
            trial[idx] -= t * step
            new = objective(trial)
            if new <= value + 1e-12 * abs(value) or t < 1e-8:
                break
            t /= 2
        moved = float(np.max(np.abs(t * step))) if len(step) else 0.0
        theta, value = trial, new
        if moved < tol or float(np.max(np.abs(grad[idx]), initial=0.0)) < tol:
            converged = True
            break
    theta[:n][~present] = np.nan
    return theta, converged
