"""Audit your own judge: ``jk.audit(judgments, pairs)`` runs every analysis the data supports and
explains the ones it does not; the result renders in Jupyter and saves as a standalone report."""

from judgekit.audit.core import THRESHOLDS, Audit, Finding, Section, audit

__all__ = ["THRESHOLDS", "Audit", "Finding", "Section", "audit"]
