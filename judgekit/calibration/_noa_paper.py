"""NOA exactly as CalibraEval describes it (``settings="paper"`` of :func:`judgekit.noa_fit`).

The map is parameterised on the sorted pooled observed values z_0 = 0 <= z_1 <= ... <= z_M = 1 as
g(z_k) = sum_{i<=k} e^{d_i} / sum_i e^{d_i}, started at d_k = z_k and moved by gradient descent on
the paper's loss, whose spread term is -lambda [g(s0) - g(s2)]^2: full-batch to the stopping rule
(``settings="paper"``), or one epoch of seeded mini-batches of 32 samples as the paper trains
(``settings="paper_minibatch"``). The exact gradient costs O(M) per step (one reversed cumulative
sum). Kept so that the paper's settings stay one argument away; judgekit's default fit is in
:mod:`judgekit.calibration.noa`.
"""

from __future__ import annotations

import math

import numpy as np

#: Objectives and the arrangements (columns of ``s``) each one reads.
NOA_OBJECTIVES: dict[str, tuple[int, ...]] = {
    "full": (0, 1, 2),  # Li et al. (2024), eq. 10
    "l1": (0, 2),  # eq. 19: ID swap only
    "l2": (0, 1),  # eq. 20: position swap only
    "four": (0, 1, 2, 3),  # judgekit: all four arrangements
}
#: Which map each arrangement uses: t1 shown first (X0, X2) or second (X1, X3).
POSITION_MAP = {0: "t1_first", 1: "t1_second", 2: "t1_first", 3: "t1_second"}


def check_samples(s: np.ndarray, objective: str, maps: str) -> np.ndarray:
    """``s`` as a float K x 4 array after checking it and the objective/maps choice."""
    if objective not in NOA_OBJECTIVES:
        raise ValueError(f"objective must be one of {sorted(NOA_OBJECTIVES)}, got {objective!r}")
    if maps not in ("shared", "position"):
        raise ValueError(f"maps must be 'shared' or 'position', got {maps!r}")
    if maps == "position" and objective not in ("full", "four"):
        raise ValueError("maps='position' needs an objective that sees t1 in both positions "
                         "('full' or 'four')")
    s = np.asarray(s, dtype=float)
    if s.ndim != 2 or s.shape[1] != 4:
        raise ValueError(f"s must be a K x 4 array of P(t1) in X0..X3, got shape {s.shape}")
    used = s[:, list(NOA_OBJECTIVES[objective])]
    if np.isnan(used).any():
        raise ValueError(f"objective {objective!r} needs P(t1) in arrangements "
                         f"{', '.join(f'X{j}' for j in NOA_OBJECTIVES[objective])} for every sample")
    if ((used < 0) | (used > 1)).any():
        raise ValueError("P(t1) must lie in [0, 1]")
    if len(s) < 2:
        raise ValueError(f"NOA needs at least 2 estimation samples, got {len(s)}")
    return s


def _sq(x: np.ndarray) -> float:
    """Sum of squares without BLAS (whose threads stall on a busy machine for short vectors)."""
    return float(np.square(x).sum())


def _terms(objective: str, v: dict[int, np.ndarray], lam: float) -> tuple[float, dict[int, np.ndarray]]:
    """Loss and its derivative with respect to each v_j = g(s_j) (summed over samples)."""
    if objective == "full":
        a, b, c = v[0] + v[2] - 1.0, v[0] - v[1], v[0] - v[2]
        loss = _sq(a) + _sq(b) - lam * _sq(c)
        return loss, {0: 2 * a + 2 * b - 2 * lam * c, 1: -2 * b, 2: 2 * a + 2 * lam * c}
    if objective == "l1":
        a, c = v[0] + v[2] - 1.0, v[0] - v[2]
        return _sq(a) - lam * _sq(c), {0: 2 * a - 2 * lam * c, 2: 2 * a + 2 * lam * c}
    if objective == "l2":
        b, c = v[0] - v[1], v[0] - 0.5
        return _sq(b) - lam * _sq(c), {0: 2 * b - 2 * lam * c, 1: -2 * b}
    # "four": 1/2 [A^2 + B^2 + C^2 + D^2] - lam/2 [R1^2 + R2^2]
    a, b = v[0] + v[2] - 1.0, v[1] + v[3] - 1.0
    c, d = v[0] - v[1], v[2] - v[3]
    r1, r2 = v[0] - v[2], v[1] - v[3]
    loss = 0.5 * (_sq(a) + _sq(b) + _sq(c) + _sq(d)) - 0.5 * lam * (_sq(r1) + _sq(r2))
    return loss, {
        0: a + c - lam * r1,
        1: b - c - lam * r2,
        2: a + d + lam * r1,
        3: b - d + lam * r2,
    }


