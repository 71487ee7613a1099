"""Judge prompt templates: data files with a renderer, a verdict parser and a request decoder.

Each bundled template is a TOML file in :mod:`judgekit.templates` with its citation, task type,
system and user text, option IDs, tie option, whether the judge reasons before its verdict, and the
verdict format (a regular expression) that its parser looks for. Users add their own from a file or
a dict with :func:`get_template`.

Placeholders in the text (anything else in braces is left as it is):

==================  ==============================================================================
``{prompt}``        the instruction or conversation
``{response_k}``    the response shown in position k (1-based)
``{id_k}``          the option ID carried by position k (``"B"`` in position 1 under an ID swap)
``{tk}``            the template's k-th option ID in canonical order (for the format instructions)
``{tie_id}``        the tie option's ID; ``{tie_clause}`` is the sentence offering it (empty when
                    ties are off)
``{responses}``     n-way templates: ``response_block`` rendered once per position (with ``{id}``,
                    ``{response}``, ``{k}``) and joined by ``block_separator``
``{n}``             number of responses; ``{ids_or}`` "A, B or C"; ``{ids_bracketed}`` "[[A]], ..."
``{<field>}``       a pairs column the template declares in ``fields`` (e.g. ``reference``),
                    with an optional default in ``[defaults]``
==================  ==============================================================================

Optional pairs columns ``system_note`` and ``user_note`` are appended (after a blank line) to the
system prompt and the user message; in them ``{id_a}`` .. ``{id_d}`` become the IDs that responses
a .. d carry in the arrangement judged.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit._deprecation import moved_method
from judgekit._stamp import stamped
from judgekit.judging.parsing import ANCHORS, ParsedVerdict, parse_verdict

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = ["ParsedVerdict", "Template", "get_template", "list_templates"]

#: A placeholder of a template's text, ``{name}``.
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")

_ID_OK = re.compile(r"^\w{1,16}$")
_NOTE_ID = re.compile(r"\{id_([a-d])\}")
_FIXED = {"prompt", "responses", "n", "ids_or", "ids_bracketed", "tie_id", "tie_clause"}
_LETTERS = "abcd"


@dataclass(frozen=True)
class Template:
    """A judge prompt template (see the module docstring for the placeholders).

    Parameters
    ----------
    name : str
        Unique name; variants made by :meth:`with_options` / :meth:`with_ties` get a suffix.
    user, system : str
        Text of the user message and of the system prompt (empty: no system message).
    options : sequence of str
        Option IDs in canonical order (t1, t2, ...): word characters, at most 16.
    ties : bool
        Whether the judge may answer with ``tie_id``.
    tie_id, tie_clause : str
        The tie option's ID, and the text substituted for ``{tie_clause}`` when ties are on.
    reasons_first : bool
        Whether the judge explains before it states the verdict; the parser takes the last
        verdict stated when True, the first when the format puts the verdict first.
    verdict_pattern : str
        Regular expression with a named group ``id``; ``{ids}`` becomes the alternatives.
    verdict_flags : str
        ``"i"`` to match case-insensitively.
    verdict_anchor : str
        Where on its line the answer format puts the verdict: ``"none"`` (anywhere),
        ``"start"`` (the match opens its line), ``"line"`` (it opens its line and the ID ends
        the statement). See :mod:`judgekit.judging.parsing`.
    reply : str
        How the simulated judge writes its answer (``{reason}``, ``{verdict}``).
    max_responses : int
        2 for pairwise templates; up to 4 with ``response_block``.
    response_block, block_separator : str
        n-way rendering of one response (``{id}``, ``{response}``, ``{k}``) and the joiner.
    fields : sequence of str
        Pairs columns the template needs (e.g. ``("reference",)``); ``defaults`` fills them.
    title, task, citation, source, notes : str
        Documentation.

    Examples
    --------
    >>> import judgekit as jk
    >>> t = jk.get_template("rafailov_tldr")
    >>> msgs = t.render("post", ["first", "second"], ids=["B", "A"])
    >>> "Summary B: first" in msgs[-1]["content"]
    True
    >>> t.parse("Comparison: the second is tighter.\\nPreferred: A").option
    'A'
    """

    name: str
    user: str
    system: str = ""
    options: tuple[str, ...] = ("A", "B")
    ties: bool = False
    tie_id: str = "C"
    tie_clause: str = ""
    reasons_first: bool = True
    verdict_pattern: str = r"\[\[\s*(?P<id>{ids})\s*\]\]"
    verdict_flags: str = ""
    verdict_anchor: str = "none"
    reply: str = "{reason}\n\n[[{verdict}]]"
    max_responses: int = 2
    response_block: str = ""
    block_separator: str = "\n\n"
    fields: tuple[str, ...] = ()
    defaults: Mapping[str, str] = field(default_factory=dict)
    title: str = ""
    task: str = ""
    citation: str = ""
    source: str = ""
    notes: str = ""

    def __hash__(self) -> int:
        return hash((self.name, self.user, self.system, self.options, self.ties, self.tie_id,
                     self.tie_clause, self.verdict_pattern, self.verdict_flags,
                     self.verdict_anchor, self.reasons_first, self.response_block,
                     tuple(sorted(self.defaults.items()))))

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", tuple(str(o) for o in self.options))
        object.__setattr__(self, "fields", tuple(self.fields))
        object.__setattr__(self, "defaults", dict(self.defaults))
        where = f"template {self.name!r}"
        if not self.name or not isinstance(self.name, str):
            raise ValueError("a template needs a non-empty 'name'")
        if not isinstance(self.user, str) or not self.user.strip():
            raise ValueError(f"{where}: 'user' text is empty")
        if not 2 <= self.max_responses <= 4:
            raise ValueError(f"{where}: max_responses must be 2, 3 or 4, got {self.max_responses}")
        if len(self.options) < self.max_responses:
            raise ValueError(f"{where}: needs {self.max_responses} option IDs, got {self.options}")
        ids = [*self.options, self.tie_id] if self.ties else list(self.options)
        bad = [o for o in ids if not _ID_OK.match(o)]
        if bad:
            raise ValueError(f"{where}: option IDs must be 1-16 word characters, got {bad}")
        folded = [o.casefold() for o in ids]
        if len(set(folded)) != len(folded) and "i" in self.verdict_flags:
            raise ValueError(f"{where}: option IDs {ids} differ only in case; drop verdict_flags 'i'")
        if len(set(ids)) != len(ids):
            raise ValueError(f"{where}: option IDs must be distinct, got {ids}")
        if "(?P<id>" not in self.verdict_pattern or "{ids}" not in self.verdict_pattern:
            raise ValueError(f"{where}: verdict_pattern needs a group (?P<id>{{ids}})")
        if set(self.verdict_flags) - {"i"}:
            raise ValueError(f"{where}: verdict_flags may only contain 'i', got {self.verdict_flags!r}")
        if self.verdict_anchor not in ANCHORS:
            raise ValueError(f"{where}: verdict_anchor must be one of {ANCHORS}, got {self.verdict_anchor!r}")
        uses_block = "{responses}" in self.user
        if self.max_responses > 2 and not (uses_block and self.response_block):
            raise ValueError(f"{where}: n-way templates need '{{responses}}' and a response_block")
        if not uses_block:
            for k in (1, 2):
                if f"{{response_{k}}}" not in self.user + self.system:
                    raise ValueError(f"{where}: the text has no '{{response_{k}}}' placeholder")
        try:
            self.verdict_regex  # noqa: B018 - compile once to report a bad pattern here
        except re.error as exc:
            raise ValueError(f"{where}: verdict_pattern does not compile: {exc}") from exc

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_dict(cls, spec: Mapping[str, Any], *, source_name: str | None = None) -> Template:
        """Build a template from a dict (the TOML file's content)."""
        spec = dict(spec)
        known = {f for f in cls.__dataclass_fields__}
        unknown = sorted(set(spec) - known)
        where = source_name or spec.get("name", "<dict>")
        if unknown:
            raise ValueError(f"template {where}: unknown keys {unknown}; known keys are {sorted(known)}")
        for key in ("name", "user"):
            if key not in spec:
                raise ValueError(f"template {where}: missing required key {key!r}")
        for key in ("options", "fields"):
            if key in spec:
                spec[key] = tuple(spec[key])
        return cls(**spec)

    @classmethod
    def from_file(cls, path: str | Path) -> Template:
        """Read a template from a TOML file."""
        path = Path(path)
        try:
            with path.open("rb") as fh:
                spec = tomllib.load(fh)
        except FileNotFoundError:
            raise FileNotFoundError(f"template file not found: {path}") from None
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"template file {path} is not valid TOML: {exc}") from exc
        return cls.from_dict(spec, source_name=str(path))

    def _base_name(self) -> str:
        return self.name.split("[", 1)[0]

    def with_options(self, options: Sequence[str]) -> Template:
        """The same template with other option IDs, e.g. ``("1", "2")``.

        Examples
        --------
        >>> import judgekit as jk
        >>> jk.get_template("calibraeval_default").with_options(["1", "2"]).name
        'calibraeval_default[1,2]'
        """
        options = tuple(str(o) for o in options)
        if len(options) < self.max_responses:
            raise ValueError(f"template {self.name!r} needs {self.max_responses} option IDs")
        return self._variant(options=options)

    def with_ties(self, ties: bool) -> Template:
        """The same template with the tie option switched on or off."""
        if ties and not self.tie_clause and "{tie_id}" not in self.user + self.system:
            raise ValueError(f"template {self.name!r} has no tie clause to switch on")
        return self._variant(ties=bool(ties))

    def _variant(self, **changes: Any) -> Template:
        base = get_template(self._base_name()) if self._base_name() in bundled_template_names() else None
        new = replace(self, **changes)
        tags = []
        ref = base if base is not None else self
        if new.options != ref.options:
            tags.append(",".join(new.options))
        if new.ties != ref.ties:
            tags.append("ties" if new.ties else "noties")
        name = self._base_name() + (f"[{';'.join(tags)}]" if tags else "")
        return replace(new, name=name)

    # ------------------------------------------------------------------ rendering
    def ids_for(self, n: int, id_swap: bool = False) -> tuple[str, ...]:
        """Option IDs of positions 1..n (reversed for a two-response ID swap)."""
        self._check_n(n)
        ids = self.options[:n]
        if id_swap:
            if n != 2:
                raise ValueError("id_swap is defined for two responses only")
            ids = ids[::-1]
        return ids

    def _check_n(self, n: int) -> None:
        if not 2 <= n <= self.max_responses:
            raise ValueError(
                f"template {self.name!r} takes 2 to {self.max_responses} responses, got {n}"
            )

    def _values(self, n: int, ids: Sequence[str], fields: Mapping[str, Any]) -> dict[str, str]:
        values = {f"t{k + 1}": o for k, o in enumerate(self.options)}
        values.update({f"id_{k + 1}": i for k, i in enumerate(ids)})
        values["n"] = str(n)
        shown = list(self.options[:n])
        values["ids_or"] = shown[0] if n == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]
        bracketed = [f"[[{o}]]" for o in shown]
        values["ids_bracketed"] = ", ".join(bracketed[:-1]) + " or " + bracketed[-1]
        values["tie_id"] = self.tie_id
        values["tie_clause"] = fill_placeholders(self.tie_clause, values) if self.ties else ""
        for name in self.fields:
            value = fields.get(name)
            if value is None or (isinstance(value, float) and value != value):
                value = self.defaults.get(name)
            if value is None:
                raise ValueError(
                    f"template {self.name!r} needs the pairs column {name!r} (no default)"
                )
            values[name] = str(value)
        return values

    def render(
        self,
        prompt: str,
        responses: Sequence[str],
        *,
        ids: Sequence[str] | None = None,
        fields: Mapping[str, Any] | None = None,
        system_note: str | None = None,
        user_note: str | None = None,
    ) -> list[dict[str, str]]:
        """Chat messages for one request, responses given in display order.

        Parameters
        ----------
        prompt : str
            The instruction or conversation.
        responses : sequence of str
            The responses in the positions shown (2 to ``max_responses``).
        ids : sequence of str, optional
            Option ID of each position; canonical order by default.
        fields : mapping, optional
            Values of the template's ``fields`` (e.g. ``reference``).
        system_note, user_note : str, optional
            Appended after a blank line to the system prompt / user message (already resolved).
        """
        n = len(responses)
        self._check_n(n)
        ids = tuple(self.options[:n] if ids is None else ids)
        if len(ids) != n or len(set(ids)) != n or not set(ids) <= set(self.options):
            raise ValueError(f"ids must be {n} distinct IDs of {self.options}, got {ids}")
        values = self._values(n, ids, fields or {})
        values["prompt"] = prompt
        for k, r in enumerate(responses):
            values[f"response_{k + 1}"] = r
        if self.response_block:
            blocks = [
                fill_placeholders(self.response_block, {"id": i, "response": r, "k": str(k + 1)})
                for k, (i, r) in enumerate(zip(ids, responses))
            ]
            values["responses"] = self.block_separator.join(blocks)
        system = fill_placeholders(self.system, values)
        user = fill_placeholders(self.user, values)
        if system_note:
            system = f"{system}\n\n{system_note}" if system else system_note
        if user_note:
            user = f"{user}\n\n{user_note}"
        messages = [{"role": "system", "content": system}] if system else []
        messages.append({"role": "user", "content": user})
        return messages

    def render_pair(
        self, pair: Mapping[str, Any], order: str = "ab", id_swap: bool = False
    ) -> list[dict[str, str]]:
        """Messages for a pairs-table row shown in ``order`` (e.g. ``"ba"``, or ``"cab"``).

        Notes in ``system_note`` / ``user_note`` get ``{id_a}`` .. ``{id_d}`` replaced by the IDs
        that responses a .. d carry in this arrangement.

        Examples
        --------
        >>> import judgekit as jk
        >>> t = jk.get_template("mtbench_pair")
        >>> row = {"prompt": "Q", "response_a": "x", "response_b": "y",
        ...        "system_note": "90% of people believe Assistant {id_a} is better."}
        >>> t.render_pair(row, order="ba")[0]["content"].endswith("Assistant B is better.")
        True
        """
        letters = _check_order(order)
        responses = []
        for letter in letters:
            value = pair.get(f"response_{letter}")
            if not isinstance(value, str):
                raise ValueError(f"order {order!r} needs a text in column 'response_{letter}'")
            responses.append(value)
        ids = self.ids_for(len(letters), id_swap)
        carried = {letter: ids[k] for k, letter in enumerate(letters)}
        notes = {}
        for column in ("system_note", "user_note"):
            note = pair.get(column)
            if isinstance(note, str) and note:
                notes[column] = _resolve_note(note, carried, column)
        return self.render(
            pair["prompt"], responses, ids=ids,
            fields={f: pair.get(f) for f in self.fields}, **notes,
        )

    # ------------------------------------------------------------------ parsing
    @cached_property
    def verdict_regex(self) -> re.Pattern[str]:
        """The compiled verdict pattern, ``{ids}`` expanded to this template's IDs."""
        ids = [*self.options, self.tie_id] if self.ties else list(self.options)
        alternatives = "|".join(re.escape(i) for i in sorted(ids, key=len, reverse=True))
        flags = re.IGNORECASE if "i" in self.verdict_flags else 0
        return re.compile(self.verdict_pattern.replace("{ids}", alternatives), flags)

    def canonical(self, token: str) -> str | None:
        """The option ID a matched or emitted token stands for (case-folded if 'i')."""
        ids = [*self.options, self.tie_id] if self.ties else list(self.options)
        if token in ids:
            return token
        if "i" in self.verdict_flags:
            folded = {i.casefold(): i for i in ids}
            return folded.get(token.casefold())
        return None

    def parse(self, text: str | None, *, prompt_text: str | None = None) -> ParsedVerdict:
        """The verdict the judge states in ``text``, read where this template's format puts it.

        Quotations, format echoes (a sentence naming two or more options) and mentions outside
        the answer format do not count; of the statements left, the last one counts when the
        judge reasons first, the first one when the format asks for the verdict first. The rules
        are in :mod:`judgekit.judging.parsing`; parsing takes time linear in ``len(text)``.

        Parameters
        ----------
        text : str or None
            The judge's answer.
        prompt_text : str, optional
            Accepted for compatibility and not used: lines copied from the prompt are no longer
            set aside, because a response could plant the judge's own verdict line there.

        Returns
        -------
        ParsedVerdict
            ``(option, start, error)``; ``option`` is None and ``error`` says why when no verdict
            is stated.

        Examples
        --------
        >>> import judgekit as jk
        >>> t = jk.get_template("mtbench_pair")
        >>> t.parse('Format: "[[A]]" if A is better, "[[B]]" if B is better. I pick [[B]].').option
        'B'
        >>> t.parse('"[[A]]" if assistant A is better, "[[B]]" if assistant B is better').error
        'only echoes of the format instructions, no verdict'
        >>> t.parse('[[A]]\\n\\nAssistant B ends its answer with "[[B]]" to sway the judge.').option
        'A'
        >>> jk.get_template("rafailov_tldr").parse("Comparison: ...\\nPreferred: a summary of B").error[:30]
        'a verdict is only quoted, echo'
        """
        return parse_verdict(self, text)

    # The reverse of render, which only the simulated judge needs, is judgekit.sim.decoding.
    request_regexes = moved_method("Template.request_regexes", "judgekit.sim.decoding", "request_regexes")
    decode = moved_method("Template.decode", "judgekit.sim.decoding", "decode_request")


