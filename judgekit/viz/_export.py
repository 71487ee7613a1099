"""Turning altair charts into themed specs, PNG/SVG/PDF/HTML files and notebook display bundles.

Rendering goes through vl-convert (a self-contained Vega runtime), so it needs no browser and no
network. The notebook display bundle carries the chart twice: compiled Vega (drawn live, with
tooltips, by JupyterLab's built-in Vega renderer, offline) and a PNG (shown wherever Vega cannot
run: nbconvert HTML, GitHub, and the ``judgekit reproduce`` report, which collects these PNGs).
"""

from __future__ import annotations

import base64
import copy
import html
import json
import re
import struct
from functools import cache
from pathlib import Path
from typing import Any

from judgekit.viz._theme import THEME_NAME, _register, theme

__all__ = ["chart_spec", "html_page", "mimebundle", "save_chart", "script_json", "to_png", "to_svg"]

#: The MIME type JupyterLab (and VS Code, nteract) render with their bundled Vega 5.
VEGA_MIME = "application/vnd.vega.v5+json"
_VEGA_SCHEMA = "https://vega.github.io/schema/vega/v5.json"
#: Output-metadata key under which a chart's title and name travel with its PNG.
FIGURE_KEY = "judgekit_figure"
_FORMATS = (".png", ".svg", ".pdf", ".html", ".json")


def _vl_version() -> str | None:
    """The Vega-Lite version altair writes, as vl-convert names it (e.g. "6.4")."""
    import altair as alt
    import vl_convert as vlc

    major_minor = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
    return major_minor if major_minor in vlc.get_vegalite_versions() else None


def _deep_merge(base: dict, override: dict) -> dict:
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def chart_spec(chart: Any) -> dict[str, Any]:
    """The Vega-Lite spec of a chart with the judgekit theme applied.

    The judgekit theme is used unless another altair theme than the default is active (then that
    one is respected). A spec given as a dict gets the theme's config under its own.

    Parameters
    ----------
    chart : altair chart or dict
        Any altair top-level chart (``Chart``, layered, concatenated, faceted) or a spec.

    Returns
    -------
    dict
        A Vega-Lite spec with its data inline.

    Examples
    --------
    >>> import altair as alt, pandas as pd
    >>> c = alt.Chart(pd.DataFrame({"x": [1, 2]})).mark_point().encode(x="x:Q")
    >>> chart_spec(c)["config"]["axis"]["labelFontSize"]
    12
    """
    if isinstance(chart, dict):
        spec = copy.deepcopy(chart)
        spec["config"] = _deep_merge(theme()["config"], spec.get("config", {}))
        return spec
    if not hasattr(chart, "to_dict"):
        raise TypeError(f"expected an altair chart or a spec dict, got {type(chart).__name__}")
    import altair as alt

    _register()
    name = alt.theme.active if alt.theme.active not in ("default", THEME_NAME) else THEME_NAME
    with alt.theme.enable(name):
        return chart.to_dict()


def _to_vega(spec: dict[str, Any]) -> dict[str, Any]:
    import vl_convert as vlc

    vega = vlc.vegalite_to_vega(spec, vl_version=_vl_version())
    return vega if isinstance(vega, dict) else json.loads(vega)


def to_png(chart: Any, *, scale: float = 2.0, ppi: float | None = None) -> bytes:
    """Render a chart to PNG bytes (themed), without a browser.

    Parameters
    ----------
    chart : altair chart or dict
        Any altair top-level chart or a Vega-Lite spec (see :func:`chart_spec`).
    scale : float, default 2.0
        Pixel density: 2 gives crisp images on high-resolution screens and in reports.
    ppi : float, optional
        Pixels per inch written into the file (e.g. 300 for print); vl-convert's default when
        omitted.

    Returns
    -------
    bytes
        The PNG file's content, ``scale`` times the chart's nominal size in pixels.

    Examples
    --------
    >>> import altair as alt, pandas as pd
    >>> c = alt.Chart(pd.DataFrame({"x": [1, 2]})).mark_point().encode(x="x:Q")
    >>> to_png(c)[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
    True
    """
    import vl_convert as vlc

    return vlc.vegalite_to_png(chart_spec(chart), vl_version=_vl_version(), scale=scale, ppi=ppi)