class _Problem:
    """Grid, indices and parameter layout of one NOA fit (one or two maps)."""

    def __init__(self, s: np.ndarray, objective: str, maps: str) -> None:
        s = check_samples(s, objective, maps)
        self.objective, self.cols = objective, NOA_OBJECTIVES[objective]
        self.K = len(s)
        names = {j: (POSITION_MAP[j] if maps == "position" else "shared") for j in self.cols}
        self.map_names = sorted(set(names.values()), key=["shared", "t1_first", "t1_second"].index)
        self.z: dict[str, np.ndarray] = {}
        self.idx: dict[int, np.ndarray] = {}
        self.offset: dict[str, int] = {}
        start = 0
        for name in self.map_names:
            cols = [j for j in self.cols if names[j] == name]
            # every observed value is its own grid point, tied values included (M = 3K + 1 for
            # the paper's objective). Merging exact ties instead would make the fit jump when a
            # tie is broken by rounding noise (1e-13 moved a one-step map by up to 0.07): g's
            # initial shape is a weighted empirical CDF of the pooled values, which merging
            # distorts. Ties keep their input order (stable sort) and are averaged in the map.
            values = np.concatenate([[0.0], s[:, cols].ravel(order="F"), [1.0]])
            order = np.argsort(values, kind="stable")
            z = values[order]
            position = np.empty(len(values), dtype=np.intp)
            position[order] = np.arange(len(values))
            inverse = position[1:-1].reshape(len(cols), self.K)
            for i, j in enumerate(cols):
                self.idx[j] = inverse[i] + start
            self.z[name] = z
            self.offset[name] = start
            start += len(z)
        self.n_params = start
        self.names = names
        self.flat_idx = np.concatenate([self.idx[j] for j in self.cols])

    def segments(self):
        for name in self.map_names:
            lo = self.offset[name]
            yield name, slice(lo, lo + len(self.z[name]))

    def init(self) -> np.ndarray:
        """d_k = z_k (Li et al. 2024, Algorithm 1), centred per map."""
        d = np.concatenate([self.z[name] for name in self.map_names])
        return self._centre(d)

    def _centre(self, d: np.ndarray) -> np.ndarray:
        d = d.copy()
        for _, seg in self.segments():
            d[seg] -= d[seg].mean()
        return d

    def g_and_w(self, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """g(z_k) = sum_{i<=k} e^{d_i} / sum_i e^{d_i} per map, and the softmax weights w."""
        g = np.empty_like(d)
        w = np.empty_like(d)
        for _, seg in self.segments():
            e = np.exp(d[seg] - d[seg].max())
            c = np.cumsum(e)
            total = c[-1]
            np.divide(e, total, out=w[seg])
            np.divide(c, total, out=g[seg])
            g[seg.stop - 1] = 1.0
        return g, w

    def loss_and_grad(self, d: np.ndarray, lam: float, rows: np.ndarray | None = None
                      ) -> tuple[float, np.ndarray]:
        """The loss and its exact gradient in O(M + K).

        With w = softmax(d) (per map) and G_j = dL/dg(z_j) accumulated over samples,
        dg(z_j)/dd_k = w_k (1[j >= k] - g(z_j)), so
        dL/dd_k = w_k (sum_{j >= k} G_j - sum_j G_j g(z_j)): one reversed cumulative sum.
        With ``rows`` (sample indices, a mini-batch) the loss is summed over those samples only.
        """
        g, w = self.g_and_w(d)
        idx = self.flat_idx.reshape(len(self.cols), self.K)
        if rows is not None:
            idx = idx[:, rows]
        v = g[idx]
        loss, dv = _terms(self.objective, dict(zip(self.cols, v)), lam)
        G = np.bincount(idx.ravel(), weights=np.concatenate([dv[j] for j in self.cols]),
                        minlength=self.n_params)
        grad = np.empty_like(d)
        for _, seg in self.segments():
            Gs = G[seg]
            tail = np.cumsum(Gs[::-1])[::-1]
            tail -= float((Gs * g[seg]).sum())
            np.multiply(w[seg], tail, out=grad[seg])
        return loss, grad

    def loss(self, d: np.ndarray, lam: float) -> float:
        g, _ = self.g_and_w(d)
        return _terms(self.objective, {j: g[self.idx[j]] for j in self.cols}, lam)[0]


def _simplify(x: np.ndarray, y: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """Few knots (greedy) whose linear interpolation is within ``tol`` of (x, y) everywhere.

    From each kept knot a, a later point i may end the segment when the straight line a→i passes
    within ``tol`` of every point in between (its slope lies in the cone those points allow);
    the farthest such i is kept. Between points the error is bounded by the error at the points.
    """
    n = len(x)
    if tol <= 0 or n <= 2:
        return x, y
    xs, ys = x.tolist(), y.tolist()  # plain floats: this loop is pure Python
    keep = [0]
    a = 0
    while a < n - 1:
        lo, hi = -math.inf, math.inf
        best = a + 1
        for i in range(a + 1, n):
            dx = xs[i] - xs[a]
            dy = ys[i] - ys[a]
            if lo <= dy / dx <= hi:
                best = i
            lo = max(lo, (dy - tol) / dx)
            hi = min(hi, (dy + tol) / dx)
            if lo > hi:
                break
        keep.append(best)
        a = best
    idx = np.asarray(keep)
    return x[idx], y[idx]


def _batches(K: int, batch_size: int, epochs: int, seed) -> list[np.ndarray]:
    """Sample indices of each mini-batch: per epoch a seeded shuffle cut into ``batch_size``
    pieces (the last one smaller when ``batch_size`` does not divide K)."""
    gen = np.random.default_rng(seed)
    out = []
    for _ in range(epochs):
        order = gen.permutation(K)
        out += [order[i:i + batch_size] for i in range(0, K, batch_size)]
    return out


def fit_paper(
    s: np.ndarray, objective: str, maps: str, lam: float, lr: float, tol: float, max_iter: int,
    knot_tol: float, *, batch_size: int | None = None, epochs: int = 1, seed=0,
) -> dict:
    """The paper's gradient descent; returns the fields of :class:`~judgekit.NOAFit`.

    ``batch_size=None``: full-batch steps on the summed loss until Σ|Δd| < ``tol`` or
    ``max_iter`` steps. Otherwise ``epochs`` passes of seeded mini-batches of ``batch_size``
    samples, one step on each batch's summed loss (``tol`` and ``max_iter`` unused); the fit
    counts as converged when the passes are done.
    """
    problem = _Problem(s, objective, maps)
    d = problem.init()
    history = []
    converged = False
    n_iter = 0
    if batch_size is not None:
        for n_iter, rows in enumerate(_batches(problem.K, batch_size, epochs, seed), start=1):  # noqa: B007
            history.append(problem.loss(d, lam))
            _, grad = problem.loss_and_grad(d, lam, rows)
            d = problem._centre(d - lr * grad)
        converged = True
    else:
        for n_iter in range(1, max_iter + 1):  # noqa: B007 (n_iter is reported)
            loss, grad = problem.loss_and_grad(d, lam)
            history.append(loss)
            new = problem._centre(d - lr * grad)
            step = float(np.abs(new - d).sum())
            d = new
            if step < tol:
                converged = True
                break
    history.append(problem.loss(d, lam))
    g, _ = problem.g_and_w(d)
    from scipy.optimize import isotonic_regression  # here: scipy.optimize is slow to import

    knots = {}
    for name, seg in problem.segments():
        y = np.clip(isotonic_regression(g[seg], increasing=True).x, 0.0, 1.0)
        x, first = np.unique(problem.z[name], return_index=True)  # z is sorted
        y = np.add.reduceat(y, first) / np.diff(np.append(first, len(y)))  # mean over ties
        knots[name] = _simplify(x, y, knot_tol)
    return {"knots": knots, "n_iter": n_iter, "converged": converged,
            "loss": np.asarray(history), "n_samples": problem.K, "n_grid": problem.n_params}


def _dense_gradient(problem: _Problem, d: np.ndarray, lam: float, block: int = 512) -> np.ndarray:
    """The same gradient through the explicit M x M Jacobian (in row blocks): O(M^2) per step.

    The straightforward implementation, kept as a reference for tests and the benchmark.
    """
    g, w = problem.g_and_w(d)
    _, dv = _terms(problem.objective, {j: g[problem.idx[j]] for j in problem.cols}, lam)
    G = np.zeros_like(d)
    for j in problem.cols:
        G += np.bincount(problem.idx[j], weights=dv[j], minlength=problem.n_params)
    grad = np.empty_like(d)
    for _, seg in problem.segments():
        gs, ws, Gs = g[seg], w[seg], G[seg]
        m = len(gs)
        jj = np.arange(m)
        out = np.empty(m)
        for k0 in range(0, m, block):
            k = np.arange(k0, min(k0 + block, m))
            jac = ws[k][:, None] * ((jj[None, :] >= k[:, None]) - gs[None, :])  # dg_j/dd_k
            out[k] = jac @ Gs
        grad[seg] = out
    return grad
