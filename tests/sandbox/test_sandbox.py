"""The sandbox as a hostile repository's command and a hostile agent see it.

Every test runs a real command through the real seam (``run_command`` for repository commands,
``SubprocessRunner`` for a CLI) and asserts on what it could reach. bubblewrap is a CI
requirement (``.ci/run`` installs it), so an unavailable sandbox fails rather than skips.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import pytest

from veranda_dagster.domain.work.validation import run_command
from veranda_dagster.sandbox import Sandbox, SandboxError, require_sandbox, sandbox_mode
from veranda_dagster.sandbox.policy import build_policy
from veranda_dagster.vendors.runner import SubprocessRunner

SECRET = "ghs_SANDBOX_canary_token_5d1f0e"


@pytest.fixture(autouse=True)
def _secret_in_the_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    monkeypatch.setenv("VERANDA_SANDBOX", "bwrap")


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    repo = tmp_path / "workspaces" / "ENG-1"
    (repo / ".git" / "hooks").mkdir(parents=True)
    (repo / "app.py").write_text("x = 1\n")
    return repo


def test_bubblewrap_works_here() -> None:
    assert Sandbox().unavailable() is None, "install bubblewrap (.ci/run does)"


def test_no_process_of_the_worker_and_no_secret_in_proc(clone: Path) -> None:
    """A worker process holding the token (its environ) with a marked command line is not in
    the command's /proc; every environ and cmdline it can read is the sandbox's own."""
    marker = "31.4159"
    worker = subprocess.Popen(["sleep", marker], env={"PATH": "/usr/bin:/bin", "T": SECRET})
    try:
        result = run_command(
            "for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do cat $f; echo; done; env",
            clone,
            timeout_s=30,
        )
    finally:
        worker.kill()
        worker.wait()
    assert result.ok and result.sandboxed
    assert SECRET not in result.output_tail
    assert marker not in result.output_tail, "a worker process is visible in the sandbox"


def test_files_outside_the_clone_are_invisible_and_unwritable(clone: Path, tmp_path: Path) -> None:
    outside = tmp_path / "values" / "ticket.json"
    outside.parent.mkdir()
    outside.write_text(SECRET)
    escape = tmp_path / "escaped.txt"
    host_tmp = Path("/tmp") / f"veranda-escape-{uuid.uuid4().hex}"
    result = run_command(
        f"cat {outside}; ls {tmp_path}; echo pwned > {escape}; echo pwned > {host_tmp}; "
        f"ls /root /vault 2>&1; echo done",
        clone,
        timeout_s=30,
    )
    assert result.ok and "done" in result.output_tail
    assert SECRET not in result.output_tail
    assert not escape.exists()
    assert not host_tmp.exists(), "the sandbox's /tmp is the host's"


def test_the_clone_is_writable_but_its_git_directory_is_not(clone: Path) -> None:
    hook = clone / ".git" / "hooks" / "pre-commit"
    result = run_command(
        "echo 'rm -rf /' > .git/hooks/pre-commit; echo '[core] fsmonitor = x' >> .git/config; "
        "echo built > out.txt",
        clone,
        timeout_s=30,
    )
    assert (clone / "out.txt").read_text() == "built\n"
    assert not hook.exists() and not (clone / ".git" / "config").exists()
    assert "Read-only file system" in result.output_tail


def test_repository_commands_have_no_network(clone: Path) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    accepted: list[bool] = []

    def accept() -> None:
        server.settimeout(5)
        try:
            server.accept()
            accepted.append(True)
        except OSError:
            pass

    thread = threading.Thread(target=accept)
    thread.start()
    probe = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2)"
    result = run_command(f'{sys.executable} -c "{probe}"', clone, timeout_s=30)
    thread.join()
    server.close()
    assert not result.ok and not accepted


def test_a_cli_sees_only_the_env_its_vendor_built_and_its_own_home(
    clone: Path, tmp_path: Path
) -> None:
    home = tmp_path / "claude-home"
    home.mkdir()
    script = clone / "cli.sh"
    script.write_text(
        '#!/bin/sh\nenv; cat /proc/[0-9]*/environ; echo; touch "$HOME/session"; '
        "ls /proc | grep -c '^[0-9]'\n"
    )
    script.chmod(0o755)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "ANTHROPIC_API_KEY": "sk-ant-own-key"}
    out = SubprocessRunner().run([str(script)], str(clone), env, None, 30)
    assert out.exit_code == 0, out.stderr
    assert SECRET not in out.stdout and "sk-ant-own-key" in out.stdout
    assert (home / "session").exists()
    assert int(out.stdout.strip().splitlines()[-1]) <= 4, "processes beyond the sandbox's own"


def test_required_sandbox_without_bubblewrap_fails_closed(clone: Path) -> None:
    sandbox = Sandbox(mode="bwrap")
    sandbox.bwrap = None
    with pytest.raises(SandboxError, match="not installed"):
        sandbox.prepare(["true"], clone, {}, network="none")


def test_auto_is_gone_and_the_default_is_required(clone: Path) -> None:
    """No mode runs unsandboxed because bubblewrap is missing: the default requires it, and
    the old ``auto`` is refused by name."""
    assert sandbox_mode({}) == "bwrap"
    with pytest.raises(SandboxError, match="auto is gone"):
        sandbox_mode({"VERANDA_SANDBOX": "auto"})
    default = Sandbox(mode=sandbox_mode({}))
    default.bwrap = None
    with pytest.raises(SandboxError, match="apt-get install bubblewrap"):
        default.prepare(["true"], clone, {}, network="none")


def test_off_runs_unsandboxed_only_when_chosen() -> None:
    assert require_sandbox({"VERANDA_SANDBOX": "off"}) is None
    assert require_sandbox({"VERANDA_SANDBOX": "bwrap"}) is None  # bubblewrap works here


@pytest.mark.parametrize("command", ["demo", "dev"])
def test_the_readme_commands_refuse_in_one_line_on_a_machine_without_bubblewrap(
    command: str, tmp_path: Path
) -> None:
    """``veranda dev`` / ``veranda demo`` with no ``bwrap`` on ``PATH`` (a fresh laptop, a
    container under Docker's default seccomp profile): exit 2, one line that names the fix,
    and nothing started or made."""
    python_only = Path(sys.executable).parent
    workdir = tmp_path / "world"
    env = {"PATH": str(python_only), "HOME": str(tmp_path), "GITHUB_TOKEN": SECRET}
    env["VERANDA_BWRAP"] = str(tmp_path / "not-installed" / "bwrap")  # as on a bare machine
    proc = subprocess.run(
        [shutil.which("veranda") or "veranda", command, "--agent", "sim",
         "--workdir", str(workdir)],
        env=env, capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "apt-get install bubblewrap" in lines[0], proc.stderr
    assert f"veranda {command}: error:" in lines[0]
    assert not workdir.exists()


def test_hidden_paths_are_empty_and_read_only_inside(clone: Path) -> None:
    """A repository's own agent settings are shown empty, not deleted: outside they stay."""
    (clone / ".claude").mkdir()
    (clone / ".claude" / "settings.json").write_text('{"hooks": "evil"}')
    (clone / ".mcp.json").write_text('{"mcpServers": {"evil": {}}}')
    (clone / "link.json").symlink_to(".mcp.json")
    script = (
        "ls -A .claude; cat .mcp.json; echo x > .mcp.json && echo WROTE; "
        "touch .claude/new && echo MADE; echo end"
    )
    prepared = Sandbox(mode="bwrap").prepare(
        ["/bin/sh", "-c", script], clone, {"PATH": "/usr/bin:/bin"}, network="none",
        hidden=[clone / ".claude", clone / "link.json", clone / "absent.toml"],
    )  # fmt: skip
    proc = subprocess.run(prepared.argv, env=prepared.env, capture_output=True, text=True)
    assert proc.stdout.strip() == "end", proc.stdout + proc.stderr
    assert (clone / ".mcp.json").read_text() == '{"mcpServers": {"evil": {}}}'
    assert (clone / ".claude" / "settings.json").exists()


def test_the_products_own_git_sandbox_may_write_git_and_others_may_not(clone: Path) -> None:
    env = {"PATH": "/usr/bin:/bin"}
    argv = ["/bin/sh", "-c", "touch .git/planted && echo WROTE"]
    for protect, wrote in ((True, False), (False, True)):
        prepared = Sandbox(mode="bwrap").prepare(
            argv, clone, env, network="none", protect_git=protect
        )
        proc = subprocess.run(prepared.argv, env=prepared.env, capture_output=True, text=True)
        assert ("WROTE" in proc.stdout) is wrote
        assert (clone / ".git" / "planted").exists() is wrote


def test_a_read_only_bind_shows_one_folder_and_refuses_worker_state(
    clone: Path, tmp_path: Path
) -> None:
    shared = tmp_path / "sock"
    shared.mkdir()
    (shared / "hello").write_text("hi")
    prepared = Sandbox(mode="bwrap").prepare(
        ["/bin/sh", "-c", "cat /run/veranda/hello; echo; touch /run/veranda/x || echo RO"],
        clone, {"PATH": "/usr/bin:/bin"}, network="none", ro_binds={str(shared): "/run/veranda"},
    )  # fmt: skip
    proc = subprocess.run(prepared.argv, env=prepared.env, capture_output=True, text=True)
    assert proc.stdout.split() == ["hi", "RO"], proc.stderr
    with pytest.raises(SandboxError, match="holds worker state"):
        build_policy(
            ["true"], clone, {}, network="none", forbidden=[tmp_path / "sock"],
            ro_binds={str(shared): "/run/veranda"},
        )  # fmt: skip


def test_worker_state_is_never_made_writable_or_visible(tmp_path: Path) -> None:
    """A ``PATH`` entry that contains ``$DAGSTER_HOME`` is dropped, not bound with it."""
    home = tmp_path / "dagster_home"
    clone = home / "workspaces" / "ENG-1"
    clone.mkdir(parents=True)
    with pytest.raises(SandboxError, match="holds worker state"):
        build_policy(["true"], home, {}, network="none", forbidden=[home])
    policy = build_policy(
        ["true"], clone, {"PATH": str(tmp_path)}, network="none", forbidden=[home]
    )
    assert policy.writable == [str(clone.resolve())]
    assert str(tmp_path) not in policy.readable
    assert any("not visible" in note for note in policy.notes)


def test_a_tool_linked_into_a_folder_outside_path_runs_when_that_folder_is_named(
    clone: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``.veranda/bin/grok`` links into ``.veranda/pip``; a wrapper execs a ``node`` kept in
    ``.veranda/npm``: the link's folder is on PATH, the target folder is named in
    ``VERANDA_SANDBOX_READONLY``, and nested binds are dropped so the link resolves."""
    install = tmp_path / "install"
    (install / "pip" / "pkg").mkdir(parents=True)
    (install / "bin").mkdir()
    real_tool = install / "pip" / "pkg" / "tool"
    real_tool.write_text("#!/bin/sh\necho tool ran\n")
    real_tool.chmod(0o755)
    (install / "bin" / "tool").symlink_to(real_tool)
    monkeypatch.setenv("VERANDA_SANDBOX_READONLY", str(install / "pip"))
    env = {"PATH": f"{install / 'bin'}:/usr/bin:/bin"}
    argv = [str(install / "bin" / "tool")]
    prepared = Sandbox(mode="bwrap").prepare(argv, clone, env, network="none")
    assert prepared.policy is not None
    readable = prepared.policy.readable
    assert str(install / "pip") in readable and str(install / "bin") in readable
    assert str(real_tool) not in readable  # inside the named folder: not bound twice
    proc = subprocess.run(prepared.argv, env=prepared.env, capture_output=True, text=True)
    assert proc.stdout == "tool ran\n", proc.stderr
    monkeypatch.delenv("VERANDA_SANDBOX_READONLY")
    hidden = Sandbox(mode="bwrap").prepare(argv, clone, env, network="none")
    assert hidden.policy is not None
    assert str(install / "pip") not in hidden.policy.readable


def test_system_credential_files_are_not_in_the_sandbox(clone: Path, tmp_path: Path) -> None:
    """``/etc/gitconfig`` (credential helpers), ``/etc/npmrc`` and ``/etc/pip.conf`` (registry
    tokens) are where a machine keeps credentials; none is bound, whatever the host holds."""
    names = ("gitconfig", "npmrc", "pip.conf", "shadow", "sudoers", "xdg")
    probe = "; ".join(f"test -e /etc/{n} && echo SEEN-{n}" for n in names) + "; echo end"
    result = run_command(probe, clone, timeout_s=30)
    assert result.sandboxed and result.output_tail.strip() == "end", result.output_tail
