"""The image, read as text: exact pins, non-root, one port, the entry points, and nothing secret
in ENV/ARG or the build context. tests/container/test_image.py builds and runs it for real."""

from __future__ import annotations

import re
import shlex

from tests.observability.render import ROOT
from veranda_dagster.cli.serve_ops import DEFAULT_PORT
from veranda_dagster.sandbox.policy import SYSTEM_DIRS
from veranda_dagster.vendors import registry

DOCKERFILE = (ROOT / "Dockerfile").read_text()
SECRETISH = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)", re.I)
EXACT = re.compile(r"^\d+\.\d+\.\d+$")


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with line continuations joined and comments dropped."""
    joined = re.sub(r"\\\n", " ", DOCKERFILE)
    out = []
    for line in joined.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def args() -> dict[str, str]:
    return dict(rest.split("=", 1) for word, rest in instructions() if word == "ARG")


def env_names() -> list[str]:
    names = []
    for word, rest in instructions():
        if word == "ENV":
            names += [tok.split("=", 1)[0] for tok in shlex.split(rest)]
    return names


def stages() -> dict[str, list[tuple[str, str]]]:
    """Each build stage's instructions by stage name (the unnamed last one is ``""``)."""
    out: dict[str, list[tuple[str, str]]] = {}
    current: list[tuple[str, str]] | None = None
    for word, rest in instructions():
        if word == "FROM":
            _, _, name = rest.partition(" AS ")
            current = out.setdefault(name.strip(), [])
        if current is not None:
            current.append((word, rest))
    return out


def test_base_image_and_every_cli_pinned_exactly() -> None:
    """The base is a build ARG (a mirror or a local stand-in can replace it) defaulting to the
    upstream slim image; no ``# syntax=`` line, which would make BuildKit pull a frontend."""
    assert instructions()[0] == ("ARG", "BASE_IMAGE=python:3.11-slim-bookworm")
    assert next(r for w, r in instructions() if w == "FROM") == "${BASE_IMAGE} AS base"
    assert not DOCKERFILE.lower().startswith("# syntax")  # a parser directive: line 1 only
    pins = args()
    run = " ".join(rest for word, rest in instructions() if word == "RUN")
    for install in (i for vendor in registry.installs().values() for i in vendor):
        assert EXACT.match(pins[install.docker_arg]), (install.docker_arg, pins[install.docker_arg])
    assert not re.search(
        r"npm install -g [^\"]*@latest", run
    )  # the values: tests/vendors/test_pins.py


def test_non_root_user_and_one_exposed_port() -> None:
    users = [rest for word, rest in instructions() if word == "USER"]
    assert users and users[-1].split(":")[0] not in ("0", "root")
    assert [rest for word, rest in instructions() if word == "EXPOSE"] == [str(DEFAULT_PORT)]


def test_no_secret_in_env_or_arg() -> None:
    names = env_names() + list(args())
    assert names and not [n for n in names if SECRETISH.search(n)]
    assert not re.search(r"(sk-|ghp_|xox[bp]-|lin_api_)", DOCKERFILE)


def test_entry_points_and_copied_paths_exist() -> None:
    assert '"/usr/local/bin/veranda-entrypoint"' in DOCKERFILE
    for command in ("dagster-daemon run", "dagster-webserver", "veranda serve-ops"):
        assert command in DOCKERFILE
    cmd = [rest for word, rest in instructions() if word == "CMD"][-1]
    assert '"code-server", "start"' in cmd and "veranda_dagster.definitions" in cmd
    for word, rest in instructions():
        if word == "COPY" and "--from" not in rest:
            for src in [t for t in shlex.split(rest)[:-1] if not t.startswith("--")]:
                assert list(ROOT.glob(src)), src
    entry = (ROOT / "deploy/docker/entrypoint.sh").read_text()
    assert '. "$f"' in entry and 'exec "$@"' in entry and "echo" not in entry


def test_build_context_excludes_credentials_and_state() -> None:
    ignored = (ROOT / ".dockerignore").read_text().splitlines()
    for pattern in (".git", ".env", ".env.*", "**/*.pem", "dagster_home", "tests"):
        assert pattern in ignored
    assert "!deploy/docker/entrypoint.sh" in ignored


def test_the_pip_installed_grok_is_linked_onto_path() -> None:
    """The grok-cli-bin wheel installs ``grok_cli_bin/bin/grok`` and no console script, so an
    image without the link had no ``grok``: the vendor's spawn was exit 127, ``unreachable``."""
    run = " ".join(rest for word, rest in instructions() if word == "RUN")
    assert "grok_cli_bin.bundled_grok_path()" in run and "/usr/local/bin/grok" in run
    assert "grok --version" in run


def test_ci_runs_the_readme_test_command() -> None:
    """``.ci/run`` runs the README's test command as is. The CLIs it installs, at the image's
    pins, are checked against the vendor registry in ``tests/vendors/test_pins.py``."""
    ci = (ROOT / ".ci" / "run").read_text()
    assert "python -m pytest -q </dev/null" in ci


def test_the_sandbox_is_required_and_worker_state_is_outside_its_read_only_binds() -> None:
    """Fail closed: the image runs every repository command in bubblewrap or not at all. The
    sandbox binds the system folders (``SYSTEM_DIRS``, ``/opt`` among them) into every
    command, so the instance's home and the clones must live elsewhere."""
    env: dict[str, str] = {}
    for word, rest in instructions():
        if word == "ENV":
            env.update(tuple(tok.split("=", 1)) for tok in shlex.split(rest))  # type: ignore[misc]
    assert env["VERANDA_SANDBOX"] == "bwrap"
    for name in ("DAGSTER_HOME", "VERANDA_WORKSPACES", "HOME"):
        path = env[name]
        assert not any(path == d or path.startswith(d + "/") for d in SYSTEM_DIRS), name


def test_the_browser_only_behind_its_build_arg_and_test_deps_only_in_the_test_target() -> None:
    by_stage = stages()
    assert args()["WITH_BROWSER"] == "0"
    assert by_stage["product"][0] == ("FROM", "browser-${WITH_BROWSER} AS product")
    for name, body in by_stage.items():
        run = " ".join(rest for word, rest in body if word == "RUN")
        assert ("chromium" in run) == (name == "browser-1"), name
        assert ("pytest" in run) == (name == "test"), name
    assert by_stage[""] == [("FROM", "product")], "the default target is the product, as is"
