"""Atlassian Document Format (ADF) to plain text, and plain text to ADF, for Jira Cloud v3.

Jira Cloud's v3 API returns descriptions and comment bodies as an ADF document (a JSON tree of
``{"type", "content", "text", "marks", "attrs"}`` nodes, root ``{"type": "doc", "version": 1}``)
and accepts only ADF when a comment is posted; Data Center's v2 API uses wiki-markup strings, so
there a body is passed through unchanged. The text is what the ticket means to the pipeline
(the model prompt, repository detection, seeds), so it keeps the parts a reader relies on: code
blocks fenced, inline code in backticks, links with their URL, list bullets, mentions, card
URLs, table cells. The tree is hostile input: depth is bounded by ``MAX_RICH_TEXT_DEPTH`` and
unknown node types contribute their children's text, never an error.

Node and mark names are from the ADF structure reference
(developer.atlassian.com/cloud/jira/platform/apis/document/structure/).
"""

from __future__ import annotations

import bisect
import re
from typing import Any

from veranda_dagster.domain.core.bounds import MAX_RICH_TEXT_DEPTH

_BLOCKS = frozenset(
    {"paragraph", "heading", "codeBlock", "blockquote", "rule", "bulletList", "orderedList",
     "table", "panel", "mediaSingle", "mediaGroup", "blockCard", "expand", "nestedExpand",
     "decisionList", "taskList"}
)  # fmt: skip


def adf_to_text(body: Any) -> str:
    """Plain text of an ADF document; a string (a v2 wiki-markup body) is returned unchanged."""
    if body is None:
        return ""
    if isinstance(body, str):
        return body
    if not isinstance(body, dict):
        return ""
    text = _block(body, 0).strip("\n")
    return re.sub(r"\n{3,}", "\n\n", text)


def _children(node: dict[str, Any]) -> list[dict[str, Any]]:
    content = node.get("content")
    return [c for c in content if isinstance(c, dict)] if isinstance(content, list) else []


def _attr(node: dict[str, Any], name: str) -> str:
    attrs = node.get("attrs")
    value = attrs.get(name) if isinstance(attrs, dict) else None
    return str(value) if value is not None else ""


def _inline(node: dict[str, Any], depth: int) -> str:
    """Text of an inline node: text with its marks, mentions, emoji, cards, breaks."""
    kind = node.get("type")
    if kind == "text":
        text = str(node.get("text") or "")
        marks = node.get("marks")
        applied: set[str] = set()
        for mark in marks if isinstance(marks, list) else []:
            # each mark type once, as ADF allows: a text node of 40,000 repeated marks, each
            # wrapping the text again, cost time in the square of their number
            mark_type = mark.get("type") if isinstance(mark, dict) else None
            if not isinstance(mark_type, str) or mark_type in applied:
                continue  # a type that is no string (a list: unhashable) is no mark we apply
            applied.add(mark_type)
            if mark_type == "code":
                text = f"`{text}`"
            elif mark_type == "link":
                href = _attr(mark, "href")
                if href and href != text:
                    text = f"{text} ({href})"
        return text
    if kind == "hardBreak":
        return "\n"
    if kind == "mention":
        return _attr(node, "text") or "@" + _attr(node, "id")
    if kind == "emoji":
        return _attr(node, "text") or _attr(node, "shortName")
    if kind in ("inlineCard", "blockCard", "embedCard"):
        return _attr(node, "url")
    if kind == "status":
        return f"[{_attr(node, 'text')}]"
    if kind == "date":
        return _attr(node, "timestamp")
    return "".join(_node(c, depth + 1) for c in _children(node))


def _node(node: dict[str, Any], depth: int) -> str:
    if depth > MAX_RICH_TEXT_DEPTH:
        return ""
    if node.get("type") in _BLOCKS or node.get("type") in ("doc", "listItem", "tableRow"):
        return _block(node, depth)
    return _inline(node, depth)


