"""CalibraEval's non-parametric order-preserving calibration (NOA), with judgekit's bounded spread term.

The numerical core: :func:`noa_fit` takes P(t1) in the arrangements X0..X3 for K estimation
pairs and returns monotone maps g (knots of a piecewise-linear function) such that g(P(t1)) is
consistent across arrangements. :func:`judgekit.calibrate` wraps it for judgments tables.

Two settings. ``"judgekit"`` (the default) replaces the paper's unbounded spread reward by a
spread anchored to what the pair shows, which makes the loss a convex quadratic in the map, and
fits it to convergence; ``"paper_minibatch"`` is Li et al.'s (2024) algorithm trained as they
train it (one epoch of mini-batches of 32), ``"paper"`` the same algorithm run full-batch to its
stopping rule (:mod:`judgekit.calibration._noa_paper`). ``docs/calibration.md`` compares them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.special import expit, logit

from judgekit._stack import warn_once
from judgekit._stamp import stamped
from judgekit.calibration._noa_paper import NOA_OBJECTIVES, POSITION_MAP, check_samples, fit_paper
from judgekit.exceptions import ConvergenceWarning

__all__ = ["NOA_OBJECTIVES", "NOA_SETTINGS", "NOAFit", "noa_fit"]

#: Default hyper-parameters of each setting of :func:`noa_fit`.
NOA_SETTINGS: dict[str, dict[str, float | int | None]] = {
    "judgekit": {"lam": 2.0, "tol": 1e-10, "max_iter": 10_000},
    "paper": {"lam": 0.5, "lr": 10.0, "tol": 1e-3, "max_iter": 300},
    "paper_minibatch": {"lam": 0.5, "lr": 10.0, "tol": 1e-3, "max_iter": 300, "batch_size": 32,
                        "epochs": 1},
}
_PAPER = ("paper", "paper_minibatch")
_MAP_ORDER = ["shared", "t1_first", "t1_second"]
_CLIP = 1e-12  # P(t1) is clipped to [_CLIP, 1 - _CLIP] before taking logits


@dataclass(frozen=True)
class NOAFit:
    """Result of :func:`noa_fit`.

    Attributes
    ----------
    knots : dict of str to (ndarray, ndarray)
        Per map (``"shared"``, or ``"t1_first"`` and ``"t1_second"``), increasing x in [0, 1]
        and the calibrated P(t1) at those x; the map is their linear interpolation.
    objective, maps : str
        What was fitted.
    n_iter : int
        Iterations taken (gradient steps for the paper's settings; projected-gradient steps
        after the unconstrained solution for ``"judgekit"``, 0 when that solution is already
        monotone).
    converged : bool
        Whether the stopping rule fired before ``max_iter`` (``"paper_minibatch"``: whether
        the epoch was completed, always True).
    loss : ndarray
        The paper's settings: the (full) loss before each step and after the last one. ``"judgekit"``: the loss
        of the identity map (the raw probabilities), then after each iteration (the first is the
        monotone projection of the unconstrained solution).
    n_samples, n_grid : int
        K estimation samples, and the parameters of the map (grid points M + 1 for the
        paper's settings, knots for ``"judgekit"``; summed over maps).
    settings : str
        ``"judgekit"``, ``"paper"`` or ``"paper_minibatch"``.
    """

    knots: dict[str, tuple[np.ndarray, np.ndarray]]
    objective: str
    maps: str
    n_iter: int
    converged: bool
    loss: np.ndarray = field(repr=False)
    n_samples: int = 0
    n_grid: int = 0
    settings: str = "judgekit"

    def __call__(self, s: np.ndarray, t1_first: np.ndarray | bool = True) -> np.ndarray:
        """Calibrated P(t1) for observed P(t1) ``s`` (with where t1 sits, for position maps)."""
        return apply_knots(self.knots, s, t1_first)


def apply_knots(
    knots: dict[str, tuple[np.ndarray, np.ndarray]], s: np.ndarray, t1_first: np.ndarray | bool = True
) -> np.ndarray:
    """Evaluate piecewise-linear monotone maps at ``s``; NaN stays NaN."""
    s = np.asarray(s, dtype=float)
    out = np.full(s.shape, np.nan)
    if "shared" in knots:
        x, y = knots["shared"]
        ok = ~np.isnan(s)
        out[ok] = np.interp(s[ok], x, y)
    else:
        first = np.broadcast_to(np.asarray(t1_first, dtype=bool), s.shape)
        for name, where in (("t1_first", first), ("t1_second", ~first)):
            ok = where & ~np.isnan(s)
            x, y = knots[name]
            out[ok] = np.interp(s[ok], x, y)
    return np.clip(out, 0.0, 1.0)


def _spread_target(sa: np.ndarray, sb: np.ndarray) -> np.ndarray:
    """The spread g(sa) − g(sb) of an ID-swapped pair if the bias were a shift of the logit:
    2 σ((logit sa − logit sb) / 2) − 1 (the shift cancels in the difference of logits)."""
    xa = logit(np.clip(sa, _CLIP, 1.0 - _CLIP))
    xb = logit(np.clip(sb, _CLIP, 1.0 - _CLIP))
    return 2.0 * expit((xa - xb) / 2.0) - 1.0


def _anchored_terms(objective: str, s: np.ndarray, lam: float) -> list[tuple[dict[int, float], np.ndarray, float]]:
    """The loss as weighted squared residuals: (coefficients of g(s_j), target, weight) per term.

    A term's residual is Σ_j coef_j g(s_j) − target. The consistency terms are the paper's; its
    spread reward −λ c² becomes the anchored λ (c − c_observed)².
    """
    K = len(s)
    one, zero = np.ones(K), np.zeros(K)
    if objective == "full":
        return [({0: 1.0, 2: 1.0}, one, 1.0), ({0: 1.0, 1: -1.0}, zero, 1.0),
                ({0: 1.0, 2: -1.0}, _spread_target(s[:, 0], s[:, 2]), lam)]
    if objective == "l1":
        return [({0: 1.0, 2: 1.0}, one, 1.0), ({0: 1.0, 2: -1.0}, _spread_target(s[:, 0], s[:, 2]), lam)]
    if objective == "l2":
        # the paper's spread term is −λ (g(s0) − 0.5)²; anchored at the observed s0 − 0.5
        return [({0: 1.0, 1: -1.0}, zero, 1.0), ({0: 1.0}, s[:, 0], lam)]
    return [  # "four", with the ½ of the paper-setting loss
        ({0: 1.0, 2: 1.0}, one, 0.5), ({1: 1.0, 3: 1.0}, one, 0.5),
        ({0: 1.0, 1: -1.0}, zero, 0.5), ({2: 1.0, 3: -1.0}, zero, 0.5),
        ({0: 1.0, 2: -1.0}, _spread_target(s[:, 0], s[:, 2]), 0.5 * lam),
        ({1: 1.0, 3: -1.0}, _spread_target(s[:, 1], s[:, 3]), 0.5 * lam),
    ]


def default_n_knots(n_samples: int) -> int:
    """Knots per map between 0 and 1: 2 K^(1/4), between 6 and 40 (8 at K = 300, 24 at 20,000).

    Each knot's value is estimated from the samples around it, so fewer knots give a steadier
    map; 2 K^(1/4) keeps the centre of an unbiased judge's map within about 0.003 of 0.5 at
    K = 300 (docs/calibration.md), while a logit shift is still followed to about 0.005.
    """
    return int(np.clip(round(2.0 * n_samples ** 0.25), 6, 40))


def _fit_anchored(
    s: np.ndarray, objective: str, maps: str, lam: float, tol: float, max_iter: int,
    n_knots: int | None,
) -> dict:
    """judgekit's NOA: the anchored loss over a monotone piecewise-linear map, solved exactly."""
    cols = NOA_OBJECTIVES[objective]
    K = len(s)
    names = {j: (POSITION_MAP[j] if maps == "position" else "shared") for j in cols}
    map_names = sorted(set(names.values()), key=_MAP_ORDER.index)
    n_inner = default_n_knots(K) if n_knots is None else n_knots
    knots, offset, start = {}, {}, 0
    for name in map_names:
        pooled = np.concatenate([s[:, j] for j in cols if names[j] == name])
        inner = np.quantile(pooled, np.linspace(0.0, 1.0, n_inner))
        knots[name] = np.unique(np.concatenate([[0.0], inner, [1.0]]))
        offset[name] = start
        start += len(knots[name])
    m = start
    # g(s_j) = (1 - w_j) theta[i_j] + w_j theta[i_j + 1]: two knots and weights per sample
    where, weight = {}, {}
    for j in cols:
        x = knots[names[j]]
        i = np.clip(np.searchsorted(x, s[:, j], side="right") - 1, 0, len(x) - 2)
        w = (s[:, j] - x[i]) / (x[i + 1] - x[i])
        where[j] = (i + offset[names[j]], i + 1 + offset[names[j]])
        weight[j] = (1.0 - w, w)

    def gram(j: int, k: int) -> np.ndarray:
        """P_j' P_k, where P_j is the K x m interpolation matrix of column j."""
        out = np.zeros(m * m)
        for a in range(2):
            for b in range(2):
                out += np.bincount(where[j][a] * m + where[k][b], weights=weight[j][a] * weight[k][b],
                                   minlength=m * m)
        return out.reshape(m, m)

    grams: dict[tuple[int, int], np.ndarray] = {}
    H = np.zeros((m, m))
    b = np.zeros(m)
    c0 = 0.0
    for coefs, target, term_weight in _anchored_terms(objective, s, lam):
        # H += w A'A and b += w A' target for A = sum_j c_j P_j
        for j, cj in coefs.items():
            for k, ck in coefs.items():
                key = (min(j, k), max(j, k))
                if key not in grams:
                    grams[key] = gram(*key)
                G = grams[key] if j <= k else grams[key].T
                H += term_weight * cj * ck * G
            for a in range(2):
                b += term_weight * cj * np.bincount(where[j][a], weights=weight[j][a] * target, minlength=m)
        c0 += term_weight * float(target @ target)

    def loss(theta: np.ndarray) -> float:
        return float(theta @ H @ theta - 2.0 * b @ theta + c0)

    # g(0) = 0 and g(1) = 1: a certain judge stays certain; the rest are free and monotone
    fixed = np.zeros(m, dtype=bool)
    value = np.zeros(m)
    segments, pos = [], 0
    for name in map_names:
        lo, n = offset[name], len(knots[name])
        fixed[[lo, lo + n - 1]] = True
        value[lo + n - 1] = 1.0
        segments.append(slice(pos, pos + n - 2))
        pos += n - 2
    free = ~fixed
    x_all = np.concatenate([knots[name] for name in map_names])
    Hf = H[np.ix_(free, free)]
    bf = b[free] - H[np.ix_(free, fixed)] @ value[fixed]
    # a negligible ridge toward the identity makes the optimum unique (knots no sample informs
    # stay on the identity) without moving the others measurably
    ridge = 1e-9 * max(float(np.trace(Hf)) / max(Hf.shape[0], 1), 1e-12)
    Hf = Hf + ridge * np.eye(len(Hf))
    bf = bf + ridge * x_all[free]

    from scipy.optimize import isotonic_regression  # here: scipy.optimize is slow to import

    def project(t: np.ndarray) -> np.ndarray:
        out = np.empty_like(t)
        for seg in segments:
            if seg.stop > seg.start:
                out[seg] = np.clip(isotonic_regression(t[seg]).x, 0.0, 1.0)
        return out

    def full(t: np.ndarray) -> np.ndarray:
        theta = value.copy()
        theta[free] = t
        return theta

    history = [loss(x_all)]  # the identity map: the raw probabilities
    if not free.any():  # every observed value is 0 or 1: nothing to fit
        theta = np.zeros(0)
        converged, L = True, 1.0
    else:
        theta = project(np.linalg.solve(Hf, bf))
        L = float(np.linalg.eigvalsh(Hf)[-1])
        converged = np.abs(theta - project(theta - (Hf @ theta - bf) / L)).max(initial=0.0) < tol
    history.append(loss(full(theta)))
    n_iter = 0
    y, t = theta.copy(), 1.0
    while not converged and n_iter < max_iter:
        # FISTA with gradient restart (Beck & Teboulle 2009; O'Donoghue & Candès 2015)
        n_iter += 1
        new = project(y - (Hf @ y - bf) / L)
        converged = np.abs(new - y).max(initial=0.0) < tol
        if (y - new) @ (new - theta) > 0:
            t = 1.0
        t_next = (1.0 + np.sqrt(1.0 + 4.0 * t * t)) / 2.0
        y = new + ((t - 1.0) / t_next) * (new - theta)
        theta, t = new, t_next
        history.append(loss(full(theta)))
    theta = full(theta)
    out = {name: (knots[name], theta[offset[name]:offset[name] + len(knots[name])].copy())
           for name in map_names}
    return {"knots": out, "n_iter": n_iter, "converged": bool(converged),
            "loss": np.asarray(history), "n_samples": K, "n_grid": m}


def default_objective(s: np.ndarray, settings: str = "judgekit") -> str:
    """``"four"`` when every sample has P(t1) in X3 too (judgekit settings), else ``"full"``."""
    s = np.asarray(s, dtype=float)
    if settings == "judgekit" and s.ndim == 2 and s.shape[1] == 4 and not np.isnan(s).any():
        return "four"
    return "full"


@stamped
def noa_fit(
    s: np.ndarray,
    *,
    objective: str | None = None,
    maps: str = "shared",
    settings: str = "judgekit",
    lam: float | None = None,
    lr: float | None = None,
    tol: float | None = None,
    max_iter: int | None = None,
    n_knots: int | None = None,
    knot_tol: float = 1e-7,
    seed: int | None = 0,
) -> NOAFit:
    """Fit CalibraEval's NOA calibration map(s) on K estimation samples.

    Parameters
    ----------
    s : array of shape (K, 4)
        P(t1) in arrangements X0..X3 per estimation pair (NaN where an arrangement is not used
        by ``objective``); see :func:`judgekit.arrangement_table`.
    objective : {"full", "l1", "l2", "four"}, optional
        ``"full"``: the paper's eq. 10 on X0, X1, X2; ``"l1"`` (eq. 19, ID swap only, X0 and X2)
        and ``"l2"`` (eq. 20, position swap only, X0 and X1) are the paper's Table 3 ablations;
        ``"four"`` uses all four arrangements (Notes). Default: ``"four"`` when every sample
        has all four arrangements and ``settings="judgekit"``, else ``"full"``.
    maps : {"shared", "position"}
        One map for P(t1) (the paper), or one map for arrangements where t1 is shown first
        (X0, X2) and another where it is shown second (X1, X3).
    settings : {"judgekit", "paper_minibatch", "paper"}
        ``"judgekit"`` (default): the spread term anchored to each pair's observed spread, a
        convex problem solved to convergence; the map is a smooth calibration.
        ``"paper_minibatch"``: Li et al.'s algorithm and hyper-parameters as they train it, one
        epoch of seeded mini-batches of 32 samples. ``"paper"``: the same algorithm run
        full-batch to its stopping rule, whose map sharpens into a step (Notes).
    lam : float, optional
        λ, the weight of the spread term (judgekit 2, paper 0.5).
    lr : float, optional
        The paper's settings only: γ, the gradient-descent step on the summed loss (10; per
        mini-batch with ``"paper_minibatch"``).
    tol : float, optional
        Stopping rule. ``"paper"``: stop when Σ|Δd| over all parameters falls below ε (1e-3);
        not used by ``"paper_minibatch"``, which stops after one epoch.
        ``"judgekit"``: stop when a projected-gradient step moves no knot by more than ``tol``
        (1e-10).
    max_iter : int, optional
        Most iterations (paper 300, judgekit 10,000). A fit that stops here warns
        (:class:`judgekit.exceptions.ConvergenceWarning`).
    n_knots : int, optional
        ``settings="judgekit"`` only: knots per map at quantiles of the pooled observed values,
        plus 0 and 1 (default 2 K^(1/4), between 6 and 40).
    knot_tol : float
        The paper's settings only: the stored map is simplified to the fewest knots within this
        distance of the fitted points (0 keeps every grid point).
    seed : int or None
        ``settings="paper_minibatch"`` only: seeds the shuffle that cuts the samples into
        mini-batches.

    Returns
    -------
    NOAFit
        The fitted map(s) as knots, with the objective, the iterations taken, whether the
        stopping rule fired and the loss trace (see :class:`NOAFit`).

    Notes
    -----
    **The loss.** For v_j = g(s_j), the paper's objective (Li et al. 2024, eq. 10) is

        L = Σ_i [v0 + v2 − 1]² + [v0 − v1]² − λ [v0 − v2]².

    The first two terms ask for consistency under the ID swap and the position swap; the third
    keeps g away from the constant 0.5, which satisfies both. But it rewards spreading without
    bound: for a judge with a token bias b (s0 = σ(δ + b), s2 = σ(−δ + b)) every map that is
    odd about σ(b) meets the consistency terms exactly, and among those the spread term picks
    the steepest, a step at σ(b). Gradient descent gets there within tens of steps, and the
    calibrated probabilities become hard 0/1 verdicts.

    **judgekit's spread term** anchors the spread instead of rewarding it:
    +λ [v0 − v2 − c_i]², with c_i = 2 σ((logit s0 − logit s2) / 2) − 1, the spread the pair
    would have if its bias were a shift of the logit (the shift cancels in logit s0 − logit
    s2). The ID term fixes v0 + v2 and the anchor v0 − v2, so each pair alone points at its
    ID-symmetrised probability σ((logit s0 − logit s2) / 2); the map g, one monotone function
    of P(t1) for all pairs, is the compromise that also honours the position term. A logit
    shift is then removed exactly and an unbiased judge is left as it is (up to the slight
    flattening that noise between arrangements causes through the consistency terms, which
    λ = 2 keeps small); a bias of another shape is corrected as far as one monotone map can.
    The paper's ablations are anchored the same way (``"l2"``: λ [v0 − s0]²).

    The loss is now a convex quadratic in the map's values. The map is piecewise linear in
    P(t1) with knots at quantiles of the pooled observed values, g(0) = 0 and g(1) = 1, and
    non-decreasing; the minimum is found by solving the unconstrained normal equations and, if
    that solution is not monotone, by accelerated projected gradient with the projection onto
    monotone maps by :func:`scipy.optimize.isotonic_regression` (PAVA, as the paper uses for
    its continuous map). The result does not depend on step sizes or step counts.

    **settings="paper"** (Li et al. 2024, §3.3 and Algorithm 1): pool the observed values of
    the used arrangements, sort them into z_1..z_{M-1} (M = 3K + 1; ties are separate points)
    and add z_0 = 0, z_M = 1; g(z_k) = Σ_{i≤k} e^{d_i} / Σ_{i≤M} e^{d_i}; start from d_k = z_k
    and take full-batch gradient steps d ← d − γ ∂L/∂d, centring d after each, until Σ|Δd| < ε.
    With w = softmax(d) and G_j = ∂L/∂g(z_j) the exact gradient is
    ∂L/∂d_k = w_k (Σ_{j≥k} G_j − Σ_j G_j g(z_j)), one reversed cumulative sum, O(M) per step.
    The continuous map is the isotonic fit of (z_k, g(z_k)), averaged over tied z, interpolated
    linearly and clipped to [0, 1]. That is a full-batch reading; the paper trains with
    mini-batches of 32 samples for one epoch, which is **settings="paper_minibatch"**: the samples
    are shuffled (seeded by ``seed``) and cut into batches of 32 (the last one smaller), and each
    batch takes one step d ← d − γ ∂L_batch/∂d on its own summed loss, ⌈K/32⌉ steps in all. The
    collapse to a step needs many full-batch steps; one epoch of small steps stops well before it
    (``docs/calibration.md`` measures both against known truth).

    **The four-arrangement objective.** The paper's ID-swap term pairs X0 with X2, and in
    both t1 is in the first position, so a preference for the first position is read as a
    preference for t1 and "corrected" in X1, where t1 is second, in the wrong direction. No
    single map of P(t1) can remove a position bias: for a judge with only a position bias β,
    s0 = σ(δ + β) and s1 = σ(δ − β) for the same content, and g(s0) = g(s1) for every δ forces
    g to be constant. ``"four"`` treats the arrangements symmetrically:

        L = ½ Σ_i [v0 + v2 − 1]² + [v1 + v3 − 1]² + [v0 − v1]² + [v2 − v3]² + spread terms
            for (v0, v2) and (v1, v3),

    so with one shared map a position bias no longer leaks into the ID correction (it is left
    as it is), and with ``maps="position"`` the ID-swap terms let g_first and g_second absorb
    the bias of each t1 position while the position terms tie the two maps together.

    References
    ----------
    Li, Chen, Ai, Chu, Zhou, Dong, Liu (2024). CalibraEval: Calibrating Prediction Distribution
    to Mitigate Selection Bias in LLMs-as-Judges. arXiv:2410.15393, §3, Appendix A, Algorithm 1.
    Beck & Teboulle (2009). A fast iterative shrinkage-thresholding algorithm. O'Donoghue &
    Candès (2015). Adaptive restart for accelerated gradient schemes.

    Examples
    --------
    A judge with a token bias of +1 logit toward t1, judged in X0..X3:

    >>> import numpy as np
    >>> from scipy.special import expit
    >>> rng = np.random.default_rng(0)
    >>> delta = rng.normal(0, 2, 300)             # content, logit units
    >>> s = np.column_stack([expit(delta + 1), expit(delta + 1), expit(-delta + 1), expit(-delta + 1)])
    >>> fit = noa_fit(s)
    >>> fit.objective, fit.converged
    ('four', True)
    >>> np.round(fit(expit(np.array([-1.0, 1.0, 3.0]))), 2)   # σ(logit s − 1): 0.119, 0.5, 0.881
    array([0.12, 0.5 , 0.88])
    >>> paper = noa_fit(s, settings="paper")     # the paper's map: nearly a step at σ(1)
    >>> np.round(paper(expit(np.array([-1.0, 3.0]))), 3)
    array([0., 1.])
    """
    if settings not in NOA_SETTINGS:
        raise ValueError(f"settings must be one of {sorted(NOA_SETTINGS)}, got {settings!r}")
    return _noa_fit(s, objective=objective, maps=maps, settings=settings, lam=lam, lr=lr, tol=tol,
                    max_iter=max_iter, n_knots=n_knots, knot_tol=knot_tol, what="NOA", seed=seed)


def _noa_fit(s, *, objective, maps, settings, lam, lr, tol, max_iter, n_knots, knot_tol,
             what, seed=0) -> NOAFit:
    if settings not in NOA_SETTINGS:
        raise ValueError(f"settings must be one of {sorted(NOA_SETTINGS)}, got {settings!r}")
    defaults = NOA_SETTINGS[settings]
    paper = settings in _PAPER
    if settings == "judgekit" and lr is not None:
        raise ValueError("lr applies to settings='paper' only (judgekit's fit has no step size)")
    if paper and n_knots is not None:
        raise ValueError("n_knots applies to settings='judgekit' only (the paper's grid is every "
                         "observed value)")
    lam = float(defaults["lam"] if lam is None else lam)
    tol = float(defaults["tol"] if tol is None else tol)
    max_iter = int(defaults["max_iter"] if max_iter is None else max_iter)
    if objective is None:
        objective = default_objective(s, settings)
    if lam < 0 or tol < 0 or max_iter < 0:
        raise ValueError(f"need lam >= 0, tol >= 0 and max_iter >= 0, got lam={lam}, tol={tol}, "
                         f"max_iter={max_iter}")
    if n_knots is not None and (int(n_knots) != n_knots or n_knots < 2):
        raise ValueError(f"n_knots must be an integer >= 2, got {n_knots!r}")
    s = check_samples(s, objective, maps)
    if paper:
        lr = float(defaults["lr"] if lr is None else lr)
        if lr <= 0:
            raise ValueError(f"need lr > 0, got {lr}")
        out = fit_paper(s, objective, maps, lam, lr, tol, max_iter, knot_tol,
                        batch_size=defaults.get("batch_size"), epochs=int(defaults.get("epochs", 1)),
                        seed=seed)
        rule = f"Σ|Δd| fell below ε = {tol:g}"
    else:
        out = _fit_anchored(s, objective, maps, lam, tol, max_iter, n_knots)
        rule = f"the map moved by less than {tol:g}"
    if not out["converged"]:
        warn_once(f"{what} (settings={settings!r}) stopped after max_iter = {max_iter} "
                  f"iterations before {rule}", ConvergenceWarning)
    return NOAFit(objective=objective, maps=maps, settings=settings, **out)
