"""A realistic simulated ticket run: one value per phase, with the calls a real run makes."""

from __future__ import annotations

from veranda_dagster.domain.core.models import (
    CIOutcome,
    CommandResult,
    ContextPack,
    ModelCall,
    Patch,
    PullRequest,
    RedTests,
    RepoGuess,
    ReviewRound,
    ReviewRounds,
    Ticket,
    Usage,
)

TICKET = "ENG-42"


def call(
    role: str, vendor: str, mode: str, tier: str, reason: str, i: int, o: int, c: int, usd: float
) -> ModelCall:
    return ModelCall(
        role=role,
        vendor=vendor,
        mode=mode,
        tier=tier,  # type: ignore[arg-type]  # a simulated value, checked by ModelCall
        model=f"{vendor}-model",
        reason=reason,
        usage=Usage(input=i, output=o, cached=c),
        usd=usd,
    )


def simulated_run(ticket: str = TICKET) -> list[tuple[str, object, float]]:
    """(phase, value, seconds) in lineage order. One patch call fell back from claude to codex."""
    ok = CommandResult(command="pytest", exit_code=0)
    red = CommandResult(command="pytest", exit_code=1)
    return [
        ("ticket", Ticket(id=ticket, source="linear", title="Fix the thing"), 0.4),
        (
            "repo_guess",
            RepoGuess(
                ticket_id=ticket,
                repo="acme/api",
                confidence="high",
                signal="url",
                decision="proceed",
                calls=[
                    call(
                        "repo_confirm",
                        "claude",
                        "api_key",
                        "cheap",
                        "preferred",
                        1200,
                        80,
                        0,
                        0.002,
                    )
                ],
            ),
            3.2,
        ),
        (
            "context_pack",
            ContextPack(
                ticket_id=ticket,
                repo="acme/api",
                clone_url="file:///x",
                default_branch="main",
                base_sha="a" * 40,
                branch="veranda/eng-42",
            ),
            12.0,
        ),
        (
            "red_tests",
            RedTests(
                ticket_id=ticket,
                branch="veranda/eng-42",
                base_sha="a" * 40,
                commit_sha="b" * 40,
                test_files=["tests/test_x.py"],
                base_run=red,
                attempts=1,
                calls=[
                    call(
                        "test_writer",
                        "claude",
                        "api_key",
                        "standard",
                        "preferred",
                        20000,
                        3000,
                        15000,
                        0.09,
                    )
                ],
            ),
            140.0,
        ),
        (
            "patch",
            Patch(
                ticket_id=ticket,
                branch="veranda/eng-42",
                commit_sha="c" * 40,
                files_changed=["api/x.py"],
                attempts=2,
                validation=[ok],
                coverage_before=71.5,
                coverage_after=74.0,
                calls=[
                    call(
                        "implementer",
                        "codex",
                        "api_key",
                        "high",
                        "fallback:quota:claude/api_key",
                        50000,
                        9000,
                        30000,
                        0.61,
                    ),
                    call(
                        "test_writer",
                        "codex",
                        "api_key",
                        "standard",
                        "fallback:quota:claude/api_key",
                        10000,
                        2000,
                        0,
                        0.05,
                    ),
                ],
            ),
            900.0,
        ),
        (
            "pull_request",
            PullRequest(
                ticket_id=ticket,
                number=7,
                url="https://github.com/acme/api/pull/7",
                title="t",
                body="b",
                branch="veranda/eng-42",
                head_sha="c" * 40,
            ),
            2.5,
        ),
        (
            "review_rounds",
            ReviewRounds(
                ticket_id=ticket,
                stopped="clean",
                head_sha="d" * 40,
                rounds=[
                    ReviewRound(index=1, findings=["x"], fixed=True),
                    ReviewRound(index=2, findings=[], fixed=False),
                ],
                calls=[
                    call(
                        "reviewer",
                        "claude",
                        "subscription",
                        "standard",
                        "preferred",
                        8000,
                        700,
                        4000,
                        0.03,
                    )
                ],
            ),
            210.0,
        ),
        ("ci_outcome", CIOutcome(ticket_id=ticket, status="success", head_sha="d" * 40), 400.0),
    ]


def run_usd(ticket: str = TICKET) -> float:
    return round(
        sum(sum(c.usd for c in getattr(v, "calls", [])) for _, v, _ in simulated_run(ticket)), 6
    )
