"""The bias perturbation suite (Ye et al. 2024, CALM): twelve ways a judge can be swayed.

Each ``perturb_*`` function is a pure, seeded transformation of a pairs table that returns the
perturbed pairs with columns saying what changed and which response the perturbation favours (see
:mod:`judgekit.perturb._common`). :func:`bias_report` measures a judge's robustness to them
against its own consistency. The simulated judge that reacts to them is in the simulation wing
(:mod:`judgekit.sim.perturbations`).
"""

from judgekit._deprecation import moved
from judgekit.perturb._common import BIASES
from judgekit.perturb.authority import fake_citation, perturb_authority
from judgekit.perturb.calm import calm_perturbations
from judgekit.perturb.notes import (
    perturb_bandwagon,
    perturb_compassion_fade,
    perturb_cot,
    perturb_distraction,
    perturb_diversity,
    perturb_refinement_aware,
)
from judgekit.perturb.position import perturb_position
from judgekit.perturb.report import bias_report, bias_summary
from judgekit.perturb.rewrite import (
    apply_rewrites,
    perturb_fallacy,
    perturb_sentiment,
    perturb_verbosity,
    refine_pairs,
    rewrite_requests,
)
from judgekit.perturb.self_enhancement import perturb_self_enhancement
from judgekit.perturb.suite import BiasSuite, bias_suite, perturb_all

__all__ = [
    "BIASES",
    "BiasSuite",
    "apply_rewrites",
    "bias_suite",
    "calm_perturbations",
    "perturb_all",
    "perturb_fallacy",
    "perturb_sentiment",
    "perturb_verbosity",
    "refine_pairs",
    "rewrite_requests",
    "bias_report",
    "bias_summary",
    "fake_citation",
    "perturb_authority",
    "perturb_bandwagon",
    "perturb_compassion_fade",
    "perturb_cot",
    "perturb_distraction",
    "perturb_diversity",
    "perturb_position",
    "perturb_refinement_aware",
    "perturb_self_enhancement",
]

# Moved to the simulation wing (issue 24): the old names warn and still work.
__getattr__ = moved(__name__, dict.fromkeys(("ContentSimJudge", "detect_signals", "sim_rewrite_handler", "simulated_rewrite", "simulation_pairs", "strip_perturbations"), "judgekit.sim"))