def _check_order(order: str) -> str:
    if not isinstance(order, str) or not 2 <= len(order) <= 4:
        raise ValueError(f"order must be a permutation of 2-4 letters from 'abcd', got {order!r}")
    letters = order
    if sorted(letters) != list(_LETTERS[: len(letters)]):
        raise ValueError(
            f"order must be a permutation of {_LETTERS[: len(letters)]!r}, got {order!r}"
        )
    return letters


def _resolve_note(note: str, carried: Mapping[str, str], column: str) -> str:
    def repl(m: re.Match[str]) -> str:
        letter = m.group(1)
        if letter not in carried:
            raise ValueError(f"{column} refers to {{id_{letter}}} but response {letter} is not shown")
        return carried[letter]

    return _NOTE_ID.sub(repl, note)


def fill_placeholders(text: str, values: Mapping[str, str]) -> str:
    """``text`` with each ``{name}`` whose name is in ``values`` replaced; others left as written."""
    return PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), text)


# ---------------------------------------------------------------------- registry of bundled files
def _bundled_files() -> dict[str, Any]:
    root = resources.files("judgekit.templates")
    return {p.name[: -len(".toml")]: p for p in root.iterdir() if p.name.endswith(".toml")}


def bundled_template_names() -> set[str]:
    """The names of the templates shipped with judgekit."""
    return set(_bundled_files())