def to_svg(chart: Any) -> str:
    """Render a chart to an SVG document (themed), without a browser.

    Parameters
    ----------
    chart : altair chart or dict
        Any altair top-level chart or a Vega-Lite spec (see :func:`chart_spec`).

    Returns
    -------
    str
        The SVG document's text.

    Examples
    --------
    >>> import altair as alt, pandas as pd
    >>> c = alt.Chart(pd.DataFrame({"x": [1, 2]})).mark_point().encode(x="x:Q")
    >>> to_svg(c).lstrip().startswith("<svg")
    True
    """
    import vl_convert as vlc

    return vlc.vegalite_to_svg(chart_spec(chart), vl_version=_vl_version())


def save_chart(chart: Any, path: str | Path, *, scale: float = 2.0, ppi: float | None = None) -> Path:
    """Save a chart, themed, as PNG, SVG, PDF, self-contained HTML or Vega-Lite JSON.

    The format follows the file's suffix. Everything renders offline through vl-convert; the HTML
    file carries the Vega libraries inline, so it opens without internet access.

    Parameters
    ----------
    chart : altair chart or dict
        The chart (e.g. from any ``judgekit.viz`` builder).
    path : str or Path
        Where to write; parent folders are created. Suffix ``.png``, ``.svg``, ``.pdf``, ``.html``
        or ``.json``.
    scale : float
        Pixel density of PNG output.
    ppi : float, optional
        Pixels per inch recorded in PNG output.

    Returns
    -------
    Path
        The file written.

    Raises
    ------
    ValueError
        For an unsupported suffix.

    Examples
    --------
    >>> import tempfile, pathlib, judgekit as jk, pandas as pd
    >>> card = pd.DataFrame({"judge": ["x", "y"], "estimate": [0.7, 0.8],
    ...                      "ci_low": [0.65, 0.75], "ci_high": [0.75, 0.85]})
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "acc.svg"
    >>> jk.viz.save_chart(jk.viz.accuracy_bars(card), out).stat().st_size > 1000
    True
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in _FORMATS:
        raise ValueError(
            f"cannot save a chart as {path.name!r}: the suffix must be one of {', '.join(_FORMATS)}"
        )
    import vl_convert as vlc

    from judgekit._safewrite import write_file

    spec = chart_spec(chart)
    version = _vl_version()
    if suffix == ".png":
        data: str | bytes = vlc.vegalite_to_png(spec, vl_version=version, scale=scale, ppi=ppi)
    elif suffix == ".svg":
        data = vlc.vegalite_to_svg(spec, vl_version=version)
    elif suffix == ".pdf":
        data = vlc.vegalite_to_pdf(spec, vl_version=version)
    elif suffix == ".html":
        data = html_page(spec)
    else:
        data = json.dumps(spec, indent=1)
    write_file(path, data)  # through a temporary file: a link at ``path`` is replaced, not followed
    return path


def script_json(value: Any) -> str:
    """JSON that is safe inside an HTML ``<script>`` element.

    ``<``, ``>`` and ``&`` (and the two line separators JavaScript rejects in literals) become
    ``\\uXXXX`` escapes, so a data string such as ``"</script><img onerror=...>"`` can neither
    close the script element nor open a comment; ``JSON.parse`` and JavaScript read the escapes
    back as the same characters.

    Parameters
    ----------
    value : object
        Anything :func:`json.dumps` can write; other objects (timestamps, paths, ...) are
        written as their ``str()``.

    Returns
    -------
    str
        The JSON text, non-ASCII characters kept as they are, with the five escapes above.

    Examples
    --------
    >>> print(script_json({"judge": "</script><b>"}))
    {"judge": "\\u003c/script\\u003e\\u003cb\\u003e"}
    """
    text = json.dumps(value, ensure_ascii=False, default=str)
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                         ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, escape)
    return text


@cache
def _vega_bundle(version: str | None) -> str:
    """Vega, Vega-Lite and vega-embed as one script (vl-convert's bundle), safe to inline."""
    import vl_convert as vlc

    bundle = vlc.javascript_bundle(vl_version=version)
    # the bundle is code, not data; should it ever contain an end tag, break it without changing
    # what the JavaScript means (inside strings and regular expressions "<\/" reads as "</")
    return re.sub(r"</(script)", r"<\\/\1", bundle, flags=re.IGNORECASE)


def html_page(chart: Any) -> str:
    """A self-contained HTML page drawing a chart offline (Vega libraries inline, data escaped).

    Every string of the spec reaches the page only as escaped JSON (:func:`script_json`) and the
    page title through :func:`html.escape`, so text from a table (a judge or model name, a
    prompt) is shown, never run.

    Parameters
    ----------
    chart : altair chart or dict
        Any altair top-level chart, or a Vega-Lite spec (a spec that already has a ``config``
        is used as it is, otherwise the theme is applied as in :func:`chart_spec`).

    Returns
    -------
    str
        The HTML document: the chart's title as the page title, the Vega libraries and the
        spec inline, drawn as SVG when the page opens.

    Examples
    --------
    >>> import altair as alt, pandas as pd
    >>> c = alt.Chart(pd.DataFrame({"x": ["</script><i>"]})).mark_point().encode(x="x:N")
    >>> page = html_page(c)
    >>> "</script><i>" in page, page.count("</script>")
    (False, 2)
    """
    spec = chart if isinstance(chart, dict) and "config" in chart else chart_spec(chart)
    title = chart_title(spec) or "judgekit chart"
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{html.escape(title)}</title>\n"
        f"<script>{_vega_bundle(_vl_version())}</script>\n</head><body>\n"
        "<div id=\"vega-chart\"></div>\n<script>\n"
        f"vegaEmbed(\"#vega-chart\", {script_json(spec)}, {{\"renderer\": \"svg\", \"actions\": false}})"
        ".catch(function (err) { console.error(err); });\n"
        "</script>\n</body></html>\n"
    )