def _block(node: dict[str, Any], depth: int) -> str:
    """Text of a block node, ending in a blank line so blocks stay apart."""
    if depth > MAX_RICH_TEXT_DEPTH:
        return ""
    kind = node.get("type")
    kids = _children(node)
    if kind == "paragraph":
        return "".join(_inline(c, depth + 1) for c in kids) + "\n\n"
    if kind == "heading":
        level = max(1, min(6, int(_attr(node, "level") or 1)))
        return "#" * level + " " + "".join(_inline(c, depth + 1) for c in kids) + "\n\n"
    if kind == "codeBlock":
        code = "".join(str(c.get("text") or "") for c in kids if c.get("type") == "text")
        return f"```{_attr(node, 'language')}\n{code}\n```\n\n"
    if kind == "rule":
        return "---\n\n"
    if kind == "blockquote":
        inner = "".join(_node(c, depth + 1) for c in kids).strip("\n")
        return "\n".join(f"> {line}" if line else ">" for line in inner.split("\n")) + "\n\n"
    if kind in ("bulletList", "orderedList", "taskList", "decisionList"):
        return _list(node, kids, depth) + "\n"
    if kind == "tableRow":
        cells = ("".join(_node(g, depth + 2) for g in _children(c)).strip() for c in kids)
        return "| " + " | ".join(cell.replace("\n", " ") for cell in cells) + " |\n"
    if kind == "table":
        return "".join(_block(c, depth + 1) for c in kids) + "\n"
    if kind == "blockCard":
        return _attr(node, "url") + "\n\n"
    if kind in ("mediaSingle", "mediaGroup"):
        return ""  # attachments are listed separately, as URLs
    return "".join(_node(c, depth + 1) for c in kids)


def _list(node: dict[str, Any], items: list[dict[str, Any]], depth: int) -> str:
    ordered = node.get("type") == "orderedList"
    start = int(_attr(node, "order") or 1) if ordered else 1
    lines: list[str] = []
    for n, item in enumerate(items, start=start):
        bullet = f"{n}." if ordered else "-"
        if item.get("type") == "taskItem":
            bullet = "- [x]" if _attr(item, "state") == "DONE" else "- [ ]"
        text = "".join(_node(c, depth + 2) for c in _children(item)).strip("\n")
        text = re.sub(r"\n{2,}", "\n", text)
        first, *rest = text.split("\n") if text else [""]
        lines.append(f"{bullet} {first}")
        lines += [f"  {line}" for line in rest]
    return "\n".join(lines) + "\n"


def text_to_adf(text: str) -> dict[str, Any]:
    """A plain-text (Markdown-ish) message as an ADF ``doc``: blank-line separated paragraphs,
    single newlines as ``hardBreak``, and ```` ``` ```` fences as ``codeBlock`` nodes, so a
    posted log tail or diff keeps its shape in Jira."""
    content: list[dict[str, Any]] = []
    for kind, chunk, language in _chunks(text):
        if kind == "code":
            block: dict[str, Any] = {"type": "codeBlock", "content": []}
            if language:
                block["attrs"] = {"language": language}
            if chunk:
                block["content"] = [{"type": "text", "text": chunk}]
            content.append(block)
            continue
        for para in re.split(r"\n\s*\n", chunk.strip("\n")):
            if not para.strip():
                continue
            inline: list[dict[str, Any]] = []
            for i, line in enumerate(para.split("\n")):
                if i:
                    inline.append({"type": "hardBreak"})
                if line:
                    inline.append({"type": "text", "text": line})
            content.append({"type": "paragraph", "content": inline})
    return {"type": "doc", "version": 1, "content": content}


_FENCE_OPEN = re.compile(r"```([\w+-]*)")
"""A line opening a fenced block (full line): the fence and its language."""
_FENCE_CLOSE = re.compile(r"```[ \t]*")
"""A line closing one (full line)."""


def _chunks(text: str) -> list[tuple[str, str, str]]:
    """``("text" | "code", body, language)`` pieces split on fenced code blocks: an opening line
    pairs with the first closing line below it; an opening with none below is text. Lines are
    classified once and each opening finds its closing by bisection, so the work is linear in
    the text: a single regex (an opening, then the shortest body up to a closing) rescanned the
    rest of the text from every unclosed opening (2.8 s for 32 kB of them; the text carries
    agent-written and ticket-quoted parts)."""
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    closings = [i for i, line in enumerate(lines) if _FENCE_CLOSE.fullmatch(line)]
    out: list[tuple[str, str, str]] = []
    pos = i = 0
    while i < len(lines):
        opening = _FENCE_OPEN.fullmatch(lines[i])
        after = bisect.bisect_right(closings, i) if opening else len(closings)
        if opening is None or after == len(closings):
            i += 1
            continue
        close = closings[after]
        out.append(("text", text[pos : starts[i]], ""))
        out.append(("code", "\n".join(lines[i + 1 : close]), opening.group(1)))
        pos = starts[close] + len(lines[close])
        i = close + 1
    out.append(("text", text[pos:], ""))
    return out
