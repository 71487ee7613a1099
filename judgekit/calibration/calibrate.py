"""``jk.calibrate``: fit a label-free calibration of a judge's A/B probabilities and apply it."""

from __future__ import annotations

import json
import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from judgekit._stack import caller_level
from judgekit._stamp import stamped
from judgekit.calibration.arrangements import _arrangement_codes, _cells
from judgekit.calibration.baselines import divide_prior, pride_prior
from judgekit.calibration.noa import NOA_SETTINGS, _noa_fit, apply_knots
from judgekit.exceptions import MetricWarning
from judgekit.schema import validate_judgments

__all__ = ["CALIBRATION_METHODS", "Calibration", "Calibrator", "calibrate", "load_calibrator"]

#: Methods of :func:`calibrate`.
CALIBRATION_METHODS = ("noa", "noa4", "pride", "contextual", "domain_context")
_FORMAT = "judgekit-calibrator"
_VERSION = 1
_NOA_DEFAULTS = {"noa": ("full", "shared"), "noa4": ("four", "position")}


_VERDICTS = np.array(["b", "tie", "a", None], dtype=object)


@dataclass
class _Rows:
    """Per-row arrays of a validated judgments table, computed once (no Python loop over rows)."""

    source: pd.DataFrame
    judges: list[str]
    judge_code: np.ndarray
    code: np.ndarray
    a_has_t1: np.ndarray
    t1_first: np.ndarray
    p_t1: np.ndarray

    @classmethod
    def of(cls, df: pd.DataFrame) -> _Rows:
        judge_code, judges = pd.factorize(df["judge"], sort=False)  # order of appearance
        code, a_has_t1 = _arrangement_codes(df["order"], df["id_swap"])
        p = df["p_a"].to_numpy(dtype=float)
        return cls(source=df, judges=[str(j) for j in judges], judge_code=judge_code, code=code,
                   a_has_t1=a_has_t1, t1_first=~df["id_swap"].to_numpy(dtype=bool),
                   p_t1=np.where(a_has_t1, p, 1.0 - p))

    def by_judge(self) -> list[np.ndarray]:
        """Row indices of each judge (in code order), each in table order."""
        order = np.argsort(self.judge_code, kind="stable")
        return np.split(order, np.cumsum(np.bincount(self.judge_code, minlength=len(self.judges)))[:-1])