def chart_title(spec: dict[str, Any]) -> str:
    """The first title found in a (possibly composed) Vega-Lite spec, or "" when there is none."""
    title = spec.get("title")
    if isinstance(title, dict):
        title = title.get("text")
    if isinstance(title, list):
        title = " ".join(str(t) for t in title)
    if title:
        return str(title)
    for key in ("hconcat", "vconcat", "concat", "layer"):
        for sub in spec.get(key, []) or []:
            found = chart_title(sub)
            if found:
                return found
    if isinstance(spec.get("spec"), dict):
        return chart_title(spec["spec"])
    return ""


def _png_size(png: bytes) -> tuple[int, int]:
    width, height = struct.unpack(">II", png[16:24])
    return width, height


def mimebundle(
    chart: Any, *, scale: float = 2.0, png: bool = True
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The notebook display bundle of a chart: live Vega, a PNG fallback and a text line.

    Parameters
    ----------
    chart : altair chart or dict
        Any altair top-level chart or a Vega-Lite spec (a spec is used as it is).
    scale : float, default 2.0
        Pixel density of the PNG (displayed at its nominal size).
    png : bool
        Include the PNG (``False``: live Vega and text only, for widget outputs that are redrawn
        often).

    Returns
    -------
    (data, metadata)
        As IPython's ``_repr_mimebundle_`` returns them. ``metadata["judgekit_figure"]`` holds
        the chart's title, which ``judgekit reproduce`` uses to name the PNG.

    Examples
    --------
    >>> import altair as alt, pandas as pd
    >>> c = alt.Chart(pd.DataFrame({"x": [1, 2]})).mark_point().encode(x="x:Q").properties(title="t")
    >>> data, meta = mimebundle(c)
    >>> sorted(data), meta["judgekit_figure"]["title"]
    (['application/vnd.vega.v5+json', 'image/png', 'text/plain'], 't')
    """
    spec = chart if isinstance(chart, dict) else chart_spec(chart)
    return _bundle_from_spec(spec, scale=scale, png=png)


def _bundle_from_spec(
    spec: dict[str, Any], *, scale: float = 2.0, png: bool = True
) -> tuple[dict, dict]:
    import vl_convert as vlc

    vega = _to_vega(spec)
    vega["$schema"] = _VEGA_SCHEMA
    title = chart_title(spec)
    data: dict[str, Any] = {
        VEGA_MIME: vega,
        "text/plain": f"<judgekit chart{': ' + title if title else ''}>",
    }
    metadata: dict[str, Any] = {
        VEGA_MIME: {"embed_options": {"renderer": "svg"}},
        FIGURE_KEY: {"title": title},
    }
    if png:
        image = vlc.vega_to_png(vega, scale=scale)
        width, height = _png_size(image)
        data["image/png"] = base64.b64encode(image).decode("ascii")
        metadata["image/png"] = {"width": round(width / scale), "height": round(height / scale)}
    return data, metadata


def _renderer(spec: dict[str, Any], **_options: Any) -> tuple[dict, dict]:
    return _bundle_from_spec(spec)


def register_renderer() -> None:
    """Register the judgekit renderer with altair (idempotent; does not enable it)."""
    import altair as alt

    if THEME_NAME not in alt.renderers.names():
        alt.renderers.register(THEME_NAME, _renderer)
