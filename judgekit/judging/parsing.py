"""Verdict parsing: the verdict the judge states, in the template's answer format, in linear time.

A judge's answer quotes, paraphrases and sometimes copies the responses it judges, and a response
can be written to look like a verdict. The parser therefore reads a verdict only where the judge
states one:

1. **Mentions.** The template's ``verdict_pattern`` finds every place the answer shows an option
   ID in the answer format (``[[B]]``, ``Preferred: B``, a line holding only ``B``). When the answer
   opens with a ``<think>`` block, only what follows the block is the judge's answer.
2. **Anchored to the format.** ``verdict_anchor`` says where on its line the format puts the
   verdict: ``"none"`` anywhere (the bracketed IDs of MT-Bench-style prompts are distinctive
   enough), ``"start"`` the label opens the line (only markup before it), ``"line"`` the label
   opens the line and the ID closes the statement (only closing quotes, brackets or markup, then
   the end of the line or a punctuation mark). An ID matched case-insensitively in another case
   and followed by a word (``Preferred: a summary...``) is the article or pronoun, not an ID.
3. **Format echoes do not count**: a sentence that names two or more different options
   (``"[[A]]" if assistant A is better, "[[B]]" if ...``).
4. **Quotations are not statements.** A mention inside quotation marks (straight double or single
   quotes on one line, curly quotes or guillemets within a paragraph), inline code, a fenced code
   block or a ``>`` block quote is the judge quoting something. A quotation that holds nothing but the
   verdict (the judge writing ``"[[A]]"`` as the format shows it) counts only when the answer
   states no verdict outside quotation marks.
5. **Where the format puts it**: the last statement when the judge reasons first
   (``reasons_first``), the first when the format asks for the verdict first (DevBench's
   ``Choice: A Reason: ...``, CalibraEval's ID-only answers), so reasons that quote another verdict
   cannot override it.

Text copied from the responses without quotation marks is not set aside: it cannot be told from
the judge's own words, and setting aside every line that also occurs in the prompt let a response
plant the judge's likely verdict line and so delete the judge's real verdict.

Every step is one pass over the text (matches, sentence breaks, line starts and quotations are
each found once, then swept in order), so parsing takes time linear in the length of the answer.
"""

from __future__ import annotations

import bisect
import heapq
import re
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # pragma: no cover
    from judgekit.judging.templates import Template

__all__ = ["ANCHORS", "ParsedVerdict", "parse_verdict"]

#: where on its line the answer format puts the verdict
ANCHORS = ("none", "start", "line")

_BREAK = re.compile(r"\n|[.!?;](?=\s)")                # line and sentence breaks
_MARKUP = re.compile(r"[ \t*_#-]*")                     # what may precede a label on its line
_CLOSES = re.compile(r"""["'\u201d\u2019\u00bb*_)\]]*[ \t]*(?:$|[.,;:!?(\u2013\u2014-])""", re.M)
_WORD_NEXT = re.compile(r"[ \t]+[^\W\d_]")
_THINK_START, _THINK_END = "<think>", "</think>"
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n(.*?)^[ \t]*\1", re.M | re.S)
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_BLOCKQUOTE = re.compile(r"^[ \t]*>(.*)$", re.M)
_PARAGRAPH = re.compile(r"\n[ \t]*\n")
_MARKS = re.compile("[\"\u201c\u201d\u00ab\u00bb'\n]")
_BARE = " \t\r\n*_"


class ParsedVerdict(NamedTuple):
    """Result of :meth:`Template.parse <judgekit.judging.templates.Template.parse>`.

    ``option`` is the canonical option ID the judge chose (the tie ID for a tie) or None;
    ``start`` the character offset of that ID in the text; ``error`` why there is no verdict.
    """

    option: str | None
    start: int | None
    error: str | None


