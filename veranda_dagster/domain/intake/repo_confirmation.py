"""The cheap-tier pass over a proceeding repository guess: confirm, correct, or dispute it,
and read what the work needs (a proto change, a migration, visual verification).

The model sees the catalog and the weighed evidence and must answer with one strict JSON object;
anything else keeps the deterministic guess with a note. It may correct a guess that rests on a
label or on the text to another catalog repo, but never overrides what a person declared or
linked: there it can only record a dispute. On a ``medium`` guess it may also answer
``"repo": null`` ("cannot tell from the ticket"), which turns the guess into a question.
"""

from __future__ import annotations

from veranda_dagster.domain.core.agent import AgentPort, AgentRequest, role_line
from veranda_dagster.domain.core.budget import BudgetExceededError
from veranda_dagster.domain.core.documents import json_or_none
from veranda_dagster.domain.core.errors import VerandaError
from veranda_dagster.domain.core.models import RepoGuess, Ticket
from veranda_dagster.domain.intake.catalog import Catalog

_CONFIRM_KEYS = ("repo", "needs_proto", "needs_migration", "needs_visual_verification")


def confirm_prompt(guess: RepoGuess, ticket: Ticket, catalog: Catalog) -> str:
    repos = "\n".join(
        f"- {r.full_name}: {r.description} (aka {', '.join(r.aliases) or '-'})"
        for r in catalog.repositories
    )
    evidence = "\n".join(f"- {e.repo}: {e.kind} ({e.weight:.2f})" for e in guess.evidence)
    return (
        f"{role_line('repo_confirmer')}"
        "You check which repository a ticket is about. Answer with ONE JSON object and nothing "
        'else: {"repo": "<org>/<name> from the list, or null if the ticket does not say", '
        '"needs_proto": bool, '
        '"needs_migration": bool, "needs_visual_verification": bool}.\n'
        "needs_proto: the change edits protobuf/gRPC definitions. needs_migration: it changes a "
        "database schema. needs_visual_verification: it changes something a person sees in a "
        f"browser or app.\n\nRepositories:\n{repos}\n\nCurrent guess: {guess.repo} "
        f"(from the {guess.signal}, {guess.confidence} confidence).\nEvidence:\n{evidence}"
        f"\n\nTicket {ticket.id}: {ticket.title}\n{ticket.description}"
    )


def parse_confirmation(text: str) -> dict[str, object] | None:
    """The strict JSON reply, tolerating only a Markdown code fence around it."""
    body = text.strip()
    if len(body) >= 6 and body.startswith("```") and body.endswith("```"):
        # ``^```(?:json)?\s*(.*?)\s*```$`` without the regex, whose lazy body against a
        # whitespace run was quadratic
        body = body[3:-3].removeprefix("json").strip()
    data = json_or_none(body)
    if not isinstance(data, dict) or any(k not in data for k in _CONFIRM_KEYS):
        return None
    if not all(isinstance(data[k], bool) for k in _CONFIRM_KEYS[1:]):
        return None
    if not (data["repo"] is None or isinstance(data["repo"], str)):
        return None
    return data


def confirm_repo_guess(
    guess: RepoGuess, ticket: Ticket, catalog: Catalog, agent: AgentPort, workdir: str
) -> RepoGuess:
    """One cheap-tier pass: confirm or correct a proceeding guess and read the work's needs."""
    if guess.decision != "proceed":
        return guess
    request = AgentRequest(
        role="repo_confirmer",
        tier="cheap",
        effort="low",
        prompt=confirm_prompt(guess, ticket, catalog),
        workdir=workdir,
        timeout_s=300.0,
    )
    try:
        reply = agent.run(request)
    except BudgetExceededError:
        raise  # out of money is the run's outcome, not a confirmation to skip
    except VerandaError as exc:
        note = f"model confirmation unavailable ({type(exc).__name__}); kept the guess"
        return guess.model_copy(update={"notes": [*guess.notes, note]})
    calls = [*guess.calls, reply.call]
    data = parse_confirmation(reply.text)
    if data is None:
        note = "model reply was not the requested JSON; kept the guess"
        return guess.model_copy(update={"calls": calls, "notes": [*guess.notes, note]})
    update: dict[str, object] = {
        "calls": calls,
        "needs_proto": data["needs_proto"],
        "needs_migration": data["needs_migration"],
        "needs_visual_verification": data["needs_visual_verification"],
    }
    suggested = catalog.by_full_name(str(data["repo"])) if data["repo"] else None
    notes = list(guess.notes)
    if data["repo"] is None and guess.confidence == "medium":
        return _turned_into_question(guess, update, notes)
    if suggested is None:
        notes.append(f"model named {data['repo']!r}, not a catalog repository; kept the guess")
    elif suggested.full_name == guess.repo:
        update["model_verdict"] = "confirmed"
    elif guess.signal in ("declaration", "url") and guess.confidence == "high":
        update["model_verdict"] = "disputed"
        notes.append(
            f"model suggested {suggested.full_name}; kept {guess.repo} because the ticket "
            f"{'declares' if guess.signal == 'declaration' else 'links to'} it"
        )
    else:
        update["model_verdict"] = "corrected"
        update["repo"] = suggested.full_name
        update["candidates"] = list(dict.fromkeys([suggested.full_name, *guess.candidates]))
        notes.append(f"model corrected {guess.repo} -> {suggested.full_name}")
    update["notes"] = notes
    return guess.model_copy(update=update)


def _turned_into_question(
    guess: RepoGuess, update: dict[str, object], notes: list[str]
) -> RepoGuess:
    """The cheap check could not confirm a medium guess: ask, naming it and its evidence."""
    found = "\n".join(f"- {e.repo}: {e.kind} ({e.weight:.2f}) — {e.text}" for e in guess.evidence)
    question = (
        f"Which repository is this ticket about? My best guess was {guess.repo} "
        f"({guess.confidence} confidence, from the {guess.signal}), but a second check could "
        f"not confirm it from the ticket.\nWhat I found:\n{found}\nReply with "
        "`repo: <org>/<name>` (or add a `repo:<name>` label) and I will pick it up."
    )
    notes.append(f"model could not confirm {guess.repo}; asking instead")
    update.update(
        {
            "decision": "ask",
            "confidence": "low",
            "model_verdict": "disputed",
            "question": question,
            "notes": notes,
        }
    )
    return guess.model_copy(update=update)
