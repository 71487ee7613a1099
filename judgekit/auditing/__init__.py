"""Audit your own judge: ``jk.audit(judgments, pairs)`` runs every analysis the data supports and
explains the ones it does not; the result renders in Jupyter and saves as a standalone report.

The flat namespace gives ``jk.audit`` and ``jk.Audit``; the thresholds of the summary and the
types of its parts are here (``from judgekit.auditing import THRESHOLDS, MARGINS``).
``jk.effect_finding`` reads any estimate with its interval the way the audit does: evidence of an
effect, evidence of no material effect (an equivalence test against a stated margin), or
inconclusive with the pairs that would decide.
"""

from judgekit.auditing.core import THRESHOLDS as THRESHOLDS
from judgekit.auditing.core import Audit, audit
from judgekit.auditing.core import Finding as Finding
from judgekit.auditing.core import Section as Section
from judgekit.auditing.findings import effect_finding
from judgekit.auditing.verdicts import MARGINS as MARGINS

__all__ = ["Audit", "audit", "effect_finding"]