@dataclass
class Calibrator:
    """A fitted calibration for one or more judges; apply it to any judgments of those judges.

    Made by :func:`calibrate`; saved to and loaded from a small JSON file with :meth:`save` and
    :func:`load_calibrator` (no pickle).

    Attributes
    ----------
    method : str
        One of :data:`CALIBRATION_METHODS`.
    params : dict
        The settings it was fitted with.
    maps : dict
        Per judge: ``{"kind": "knots", "knots": {name: (x, y)}}`` (NOA: piecewise-linear maps of
        P(t1), ``name`` is ``"shared"`` or ``"t1_first"``/``"t1_second"``) or
        ``{"kind": "prior", "priors": {name: prior}}`` (Pride, CC, DC: the prior P(t1) divided
        out) or ``{"kind": "none", "reason": why}`` (a judge whose data allowed no fit: its
        calibrated probabilities are NaN, with a :class:`judgekit.exceptions.MetricWarning`).
    info : dict
        Per judge: what the fit saw (estimation pairs, iterations, convergence, ...).
    """

    method: str
    params: dict[str, Any]
    maps: dict[str, dict[str, Any]]
    info: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def judges(self) -> list[str]:
        """The judges this calibrator knows."""
        return sorted(self.maps)

    def calibrated_t1(self, judge: str, s: np.ndarray, t1_first: np.ndarray) -> np.ndarray:
        """Calibrated P(t1) for one judge's observed P(t1) ``s`` and where t1 sits."""
        if judge not in self.maps:
            raise KeyError(f"this calibrator has no map for judge {judge!r}; it knows {self.judges}")
        entry = self.maps[judge]
        s = np.asarray(s, dtype=float)
        first = np.broadcast_to(np.asarray(t1_first, dtype=bool), s.shape)
        if entry["kind"] == "none":
            return np.full(s.shape, np.nan)
        if entry["kind"] == "knots":
            knots = {k: (np.asarray(x), np.asarray(y)) for k, (x, y) in entry["knots"].items()}
            return apply_knots(knots, s, first)
        priors = entry["priors"]
        if "shared" in priors:
            prior = np.full(s.shape, priors["shared"])
        else:
            prior = np.where(first, priors["t1_first"], priors["t1_second"])
        out = divide_prior(s, prior)
        return np.where(np.isnan(s), np.nan, out)

    def apply(self, judgments: pd.DataFrame) -> pd.DataFrame:
        """Add ``p_a_calibrated`` and ``verdict_calibrated`` to judgments of known judges.

        Parameters
        ----------
        judgments : DataFrame
            A judgments table; every ``judge`` must be one this calibrator was fitted for.

        Returns
        -------
        DataFrame
            The validated judgments plus ``p_a_calibrated`` (calibrated probability that response
            a is preferred; NaN where ``p_a`` is) and ``verdict_calibrated`` ("a" above 0.5, "b"
            below, "tie" at exactly 0.5, None where ``p_a_calibrated`` is NaN).
        """
        df = validate_judgments(judgments)
        if df.empty:
            raise ValueError("judgments: the table is empty; there is nothing to calibrate")
        return self._apply(df)

    def _apply(self, df: pd.DataFrame, rows: _Rows | None = None, *, warn: bool = True) -> pd.DataFrame:
        rows = rows or _Rows.of(df)
        unknown = [j for j in rows.judges if j not in self.maps]
        if unknown:
            raise KeyError(f"judgments: column 'judge' has judges this calibrator was not fitted for: "
                           f"{sorted(unknown)}; it knows {self.judges}")
        if warn:
            for judge in rows.judges:
                if self.maps[judge]["kind"] == "none":
                    warnings.warn(f"p_a_calibrated is NaN for judge {judge!r}: the calibrator has no "
                                  f"map for it ({self.maps[judge]['reason']})", MetricWarning,
                                  stacklevel=caller_level())
        cal_t1 = np.full(len(df), np.nan)
        for code, idx in enumerate(rows.by_judge()):
            cal_t1[idx] = self.calibrated_t1(rows.judges[code], rows.p_t1[idx], rows.t1_first[idx])
        p = np.where(rows.a_has_t1, cal_t1, 1.0 - cal_t1)
        missing = np.isnan(p)
        # 0: b, 1: tie, 2: a, 3: missing
        verdict = _VERDICTS[np.where(missing, 3, np.sign(np.where(missing, 0.5, p) - 0.5).astype(np.int8) + 1)]
        out = df.copy(deep=False)
        out["p_a_calibrated"] = p
        out["verdict_calibrated"] = verdict
        return out

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description (floats kept exactly)."""
        maps = {}
        for judge, entry in self.maps.items():
            if entry["kind"] == "knots":
                knots = {k: {"x": np.asarray(x, dtype=float).tolist(),
                             "y": np.asarray(y, dtype=float).tolist()}
                         for k, (x, y) in entry["knots"].items()}
                maps[judge] = {"kind": "knots", "knots": knots}
            elif entry["kind"] == "none":
                maps[judge] = {"kind": "none", "reason": str(entry["reason"])}
            else:
                maps[judge] = {"kind": "prior", "priors": {k: float(v) for k, v in entry["priors"].items()}}
        return {"format": _FORMAT, "version": _VERSION, "method": self.method,
                "params": self.params, "maps": maps, "info": self.info}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Calibrator:
        """Rebuild a calibrator from :meth:`to_dict` output."""
        if not isinstance(data, dict) or data.get("format") != _FORMAT:
            raise ValueError(f"not a judgekit calibrator (expected format {_FORMAT!r})")
        if data.get("version") != _VERSION:
            raise ValueError(f"unsupported calibrator version {data.get('version')!r}; "
                             f"this judgekit reads version {_VERSION}")
        maps = {}
        for judge, entry in data["maps"].items():
            if entry["kind"] == "knots":
                knots = {}
                for name, xy in entry["knots"].items():
                    x, y = np.asarray(xy["x"], dtype=float), np.asarray(xy["y"], dtype=float)
                    if x.shape != y.shape or x.size < 2 or np.any(np.diff(x) <= 0) or np.any(np.diff(y) < 0):
                        raise ValueError(f"calibrator map {judge!r}/{name!r} is not an increasing "
                                         "monotone set of knots")
                    knots[name] = (x, y)
                maps[judge] = {"kind": "knots", "knots": knots}
            elif entry["kind"] == "prior":
                priors = {k: float(v) for k, v in entry["priors"].items()}
                if not all(0.0 < v < 1.0 for v in priors.values()):
                    raise ValueError(f"calibrator priors of {judge!r} must lie in (0, 1)")
                maps[judge] = {"kind": "prior", "priors": priors}
            elif entry["kind"] == "none":
                maps[judge] = {"kind": "none", "reason": str(entry.get("reason", ""))}
            else:
                raise ValueError(f"calibrator map of {judge!r} has unknown kind {entry['kind']!r}")
        return cls(method=data["method"], params=dict(data["params"]), maps=maps,
                   info=dict(data.get("info", {})))

    def save(self, path: str | Path) -> Path:
        """Write the calibrator as JSON (written to a temporary file, then renamed; a link at
        ``path`` is replaced, never written through)."""
        from judgekit._safewrite import write_file

        return write_file(path, json.dumps(self.to_dict(), indent=1, allow_nan=False))

    def __repr__(self) -> str:
        return f"Calibrator(method={self.method!r}, judges={self.judges})"


def load_calibrator(path: str | Path) -> Calibrator:
    """Read a calibrator written by :meth:`Calibrator.save`.

    Parameters
    ----------
    path : str or Path
        The JSON file :meth:`Calibrator.save` wrote.

    Returns
    -------
    Calibrator
        The same method, parameters and per-judge maps as the calibrator that was saved, ready
        for :meth:`Calibrator.apply` to new judgments of those judges.

    Raises
    ------
    ValueError
        Naming the file, when it is not JSON, not a judgekit calibrator, of an unsupported
        version, or holds a map that is not monotone.

    Examples
    --------
    >>> import judgekit as jk, tempfile, os
    >>> _, j, _ = jk.sim.simulate_judgments(200, token_bias=1.0, id_swap=(False, True), seed=0)
    >>> cal = jk.calibrate(j, "pride").calibrator
    >>> path = cal.save(os.path.join(tempfile.mkdtemp(), "cal.json"))
    >>> jk.load_calibrator(path).maps == cal.maps
    True
    """
    from judgekit._jsonfile import parse_json

    path = Path(path)
    data = parse_json(path.read_bytes(), path)
    try:
        return Calibrator.from_dict(data)
    except (KeyError, TypeError, ValueError) as err:
        raise ValueError(f"{path}: {err}") from err


class Calibration(NamedTuple):
    """What :func:`calibrate` returns: ``calibrator, judgments = jk.calibrate(...)``."""

    calibrator: Calibrator
    judgments: pd.DataFrame


_OBJECTIVE_COLUMNS = {"full": (0, 1, 2), "l1": (0, 2), "l2": (0, 1), "four": (0, 1, 2, 3)}


def _needed(method: str, objective: str | None, by_position: bool) -> tuple[int, ...]:
    """Arrangements (0..3 for X0..X3) an estimation pair must have."""
    if method in ("noa", "noa4"):
        return _OBJECTIVE_COLUMNS[objective]
    if method == "pride":
        return (0, 1, 2, 3) if by_position else (0, 2)
    return ()


def _estimation_positions(n: int, fit_on: str, size: int | float, rng: np.random.Generator,
                          judge: str) -> np.ndarray:
    """Positions (sorted) of the estimation pairs among ``n`` eligible pairs in pair_id order."""
    if fit_on == "all":
        return np.arange(n)
    if 0 < size < 1:
        k = max(int(round(size * n)), 2)
    elif float(size).is_integer():
        k = int(size)
    else:
        raise ValueError(f"estimation_size must be a fraction in (0, 1) or a whole number of "
                         f"pairs, got {size}")
    if k < 2 or k > n:
        raise ValueError(f"judge {judge!r}: estimation_size {size} asks for {k} pairs but "
                         f"{n} pairs have the needed arrangements (need 2..{n})")
    # the same draw as choosing k of the sorted pair ids themselves
    return np.sort(rng.choice(n, size=k, replace=False))


def _names(cols: tuple[int, ...]) -> str:
    return ", ".join(f"X{j}" for j in cols)


def _content_free_priors(
    rows: _Rows, content_free: pd.DataFrame, by_position: bool,
) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """Per judge, the mean P(t1) of its content-free judgments with t1 first / second."""
    cf = validate_judgments(content_free, name="content_free")
    code, a_has_t1 = _arrangement_codes(cf["order"], cf["id_swap"])
    p = cf["p_a"].to_numpy(dtype=float)
    p_t1 = np.where(a_has_t1, p, 1.0 - p)
    judge = pd.Index(rows.judges).get_indexer(cf["judge"])
    t1_first = ~cf["id_swap"].to_numpy(dtype=bool)
    ok = (judge >= 0) & ~np.isnan(p_t1)
    n_j = len(rows.judges)
    layouts = {"t1_first": True, "t1_second": False} if by_position else {"shared": True}
    stats = {}
    for name, first in layouts.items():
        sel = ok & (t1_first == first)
        stats[name] = (np.bincount(judge[sel], minlength=n_j),
                       np.bincount(judge[sel], weights=p_t1[sel], minlength=n_j))
    fitted, info = {}, {}
    for code_j, judge_name in enumerate(rows.judges):
        missing = [name for name, (count, _) in stats.items() if count[code_j] == 0]
        if missing:
            where = " and ".join("first" if layouts[name] else "second" for name in missing)
            fitted[judge_name] = {"kind": "none", "reason": (
                f"content_free has no judgment of it with t1 in the {where} position "
                f"(id_swap={not layouts[missing[0]]}) that has a p_a")}
            continue
        fitted[judge_name] = {"kind": "prior", "priors": {
            name: float(total[code_j] / count[code_j]) for name, (count, total) in stats.items()}}
        info[judge_name] = {"n_content_free": {name: int(count[code_j]) for name, (count, _) in stats.items()}}
    return fitted, info


@stamped
def calibrate(
    judgments: pd.DataFrame,
    method: str = "noa",
    *,
    fit_on: str = "split",
    estimation_size: int | float = 0.5,
    seed: int = 0,
    content_free: pd.DataFrame | None = None,
    by_position: bool = False,
    objective: str | None = None,
    maps: str | None = None,
    settings: str = "judgekit",
    lam: float | None = None,
    lr: float | None = None,
    tol: float | None = None,
    max_iter: int | None = None,
    n_knots: int | None = None,
    knot_tol: float = 1e-7,
) -> Calibration:
    """Fit a label-free calibration of each judge's A/B probabilities and apply it.

    Parameters
    ----------
    judgments : DataFrame
        Judgments with ``p_a`` (from the verdict token's logprobs) and ``id_swap``. Each judge is
        calibrated separately. NOA and Pride learn from pairs judged in several arrangements
        (see :func:`judgekit.with_arrangements`); the fitted map then applies to every judgment
        with a ``p_a``, whatever its arrangement.
    method : {"noa", "noa4", "pride", "contextual", "domain_context"}
        ``"noa"``: CalibraEval's NOA (Li et al. 2024), one map of P(t1). ``"noa4"``: judgekit's
        variant on all four arrangements with one map per t1 position, which also removes a
        position bias (see :func:`judgekit.noa_fit`). ``"pride"``: prior from the ID
        permutations X0/X2 (Zheng et al. 2024). ``"contextual"`` / ``"domain_context"``: prior
        from judgments of content-free pairs (:func:`judgekit.content_free_pairs` with
        ``kind="na"`` / ``"domain"``), passed as ``content_free``.
    fit_on : {"split", "all"}
        ``"split"`` (default): fit on ``estimation_size`` pairs drawn at random and evaluate on
        the rest; ``"all"``: fit on every eligible pair (the paper's setting, in-sample).
    estimation_size : int or float
        Number of estimation pairs, or a fraction of the eligible pairs (default 0.5).
    seed : int
        Seeds the estimation sample.
    content_free : DataFrame, optional
        Judgments of content-free pairs by the same judges (contextual / domain-context only).
    by_position : bool
        Pride, CC, DC: estimate one prior with t1 in the first position and one with t1 second
        (needs X1/X3, or content-free judgments with ``id_swap`` True), instead of the paper's
        single prior from the default ID layout (``id_swap`` False).
    objective : {"full", "l1", "l2", "four"}, optional
        NOA objective. Default for ``noa``: ``"four"`` for a judge judged in all four
        arrangements (so a first-position preference is not read as a t1 preference), else the
        paper's ``"full"`` (X0, X1, X2); with ``settings="paper"`` always ``"full"``. Default
        for ``noa4``: ``"four"``. ``"l1"``/``"l2"`` are the paper's Table 3 ablations.
    maps : {"shared", "position"}, optional
        NOA: one map of P(t1), or one per t1 position (default "shared" for ``noa``,
        "position" for ``noa4``).
    settings : {"judgekit", "paper_minibatch", "paper"}
        NOA: judgekit's bounded spread term solved to convergence (default; calibrated
        probabilities stay probabilities), the paper's algorithm and hyper-parameters trained
        as the paper does (one epoch of mini-batches of 32, shuffled with ``seed``), or
        the same run full-batch to its stopping rule (its map sharpens into a step); see
        :func:`judgekit.noa_fit`.
    lam, lr, tol, max_iter, n_knots, knot_tol
        NOA's λ, step size (paper only), stopping tolerance, iteration limit, knots per map
        (judgekit only) and stored-map tolerance (paper only); ``None`` takes the defaults of
        ``settings`` (:data:`judgekit.calibration.noa.NOA_SETTINGS`).

    Returns
    -------
    Calibration
        ``(calibrator, judgments)``: the fitted :class:`Calibrator`, and the judgments with
        ``p_a_calibrated``, ``verdict_calibrated`` and ``calibration_split`` ("estimation" for
        pairs the fit saw, "evaluation" for the rest; content-free methods see none).

    Raises
    ------
    ValueError
        An empty table, unknown options, or no judge with the arrangements the method needs
        (the message names the arrangements present).

    Warns
    -----
    MetricWarning
        A judge with no probability at all (e.g. every call failed), too few pairs in the
        needed arrangements while other judges have them, or no content-free judgments: its
        ``p_a_calibrated`` is NaN and the warning names it and the reason.
    ConvergenceWarning
        NOA stopped at ``max_iter`` before its stopping rule fired.

    Notes
    -----
    Calibrated probabilities are P(t1) mapped by the fitted map and turned back into response
    terms: P(a) = g(P(t1)) when a carries t1, 1 − g(P(t1)) otherwise. The table is handled
    with integer codes of its judge, pair and arrangement columns throughout (no Python loop
    over rows), so a table of 200,000 pairs in four arrangements calibrates in about a second.

    References
    ----------
    Li, Chen, Ai, Chu, Zhou, Dong, Liu (2024). CalibraEval, arXiv:2410.15393. Zheng, Zhou,
    Meng, Zhou, Huang (2024). Large language models are not robust multiple choice selectors
    (Pride). Zhao et al. (2021), Calibrate before use (CC). Fei et al. (2023), Mitigating label
    biases for in-context learning (DC).

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs, j, _ = jk.sim.simulate_judgments(400, token_bias=1.0, id_swap=(False, True), seed=0)
    >>> cal, out = jk.calibrate(j, "noa")
    >>> cal
    Calibrator(method='noa', judges=['sim'])
    >>> cal.info["sim"]["objective"], cal.info["sim"]["converged"]
    ('four', True)
    >>> out["calibration_split"].value_counts().to_dict()
    {'estimation': 800, 'evaluation': 800}
    >>> raw = jk.selection_bias_metrics(j, n_boot=0).set_index("metric")["estimate"]
    >>> held = out[out["calibration_split"] == "evaluation"]
    >>> new = jk.selection_bias_metrics(held, prob="p_a_calibrated", n_boot=0).set_index("metric")["estimate"]
    >>> bool(new["fleiss_kappa"] > raw["fleiss_kappa"] + 0.2)
    True
    """
    if method not in CALIBRATION_METHODS:
        raise ValueError(f"method must be one of {CALIBRATION_METHODS}, got {method!r}")
    if fit_on not in ("split", "all"):
        raise ValueError(f"fit_on must be 'split' or 'all', got {fit_on!r}")
    noa = method in ("noa", "noa4")
    if not noa and (objective is not None or maps is not None):
        raise ValueError("objective and maps apply to method 'noa' and 'noa4' only")
    if settings not in NOA_SETTINGS:
        raise ValueError(f"settings must be one of {sorted(NOA_SETTINGS)}, got {settings!r}")
    if not (isinstance(estimation_size, (int, float, np.integer, np.floating))
            and math.isfinite(estimation_size) and estimation_size > 0):
        raise ValueError(f"estimation_size must be a positive number, got {estimation_size!r}")
    df = validate_judgments(judgments)
    if df.empty:
        raise ValueError("judgments: the table is empty; there is nothing to calibrate")
    if noa:
        maps = maps or _NOA_DEFAULTS[method][1]
        params = {"objective": objective, "maps": maps, "settings": settings, "lam": lam, "lr": lr,
                  "tol": tol, "max_iter": max_iter, "n_knots": n_knots, "knot_tol": knot_tol}
        params.update({k: v for k, v in NOA_SETTINGS[settings].items() if params.get(k) is None})
    else:
        params = {"by_position": by_position}
    params.update(fit_on=fit_on, estimation_size=estimation_size, seed=seed)

    rows = _Rows.of(df)
    fitted: dict[str, dict[str, Any]] = {}
    info: dict[str, dict[str, Any]] = {}
    estimation = np.zeros(len(df), dtype=bool)
    has_p = np.bincount(rows.judge_code[~np.isnan(rows.p_t1)], minlength=len(rows.judges)) > 0
    if method in ("contextual", "domain_context"):
        if content_free is None:
            raise ValueError(f"method {method!r} needs content_free=: judgments of "
                             "jk.content_free_pairs(pairs, kind=...) by the same judges")
        fitted, info = _content_free_priors(rows, content_free, by_position)
        if all(entry["kind"] == "none" for entry in fitted.values()):
            judge, entry = next(iter(fitted.items()))
            raise ValueError(f"content_free: no judge can be calibrated; e.g. judge {judge!r}: "
                             f"{entry['reason']}")
    else:
        cells = _cells(df, rows.p_t1, rows.code, sort_judges=False)
        rng = np.random.default_rng(seed)
        cell_est = np.zeros(len(cells.judge), dtype=bool)
        starts = np.searchsorted(cells.judge, np.arange(len(rows.judges) + 1))
        for code, judge in enumerate(rows.judges):
            block = slice(starts[code], starts[code + 1])
            s = cells.s[block]
            judge_objective = objective or (_NOA_DEFAULTS[method][0] if noa else None)
            if method == "noa" and objective is None:
                # pairs with a probability in every one of X0..X3 (not: pairs not all missing)
                complete4 = int((~np.isnan(s[:, [0, 1, 2, 3]])).all(axis=1).sum())
                judge_objective = "four" if settings == "judgekit" and complete4 >= 2 else "full"
            needed = _needed(method, judge_objective, by_position)
            ok = ~np.isnan(s[:, list(needed)]).any(axis=1)
            if ok.sum() < 2:
                if not has_p[code]:
                    reason = "none of its judgments has a probability p_a (e.g. every call failed)"
                else:
                    present = [f"X{j}" for j in range(4) if (~np.isnan(s[:, j])).any()]
                    reason = (f"method {method!r}"
                              f"{f' (objective {judge_objective!r})' if noa else ''} needs pairs "
                              f"judged in {_names(needed)}; fewer than 2 pairs have them "
                              f"(arrangements present: {', '.join(present) or 'none'})")
                fitted[judge] = {"kind": "none", "reason": reason}
                continue
            eligible = np.flatnonzero(ok)
            est = eligible[_estimation_positions(len(eligible), fit_on, estimation_size, rng, judge)]
            cell_est[block.start + est] = True
            est_s = s[est]
            if noa:
                fit = _noa_fit(est_s, objective=judge_objective, maps=maps, settings=settings, lam=lam,
                               lr=lr, tol=tol, max_iter=max_iter, n_knots=n_knots,
                               knot_tol=knot_tol, what=f"NOA for judge {judge!r}", seed=seed)
                fitted[judge] = {"kind": "knots", "knots": fit.knots}
                info[judge] = {"n_estimation": len(est), "objective": judge_objective,
                               "n_iter": fit.n_iter, "converged": fit.converged,
                               "loss_start": float(fit.loss[0]), "loss_end": float(fit.loss[-1]),
                               "n_knots": {k: len(x) for k, (x, _) in fit.knots.items()}}
            else:
                priors = {("t1_first" if by_position else "shared"): pride_prior(est_s[:, 0], est_s[:, 2])}
                if by_position:
                    priors["t1_second"] = pride_prior(est_s[:, 1], est_s[:, 3])
                fitted[judge] = {"kind": "prior", "priors": priors}
                info[judge] = {"n_estimation": len(est)}
        if all(entry["kind"] == "none" for entry in fitted.values()) and has_p.any():
            judge, entry = next((j, e) for j, e in fitted.items() if "arrangements present" in e["reason"])
            raise ValueError(f"judge {judge!r}: {entry['reason']}. Judge with id_swap=(False, True) "
                             "and both orders, or choose an objective those arrangements allow")
        estimation = cell_est[cells.row_cell]
    for judge, entry in fitted.items():
        if entry["kind"] == "none":
            warnings.warn(f"p_a_calibrated is NaN for judge {judge!r}: {entry['reason']}",
                          MetricWarning, stacklevel=caller_level())
    calibrator = Calibrator(method=method, params=params, maps=fitted, info=info)
    out = calibrator._apply(df, rows, warn=False)
    out["calibration_split"] = _SPLIT[estimation.astype(np.int8)]
    return Calibration(calibrator, out)


_SPLIT = np.array(["evaluation", "estimation"], dtype=object)
