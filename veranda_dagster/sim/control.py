"""The running simulation's control panel: file tickets and inject faults from another shell.

``veranda dev`` keeps the fakes in its own process; this loopback server is how ``veranda
sim ticket`` and ``veranda sim fault`` reach them. Each fault is one a newcomer can watch the
product absorb in the Dagster UI:

- ``model-5xx``: the next N model requests of a role (default: the implementer's) answer 500;
  two get past the vendor CLI's own retry, so ``patch`` fails once and its ``RetryPolicy``
  runs it again; four exhaust that too, and the run fails at ``patch`` (then re-execute it).
- ``revoke-key``: the agent's API key stops being accepted (401), so the resolver falls back
  to the next credential or vendor, and the patch metadata names the fallback.
- ``ci-red``: the next CI run of the fake forge fails its tests, so ``ci_outcome`` spends its
  one grounded repair.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from veranda_dagster.sim.http_fake import FakeHttpServer, FakeRequest, FakeResponse
from veranda_dagster.sim.sim_vendors import SIM_KEYS
from veranda_dagster.sim.world import LINEAR_LABEL, SimWorld

FAULTS = ("model-5xx", "revoke-key", "ci-red")
DEFAULT_5XX_ROLE = "implementer"
DEFAULT_5XX_TIMES = 2
"""Two 500s: past the CLI's own retry (``CLAUDE_CODE_MAX_RETRIES=1``), so the phase retries."""
MAX_FAULT_TIMES = 50
"""A fault request asks for at most this many failing answers."""
AGENT_KEYS = {
    "sim": "SIM_ANTHROPIC_API_KEY",
    "claude": "SIM_ANTHROPIC_API_KEY",
    "codex": "SIM_OPENAI_API_KEY",
    "gemini": "SIM_GEMINI_API_KEY",
    "kimi": "SIM_KIMI_API_KEY",
    "grok": "SIM_XAI_API_KEY",
    "glm": "SIM_ZHIPU_API_KEY",
}
"""The API key each agent uses first: the one ``revoke-key`` revokes."""
CI_RED_LINE = "FAILED tests/test_injected.py::test_ci_red - AssertionError: injected (ci-red)"


def red_once_test_command(flag: Path) -> tuple[str, ...]:
    """``make test``, except that while ``flag`` exists one run removes it and fails."""
    script = f'if rm "{flag}" 2>/dev/null; then echo "{CI_RED_LINE}"; exit 1; fi; exec make test'
    return ("sh", "-c", script)


class SimControl(FakeHttpServer):
    """``POST /tickets {title, body}``, ``POST /faults {kind, role, times}``, ``GET /state``."""

    name = "sim-control"

    def __init__(self, world: SimWorld, info: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.world = world
        self.info = dict(info or {})
        self.ci_red_flag = world.root / "ci-red.flag"
        ci = world.forge_ci
        ci.commands = tuple(
            (name, red_once_test_command(self.ci_red_flag) if name == "test" else argv)
            for name, argv in ci.commands
        )

    def handle(self, request: FakeRequest) -> FakeResponse:
        try:
            if request.method == "POST" and request.path == "/tickets":
                return FakeResponse(201, self.file_ticket(request.json() or {}))
            if request.method == "POST" and request.path == "/faults":
                return FakeResponse(200, self.inject(request.json() or {}))
            if request.method == "GET" and request.path == "/notes":
                return FakeResponse(200, self.notes(request.arg("key")))
            if request.method == "GET" and request.path == "/state":
                return FakeResponse(200, self.state())
        except (TypeError, ValueError) as exc:
            return FakeResponse(400, {"error": str(exc)})
        return FakeResponse(404, {"error": f"no route {request.method} {request.path}"})

    def file_ticket(self, body: dict[str, Any]) -> dict[str, Any]:
        title = str(body.get("title") or "").strip()
        if not title:
            raise ValueError("field 'title' is required")
        issue = self.world.linear.file_ticket(
            title, str(body.get("body") or ""), labels=[LINEAR_LABEL]
        )
        return {"identifier": issue["identifier"], "url": issue["url"]}

    def inject(self, body: dict[str, Any]) -> dict[str, Any]:
        kind = str(body.get("kind") or "")
        if kind == "model-5xx":
            role = str(body.get("role") or DEFAULT_5XX_ROLE)
            times = int(body.get("times") or DEFAULT_5XX_TIMES)
            if not 1 <= times <= MAX_FAULT_TIMES:
                raise ValueError(f"field 'times' must be 1..{MAX_FAULT_TIMES}")
            self.world.model.fail_role(role, 500, times=times)
            return {"kind": kind, "role": role, "times": times}
        if kind == "revoke-key":
            name = str(body.get("key") or AGENT_KEYS.get(self.world.agent, "SIM_ANTHROPIC_API_KEY"))
            if name not in SIM_KEYS:
                raise ValueError(f"field 'key' must be one of {', '.join(SIM_KEYS)}")
            self.world.model.revoke(SIM_KEYS[name])
            return {"kind": kind, "key": name}
        if kind == "ci-red":
            self.ci_red_flag.write_text("red\n")
            return {"kind": kind, "next_ci": "red once"}
        raise ValueError(f"field 'kind' must be one of {', '.join(FAULTS)}")

    def notes(self, key: str | None = None) -> dict[str, Any]:
        """Each fake Linear ticket (or ``key`` alone) with what the product posted on it: the
        PR link, questions, a failed run's note."""
        linear = self.world.linear
        with linear.lock:
            issues = sorted(linear.issues.values(), key=lambda i: i["createdAt"])
            rows = [i for i in issues if key is None or i["identifier"] == key]
            if key is not None and not rows:
                raise ValueError(f"no ticket {key} in the fake Linear")
            return {
                i["identifier"]: {
                    "title": i["title"],
                    "url": i["url"],
                    "notes": linear.bot_comments(i["identifier"]),
                }
                for i in rows
            }

    def state(self) -> dict[str, Any]:
        """What the fakes saw; never a credential (the model log keeps kinds, not values)."""
        model = self.world.model
        return {
            **self.info,
            "model_calls_by_role": dict(model.calls_by_role()),
            "pull_requests": {
                repo: sorted(pulls) for repo, pulls in self.world.github.pulls.items()
            },
        }
