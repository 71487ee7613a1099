"""Length-controlled win rates (Dubois et al. 2024): a GLM with the length term zeroed out."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import special

from judgekit._columns import member
from judgekit._stack import caller_level
from judgekit._stamp import stamped
from judgekit.exceptions import ConvergenceWarning, MetricWarning
from judgekit.winrate._data import Prepared, bootstrap_counts, fold_of, prepare
from judgekit.winrate._glm import fit_joint, fit_small, single_threaded, soft_log_loss
from judgekit.winrate._tails import warn_heavy_tails
from judgekit.winrate.difficulty import difficulty_note, resolve_difficulty
from judgekit.winrate.rates import LN_TEMPERATURE, _balanced, _normalized

__all__ = [
    "FORMULA",
    "InstructionDifficulty",
    "instruction_difficulty",
    "lc_win_rate_matrix",
    "lc_win_rates",
]

#: The GLM every model is fitted with (model against baseline, instruction x).
FORMULA = "logit P(model > baseline | x) = theta + phi * tanh(dlen / sd(dlen)) + psi * gamma[x]"
#: Name of the formula in the ``formula`` column.
FORMULA_NAME = "length_controlled (Dubois et al. 2024)"
#: Default grid of L2 strengths searched by cross-validation for the per-model fits.
L2_GRID = tuple(np.logspace(-2, 3, 11))
#: Default grid of L2 strengths searched by cross-validation for the joint difficulty fit.
JOINT_L2_GRID = tuple(np.logspace(-2, 1, 7))
#: Default strength of the extra penalty on the length coefficient φ (Gaussian prior precision).
LENGTH_PENALTY = 20.0
_LC_COLUMNS = [
    "judge", "model", "baseline", "n", "avg_length", "win_rate", "discrete_win_rate", "lc_win_rate",
    "lc_se", "lc_ci_low", "lc_ci_high", "sem_fitted", "ln_win_rate", "lb_win_rate", "theta", "phi",
    "psi", "length_scale", "l2", "length_penalty", "length_prior", "converged", "formula",
    "difficulty",
]
#: What ``difficulty="auto"`` chooses per judge: the γ judgekit ships for a known annotator
#: (:func:`judgekit.load_difficulty`) when its baseline matches and it covers every instruction,
#: else a joint fit on the data.
DIFFICULTY_CHOICES = ("auto", "fit")


@dataclass(frozen=True)
class InstructionDifficulty:
    """The instruction-difficulty term γ_x of the LC GLM, fitted once across models.

    Attributes
    ----------
    gamma : Series
        γ_x indexed by instruction id (``instruction_id``, or a hash of the prompt).
    length_prior : float
        The centre φ₀ of the extra penalty on each model's length coefficient: the median of the
        per-model length slopes of the joint fit (the judge's typical length effect).
    l2 : float
        The L2 strength of the joint fit (chosen by cross-validation unless given).
    judge, baseline : str, optional
        What the difficulties were fitted on.
    terms : DataFrame, optional
        Per model: ``theta`` and ``phi`` of the joint fit, ``length_scale`` (sd of Δlen).
    cv : DataFrame, optional
        Cross-validation: ``l2`` and the mean held-out log loss ``log_loss``.
    source : dict, optional
        Provenance of a shipped γ (:func:`judgekit.load_difficulty`); None for one fitted here.

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> d = jk.InstructionDifficulty(gamma=pd.Series([0.5, -0.5], index=["x1", "x2"]),
    ...                              length_prior=1.5, l2=1.0)
    >>> float(d.gamma.mean())
    0.0
    """

    gamma: pd.Series
    length_prior: float
    l2: float
    judge: str | None = None
    baseline: str | None = None
    terms: pd.DataFrame | None = field(default=None, repr=False)
    cv: pd.DataFrame | None = field(default=None, repr=False)
    source: dict | None = field(default=None, repr=False)


def _length_feature(rows: pd.DataFrame) -> tuple[np.ndarray, pd.Series]:
    """tanh(Δlen / sd_m(Δlen)) per row and the sd per model (0 sd gives a zero feature)."""
    delta = rows["len_model"] - rows["len_baseline"]
    scale = delta.groupby(rows["model"]).std(ddof=1)
    s = rows["model"].map(scale).to_numpy(dtype=float)
    ok = np.isfinite(s) & (s > 0)
    t = np.zeros(len(rows))
    t[ok] = np.tanh(delta.to_numpy(dtype=float)[ok] / s[ok])
    return t, scale


def _grid(value: Sequence[float] | None, default: Sequence[float], name: str) -> np.ndarray:
    grid = np.sort(np.asarray(default if value is None else value, dtype=float))[::-1]
    if grid.ndim != 1 or not len(grid) or not np.all(grid > 0):
        raise ValueError(f"{name} must be a non-empty sequence of positive numbers")
    return grid


def _fit_difficulty(
    prep: Prepared, l2: float | str, l2_grid: Sequence[float] | None, n_folds: int, seed: int,
    weights: np.ndarray | None = None,
) -> InstructionDifficulty:
    rows = prep.rows
    if rows.empty:
        raise ValueError(f"judge {prep.judge!r}: no model other than the baseline to fit")
    instructions = prep.instructions
    models = pd.Index(prep.models)
    inst = instructions.get_indexer(rows["instruction"])
    model = models.get_indexer(rows["model"])
    t, scale = _length_feature(rows)
    y = rows["y"].to_numpy(dtype=float)
    w = np.ones(len(rows)) if weights is None else weights
    cv = None
    if isinstance(l2, str):
        if l2 != "cv":
            raise ValueError(f"l2 must be 'cv' or a positive number, got {l2!r}")
        grid = _grid(l2_grid, JOINT_L2_GRID, "l2_grid")
        # held-out unit: one (model, instruction) cell, so γ_x is always seen in training
        folds = fold_of(pd.Index(rows["model"] + "\x00" + rows["instruction"]), n_folds, seed)
        losses = np.zeros(len(grid))
        starts: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for k, lam in enumerate(grid):
            for f in range(n_folds):
                train = folds != f
                g, c, _ = fit_joint(inst, model, t, y, w * train, len(instructions), len(models),
                                    lam, start=starts.get(f))
                starts[f] = (g, c)
                eta = g[inst] + c[model, 0] + c[model, 1] * t
                losses[k] += soft_log_loss(eta[~train], y[~train], w[~train])
        cv = pd.DataFrame({"l2": grid, "log_loss": losses / w.sum()})
        lam = float(grid[int(np.argmin(losses))])
    else:
        lam = float(l2)
        if not lam > 0:
            raise ValueError(f"l2 must be > 0 for the joint fit, got {l2}")
    g, c, ok = fit_joint(inst, model, t, y, w, len(instructions), len(models), lam)
    terms = pd.DataFrame({"theta": c[:, 0], "phi": c[:, 1]}, index=pd.Index(models, name="model"))
    terms["length_scale"] = scale.reindex(models).to_numpy()
    return InstructionDifficulty(
        gamma=pd.Series(g, index=instructions, name="gamma"),
        length_prior=float(np.median(c[:, 1])), l2=lam, judge=prep.judge,
        baseline=prep.baseline, terms=terms, cv=cv,
    )


@stamped
def instruction_difficulty(
    judgments: pd.DataFrame,
    pairs: pd.DataFrame,
    *,
    baseline: str | None = None,
    judge: str | None = None,
    l2: float | str = "cv",
    l2_grid: Sequence[float] | None = None,
    n_folds: int = 5,
    preference: str = "auto",
    seed: int = 0,
) -> InstructionDifficulty:
    """Fit the instruction-difficulty term γ_x of the LC GLM jointly across all models.

    One regression over every (model, instruction) comparison with the baseline:
    logit P = γ_x + θ_m + φ_m·tanh(Δlen/sd_m(Δlen)), i.e. the LC GLM with ψ_m − ψ_b fixed to 1,
    and an L2 penalty on all coefficients. γ_x is kept; the per-model terms are refitted by
    :func:`lc_win_rates` with γ fixed.

    Parameters
    ----------
    judgments, pairs : DataFrame
        The tidy tables; pairs need ``model_a``/``model_b`` and one side must be the baseline.
    baseline : str, optional
        The reference model (inferred when one model is in every pair).
    judge : str, optional
        Which judge to use when ``judgments`` holds several.
    l2 : "cv" or float
        L2 strength (Gaussian prior precision, on the scale of the summed loss), or ``"cv"`` to
        pick it from ``l2_grid`` by ``n_folds``-fold cross-validation. The held-out unit is a
        (model, instruction) cell: holding out whole instructions would leave their γ unfitted.
    l2_grid : sequence of float, optional
        Candidates (default ``JOINT_L2_GRID``, 10⁻²..10).
    n_folds : int
        Folds of the cross-validation.
    preference : {"auto", "prob", "verdict"}
        As in :func:`judgekit.win_rates`.
    seed : int
        Seeds the fold assignment.

    Returns
    -------
    InstructionDifficulty
        γ_x by instruction, the centre φ₀ of the length penalty (median joint length slope), the
        chosen ``l2``, the joint per-model terms and the cross-validation table.

    References
    ----------
    Dubois, Galambosi, Liang, Hashimoto (2024). Length-Controlled AlpacaEval, §3 (Training).

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs, judgments, truth, gamma = jk.sim.simulate_leaderboard(6, 150, soft=True, seed=2)
    >>> d = jk.instruction_difficulty(judgments, pairs)
    >>> round(float(d.gamma.corr(gamma)), 2)
    1.0
    """
    preps = prepare(judgments, pairs, baseline, preference=preference)
    prep = _one_judge(preps, judge)
    with single_threaded():
        return _fit_difficulty(prep, l2, l2_grid, n_folds, seed)


def _one_judge(preps: Mapping[str, Prepared], judge: str | None) -> Prepared:
    if judge is not None:
        if judge not in preps:
            raise ValueError(f"judge {judge!r} is not in judgments; judges: {sorted(preps)}")
        return preps[judge]
    if len(preps) > 1:
        raise ValueError(f"judgments hold several judges {sorted(preps)}; pass judge=...")
    return next(iter(preps.values()))


def _design(prep: Prepared, gamma: pd.Series) -> dict[str, np.ndarray]:
    """Padded per-model arrays: X (M, n, 3) = [1, t, γ], y, w, instruction index, lengths."""
    rows = prep.rows
    unknown = ~member(rows["instruction"], gamma.index)
    if unknown.any():
        missing = pd.unique(rows.loc[unknown, "instruction"])
        raise ValueError(
            f"judge {prep.judge!r}: the instruction difficulty has no γ for {len(missing)} "
            f"instruction(s) ({', '.join(map(str, missing[:5]))}); fit it on data that includes them"
        )
    t, scale = _length_feature(rows)
    models = prep.models
    groups = rows.groupby("model", sort=True).indices
    n_max = max(len(ix) for ix in groups.values())
    M = len(models)
    X = np.zeros((M, n_max, 3))
    y = np.zeros((M, n_max))
    w = np.zeros((M, n_max))
    inst = np.full((M, n_max), -1, dtype=np.intp)
    instructions = prep.instructions
    all_inst = instructions.get_indexer(rows["instruction"])
    g = gamma.reindex(rows["instruction"]).to_numpy(dtype=float)
    for m, name in enumerate(models):
        ix = groups[name]
        k = len(ix)
        X[m, :k, 0] = 1.0
        X[m, :k, 1] = t[ix]
        X[m, :k, 2] = g[ix]
        y[m, :k] = rows["y"].to_numpy(dtype=float)[ix]
        w[m, :k] = 1.0
        inst[m, :k] = all_inst[ix]
    return {"X": X, "y": y, "w": w, "inst": inst, "scale": scale.reindex(models).to_numpy()}


def _penalty(lam: np.ndarray, length_penalty: float, length_prior: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-coefficient precision and centre combining the L2 term and the length penalty."""
    lam = np.asarray(lam, dtype=float)
    prec = np.stack([lam, lam + length_penalty, lam], axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        centre_phi = np.where(prec[..., 1] > 0, length_penalty * length_prior / prec[..., 1], 0.0)
    centre = np.stack([np.zeros_like(lam), centre_phi, np.zeros_like(lam)], axis=-1)
    return prec, centre


def _lc(beta: np.ndarray, X: np.ndarray, w: np.ndarray) -> np.ndarray:
    """100 · weighted mean over rows of σ(θ + ψ γ): the length-controlled win rate."""
    p = special.expit(beta[..., 0:1] + beta[..., 2:3] * X[..., 2])
    return 100.0 * np.sum(w * p, axis=-1) / np.sum(w, axis=-1)


def _fit_models(
    prep: Prepared, design: dict[str, np.ndarray], l2: float | str, l2_grid: Sequence[float] | None,
    length_penalty: float, length_prior: float, n_folds: int, seed: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-model fits with γ fixed; returns beta (M, 3), the L2 strength per model, converged."""
    X, y, w = design["X"], design["y"], design["w"]
    M = X.shape[0]
    if isinstance(l2, str):
        if l2 != "cv":
            raise ValueError(f"l2 must be 'cv' or a number >= 0, got {l2!r}")
        grid = _grid(l2_grid, L2_GRID, "l2_grid")
        folds_inst = fold_of(prep.instructions, n_folds, seed)
        folds = np.where(design["inst"] >= 0, folds_inst[np.maximum(design["inst"], 0)], -1)
        Xf = np.broadcast_to(X[:, None], (M, n_folds, *X.shape[1:])).reshape(M * n_folds, *X.shape[1:])
        yf = np.broadcast_to(y[:, None], (M, n_folds, y.shape[1])).reshape(M * n_folds, -1)
        held = folds[:, None, :] == np.arange(n_folds)[None, :, None]
        w_train = (w[:, None, :] * ~held).reshape(M * n_folds, -1)
        w_test = (w[:, None, :] * held).reshape(M * n_folds, -1)
        losses = np.zeros((M, len(grid)))
        beta = None
        for k, lam in enumerate(grid):
            prec, centre = _penalty(np.full(M * n_folds, lam), length_penalty, length_prior)
            beta, _ = fit_small(Xf, yf, w_train, prec, centre, beta0=beta)
            eta = (Xf @ beta[:, :, None])[:, :, 0]
            losses[:, k] = soft_log_loss(eta, yf, w_test).reshape(M, n_folds).sum(axis=1)
        lam_m = grid[np.argmin(losses, axis=1)]
    else:
        if not float(l2) >= 0:
            raise ValueError(f"l2 must be >= 0, got {l2}")
        lam_m = np.full(M, float(l2))
    prec, centre = _penalty(lam_m, length_penalty, length_prior)
    beta, ok = fit_small(X, y, w, prec, centre)
    return beta, lam_m, ok


def _warn_unconverged(prep: Prepared, ok: np.ndarray, what: str) -> None:
    if not ok.all():
        names = [m for m, good in zip(prep.models, ok) if not good]
        warnings.warn(f"judge {prep.judge!r}: the {what} did not converge for {names}; "
                      "a larger l2 helps", ConvergenceWarning, stacklevel=caller_level())


def _bootstrap(
    prep: Prepared, design: dict[str, np.ndarray], beta: np.ndarray, lam_m: np.ndarray,
    length_penalty: float, length_prior: float, diff: InstructionDifficulty, n_boot: int,
    refit_difficulty: bool, n_folds: int, seed: int, progress: bool,
) -> np.ndarray:
    """(n_boot, M) LC win rates on resamples of the instructions, refitting every model."""
    X, y, w, inst = design["X"], design["y"], design["w"], design["inst"]
    M = X.shape[0]
    counts = bootstrap_counts(len(prep.instructions), n_boot, seed + 1)
    row_counts = lambda c: np.where(inst >= 0, c[..., np.maximum(inst, 0)], 0.0)  # noqa: E731
    out = np.empty((n_boot, M))
    from tqdm.auto import tqdm

    bar = tqdm(total=n_boot, desc=f"LC bootstrap ({prep.judge})", disable=not progress, leave=False)
    if refit_difficulty:
        rows_inst = prep.instructions.get_indexer(prep.rows["instruction"])
        for b in range(n_boot):
            d_b = _fit_difficulty(prep, diff.l2, None, n_folds, seed, weights=counts[b][rows_inst])
            design_b = _design(prep, d_b.gamma)
            prior = d_b.length_prior if length_prior is None else length_prior
            prec, centre = _penalty(lam_m, length_penalty, prior)
            wb = w * row_counts(counts[b])
            beta_b, _ = fit_small(design_b["X"], y, wb, prec, centre, beta0=beta)
            out[b] = _lc(beta_b, design_b["X"], wb)
            bar.update(1)
    else:
        prec, centre = _penalty(lam_m, length_penalty, length_prior)
        chunk = max(1, 2_000_000 // (M * X.shape[1]))  # ~50 MB of design per chunk
        for start in range(0, n_boot, chunk):
            c = counts[start:start + chunk]
            B = len(c)
            wb = (w[None] * row_counts(c[:, None, :])).reshape(B * M, -1)
            Xb = np.broadcast_to(X[None], (B, *X.shape)).reshape(B * M, *X.shape[1:])
            yb = np.broadcast_to(y[None], (B, *y.shape)).reshape(B * M, -1)
            pb = np.broadcast_to(prec[None], (B, M, 3)).reshape(B * M, 3)
            cb = np.broadcast_to(centre[None], (B, M, 3)).reshape(B * M, 3)
            b0 = np.broadcast_to(beta[None], (B, M, 3)).reshape(B * M, 3)
            beta_b, _ = fit_small(Xb, yb, wb, pb, cb, beta0=b0)
            out[start:start + B] = _lc(beta_b, Xb, wb).reshape(B, M)
            bar.update(B)
    bar.close()
    return out


@stamped
def lc_win_rates(
    judgments: pd.DataFrame,
    pairs: pd.DataFrame,
    *,
    baseline: str | None = None,
    difficulty: str | InstructionDifficulty | Mapping[str, InstructionDifficulty] | None = "auto",
    l2: float | str = "cv",
    l2_grid: Sequence[float] | None = None,
    length_penalty: float = LENGTH_PENALTY,
    length_prior: float | None = None,
    difficulty_l2: float | str = "cv",
    n_folds: int = 5,
    n_boot: int = 200,
    bootstrap_difficulty: bool = False,
    ci: float = 0.95,
    preference: str = "auto",
    seed: int = 0,
    progress: bool = False,
) -> pd.DataFrame:
    """Length-controlled win rate of every model against the baseline, per judge.

    For model m, baseline b and instruction x the judge's preference is modelled as
    logit P(m ≻ b | x) = θ + φ·tanh(Δlen/sd(Δlen)) + ψ·γ_x (Δlen = len(m) − len(b) in
    characters, sd over the model's pairs); the LC win rate is the win rate this GLM predicts
    when the length term is zero: 100·mean_x σ(θ + ψ γ_x).

    Step 1 takes γ_x, the instruction difficulty: for a judge judgekit ships it for (a public
    AlpacaEval annotator, :func:`load_difficulty`), the γ fitted on the public leaderboard;
    otherwise one joint fit over all models of the data (:func:`instruction_difficulty`).
    Step 2 fits (θ, φ, ψ) for each model separately with γ fixed, using soft labels (the
    judge's probability) and an L2 penalty whose strength is chosen per model by cross-validation
    over folds of instructions, plus an extra penalty pulling φ towards the judge's typical
    length slope φ₀. Because each model is fitted alone, adding a model leaves
    the others' numbers unchanged once γ is fixed.

    Parameters
    ----------
    judgments, pairs : DataFrame
        The tidy tables; pairs need ``model_a``/``model_b`` with the baseline on one side, and
        ``instruction_id`` (else the prompt identifies the instruction). Lengths come from
        ``len_a``/``len_b`` (characters unless you supply other units there).
    baseline : str, optional
        The reference model (inferred when one model takes part in every pair).
    difficulty : "auto", "fit", InstructionDifficulty or mapping judge -> InstructionDifficulty
        Where γ comes from, per judge. ``"auto"`` (default): the γ judgekit ships for a judge of
        that name (:func:`load_difficulty`; AlpacaEval's ``weighted_alpaca_eval_gpt4_turbo``)
        when its baseline is this baseline and it covers every instruction, else fitted here.
        ``"fit"`` (or None): always fitted here, jointly on the models of the data. Or a fixed γ
        (e.g. fitted on a larger leaderboard). With one or a few models, a γ fitted here absorbs
        part of their own outcomes: one AlpacaEval file fitted alone sits further from the
        leaderboard than with the shipped γ (the numbers are in ``attrs``, below).
    l2 : "cv" or float
        L2 strength on θ, φ, ψ (a Gaussian prior precision on the scale of the summed loss), or
        ``"cv"``: chosen per model from ``l2_grid`` by ``n_folds``-fold cross-validation grouped by
        instruction, minimising the held-out soft log loss.
    l2_grid : sequence of float, optional
        Candidates for ``l2`` (default ``L2_GRID``, 10⁻²..10³).
    length_penalty : float
        Strength λ_φ of the extra penalty ½·λ_φ·(φ − φ₀)² on the length coefficient (default
        ``LENGTH_PENALTY``). It makes a model whose weak answers are all short (e.g. truncated)
        explain its losses through θ rather than through length; 0 switches it off.
    length_prior : float, optional
        φ₀; default the difficulty's ``length_prior`` (the median length slope of the joint fit).
    difficulty_l2 : "cv" or float
        ``l2`` of the joint difficulty fit when ``difficulty`` is not given.
    n_folds : int
        Cross-validation folds (both fits).
    n_boot : int
        Bootstrap resamples of the instructions for ``lc_se`` and the interval; every resample
        refits every model (0 skips the bootstrap).
    bootstrap_difficulty : bool
        Also refit γ on every resample (slower; by default γ stays fixed).
    ci : float
        Coverage of the percentile interval.
    preference : {"auto", "prob", "verdict"}
        As in :func:`judgekit.win_rates`.
    seed : int
        Seeds folds and bootstrap.
    progress : bool
        Show a progress bar over the bootstrap.

    Returns
    -------
    DataFrame
        One row per (judge, model), the baseline included (at 50 by definition), sorted by LC win
        rate: ``judge``, ``model``, ``baseline``, ``n`` (pairs), ``avg_length`` (mean characters
        of the model's responses), ``win_rate`` (raw, %), ``discrete_win_rate``,
        ``lc_win_rate`` (%), ``lc_se`` (bootstrap), ``lc_ci_low``, ``lc_ci_high``, ``sem_fitted``
        (the reference implementation's standard error: SEM of the fitted per-instruction
        probabilities, not a sampling error; kept for comparison), ``ln_win_rate`` and
        ``lb_win_rate`` (:func:`length_normalized_win_rates`, :func:`length_balanced_win_rates`),
        the fitted terms ``theta``, ``phi``, ``psi``, ``length_scale`` (sd of Δlen), ``l2``,
        ``length_penalty``, ``length_prior``, ``converged``, ``formula`` and ``difficulty``
        (where γ came from: ``"shipped"``, ``"fitted"`` on the data, or ``"given"``). A model
        none of whose judgments is usable has a row of NaN (``n`` 0) and a
        :class:`judgekit.exceptions.MetricWarning` names it. ``attrs["judgekit_difficulty"]``
        holds, per judge, the source, the number of models γ was fitted on and a ``note``; for
        a shipped γ the note says how far single-file LC win rates sat from the published
        leaderboard on models left out of its fit.

    Notes
    -----
    Per model the fit minimises Σ_x w_x[log(1 + e^η) − y_x η] + ½λ(θ² + φ² + ψ²) + ½λ_φ(φ − φ₀)²
    with η = θ + φ·tanh(Δlen/sd) + ψγ_x and y_x the judge's preference for the model (averaged
    over orders and repeats). Identity (a model judged equal to the baseline gets 50) and
    symmetry (LC(m, b) = 100 − LC(b, m)) hold exactly because the length feature is odd and the
    model and instruction terms are differences. ``lc_se`` comes from a bootstrap over
    instructions that refits the GLM on every resample, with the L2 strengths fixed at their
    cross-validated values.

    The reference implementation (alpaca_eval's ``length_controlled_v1``) replaces the extra
    penalty by down-weighted extra rows comparing the baseline with its own verbose and concise
    variants, and looks γ up by row position, which misaligns γ for models with missing
    annotations; judgekit looks it up by instruction id.

    References
    ----------
    Dubois, Galambosi, Liang, Hashimoto (2024). Length-Controlled AlpacaEval: A Simple Way to
    Debias Automatic Evaluators, §3 and §4.3.

    Examples
    --------
    >>> import judgekit as jk
    >>> sim = jk.sim.simulate_leaderboard(6, 150, soft=True, seed=0)  # judge follows the GLM exactly
    >>> lb = jk.lc_win_rates(sim.judgments, sim.pairs, n_boot=0)
    >>> lb[["model", "win_rate", "lc_win_rate"]].round(1).head(3)
          model  win_rate  lc_win_rate
    0   model_5      73.1         61.7
    1   model_4      59.6         51.5
    2  baseline      50.0         50.0
    >>> fitted = lb.set_index("model")["lc_win_rate"]
    >>> bool((fitted[sim.truth.index] - sim.truth["lc_win_rate"]).abs().max() < 1)
    True
    """
    if length_penalty < 0:
        raise ValueError(f"length_penalty must be >= 0, got {length_penalty}")
    if n_boot < 0 or not 0 < ci < 1:
        raise ValueError("need n_boot >= 0 and 0 < ci < 1")
    if isinstance(difficulty, str) and difficulty not in DIFFICULTY_CHOICES:
        raise ValueError(f"difficulty must be one of {DIFFICULTY_CHOICES}, an "
                         f"InstructionDifficulty or a mapping judge -> one; got {difficulty!r}")
    preps = prepare(judgments, pairs, baseline, preference=preference)
    frames = []
    notes: dict[str, dict] = {}
    with single_threaded():
        for judge, prep in preps.items():
            warn_heavy_tails(prep.rows, judge)
            missing = prep.unusable
            if missing:
                warnings.warn(
                    f"lc_win_rate is NaN for judge {judge!r} and model(s) {missing}: none of their "
                    "judgments has a usable preference", MetricWarning, stacklevel=caller_level())
            nan_rows = pd.DataFrame({"judge": judge, "model": missing, "baseline": prep.baseline,
                                     "n": 0, "converged": False, "formula": FORMULA_NAME})
            if prep.rows.empty:
                frames.append(nan_rows)
                continue
            diff, how = resolve_difficulty(prep, difficulty, len(preps), difficulty_l2, n_folds, seed)
            notes[judge] = difficulty_note(prep, diff, how)
            prior = diff.length_prior if length_prior is None else float(length_prior)
            design = _design(prep, diff.gamma)
            beta, lam_m, ok = _fit_models(prep, design, l2, l2_grid, length_penalty, prior,
                                          n_folds, seed)
            _warn_unconverged(prep, ok, "LC fit")
            X, w = design["X"], design["w"]
            lc = _lc(beta, X, w)
            p_fit = special.expit(beta[:, 0:1] + beta[:, 2:3] * X[..., 2])
            n = w.sum(axis=1)
            mean = (w * p_fit).sum(axis=1) / n
            sem = 100.0 * np.sqrt((w * (p_fit - mean[:, None]) ** 2).sum(axis=1) / (n - 1) / n)
            if n_boot:
                boots = _bootstrap(prep, design, beta, lam_m, length_penalty,
                                   None if (bootstrap_difficulty and length_prior is None) else prior,
                                   diff, n_boot, bootstrap_difficulty, n_folds, seed, progress)
                alpha = (1 - ci) / 2
                se = np.std(boots, axis=0, ddof=1)
                lo, hi = np.quantile(boots, [alpha, 1 - alpha], axis=0)
            else:
                se = lo = hi = np.full(len(lc), np.nan)
            rows = prep.rows
            g = rows.groupby("model", sort=True)
            wr = 100.0 * g["y"].mean()
            # the same formulas as length_normalized_win_rates / length_balanced_win_rates
            normalized = _normalized(LN_TEMPERATURE)
            ln = pd.Series({m: float(normalized(np.ones((1, len(r))), r)[0]) for m, r in g})
            lb_ = pd.Series({m: float(_balanced(np.ones((1, len(r))), r)[0]) for m, r in g})
            df = pd.DataFrame({
                "judge": judge, "model": prep.models, "baseline": prep.baseline,
                "n": g.size().to_numpy(), "avg_length": g["len_model"].mean().to_numpy(),
                "win_rate": wr.to_numpy(), "discrete_win_rate": 100.0 * g["y_discrete"].mean().to_numpy(),
                "lc_win_rate": lc, "lc_se": se, "lc_ci_low": lo, "lc_ci_high": hi, "sem_fitted": sem,
                "ln_win_rate": ln.reindex(prep.models).to_numpy(),
                "lb_win_rate": lb_.reindex(prep.models).to_numpy(),
                "theta": beta[:, 0], "phi": beta[:, 1], "psi": beta[:, 2],
                "length_scale": design["scale"], "l2": lam_m, "length_penalty": float(length_penalty),
                "length_prior": prior, "converged": ok, "formula": FORMULA_NAME, "difficulty": how,
            })
            base_len = rows.drop_duplicates("instruction")["len_baseline"].mean()
            ident = prep.identity
            base = {
                "judge": judge, "model": prep.baseline, "baseline": prep.baseline, "n": len(ident),
                "avg_length": base_len, "win_rate": 50.0, "discrete_win_rate": 50.0,
                "lc_win_rate": 50.0, "lc_se": 0.0, "lc_ci_low": 50.0, "lc_ci_high": 50.0,
                "sem_fitted": 0.0, "ln_win_rate": 50.0, "lb_win_rate": 50.0, "theta": 0.0, "phi": 0.0,
                "psi": 0.0, "length_scale": np.nan, "l2": np.nan, "length_penalty": float(length_penalty),
                "length_prior": prior, "converged": True, "formula": FORMULA_NAME, "difficulty": how,
            }
            frames.append(pd.concat([pd.DataFrame([base]), df] + ([nan_rows] if missing else []),
                                    ignore_index=True))
    out = pd.concat(frames, ignore_index=True).reindex(columns=_LC_COLUMNS)
    out = out.sort_values(["judge", "lc_win_rate"], ascending=[True, False], kind="stable",
                          na_position="last").reset_index(drop=True)
    out.attrs["judgekit_difficulty"] = notes
    return out


@stamped
def lc_win_rate_matrix(
    leaderboard: pd.DataFrame,
    difficulty: InstructionDifficulty,
    *,
    models: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Predicted LC win rate of every fitted model against every other (the paper's Fig. 5).

    With one baseline b fitted, LC(m, m') = 100·mean_x σ((θ_m − θ_m') + (ψ_m − ψ_m')·γ_x), the
    win rate the GLM predicts for m against m' at equal lengths. The matrix is exactly
    antisymmetric around 50 and its diagonal is 50.

    Parameters
    ----------
    leaderboard : DataFrame
        Output of :func:`lc_win_rates` for one judge (columns ``model``, ``theta``, ``psi``).
    difficulty : InstructionDifficulty
        The γ the leaderboard was fitted with.
    models : sequence of str, optional
        Subset and order of models (default: the leaderboard's order).

    Returns
    -------
    DataFrame
        Long form, one row per (model, versus): ``model``, ``versus`` (the model in the baseline
        role) and ``lc_win_rate`` (%), ready for a heatmap (``pivot(index="model",
        columns="versus")`` gives the square matrix).

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs, judgments, *_ = jk.sim.simulate_leaderboard(3, 150, seed=0)
    >>> d = jk.instruction_difficulty(judgments, pairs, l2=1.0)
    >>> lb = jk.lc_win_rates(judgments, pairs, difficulty=d, n_boot=0)
    >>> mat = jk.lc_win_rate_matrix(lb, d).pivot(index="model", columns="versus",
    ...                                           values="lc_win_rate")
    >>> bool(abs(mat.to_numpy() + mat.to_numpy().T - 100).max() < 1e-9)
    True
    """
    if "judge" in leaderboard.columns and leaderboard["judge"].nunique() > 1:
        raise ValueError("leaderboard holds several judges; pass one judge's rows")
    lb = leaderboard.drop_duplicates("model").set_index("model")
    names = list(lb.index) if models is None else list(models)
    missing = [m for m in names if m not in lb.index]
    if missing:
        raise ValueError(f"models not in the leaderboard: {missing}")
    theta = lb.loc[names, "theta"].to_numpy(dtype=float)
    psi = lb.loc[names, "psi"].to_numpy(dtype=float)
    g = difficulty.gamma.to_numpy(dtype=float)
    eta = (theta[:, None, None] - theta[None, :, None]) + (psi[:, None, None] - psi[None, :, None]) * g
    mat = 100.0 * special.expit(eta).mean(axis=-1)
    mat[np.diag_indices(len(names))] = 50.0
    return pd.DataFrame({
        "model": np.repeat(names, len(names)), "versus": np.tile(names, len(names)),
        "lc_win_rate": mat.reshape(-1),
    })
