"""Three-valued findings: what an estimate with its interval lets a sentence say.

Every sentence judgekit writes about an effect (a bias, a lean, a shift) goes through
:func:`effect_finding`, which returns one of three kinds:

``"effect"``
    The two-sided interval excludes the null value: evidence of an effect, with its direction.
``"no_material_effect"``
    An equivalence test (two one-sided z-tests, TOST) rejects every effect at least as large as
    the stated margin: evidence that any effect is smaller than the margin. Only this test may
    support a sentence of absence.
``"inconclusive"``
    Neither: the data are compatible with no effect and with an effect of the margin's size. The
    sentence says so, and how many units (pairs, labels) would decide it if the effect is what
    the estimate says.

A point estimate alone never decides.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

_N = NormalDist()

__all__ = ["EffectFinding", "effect_finding", "units_to_decide"]

KINDS = ("effect", "no_material_effect", "inconclusive")


@dataclass(frozen=True)
class EffectFinding:
    """The reading of one estimate: its ``kind`` (see :data:`KINDS`) and the sentence saying it.

    Attributes
    ----------
    kind : str
        ``"effect"``, ``"no_material_effect"`` or ``"inconclusive"``.
    sentence : str
        The finding in words, with the estimate, its interval and the margin.
    estimate, ci_low, ci_high, se : float
        What was read (``se`` is taken from the interval's width when not given).
    margin : float
        The smallest effect that counts as material (equivalence bounds null ± margin).
    p_equivalence : float
        The TOST p-value (the larger of the two one-sided p-values).
    n : int or None
        The units behind the estimate (pairs, labels), when known.
    n_needed : int or None
        Units that would decide at the stated power if the true effect equals the estimate
        (the fewer of: showing it differs from the null, showing it lies within the margin);
        None when ``n`` is unknown or nothing can decide (an estimate exactly at the margin).
    """

    kind: str
    sentence: str
    estimate: float
    ci_low: float
    ci_high: float
    se: float
    margin: float
    p_equivalence: float
    n: int | None
    n_needed: int | None

    @property
    def n_more(self) -> int | None:
        """Units to add to ``n`` to reach :attr:`n_needed` (None when either is unknown)."""
        if self.n is None or self.n_needed is None:
            return None
        return max(0, self.n_needed - self.n)


def _power_detect(delta: float, se: float, alpha: float) -> float:
    """Power of the two-sided z-test of the null at level alpha when the true effect is delta."""
    z = _N.inv_cdf(1 - alpha / 2)
    shift = abs(delta) / se
    return float(_N.cdf(shift - z) + _N.cdf(-shift - z))


def _power_equivalence(delta: float, se: float, margin: float, alpha: float) -> float:
    """Power of the z-TOST with bounds ±margin at level alpha when the true effect is delta."""
    z = _N.inv_cdf(1 - alpha)
    upper = _N.cdf((margin - delta) / se - z)
    lower = _N.cdf((margin + delta) / se - z)
    return float(max(0.0, upper + lower - 1.0))


def units_to_decide(delta: float, sd_unit: float, margin: float, *, alpha: float = 0.05,
                    power: float = 0.8) -> int | None:
    """Units (each contributing standard deviation ``sd_unit``: se = sd_unit / sqrt(n)) that
    decide at ``power`` when the true effect, measured from the null, is ``delta``: the fewer of
    the units that show an effect (two-sided z-test at ``alpha``) and those that show it lies
    within ±``margin`` (TOST at ``alpha``).

    Returns None when neither test can reach the power (``delta`` 0 with margin 0, or
    ``|delta|`` equal to the margin and 0 at once) or ``sd_unit`` is not positive.

    Examples
    --------
    >>> from judgekit.auditing.findings import units_to_decide
    >>> units_to_decide(0.0, 1.0, 0.2)    # show equivalence: ((1.645 + 1.282) / 0.2)^2 ~ 214
    215
    >>> units_to_decide(0.5, 1.0, 0.2)    # show the effect: ((1.96 + 0.84) / 0.5)^2 ~ 31
    32
    """
    if not (sd_unit > 0) or not math.isfinite(sd_unit):
        return None
    best = None
    for kind in ("detect", "equivalence"):
        if kind == "detect" and delta == 0:
            continue
        if kind == "equivalence" and abs(delta) >= margin:
            continue

        def ok(n: float, kind: str = kind) -> bool:
            se = sd_unit / math.sqrt(n)
            got = (_power_detect(delta, se, alpha) if kind == "detect"
                   else _power_equivalence(delta, se, margin, alpha))
            return got >= power

        hi = 2
        while not ok(hi):
            hi *= 2
            if hi > 10**12:
                break
        else:
            lo = max(1, hi // 2)
            while lo < hi:  # smallest n with enough power
                mid = (lo + hi) // 2
                if ok(mid):
                    hi = mid
                else:
                    lo = mid + 1
            best = hi if best is None else min(best, hi)
    return best


def _num(x: float, digits: int, signed: bool) -> str:
    return f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"


def effect_finding(estimate: float, *, margin: float, ci: tuple[float, float] | None = None,
                   se: float | None = None, n: int | None = None, what: str = "the effect",
                   null: float = 0.0, alpha: float = 0.05, power: float = 0.8, digits: int = 2,
                   unit: str = "", units: str = "pairs", signed: bool = True) -> EffectFinding:
    """Read an estimate with its interval as evidence of an effect, evidence of no material
    effect, or inconclusive.

    Parameters
    ----------
    estimate : float
        The point estimate.
    margin : float
        The smallest effect that matters (> 0): "no material effect" means the equivalence test
        shows the effect lies within ``null ± margin``.
    ci : (float, float), optional
        The two-sided ``1 - alpha`` interval (e.g. a bootstrap percentile interval). It decides
        "effect" (it excludes ``null``). Without it the z interval ``estimate ± z·se`` is used.
    se : float, optional
        Standard error; taken as the interval's width / (2·z) when not given.
    n : int, optional
        The units behind the estimate; with it the finding says how many would decide.
    what : str
        What is measured, e.g. "length bias"; it starts the sentence.
    null : float
        The value of no effect (0 for a difference, 0.5 for a probability).
    alpha, power : float
        Level of both tests, and the power the unit count aims at.
    digits : int
        Decimals shown.
    unit : str
        Appended to numbers, e.g. " points".
    units : str
        What ``n`` counts, e.g. "pairs" or "labels".
    signed : bool
        Show the estimate with its sign.

    Returns
    -------
    EffectFinding

    Notes
    -----
    The equivalence test is a z-TOST: with se the standard error,
    p = max(1 − Φ((θ̂ − (null − m))/se), Φ((θ̂ − (null + m))/se)), and "no material effect" when
    p < alpha, i.e. when the ``1 − 2·alpha`` interval θ̂ ± z_{1−alpha}·se lies inside
    (null − m, null + m) (Schuirmann 1987). The units that would decide are found from the same
    normal approximation, taking the standard deviation of one unit as se·√n and the true effect
    as the estimate.

    References
    ----------
    Schuirmann, D. J. (1987). A comparison of the two one-sided tests procedure and the power
    approach for assessing the equivalence of average bioavailability. J. Pharmacokinetics and
    Biopharmaceutics 15, 657-680.

    Examples
    --------
    >>> from judgekit.auditing.findings import effect_finding
    >>> effect_finding(0.18, ci=(-0.01, 0.37), margin=0.1, n=100, what="length bias").kind
    'inconclusive'
    >>> effect_finding(0.01, ci=(-0.02, 0.04), margin=0.1, n=2000, what="length bias").sentence
    'no material length bias: +0.01 (95% CI -0.02 to +0.04); an equivalence test puts it within ±0.10 (p < 0.001)'
    """
    if not (margin > 0):
        raise ValueError(f"margin must be positive, got {margin!r}")
    if not 0 < alpha < 0.5:
        raise ValueError(f"alpha must be in (0, 0.5), got {alpha!r}")
    z2 = _N.inv_cdf(1 - alpha / 2)
    estimate = float(estimate)
    if ci is not None:
        lo, hi = (float(ci[0]), float(ci[1]))
        if se is None and math.isfinite(lo) and math.isfinite(hi):
            se = (hi - lo) / (2 * z2)
    se = float("nan") if se is None else float(se)
    if ci is None:
        lo, hi = estimate - z2 * se, estimate + z2 * se
    level = f"{1 - alpha:.0%}"

    def bare(x: float) -> str:
        return _num(x, digits, signed)

    def fmt(x: float) -> str:
        return bare(x) + unit

    shown = fmt(estimate) + (f" ({level} CI {bare(lo)} to {bare(hi)})"
                             if math.isfinite(lo) and math.isfinite(hi) else " (no interval)")
    m_text = f"±{margin:.{digits}f}{unit}" if null == 0 else \
        f"{null - margin:.{digits}f} to {null + margin:.{digits}f}{unit}"

    if not (math.isfinite(estimate) and math.isfinite(se) and se > 0):
        sentence = f"{what}: inconclusive, {shown}; without an interval no test can decide"
        return EffectFinding("inconclusive", sentence, estimate, lo, hi, se, margin, float("nan"),
                             n, None)
    p_eq = max(1 - _N.cdf((estimate - (null - margin)) / se),
               _N.cdf((estimate - (null + margin)) / se))
    p_text = "p < 0.001" if p_eq < 0.001 else f"p = {p_eq:.3f}"
    n_needed = (units_to_decide(estimate - null, se * math.sqrt(n), margin, alpha=alpha, power=power)
                if n else None)
    if lo > null or hi < null:
        kind = "effect"
        sentence = f"evidence of {what}: {shown}"
        if p_eq < alpha:
            sentence += f", smaller than the margin {m_text} (equivalence test, {p_text})"
    elif p_eq < alpha:
        kind = "no_material_effect"
        sentence = (f"no material {what}: {shown}; an equivalence test puts it within "
                    f"{m_text} ({p_text})")
    else:
        kind = "inconclusive"
        sentence = (f"{what}: inconclusive, {shown} neither excludes {null:g} nor puts it "
                    f"within {m_text}")
        if n_needed is not None and n is not None:
            more = max(0, n_needed - n)
            sentence += (f"; about {n_needed:,} {units} ({more:,} more than the {n:,} here) would "
                         f"decide it with {power:.0%} power if the true value is "
                         f"{fmt(estimate)}")
    return EffectFinding(kind, sentence, estimate, lo, hi, se, margin, float(p_eq), n, n_needed)
