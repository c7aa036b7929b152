"""One module per phase. Each asset asks for the resources it needs, calls its domain entry
point through the shell (``_shell``) and records its value.

Lineage: ticket -> repo_guess -> context_pack -> red_tests -> patch -> pull_request ->
review_rounds -> ci_outcome, and feedback downstream of pull_request.
"""

from veranda_dagster.assets.checks import CHECKS
from veranda_dagster.assets.ci_outcome import ci_outcome
from veranda_dagster.assets.context_pack import context_pack
from veranda_dagster.assets.feedback import feedback
from veranda_dagster.assets.patch import patch
from veranda_dagster.assets.pull_request import pull_request
from veranda_dagster.assets.red_tests import red_tests
from veranda_dagster.assets.repo_guess import repo_guess
from veranda_dagster.assets.review_rounds import review_rounds
from veranda_dagster.assets.ticket import ticket

PHASE_ASSETS = [
    ticket,
    repo_guess,
    context_pack,
    red_tests,
    patch,
    pull_request,
    review_rounds,
    ci_outcome,
    feedback,
]

__all__ = [
    "CHECKS",
    "PHASE_ASSETS",
    "ci_outcome",
    "context_pack",
    "feedback",
    "patch",
    "pull_request",
    "red_tests",
    "repo_guess",
    "review_rounds",
    "ticket",
]
