"""Audit your own judge: ``jk.audit(judgments, pairs)`` runs every analysis the data supports and
explains the ones it does not; the result renders in Jupyter and saves as a standalone report.

The flat namespace gives ``jk.audit`` and ``jk.Audit``; the thresholds of the summary and the
types of its parts are here (``from judgekit.auditing import THRESHOLDS``).
"""

from judgekit.auditing.core import THRESHOLDS as THRESHOLDS
from judgekit.auditing.core import Audit, audit
from judgekit.auditing.core import Finding as Finding
from judgekit.auditing.core import Section as Section

__all__ = ["Audit", "audit"]
