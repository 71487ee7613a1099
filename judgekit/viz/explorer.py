"""The judge explorer: pick a dataset, judges, templates, a metric and an estimator; see linked charts
and any single pair with both orders' verdicts and rationales.

Everything shown is computed by :func:`judgekit.report_card` and drawn by the chart builders of
:mod:`judgekit.viz`; the explorer only wires widgets to them. Charts are shown as live Vega in
JupyterLab and as PNG wherever widgets are not rendered (nbconvert, GitHub, ``judgekit reproduce``).
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from judgekit.schema import validate_judgments, validate_pairs
from judgekit.viz._export import chart_spec, mimebundle
from judgekit.viz._theme import SIGN_LABELS, metric_label
from judgekit.viz.accuracy import accuracy_bars, bias_accuracy_scatter, bias_bars
from judgekit.viz.pairview import pair_card_html

__all__ = ["ESTIMATORS", "JudgeExplorer"]

Source = tuple[pd.DataFrame, pd.DataFrame] | Callable[[], tuple[pd.DataFrame, pd.DataFrame]]

#: Estimator choices offered by default: label -> keyword arguments of :func:`judgekit.report_card`.
ESTIMATORS: dict[str, dict[str, Any]] = {
    "bootstrap CI · consistent flip estimator (judgekit)": {"flip_estimator": "consistent"},
    "bootstrap CI · paper's flip estimator (Wei et al.)": {"flip_estimator": "paper"},
    "bootstrap CI · first repeat only (Wei et al.)": {"repeats": "first"},
    "mean over 5 random splits, no CI (Wei et al.)": {"splits": 5},
}
_PAIR_FILTERS = ("all pairs", "orders disagree", "wrong in both orders")
_ALL = "(all)"


class JudgeExplorer:
    """Interactive report cards for many judges, with linked charts and a pair viewer.

    Parameters
    ----------
    data : DataFrame or mapping
        Either a judgments table (then give ``pairs``), or a mapping from a dataset name to
        ``(judgments, pairs)`` or to a zero-argument function returning them (loaded on first
        selection). With a single table whose pairs have a ``dataset`` column of several values,
        each value becomes a choice.
    pairs : DataFrame, optional
        The pairs table when ``data`` is a judgments table.
    metrics : sequence of str, optional
        Metrics offered (default: every report-card metric that is defined for the data).
    estimators : mapping, optional
        Label -> keyword arguments of :func:`judgekit.report_card` (default :data:`ESTIMATORS`).
        On each dataset the dropdown offers only the estimators whose report card differs from
        the first one's (e.g. the flip estimators differ only where repeats of labelled pairs
        exist); it is disabled, with the reason beside it, when none does.
    n_boot : int
        Bootstrap draws per report card (interactive default: 200).
    seed : int
        Bootstrap seed.
    max_templates : int
        Templates selected initially (all models are).

    Attributes
    ----------
    widget : ipywidgets.VBox
        The whole explorer (displaying the explorer displays it).
    controls : dict of str to widget
        ``dataset``, ``models``, ``templates``, ``metric``, ``estimator``, ``pair_filter``,
        ``pair``, ``pair_judge``: set their ``value`` from Python to drive the explorer.
    charts : dict of str to altair chart
        The charts currently shown (``"metric"``, and ``"scatter"`` when labels exist).
    card : DataFrame
        The report-card rows of the selected judges.

    Examples
    --------
    >>> import pandas as pd, judgekit as jk
    >>> frames = [jk.sim.simulate_judgments(60, position_bias=pb, repeats=2, flip_q=0.05,
    ...                                 judge_name=name, seed=1) for name, pb in [("x", 0.0), ("y", 1.5)]]
    >>> ex = jk.viz.JudgeExplorer(pd.concat([f.judgments for f in frames]), frames[0].pairs, n_boot=50)
    >>> ex.controls["metric"].value = "position_bias"
    >>> sorted(ex.card["judge"])
    ['x', 'y']
    >>> ex.controls["models"].value = ("y",)
    >>> ex.card["judge"].tolist()
    ['y']
    """

    def __init__(
        self,
        data: pd.DataFrame | Mapping[str, Source],
        pairs: pd.DataFrame | None = None,
        *,
        metrics: Sequence[str] | None = None,
        estimators: Mapping[str, Mapping[str, Any]] | None = None,
        n_boot: int = 200,
        seed: int = 0,
        max_templates: int = 4,
    ) -> None:
        import ipywidgets as w

        self._sources = self._sources_of(data, pairs)
        self._estimators = {k: dict(v) for k, v in (estimators or ESTIMATORS).items()}
        if not self._estimators:
            raise ValueError("JudgeExplorer: estimators must offer at least one choice")
        self._metrics = list(metrics) if metrics is not None else None
        self._n_boot = int(n_boot)
        self._seed = int(seed)
        self._max_templates = int(max_templates)
        self._loaded: dict[str, tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]] = {}
        self._cards: dict[tuple[str, str], pd.DataFrame] = {}
        self._same: dict[str, dict[str, str]] = {}  # dataset -> estimator -> the one it equals
        self._busy = False
        self._displayed = False  # charts are drawn into the widget once it is shown
        self._drawn: dict[str, str] = {}
        self.charts: dict[str, Any] = {}
        self.card = pd.DataFrame()

        names = list(self._sources)
        wide = {"description_width": "90px"}
        layout = w.Layout(width="360px")
        self.controls: dict[str, Any] = {
            "dataset": w.Dropdown(options=names, value=names[0], description="dataset",
                                  style=wide, layout=layout),
            "metric": w.Dropdown(description="metric", style=wide, layout=layout),
            "estimator": w.Dropdown(options=list(self._estimators), description="estimator",
                                    style=wide, layout=w.Layout(width="480px")),
            "models": w.SelectMultiple(description="judges", rows=6, style=wide, layout=layout),
            "templates": w.SelectMultiple(description="templates", rows=6, style=wide, layout=layout),
            "pair_filter": w.ToggleButtons(options=_PAIR_FILTERS, value=_PAIR_FILTERS[0],
                                           style={"button_width": "150px"}),
            "pair": w.Dropdown(description="pair", style=wide, layout=w.Layout(width="460px")),
            "pair_judge": w.Dropdown(description="judge", style=wide, layout=w.Layout(width="460px")),
        }
        for name, control in self.controls.items():
            control.add_class(f"jk-{name.replace('_', '-')}")
        self._status = w.HTML().add_class("jk-status")
        self._estimator_note = w.HTML().add_class("jk-estimator-note")
        self._chart_out = w.Output().add_class("jk-chart")
        self._scatter_out = w.Output().add_class("jk-scatter")
        self._pair_html = w.HTML().add_class("jk-pair-view")
        c = self.controls
        wrap = w.Layout(flex_flow="row wrap")
        self.widget = w.VBox([
            w.HBox([c["dataset"], c["metric"], c["estimator"]], layout=wrap),
            self._estimator_note,
            w.HBox([c["models"], c["templates"]], layout=wrap),
            self._status,
            w.HBox([self._chart_out, self._scatter_out], layout=wrap),
            w.HTML("<h4 style='margin:12px 0 4px'>Pair viewer</h4>"),
            c["pair_filter"],
            w.HBox([c["pair"], c["pair_judge"]], layout=wrap),
            self._pair_html,
        ]).add_class("jk-explorer")

        c["dataset"].observe(self._on_dataset, names="value")
        for name in ("models", "templates", "metric", "estimator"):
            c[name].observe(self._on_selection, names="value")
        for name in ("pair_filter", "pair_judge"):
            c[name].observe(self._on_pair_list, names="value")
        c["pair"].observe(self._on_pair, names="value")
        self._on_dataset()

    # ---------------------------------------------------------------------------------- data
    @staticmethod
    def _sources_of(data: Any, pairs: pd.DataFrame | None) -> dict[str, Source]:
        if isinstance(data, pd.DataFrame):
            if pairs is None:
                raise ValueError("JudgeExplorer: give the pairs table beside the judgments")
            pairs = validate_pairs(pairs)
            judgments = validate_judgments(data, pairs)
            if "dataset" in pairs.columns and pairs["dataset"].nunique() > 1:
                sources: dict[str, Source] = {_ALL: (judgments, pairs)}
                for name in sorted(pairs["dataset"].dropna().unique()):
                    sub = pairs[pairs["dataset"] == name]
                    sources[str(name)] = (judgments[judgments["pair_id"].isin(sub["pair_id"])], sub)
                return sources
            return {"data": (judgments, pairs)}
        if isinstance(data, Mapping):
            if not data:
                raise ValueError("JudgeExplorer: the mapping of datasets is empty")
            return {str(k): v for k, v in data.items()}
        raise TypeError(
            "JudgeExplorer: data must be a judgments DataFrame (with pairs=) or a mapping of "
            f"dataset name to (judgments, pairs) or a function returning them; got {type(data).__name__}")

    def _dataset(self, name: str) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
        if name not in self._loaded:
            source = self._sources[name]
            judgments, pairs = source() if callable(source) else source
            pairs = validate_pairs(pairs)
            judgments = validate_judgments(judgments, pairs)
            cols = [c for c in ("model", "template") if c in judgments.columns]
            info = judgments.drop_duplicates("judge")[["judge", *cols]].reset_index(drop=True)
            if "model" not in info.columns:
                info["model"] = info["judge"]
            info["model"] = info["model"].fillna(info["judge"]).astype(str)
            if "template" in info.columns:
                info["template"] = info["template"].fillna("(none)").astype(str)
            self._loaded[name] = (judgments, pairs, info)
        return self._loaded[name]

    def _full_card(self) -> pd.DataFrame:
        """The report card of every judge of the dataset under the chosen estimator (cached)."""
        return self._card_for(self.controls["dataset"].value, self.controls["estimator"].value)

    def _card_for(self, dataset: str, estimator: str) -> pd.DataFrame:
        from judgekit.metrics import report_card

        key = (dataset, estimator)
        if key not in self._cards:
            judgments, pairs, info = self._dataset(dataset)
            card = report_card(judgments, pairs, by=["judge"], n_boot=self._n_boot, seed=self._seed,
                               **self._estimators[estimator])
            self._cards[key] = card.merge(info, on="judge", how="left")
        return self._cards[key]

    def _equivalent_estimators(self, dataset: str) -> dict[str, str]:
        """Each estimator mapped to the first earlier one whose report card it equals on ``dataset``.

        Two estimators are equal on a dataset when every number of their report cards agrees
        (NaN with NaN): choosing between them cannot change anything the explorer shows.
        """
        if dataset not in self._same:
            import warnings

            import numpy as np

            same: dict[str, str] = {}
            kept: list[str] = []
            for name in self._estimators:
                with warnings.catch_warnings():  # a card only compared here warns nobody
                    warnings.simplefilter("ignore")
                    card = self._card_for(dataset, name)
                for other in kept:
                    ref = self._card_for(dataset, other)
                    if list(card.columns) == list(ref.columns) and card["judge"].tolist() == ref["judge"].tolist():
                        numbers = [c for c in card.columns if pd.api.types.is_numeric_dtype(card[c])]
                        if np.allclose(card[numbers].to_numpy(float), ref[numbers].to_numpy(float),
                                       rtol=0, atol=1e-12, equal_nan=True):
                            same[name] = other
                            break
                else:
                    kept.append(name)
            self._same[dataset] = same
        return self._same[dataset]

    def _offer_estimators(self, dataset: str) -> None:
        """Offer only the estimators that change the numbers on this dataset; say why."""
        c = self.controls
        same = self._equivalent_estimators(dataset)
        offered = [name for name in self._estimators if name not in same]
        previous = c["estimator"].value
        value = previous if previous in offered else same.get(previous, offered[0])
        with c["estimator"].hold_sync():
            c["estimator"].options = offered
            c["estimator"].value = value
            c["estimator"].disabled = len(offered) == 1
        if same:
            judgments = self._dataset(dataset)[0]
            repeats = int(judgments["repeat"].max()) + 1 if len(judgments) else 1
            why = ("one call per pair and order, so no flip noise to estimate" if repeats == 1
                   else "repeats, but the flip estimators only act on pairs with a human label"
                   if self._dataset(dataset)[1]["label"].isin(["a", "b"]).sum() == 0
                   else "data on which these estimators agree")
            hidden = ", ".join(f"\u201c{html.escape(k)}\u201d" for k in same)
            self._estimator_note.value = (
                "<span style='color:#555;font-size:12px'>estimator: "
                f"{'only this choice changes' if len(offered) == 1 else f'{len(offered)} choices change'} "
                f"the numbers on this dataset ({html.escape(why)}); not offered because they give the same "
                f"report card: {hidden}</span>")
        else:
            self._estimator_note.value = ""

    @property
    def _has_templates(self) -> bool:
        return "template" in self._dataset(self.controls["dataset"].value)[2].columns

    def _selected_judges(self) -> list[str]:
        info = self._dataset(self.controls["dataset"].value)[2]
        keep = info["model"].isin(self.controls["models"].value)
        if self._has_templates:
            keep &= info["template"].isin(self.controls["templates"].value)
        return sorted(info.loc[keep, "judge"])

    # ------------------------------------------------------------------------------ handlers
    def _say(self, text: str, *, error: bool = False) -> None:
        color = "#b42318" if error else "#555555"
        self._status.value = f"<span style='color:{color};font-size:12px'>{text}</span>"

    def _on_dataset(self, _change: Any = None) -> None:
        c = self.controls
        name = c["dataset"].value
        self._busy = True
        try:
            self._say(f"loading {html.escape(name)} …")
            _judgments, _pairs, info = self._dataset(name)
            self._offer_estimators(name)
            card = self._full_card()
            models = sorted(info["model"].unique())
            # options and value travel in one message: sent apart, the front end applies the
            # new selection to the old options ("Cannot set properties of undefined")
            with c["models"].hold_sync():
                c["models"].options = models
                c["models"].value = tuple(models)
            with c["templates"].hold_sync():
                if self._has_templates:
                    counts = info["template"].value_counts()
                    c["templates"].options = sorted(counts.index)
                    c["templates"].value = tuple(sorted(counts.index[: self._max_templates]))
                    c["templates"].disabled = False
                else:
                    c["templates"].value = ()
                    c["templates"].options = []
                    c["templates"].disabled = True
            available = [m for m in (self._metrics or _card_metrics(card))
                         if m in card.columns and card[m].notna().any()]
            if self._metrics is None:  # the headline metric first, where it is defined
                available.sort(key=lambda m: m not in ("acc_both", "position_consistency"))
            if not available:
                raise ValueError(f"no metric is defined for dataset {name!r}")
            previous = c["metric"].value
            with c["metric"].hold_sync():
                c["metric"].options = [(metric_label(m), m) for m in available]
                c["metric"].value = previous if previous in available else available[0]
        except Exception as err:
            self._say(f"{type(err).__name__}: {html.escape(str(err))}", error=True)
            raise
        finally:
            self._busy = False
        self._refresh()

    def _on_selection(self, _change: Any = None) -> None:
        if not self._busy:
            self._refresh()

    def _refresh(self) -> None:
        c = self.controls
        try:
            self._say("computing …")
            full = self._full_card()
            judges = self._selected_judges()
            self.card = full[full["judge"].isin(judges)].reset_index(drop=True)
            metric = c["metric"].value
            if self.card.empty:
                self.charts = {}
                self._say("select at least one judge (and template)")
            else:
                self.charts = self._build_charts(metric)
                n_pairs = int(self._dataset(c["dataset"].value)[1].shape[0])
                self._say(f"{len(self.card)} judge(s) · {n_pairs:,} pairs · {html.escape(c['estimator'].value)}"
                          f" · {self._n_boot} bootstrap draws")
            if self._displayed:
                self._draw()
            self._busy = True
            try:
                previous = c["pair_judge"].value
                with c["pair_judge"].hold_sync():
                    c["pair_judge"].options = judges
                    c["pair_judge"].value = (previous if previous in judges else judges[0]) if judges else None
            finally:
                self._busy = False
            self._on_pair_list()
        except Exception as err:
            self._say(f"{type(err).__name__}: {html.escape(str(err))}", error=True)
            raise

    def _draw(self) -> None:
        """Put the current charts into the output widgets (live Vega), skipping unchanged ones."""
        for key, out in (("metric", self._chart_out), ("scatter", self._scatter_out)):
            chart = self.charts.get(key)
            if chart is None:
                out.outputs = ()
                self._drawn.pop(key, None)
                continue
            spec = chart_spec(chart)
            fingerprint = json.dumps(spec, sort_keys=True, default=str)
            if self._drawn.get(key) != fingerprint:
                data, metadata = mimebundle(spec, png=False)
                out.outputs = ({"output_type": "display_data", "data": data, "metadata": metadata},)
                self._drawn[key] = fingerprint

    def _build_charts(self, metric: str, *, static: bool = False) -> dict[str, Any]:
        dataset = self.controls["dataset"].value
        card = self.card
        templates = self._has_templates
        by, color = ("template", "model") if templates else ("judge", None)
        subtitle = f"{dataset} · {self.controls['estimator'].value}"
        if metric in SIGN_LABELS:
            chart = bias_bars(card, metric, by=by, color=color, subtitle=subtitle, width=380)
        else:
            chart = accuracy_bars(card, metric, by=by, color=color, subtitle=subtitle, width=380)
        charts = {"metric": chart}
        if {"position_bias", "acc_both"} <= set(card.columns) and card[["position_bias", "acc_both"]].notna().all(axis=None):
            # a picture cannot be hovered: it says what a point is instead of pointing at tooltips
            how = ("coloured by model; the bars above give each judge's value" if static
                   else "hover for names")
            charts["scatter"] = bias_accuracy_scatter(
                card, "position_bias", "acc_both", by="judge", color="model",
                subtitle=f"{dataset} · one point per judge ({how})", width=340, height=260)
        return charts

    def _on_pair_list(self, _change: Any = None) -> None:
        if self._busy:
            return
        c = self.controls
        judgments, pairs, _info = self._dataset(c["dataset"].value)
        judge = c["pair_judge"].value
        ids = pairs["pair_id"]
        mode = c["pair_filter"].value
        if judge and mode != _PAIR_FILTERS[0]:
            ids = pd.Series(_filter_pairs(judgments, pairs, judge, mode), dtype=object)
        labels = pairs.set_index("pair_id")["label"]
        options = [(f"{pid}  (human: {_label_text(labels.get(pid))})", pid) for pid in ids]
        previous = c["pair"].value
        self._busy = True
        try:
            values = [v for _, v in options]
            with c["pair"].hold_sync():
                c["pair"].options = options
                c["pair"].value = previous if previous in values else (values[0] if values else None)
        finally:
            self._busy = False
        self._on_pair()

    def _on_pair(self, _change: Any = None) -> None:
        if self._busy:
            return
        c = self.controls
        judgments, pairs, _info = self._dataset(c["dataset"].value)
        pid, judge = c["pair"].value, c["pair_judge"].value
        if pid is None:
            self._pair_html.value = "<p style='color:#666'>No pair matches this filter.</p>"
            return
        self._pair_html.value = pair_card_html(judgments, pairs, pid, [judge] if judge else None)

    # ------------------------------------------------------------------------------ display
    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict, dict] | dict:
        """The live widget, with the current charts as a PNG for front ends without widgets."""
        self._displayed = True
        self._draw()
        bundle = self.widget._repr_mimebundle_(**kwargs)
        data = dict(bundle[0] if isinstance(bundle, tuple) else bundle)
        metadata = dict(bundle[1]) if isinstance(bundle, tuple) else {}
        if self.charts:
            import altair as alt

            charts = self._build_charts(self.controls["metric"].value, static=True)
            static = alt.vconcat(*charts.values()).properties(title=alt.TitleParams(
                f"Judge explorer · {self.controls['dataset'].value} (static view)", fontSize=16))
            png_data, png_meta = mimebundle(static)
            data["image/png"] = png_data["image/png"]
            metadata["image/png"] = png_meta["image/png"]
            metadata["judgekit_figure"] = png_meta["judgekit_figure"]
        data["text/plain"] = (f"<JudgeExplorer: {self.controls['dataset'].value}, "
                              f"{len(self.card)} judge(s), metric {self.controls['metric'].value}>")
        return data, metadata


def _label_text(label: object) -> str:
    return "none" if label is None or pd.isna(label) or label == "" else str(label)


def _card_metrics(card: pd.DataFrame) -> list[str]:
    from judgekit.metrics import REPORT_CARD_METRICS

    return [m for m in REPORT_CARD_METRICS if m in card.columns]


def _filter_pairs(judgments: pd.DataFrame, pairs: pd.DataFrame, judge: str, mode: str) -> list[str]:
    """Pair ids where ``judge``'s first-repeat verdicts in the two orders disagree, or are both wrong."""
    j = judgments[(judgments["judge"] == judge) & (judgments["repeat"] == judgments["repeat"].min())
                  & ~judgments["id_swap"]]
    wide = j.pivot_table(index="pair_id", columns="order", values="verdict", aggfunc="first")
    if not {"ab", "ba"} <= set(wide.columns):
        return []
    if mode == "orders disagree":
        keep = wide["ab"].astype(object) != wide["ba"].astype(object)
    else:
        label = pairs.set_index("pair_id")["label"].reindex(wide.index)
        keep = label.isin(["a", "b"]) & (wide["ab"] != label) & (wide["ba"] != label)
    return [pid for pid in pairs["pair_id"] if pid in set(wide.index[keep.to_numpy()])]
