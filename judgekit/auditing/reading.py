"""What the audit says about the data it read: the notes of reading a table made by hand and the
crowd's own agreement when the labels are crowd votes."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    from judgekit.auditing.core import Section


def data_notes(j: pd.DataFrame, p: pd.DataFrame | None, s: Section) -> None:
    """Add to the data section what reading the table recognised, and the crowd's agreement."""
    from judgekit.data.table import NOTES_KEY

    for note in j.attrs.get(NOTES_KEY, []):
        if note not in s.notes:
            s.notes.append(note)
    if "tie_kind" in j.columns and (j["tie_kind"] == "bothbad").any():
        ties = j["verdict"].eq("tie")
        bothbad = int((j["tie_kind"] == "bothbad").sum())
        s.notes.append(f"Ties: {int(ties.sum()) - bothbad:,} 'tie' and {bothbad:,} "
                       "'tie (bothbad)' (both answers bad); the metrics count both as ties.")
    if p is None or "votes_a" not in p.columns:
        return
    from judgekit.data.arena_battles import crowd_agreement

    judged = p[p["pair_id"].isin(j["pair_id"])]
    agree = crowd_agreement(judged)
    s.tables["crowd_agreement"] = agree
    row = agree.iloc[0]
    bothbad = int(judged["votes_bothbad"].sum()) if "votes_bothbad" in judged.columns else 0
    labelled = int(judged["label"].isin(["a", "b", "tie"]).sum()) if "label" in judged else 0
    text = (f"Human labels are the crowd's votes: {int(judged['n_votes'].sum()):,} votes on "
            f"{len(judged):,} judged pairs ({bothbad:,} of them 'tie (bothbad)'); {labelled:,} "
            "pairs have a majority, used as their label.")
    if row["n"] == 0:
        text += (" Every pair has one vote, so the crowd's own agreement cannot be measured "
                 "(it needs pairs with at least two votes).")
    else:
        ci = (f" (95% CI {row['ci_low']:.2f} to {row['ci_high']:.2f})"
              if pd.notna(row["ci_low"]) else "")
        text += (f" Two voters on the same pair agree {row['estimate']:.0%} of the time{ci}, "
                 f"over {int(row['n']):,} pairs with at least two votes. The judge's agreement "
                 "with the crowd's majority is under 'Agreement with human labels'.")
    s.notes.append(text)
