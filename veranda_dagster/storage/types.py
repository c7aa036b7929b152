"""Which pydantic model each asset stores, so a value loads back as its own type."""

from __future__ import annotations

from pydantic import BaseModel

from veranda_dagster.domain.models import (
    CIOutcome,
    ContextPack,
    Feedback,
    Patch,
    PullRequest,
    RedTests,
    RepoGuess,
    ReviewRounds,
    Ticket,
)

VALUE_TYPES: dict[str, type[BaseModel]] = {
    "ticket": Ticket,
    "repo_guess": RepoGuess,
    "context_pack": ContextPack,
    "red_tests": RedTests,
    "patch": Patch,
    "pull_request": PullRequest,
    "review_rounds": ReviewRounds,
    "ci_outcome": CIOutcome,
    "feedback": Feedback,
}


def value_type(asset: str) -> type[BaseModel] | None:
    return VALUE_TYPES.get(asset)