def _quotations(text: str) -> list[tuple[int, int]]:
    """(start, end) of the content of every quotation, code span, code block and block quote."""
    spans = [m.span(2) for m in _FENCE.finditer(text)]
    spans += [m.span(1) for m in _INLINE_CODE.finditer(text)]
    spans += [m.span(1) for m in _BLOCKQUOTE.finditer(text)]
    # curly quotes and guillemets pair within a paragraph; straight quotes, which open and close
    # alike, within a line, opening only after a non-word character and closing only before one
    # (so "5\" wide" or "B's" are not quotations), so that one stray mark cannot swallow the rest
    # of the answer
    paragraph_ends = [m.start() for m in _PARAGRAPH.finditer(text)] + [len(text)]
    paragraph = 0
    straight: dict[str, int | None] = {'"': None, "'": None}
    curly: dict[str, int | None] = {"\u201c": None, "\u00ab": None}
    for m in _MARKS.finditer(text):
        i, c = m.start(), m.group()
        while i >= paragraph_ends[paragraph]:
            paragraph += 1
            straight = {'"': None, "'": None}
            curly = {"\u201c": None, "\u00ab": None}
        if c in curly:
            curly[c] = i if curly[c] is None else curly[c]
        elif c in "\u201d\u00bb":
            opener = "\u201c" if c == "\u201d" else "\u00ab"
            if curly[opener] is not None:
                spans.append((curly[opener] + 1, i))
                curly[opener] = None
        elif c == "\n":
            straight = {'"': None, "'": None}
        else:
            before = text[i - 1] if i > 0 else " "
            after = text[i + 1] if i + 1 < len(text) else " "
            opened = straight[c]
            if opened is None:
                if not (before.isalnum() or before == "_") and not after.isspace():
                    straight[c] = i
            elif not (after.isalnum() or after == "_") and not before.isspace():
                spans.append((opened + 1, i))
                straight[c] = None
    return sorted(spans)


def _line_markup_end(text: str, line_start: int, cache: dict[int, int]) -> int:
    end = cache.get(line_start)
    if end is None:
        end = _MARKUP.match(text, line_start).end()
        cache[line_start] = end
    return end


def parse_verdict(template: Template, text: str | None) -> ParsedVerdict:
    """The verdict ``template``'s judge states in ``text`` (see the module docstring)."""
    if text is None or not str(text).strip():
        return ParsedVerdict(None, None, "empty response")
    text = str(text)
    # a reasoning model's answer opens with its <think> block; what follows the block's end is
    # the answer (a "</think>" quoted later in the answer does not move that point)
    own_from = 0
    if text.lstrip().startswith(_THINK_START):
        end = text.find(_THINK_END)
        own_from = len(text) if end < 0 else end + len(_THINK_END)
    mentions = [m for m in template.verdict_regex.finditer(text, own_from) if m.end() > m.start()]
    if not mentions:
        tail = text.strip()[-60:].replace("\n", " ")
        return ParsedVerdict(
            None, None, f"no verdict in the format of template {template.name!r} (ends: {tail!r})"
        )
    breaks = [m.start() for m in _BREAK.finditer(text)]
    newlines = [i for i in breaks if text[i] == "\n"]
    # options named per sentence: a sentence naming two or more is an echo of the format
    named: dict[int, set[str | None]] = {}
    for m in mentions:
        named.setdefault(bisect.bisect_left(breaks, m.start()), set()).add(
            template.canonical(m.group("id")))
    anchor = template.verdict_anchor
    case_folded = "i" in template.verdict_flags
    markup_end: dict[int, int] = {}
    spans = _quotations(text)
    active: list[tuple[int, int, int]] = []  # (end, start, index) of quotations begun so far
    next_span = 0
    plain: list[re.Match[str]] = []
    quoted_bare: list[re.Match[str]] = []
    n_echo = 0
    for m in mentions:
        start, end = m.span()
        if len(named[bisect.bisect_left(breaks, start)]) >= 2:
            n_echo += 1
            continue
        if anchor in ("start", "line"):
            k = bisect.bisect_left(newlines, start)
            line_start = newlines[k - 1] + 1 if k else 0
            if start > _line_markup_end(text, line_start, markup_end):
                continue
        if anchor == "line" and _CLOSES.match(text, end) is None:
            continue
        token = m.group("id")
        if case_folded and token != template.canonical(token) and _WORD_NEXT.match(text, m.end("id")):
            continue
        # quotations that began before this mention and have not ended before its end
        while next_span < len(spans) and spans[next_span][0] <= start:
            s, e = spans[next_span]
            heapq.heappush(active, (e, s, next_span))
            next_span += 1
        while active and active[0][0] < end:
            heapq.heappop(active)
        if not active:
            plain.append(m)
        else:
            e, s, _ = active[0]
            if text[s:e].strip(_BARE) == m.group(0).strip(_BARE):
                quoted_bare.append(m)
    found = plain or quoted_bare
    if found:
        m = found[-1] if template.reasons_first else found[0]
        return ParsedVerdict(template.canonical(m.group("id")), m.start("id"), None)
    if n_echo == len(mentions):
        return ParsedVerdict(None, None, "only echoes of the format instructions, no verdict")
    tail = text.strip()[-60:].replace("\n", " ")
    return ParsedVerdict(None, None, (
        f"a verdict is only quoted, echoed or mentioned outside the answer format of template "
        f"{template.name!r}, never stated (ends: {tail!r})"))
