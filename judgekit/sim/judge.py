"""A simulated pairwise judge whose true parameters are known.

Every estimator in judgekit is tested by recovering the parameters given to this generative model,
and the simulated judge server (:mod:`judgekit.sim.server`) answers real HTTP requests with
it. Both use the same functions here, so a verdict drawn in memory and one returned over HTTP for
the same pair, arrangement, repeat and seed are identical.

The model
---------
For a pair with prompt x and responses r1 (shown first) and r2 (shown second), carrying option IDs
t1/t2 in the first position (``id_swap=False``) or t2/t1 (``id_swap=True``), the judge's
probability of picking the first position is

    π = σ(δ_first + β_pos + β_tok·τ + β_len·tanh(Δlen / ℓ) + Σ_b s_b·signal_b)

* δ_first = quality(r1) − quality(r2) in logit units. For a pair with a human label,
  δ_c = quality(y_c) − quality(y_r) = μ + σ·z with z ~ N(0, 1) drawn per pair, σ the
  ``quality_scale`` and μ solved so that an unbiased judge picks y_c with probability
  E[σ(δ_c)] = ``accuracy``. Unlabelled or tied pairs get δ = σ·z with a random sign.
* β_pos (``position_bias``) shifts toward the first position; β_tok (``token_bias``) toward the
  option ID t1 (τ = +1 when the first position carries t1, −1 otherwise); β_len
  (``length_bias``) toward the longer response, Δlen = len(r1) − len(r2) in characters, ℓ the
  ``length_scale``; s_b are per-bias sensitivities to perturbation signals (+1 favours the
  first position, −1 the second).
* With probability ``tie_rate`` the decision is a tie; otherwise the judge's deterministic decision
  X is "first" with probability π. X is drawn once per (pair, arrangement): re-asking the identical
  request does not redraw it.
* Each repeat k observes Z = X flipped with probability q (Wei et al. 2024's flipping noise), drawn
  independently per repeat; q may differ between the order showing the human-preferred response
  first (``cr``) and second (``rc``), and may grow with temperature. Ties are not flipped.
* ``p_a`` is the judge's probability of preferring response a, π or 1 − π by order.

All random draws are hashes of (seed, response texts, arrangement, repeat), so they do not depend
on the order of the table or on which other pairs are simulated.

References
----------
Wei et al. (2024), Systematic Evaluation of LLM-as-a-Judge in LLM Alignment Tasks, §4 and A.4.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from scipy import special

from judgekit._stamp import stamped
from judgekit.schema import validate_pairs

__all__ = ["SimJudge", "Simulation", "simulate_judgments", "simulate_pairs"]

_MAX_Q = 0.49


_M64 = np.uint64(0xFFFFFFFFFFFFFFFF)
_TAGS = {"quality": 1, "decision": 2, "tie": 3, "flip": 4, "pair": 5, "arrangement": 6}


def _mix(*parts: np.ndarray | int) -> np.ndarray:
    """splitmix64-style avalanche of several uint64 inputs into one (vectorised, wraps mod 2^64)."""
    arrays = np.broadcast_arrays(*[np.asarray(p).astype(np.uint64) for p in parts])
    h = np.zeros(arrays[0].shape, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for a in arrays:
            h = h ^ a
            h = h + np.uint64(0x9E3779B97F4A7C15)
            h = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            h = h ^ (h >> np.uint64(31))
    return h


def _uniform(seed: int, tag: str, key: np.ndarray) -> np.ndarray:
    """One uniform in (0, 1) per key, a pure function of (seed, tag, key)."""
    h = _mix(np.uint64(seed & 0xFFFFFFFFFFFFFFFF), np.uint64(_TAGS[tag]), key)
    return ((h >> np.uint64(11)).astype(np.float64) + 0.5) / 2.0**53


def _text_digests(prompts: Sequence[str], responses: Sequence[str]) -> np.ndarray:
    """A uint64 digest of each (prompt, response) text."""
    return np.array(
        [
            int.from_bytes(hashlib.blake2b(f"{p}\x00{r}".encode(), digest_size=8).digest(), "little")
            for p, r in zip(prompts, responses)
        ],
        dtype=np.uint64,
    )


@dataclass(frozen=True)
class SimJudge:
    """Parameters of a simulated judge (see the module docstring for the model).

    Parameters
    ----------
    accuracy : float
        Probability that the judge, with no bias, picks the human-preferred response.
    quality_scale : float
        Spread σ of the per-pair latent quality difference (logit units): larger means more
        easy and more hard pairs around the same mean accuracy.
    position_bias, token_bias, length_bias : float
        Logit shifts toward the first position, toward option ID t1, and toward the longer
        response (coefficient on tanh(Δlen / length_scale)).
    length_scale : float
        Characters over which the length effect saturates.
    flip_q : float or (float, float) or mapping
        Flip probability q; a pair ``(q_cr, q_rc)`` or ``{"cr": .., "rc": ..}`` sets it per order
        relative to the label. Unlabelled pairs use q_cr when a is shown first.
    flip_q_per_temperature : float
        Added to q per unit of temperature (the simulated server's temperature response).
    tie_rate : float
        Probability of a tie decision (only where the template offers ties).
    sensitivities : mapping of str to float
        Logit shift toward the response a perturbation favours, per bias name.
    seed : int
        Seeds every draw.
    """

    accuracy: float = 0.75
    quality_scale: float = 2.0
    position_bias: float = 0.0
    token_bias: float = 0.0
    length_bias: float = 0.0
    length_scale: float = 1000.0
    flip_q: float | tuple[float, float] | Mapping[str, float] = 0.0
    flip_q_per_temperature: float = 0.0
    tie_rate: float = 0.0
    sensitivities: Mapping[str, float] = field(default_factory=dict)
    seed: int = 0

    def __post_init__(self) -> None:
        if not 0.0 < self.accuracy < 1.0:
            raise ValueError(f"accuracy must be in (0, 1), got {self.accuracy}")
        if self.quality_scale < 0:
            raise ValueError(f"quality_scale must be >= 0, got {self.quality_scale}")
        if not 0.0 <= self.tie_rate < 1.0:
            raise ValueError(f"tie_rate must be in [0, 1), got {self.tie_rate}")
        if self.length_scale <= 0:
            raise ValueError(f"length_scale must be > 0, got {self.length_scale}")
        for q in self._q_pair:
            if not 0.0 <= q <= _MAX_Q:
                raise ValueError(f"flip_q must be in [0, {_MAX_Q}], got {self.flip_q}")

    @property
    def _q_pair(self) -> tuple[float, float]:
        q = self.flip_q
        if isinstance(q, Mapping):
            unknown = set(q) - {"cr", "rc"}
            if unknown:
                raise ValueError(f"flip_q keys must be 'cr' and 'rc', got {sorted(unknown)}")
            return float(q.get("cr", 0.0)), float(q.get("rc", 0.0))
        if isinstance(q, (tuple, list)):
            return float(q[0]), float(q[1])
        return float(q), float(q)

    @cached_property
    def mu(self) -> float:
        """Mean latent quality gap μ that makes an unbiased judge's accuracy ``accuracy``."""
        if self.quality_scale == 0:
            return float(special.logit(self.accuracy))
        nodes, weights = np.polynomial.hermite_e.hermegauss(80)
        weights = weights / weights.sum()

        def gap(mu: float) -> float:
            return float(weights @ special.expit(mu + self.quality_scale * nodes)) - self.accuracy

        from scipy import optimize  # here, not at import: scipy.optimize is slow to import

        return float(optimize.brentq(gap, -60.0, 60.0, xtol=1e-12))

    def q(self, order: str, temperature: float | None = None) -> float:
        """Flip probability for ``order`` ("cr" or "rc") at ``temperature``."""
        q = self._q_pair[0 if order == "cr" else 1]
        if temperature is not None:
            q += self.flip_q_per_temperature * float(temperature)
        return float(min(max(q, 0.0), _MAX_Q))

    def first_logit(
        self,
        delta_first: np.ndarray,
        dlen_first: np.ndarray,
        first_is_t1: np.ndarray | bool = True,
        signals: Mapping[str, np.ndarray] | None = None,
    ) -> np.ndarray:
        """Logit of picking the first position (vectorised)."""
        tau = np.where(np.asarray(first_is_t1, dtype=bool), 1.0, -1.0)
        u = (
            np.asarray(delta_first, dtype=float)
            + self.position_bias
            + self.token_bias * tau
            + self.length_bias * np.tanh(np.asarray(dlen_first, dtype=float) / self.length_scale)
        )
        for name, signal in (signals or {}).items():
            u = u + self.sensitivities.get(name, 0.0) * np.asarray(signal, dtype=float)
        return u

    def content(self, response: str) -> str:
        """The part of a response that identifies it for the judge's random draws.

        The latent quality and every draw are keyed by a hash of the prompt and ``content`` of
        each response. This is the identity; a subclass can strip additions (e.g. a citation
        appended by a perturbation) so that they change the verdict only through the
        ``sensitivities``, not through a redrawn quality.
        """
        return response

    def decide_nway(
        self,
        prompt: str,
        responses: Sequence[str],
        ids: Sequence[str],
        *,
        t1: str,
        repeat: int = 0,
        temperature: float | None = None,
    ) -> tuple[dict[str, float], str]:
        """Decide one request with two to four responses by a multinomial logit.

        The utility of the response in position i is quality_scale·z_i (z from the response's
        hash) + length_bias·tanh((len_i − mean len) / length_scale), plus ``position_bias`` for the
        first position and ``token_bias`` for the position carrying option ID ``t1``. The decision
        X is drawn once per arrangement; a repeat flips it (with q for "cr") to one of the other
        responses, uniformly. Labels and perturbation signals are not used.

        Parameters
        ----------
        prompt : str
        responses : sequence of str
            The responses in the positions shown.
        ids : sequence of str
            The option ID each position carries.
        t1 : str
            The first option ID of the template (the one ``token_bias`` favours).
        repeat : int
        temperature : float, optional

        Returns
        -------
        (dict, str)
            The probability of each option ID, and the option ID chosen.

        Examples
        --------
        >>> judge = SimJudge(position_bias=2.0, seed=1)
        >>> probs, choice = judge.decide_nway("Q?", ["x", "y", "z"], ["A", "B", "C"], t1="A")
        >>> sorted(probs) == ["A", "B", "C"] and choice in probs
        True
        """
        if not 2 <= len(responses) == len(ids):
            raise ValueError("decide_nway needs 2 or more responses, one option ID each")
        h = _text_digests([prompt] * len(responses), [self.content(r) for r in responses])
        z = special.ndtri(_uniform(self.seed, "quality", h))
        lengths = np.array([len(r) for r in responses], dtype=float)
        u = self.quality_scale * z
        u = u + self.length_bias * np.tanh((lengths - lengths.mean()) / self.length_scale)
        u[0] += self.position_bias
        u = u + self.token_bias * np.array([1.0 if i == t1 else 0.0 for i in ids])
        p = special.softmax(u)
        id_code = int.from_bytes(hashlib.blake2b("|".join(ids).encode(), digest_size=8).digest(), "little")
        arrangement = _mix(*h, np.uint64(id_code))
        draw = float(_uniform(self.seed, "decision", arrangement)[()])
        x = min(int(np.searchsorted(np.cumsum(p), draw, side="right")), len(p) - 1)
        flip_u = float(_uniform(self.seed, "flip", _mix(arrangement, np.uint64(repeat)))[()])
        choice = x
        if flip_u < self.q("cr", temperature):
            others = [i for i in range(len(p)) if i != x]
            pick = float(_uniform(self.seed, "tie", _mix(arrangement, np.uint64(repeat)))[()])
            choice = others[min(int(pick * len(others)), len(others) - 1)]
        return {ids[i]: float(p[i]) for i in range(len(p))}, ids[choice]

    def decide(
        self,
        prompt: Sequence[str],
        first: Sequence[str],
        second: Sequence[str],
        *,
        first_is_preferred: Sequence[bool | None] | None = None,
        first_is_t1: Sequence[bool] | bool = True,
        repeat: Sequence[int] | int = 0,
        temperature: float | None = None,
        ties: bool = True,
        signals: Mapping[str, np.ndarray] | None = None,
    ) -> pd.DataFrame:
        """Decide a batch of requests from their texts alone.

        Parameters
        ----------
        prompt, first, second : sequences of str
            The prompt and the responses in the positions shown.
        first_is_preferred : sequence of bool or None, optional
            Whether the human-preferred response is shown first (None where unknown or tied).
        first_is_t1 : bool or sequence of bool
            Whether the first position carries option ID t1 (False under an ID swap).
        repeat : int or sequence of int
            Repeat index of the identical request.
        temperature : float, optional
            Adds ``flip_q_per_temperature * temperature`` to q.
        ties : bool
            Whether the template offers a tie option.
        signals : mapping, optional
            Perturbation signals, +1 favouring the first position, −1 the second.

        Returns
        -------
        DataFrame
            ``p_first`` (probability of picking the first position, excluding ties), ``decision``
            (the deterministic X: "first", "second" or "tie") and ``choice`` (after flipping).
        """
        n = len(first)
        lengths = np.array([len(f) - len(s) for f, s in zip(first, second)], dtype=float)
        return self._decide(
            _text_digests(prompt, [self.content(f) for f in first]),
            _text_digests(prompt, [self.content(s) for s in second]),
            lengths,
            first_is_preferred=[None] * n if first_is_preferred is None else first_is_preferred,
            first_is_t1=first_is_t1, repeat=repeat, temperature=temperature, ties=ties,
            signals=signals,
        )

    def _decide(
        self,
        h_first: np.ndarray,
        h_second: np.ndarray,
        dlen_first: np.ndarray,
        *,
        first_is_preferred: Sequence[bool | None],
        first_is_t1: Sequence[bool] | bool,
        repeat: Sequence[int] | int,
        temperature: float | None,
        ties: bool,
        signals: Mapping[str, np.ndarray] | None,
    ) -> pd.DataFrame:
        n = len(h_first)
        pref = np.asarray(first_is_preferred, dtype=object)
        known = np.array([p is not None for p in pref], dtype=bool)
        pref_first = np.array([bool(p) if p is not None else False for p in pref], dtype=bool)
        t1 = np.broadcast_to(np.asarray(first_is_t1, dtype=bool), (n,))
        rep = np.broadcast_to(np.asarray(repeat, dtype=np.int64), (n,)).astype(np.uint64)

        lo, hi = np.minimum(h_first, h_second), np.maximum(h_first, h_second)
        z = special.ndtri(_uniform(self.seed, "quality", _mix(lo, hi)))
        delta_c = self.mu + self.quality_scale * z
        canon_first = h_first <= h_second
        delta_unlabelled = self.quality_scale * z * np.where(canon_first, 1.0, -1.0)
        delta_first = np.where(known, np.where(pref_first, delta_c, -delta_c), delta_unlabelled)
        p_first = special.expit(self.first_logit(delta_first, dlen_first, t1, signals))

        arrangement = _mix(h_first, h_second, t1.astype(np.uint64))
        x_first = _uniform(self.seed, "decision", arrangement) < p_first
        if ties:
            tie = _uniform(self.seed, "tie", arrangement) < self.tie_rate
        else:
            tie = np.zeros(n, dtype=bool)
        q = np.where(known & ~pref_first, self.q("rc", temperature), self.q("cr", temperature))
        flip = _uniform(self.seed, "flip", _mix(arrangement, rep)) < q

        decision = np.where(tie, "tie", np.where(x_first, "first", "second"))
        choice = np.where(tie, "tie", np.where(x_first ^ flip, "first", "second"))
        return pd.DataFrame({"p_first": p_first, "decision": decision, "choice": choice})


class Simulation(NamedTuple):
    """What :func:`simulate_judgments` returns: ``pairs, judgments, truth = sim``."""

    pairs: pd.DataFrame
    judgments: pd.DataFrame
    truth: dict[str, Any]


_FILLER = (
    "The answer considers the question carefully, weighs the evidence and explains each step "
    "in plain words so that a reader can follow the reasoning from start to end. "
) * 200


@stamped
def simulate_pairs(
    n: int, *, human_prefers_longer: float = 0.5, median_length: float = 800.0, seed: int = 0
) -> pd.DataFrame:
    """A pairs table of ``n`` synthetic comparisons with labels "a"/"b" and varied lengths.

    Response lengths are log-normal around ``median_length`` characters; the human-preferred
    response is the longer one with probability ``human_prefers_longer``.

    Parameters
    ----------
    n : int
        Number of pairs, at least 1.
    human_prefers_longer : float, default 0.5
        Probability that the labelled (preferred) response is the longer of the two; 0.5 makes
        length carry no information about the label.
    median_length : float, default 800.0
        Median response length in characters; lengths are drawn log-normal around it (log-scale
        standard deviation 0.6), at least 12 characters.
    seed : int, default 0
        Seeds the draws; the same seed gives the same table (and the ``pair_id`` values carry it).

    Returns
    -------
    DataFrame
        A validated pairs table (:func:`judgekit.validate_pairs`) with columns ``pair_id``
        (``"sim-<seed>-<i>"``), ``prompt``, ``response_a``, ``response_b`` (filler text of the
        drawn lengths), ``label`` (``"a"`` or ``"b"``, each with probability 1/2),
        ``dataset`` (``"simulated"``), ``len_a`` and ``len_b``.

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs = jk.sim.simulate_pairs(3, seed=1)
    >>> list(pairs.columns)[:5]
    ['pair_id', 'prompt', 'response_a', 'response_b', 'label']
    >>> pairs = jk.sim.simulate_pairs(2000, human_prefers_longer=0.8, seed=1)
    >>> preferred_longer = (pairs["len_a"] > pairs["len_b"]) == (pairs["label"] == "a")
    >>> round(float(preferred_longer.mean()), 2)
    0.8
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    rng = np.random.default_rng(seed)
    lengths = np.minimum(np.exp(rng.normal(np.log(median_length), 0.6, size=(n, 2))), len(_FILLER) - 50)
    lengths = np.sort(lengths.astype(int), axis=1)  # [:, 0] shorter, [:, 1] longer
    chosen_longer = rng.random(n) < human_prefers_longer
    label = np.where(rng.random(n) < 0.5, "a", "b")
    len_chosen = np.where(chosen_longer, lengths[:, 1], lengths[:, 0])
    len_rejected = np.where(chosen_longer, lengths[:, 0], lengths[:, 1])
    len_a = np.where(label == "a", len_chosen, len_rejected)
    len_b = np.where(label == "a", len_rejected, len_chosen)
    ids = [f"sim-{seed}-{i:05d}" for i in range(n)]
    prompts = [f"Simulated instruction {i} (seed {seed})." for i in range(n)]
    resp_a = [(f"[{i}a] " + _FILLER)[: max(int(k), 12)] for i, k in enumerate(len_a)]
    resp_b = [(f"[{i}b] " + _FILLER)[: max(int(k), 12)] for i, k in enumerate(len_b)]
    return validate_pairs(
        pd.DataFrame({
            "pair_id": ids, "prompt": prompts, "response_a": resp_a, "response_b": resp_b,
            "label": label, "dataset": "simulated",
        })
    )


@stamped
def simulate_judgments(
    pairs_or_n: pd.DataFrame | int,
    *,
    judge: SimJudge | None = None,
    accuracy: float = 0.75,
    quality_scale: float = 2.0,
    position_bias: float = 0.0,
    length_bias: float = 0.0,
    length_scale: float = 1000.0,
    flip_q: float | tuple[float, float] | Mapping[str, float] = 0.0,
    token_bias: float = 0.0,
    tie_rate: float = 0.0,
    repeats: int = 1,
    orders: Sequence[str] = ("ab", "ba"),
    id_swap: Sequence[bool] | bool = False,
    judge_name: str = "sim",
    seed: int = 0,
    **pair_options: Any,
) -> Simulation:
    """Simulate a judge with known biases over pairs; return pairs, judgments and the truth.

    Parameters
    ----------
    pairs_or_n : DataFrame or int
        A pairs table, or a number of synthetic pairs to make with :func:`simulate_pairs`
        (``pair_options`` such as ``human_prefers_longer`` are passed on).
    judge : SimJudge, optional
        The full parameter set; when given, the scalar parameters below are ignored.
    accuracy, quality_scale, position_bias, length_bias, length_scale, flip_q, token_bias, tie_rate
        See :class:`SimJudge`.
    repeats : int
        K, the number of identical requests per (pair, order, id_swap).
    orders : sequence of {"ab", "ba"}
        Display orders to judge.
    id_swap : bool or sequence of bool
        Option-ID arrangements to judge (``(False, True)`` gives all four CalibraEval arrangements
        with both orders).
    judge_name : str
        Value of the ``judge`` column.
    seed : int
        Seeds the judge and the synthetic pairs.
    **pair_options
        Keywords of :func:`simulate_pairs` (``human_prefers_longer``, ``median_length``) for
        the synthetic pairs; only allowed when ``pairs_or_n`` is a number (a TypeError
        otherwise).

    Returns
    -------
    Simulation
        ``(pairs, judgments, truth)``. ``truth`` holds the parameters and the population values
        implied for these pairs (expectations over the judge's draws, for labelled pairs):
        ``acc_cr``, ``acc_rc``, ``acc_ab``, ``acc_ba``, ``acc_both``, ``acc_random``,
        ``position_bias`` (acc_cr − acc_rc), ``length_bias`` (Acc_both among pairs where the
        preferred response is longer minus the rest), ``q_cr``, ``q_rc`` and, under
        ``truth["realized"]``, the same computed from the drawn deterministic decisions X.

    Examples
    --------
    >>> import judgekit as jk
    >>> pairs, judgments, truth = jk.sim.simulate_judgments(200, accuracy=0.8, position_bias=1.0,
    ...                                                 repeats=3, flip_q=0.1, seed=0)
    >>> judgments.groupby("order").size().to_dict()
    {'ab': 600, 'ba': 600}
    >>> round(truth["position_bias"], 2) > 0
    True
    """
    if judge is None:
        judge = SimJudge(
            accuracy=accuracy, quality_scale=quality_scale, position_bias=position_bias,
            token_bias=token_bias, length_bias=length_bias, length_scale=length_scale,
            flip_q=flip_q, tie_rate=tie_rate, seed=seed,
        )
    if isinstance(pairs_or_n, (int, np.integer)):
        pairs = simulate_pairs(int(pairs_or_n), seed=seed, **pair_options)
    else:
        if pair_options:
            raise TypeError(f"unexpected options for given pairs: {sorted(pair_options)}")
        pairs = validate_pairs(pairs_or_n)
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    orders = tuple(orders)
    bad = set(orders) - {"ab", "ba"}
    if bad or not orders:
        raise ValueError(f"orders must be a non-empty subset of ('ab', 'ba'), got {orders}")
    swaps = (bool(id_swap),) if isinstance(id_swap, (bool, np.bool_)) else tuple(map(bool, id_swap))

    label = pairs["label"].to_numpy(dtype=object)
    h_a = _text_digests(pairs["prompt"], pairs["response_a"])
    h_b = _text_digests(pairs["prompt"], pairs["response_b"])
    dlen_ab = (pairs["len_a"] - pairs["len_b"]).to_numpy(dtype=float)
    pref_ab = np.array([None if lab not in ("a", "b") else lab == "a" for lab in label], dtype=object)
    pref_ba = np.array([None if p is None else not p for p in pref_ab], dtype=object)
    blocks = [(o, s, k) for o in orders for s in swaps for k in range(repeats)]
    ab = np.concatenate([np.full(len(pairs), o == "ab") for o, _, _ in blocks])
    tile = len(blocks)
    d = judge._decide(
        np.where(ab, np.tile(h_a, tile), np.tile(h_b, tile)),
        np.where(ab, np.tile(h_b, tile), np.tile(h_a, tile)),
        np.where(ab, np.tile(dlen_ab, tile), -np.tile(dlen_ab, tile)),
        first_is_preferred=np.where(ab, np.tile(pref_ab, tile), np.tile(pref_ba, tile)),
        first_is_t1=np.concatenate([np.full(len(pairs), not s) for _, s, _ in blocks]),
        repeat=np.concatenate([np.full(len(pairs), k) for _, _, k in blocks]),
        temperature=None, ties=judge.tie_rate > 0, signals=None,
    )
    pos = d["choice"].to_numpy()
    p_first = d["p_first"].to_numpy()
    judgments = pd.DataFrame({
        "pair_id": np.tile(pairs["pair_id"].to_numpy(dtype=object), tile),
        "judge": judge_name,
        "order": np.where(ab, "ab", "ba"),
        "repeat": np.concatenate([np.full(len(pairs), k) for _, _, k in blocks]),
        "id_swap": np.concatenate([np.full(len(pairs), s) for _, s, _ in blocks]),
        "verdict": np.where(pos == "tie", "tie", np.where((pos == "first") == ab, "a", "b")),
        "p_a": np.where(ab, p_first, 1.0 - p_first),
        "_x": d["decision"].to_numpy(),
    })
    truth: dict[str, Any] = {"q_cr": judge.q("cr"), "q_rc": judge.q("rc")}
    truth.update(_truth(pairs, judgments, swaps[0], keep=1.0 - judge.tie_rate))
    truth["realized"] = _truth(pairs, judgments, swaps[0], keep=None)
    truth.update(
        accuracy_param=judge.accuracy, quality_scale=judge.quality_scale, mu=judge.mu,
        position_bias_logit=judge.position_bias, token_bias_logit=judge.token_bias,
        length_bias_logit=judge.length_bias, tie_rate=judge.tie_rate, repeats=repeats,
    )
    judgments = judgments.drop(columns="_x")
    judgments["verdict"] = judgments["verdict"].astype(object)
    return Simulation(pairs, judgments, truth)


def _truth(pairs: pd.DataFrame, judgments: pd.DataFrame, swap: bool, *, keep: float | None) -> dict:
    """Accuracy summaries for labelled pairs, from the first repeat of one ID arrangement.

    With ``keep`` (1 − tie rate) they are population values: expectations over the judge's draw
    of X given these pairs. With ``keep=None`` they are computed from the drawn decisions X.
    """
    d = judgments[(judgments["repeat"] == 0) & (judgments["id_swap"] == swap)]
    d = d.merge(pairs[["pair_id", "label", "len_a", "len_b"]], on="pair_id")
    d = d[d["label"].isin(["a", "b"])]
    if keep is None:
        pf = (d["_x"] == "first").astype(float)
        ps = (d["_x"] == "second").astype(float)
    else:
        p_first = np.where(d["order"] == "ab", d["p_a"], 1.0 - d["p_a"])
        pf, ps = keep * p_first, keep * (1.0 - p_first)
    a_pref = (d["label"] == "a").to_numpy()
    ab_first = (d["order"] == "ab").to_numpy()
    # P(y_c picked): y_c is first when (a preferred) == (a shown first)
    d = d.assign(correct=np.where(a_pref == ab_first, pf, ps))
    wide = d.pivot(index="pair_id", columns="order", values="correct")
    if not ({"ab", "ba"} <= set(wide.columns)) or wide.empty:
        return {}
    lab = pairs.set_index("pair_id").loc[wide.index]
    a_pref = lab["label"].to_numpy() == "a"
    ab, ba = wide["ab"], wide["ba"]
    cr, rc = ab.where(a_pref, ba), ba.where(a_pref, ab)
    both = cr * rc
    longer = np.where(a_pref, lab["len_a"] - lab["len_b"], lab["len_b"] - lab["len_a"]) > 0
    return {
        "acc_cr": float(cr.mean()), "acc_rc": float(rc.mean()),
        "acc_ab": float(ab.mean()), "acc_ba": float(ba.mean()),
        "acc_both": float(both.mean()), "acc_random": float((cr.mean() + rc.mean()) / 2),
        "position_bias": float(cr.mean() - rc.mean()),
        "length_bias": float(both[longer].mean() - both[~longer].mean()),
        "n_labelled": len(wide),
    }
