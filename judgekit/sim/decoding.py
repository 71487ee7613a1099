"""Decoding rendered requests: recover a template's fields from the messages it rendered.

The simulated server reads a request back into the prompt, the responses in their positions and
the option IDs with these regexes: the reverse of :meth:`Template.render
<judgekit.judging.templates.Template.render>`, which only a simulated judge needs. Each template's
text becomes one regular expression in which every placeholder is a named group (a backreference
when it occurs again).
"""

from __future__ import annotations

import re
from typing import Any

from judgekit.judging.templates import PLACEHOLDER, Template

__all__ = ["decode_request", "request_regexes"]


def _is_response(name: str) -> bool:
    return re.fullmatch(r"response_[1-4]", name) is not None


def _is_position_id(name: str) -> bool:
    return re.fullmatch(r"id_[1-4]", name) is not None


def _is_option(name: str) -> bool:
    return re.fullmatch(r"t[1-4]", name) is not None


def decode_request(template: Template, system: str, user: str) -> dict[str, Any] | None:
    """Recover prompt, responses (display order), IDs, ties and notes from rendered texts.

    Parameters
    ----------
    template : Template
        The template that may have rendered the texts.
    system, user : str
        The system and user messages of a chat request.

    Returns
    -------
    dict or None
        The rendered fields; None when the texts were not rendered from ``template``.

    Examples
    --------
    >>> import judgekit as jk
    >>> t = jk.get_template("shen_hh")
    >>> msgs = t.render("hi", ["one", "two"], ids=["B", "A"], user_note="Note.")
    >>> d = jk.sim.decode_request(t, msgs[0]["content"], msgs[1]["content"])
    >>> d["responses"], d["ids"], d["user_note"]
    (['one', 'two'], ['B', 'A'], 'Note.')
    """
    for n in range(template.max_responses, 1, -1):
        out = _decode_with(template, n, system, user)
        if out is not None:
            return out
    return None


def _decode_with(template: Template, n: int, system: str, user: str) -> dict[str, Any] | None:
    """The fields of ``template`` rendered with ``n`` responses, or None when it did not render them."""
    sys_rx, user_rx = request_regexes(template, n)
    mu = user_rx.match(user)
    if mu is None:
        return None
    ms = sys_rx.match(system or "")
    if ms is None:
        return None
    groups: dict[str, str] = {}
    for m in (ms, mu):
        for k, v in m.groupdict().items():
            if v is None:
                continue
            if k in groups and groups[k] != v and k not in ("system_note", "user_note"):
                return None
            groups[k] = v
    if groups.get("n", str(n)) != str(n):
        return None
    options = tuple(groups.get(f"t{k + 1}", o) for k, o in enumerate(template.options))
    ids = [groups.get(f"id_{k + 1}") for k in range(n)]
    if any(i is None for i in ids) or not set(ids) <= set(options) or len(set(ids)) != n:
        return None
    ties = "tie_id" in groups and template.tie_clause != ""
    if not template.tie_clause:
        ties = template.ties
    return {
        "template": template,
        "prompt": groups.get("prompt"),
        "responses": [groups[f"response_{k + 1}"] for k in range(n)],
        "ids": ids,
        "options": options,
        "ties": ties,
        "tie_id": groups.get("tie_id", template.tie_id),
        "fields": {f: groups.get(f) for f in template.fields},
        "system_note": groups.get("system_note"),
        "user_note": groups.get("user_note"),
    }


def _regex_for(template: Template, text: str, n: int, seen: set[str]) -> str:
    """Regex source for rendered ``text``; placeholders become named groups or backreferences."""
    out: list[str] = []
    pos = 0
    known_fields = set(template.fields)
    for m in PLACEHOLDER.finditer(text):
        out.append(re.escape(text[pos : m.start()]))
        pos = m.end()
        name = m.group(1)
        if name == "responses" and template.response_block:
            blocks = []
            for k in range(n):
                block = template.response_block.replace("{id}", f"{{id_{k + 1}}}")
                block = block.replace("{response}", f"{{response_{k + 1}}}").replace("{k}", str(k + 1))
                blocks.append(_regex_for(template, block, n, seen))
            out.append(re.escape(template.block_separator).join(blocks))
            continue
        if name == "tie_clause":
            inner = _regex_for(template, template.tie_clause, n, seen) if template.tie_clause else ""
            out.append(f"(?:{inner})?" if inner else "")
            continue
        if _is_response(name) or name == "prompt" or name in known_fields:
            if _is_response(name) and int(name[-1]) > n:
                out.append(re.escape(m.group(0)))
                continue
            group = f"(?P<{name}>.*?)"
        elif _is_position_id(name) or _is_option(name) or name == "tie_id":
            if _is_position_id(name) and int(name[-1]) > n:
                out.append(re.escape(m.group(0)))
                continue
            # distinct from the position IDs already seen, so a response quoting another
            # position's label cannot end the match early with a duplicate ID
            earlier = [f"id_{k}" for k in range(1, int(name[-1]))] if _is_position_id(name) else []
            guard = "".join(rf"(?!(?P={e})(?!\w))" for e in earlier if e in seen)
            group = rf"(?P<{name}>{guard}\w{{1,16}}?)"
        elif name in ("n",):
            group = rf"(?P<{name}>\d+)"
        elif name in ("ids_or", "ids_bracketed"):
            group = rf"(?P<{name}>.*?)"
        else:
            out.append(re.escape(m.group(0)))
            continue
        if name in seen:
            out.append(f"(?P={name})")
        else:
            seen.add(name)
            out.append(group)
    out.append(re.escape(text[pos:]))
    return "".join(out)


_CACHE: dict[tuple[Template, int], tuple[re.Pattern[str], re.Pattern[str]]] = {}


def request_regexes(template: Template, n: int) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Regexes that recover the fields ``template`` rendered with ``n`` responses.

    Each placeholder of the template's text is a named group (a backreference where it occurs
    again); a note appended to a message is the group ``system_note`` or ``user_note``. Compiled
    once per template and ``n``.

    Parameters
    ----------
    template : Template
        The template.
    n : int
        The number of responses shown (2 to ``template.max_responses``).

    Returns
    -------
    tuple of re.Pattern
        The regexes of the system message and of the user message.

    Examples
    --------
    >>> import judgekit as jk
    >>> t = jk.get_template("mtbench_pair")
    >>> system_rx, user_rx = jk.sim.request_regexes(t, 2)
    >>> msgs = t.render("What is 2+2?", ["4", "5"])
    >>> user_rx.match(msgs[-1]["content"])["prompt"]
    'What is 2+2?'
    """
    key = (template, n)
    hit = _CACHE.get(key)
    if hit is not None:
        return hit
    seen_sys: set[str] = set()
    if template.system:
        sys_src = _regex_for(template, template.system, n, seen_sys)
        sys_rx = re.compile(rf"\A{sys_src}(?:\n\n(?P<system_note>.*))?\Z", re.DOTALL)
    else:
        sys_rx = re.compile(r"\A(?P<system_note>.*)\Z", re.DOTALL)
    user_src = _regex_for(template, template.user, n, set())
    user_rx = re.compile(rf"\A{user_src}(?:\n\n(?P<user_note>.*))?\Z", re.DOTALL)
    _CACHE[key] = (sys_rx, user_rx)
    return sys_rx, user_rx