_LOADED: dict[str, Template] = {}


def _load_bundled(name: str) -> Template:
    hit = _LOADED.get(name)
    if hit is not None:
        return hit
    files = _bundled_files()
    if name not in files:
        raise KeyError(
            f"unknown template {name!r}; bundled templates are {sorted(files)} "
            "(or pass a path to a TOML file, a dict or a Template)"
        )
    with files[name].open("rb") as fh:
        spec = tomllib.load(fh)
    template = Template.from_dict(spec, source_name=f"judgekit/templates/{name}.toml")
    if template.name != name:
        raise ValueError(f"bundled template file {name}.toml declares name {template.name!r}")
    _LOADED[name] = template
    return template


def get_template(template: str | Path | Mapping[str, Any] | Template) -> Template:
    """A template by bundled name, TOML file path, dict or Template.

    Names may carry a variant suffix made by :meth:`Template.with_options` /
    :meth:`Template.with_ties`, e.g. ``"calibraeval_default[1,2]"`` or ``"mtbench_pair[noties]"``.

    Parameters
    ----------
    template : str, Path, mapping or Template
        A bundled name (see :func:`list_templates`), the path of a TOML file, a dict of the
        template's fields, or a Template (returned as it is).

    Returns
    -------
    Template

    Examples
    --------
    >>> import judgekit as jk
    >>> jk.get_template("mtbench_pair").ties
    True
    >>> jk.get_template("mtbench_pair[noties]").ties
    False
    >>> jk.get_template({"name": "mine", "user": "Q: {prompt}\\n1: {response_1}\\n2: {response_2}"}).options
    ('A', 'B')
    """
    if isinstance(template, Template):
        return template
    if isinstance(template, Mapping):
        return Template.from_dict(template)
    if isinstance(template, Path) or (
        isinstance(template, str) and (template.endswith(".toml") or "/" in template)
    ):
        return Template.from_file(template)
    if not isinstance(template, str):
        raise TypeError(f"template must be a name, path, dict or Template, got {type(template).__name__}")
    m = re.fullmatch(r"([A-Za-z0-9_\-]+)(?:\[(.*)\])?", template)
    if m is None:
        raise KeyError(f"unknown template {template!r}")
    out = _load_bundled(m.group(1))
    if m.group(2):
        for tag in m.group(2).split(";"):
            if tag in ("ties", "noties"):
                out = out.with_ties(tag == "ties")
            else:
                out = out.with_options(tag.split(","))
    return out


@stamped
def list_templates() -> pd.DataFrame:
    """The bundled templates: name, title, task, options, ties, reasons first, citation.

    Returns
    -------
    DataFrame
        One row per bundled template: ``name, title, task, options, ties, reasons_first,
        max_responses, fields, citation``.

    Examples
    --------
    >>> import judgekit as jk
    >>> "rafailov_tldr" in set(jk.list_templates()["name"])
    True
    """
    rows = []
    for name in sorted(_bundled_files()):
        t = _load_bundled(name)
        rows.append({
            "name": t.name, "title": t.title, "task": t.task, "options": "/".join(t.options),
            "ties": t.ties, "reasons_first": t.reasons_first, "max_responses": t.max_responses,
            "fields": ", ".join(t.fields), "citation": t.citation,
        })
    return pd.DataFrame(rows)
