"""What each vendor declares and builds: capabilities, argv, env (only its own keys, never an
unrelated secret), base-URL and binary overrides, and credential pre-checks that spawn nothing."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.vendors.conftest import ALL_KEYS, FakeLogin, ScriptedRunner, fixture_text
from veranda_dagster.domain.core.bounds import MAX_CLI_ARGV_BYTES
from veranda_dagster.vendors import registry
from veranda_dagster.vendors.command import RunOutput
from veranda_dagster.vendors.plugins.glm import ZAI_CODING_URL
from veranda_dagster.vendors.port import Turn, Vendor, VendorError
from veranda_dagster.vendors.prompt_channel import MAX_ROLE_LINE_CHARS, argv_bytes
from veranda_dagster.vendors.vendor_config import VendorConfig

VENDOR_MODES = [(f, m) for f in registry.vendors() for m in registry.get(f).modes]
OK_FIXTURE = {
    "claude": "claude_stream_ok.jsonl",
    "codex": "codex_exec_ok.jsonl",
    "gemini": "gemini_stream_ok.jsonl",
    "kimi": "kimi_stream_ok.jsonl",
    "grok": "grok_stream_ok.jsonl",
    "glm": "glm_claude_stream_ok.jsonl",
    "cursor": "cursor_stream_ok.jsonl",
}


def make(vendor, mode, runner=None, environ=ALL_KEYS, login=None, **cfg) -> Vendor:
    ok = OK_FIXTURE[vendor] if (vendor, mode) != ("glm", "opencode") else "glm_opencode_ok.jsonl"
    runner = runner or ScriptedRunner([RunOutput(exit_code=0, stdout=fixture_text(ok))])
    return registry.get(vendor).factory(
        mode, VendorConfig(vendor=vendor, **cfg), runner, login or FakeLogin(), environ
    )


DECLARED = {
    # vendor: (instruction file, MCP format id, vision, binary)
    "claude": ("CLAUDE.md", "mcp_json", True, "claude"),
    "codex": ("AGENTS.md", "codex_toml", True, "codex"),
    "gemini": ("GEMINI.md", "gemini_settings", True, "gemini"),
    "kimi": ("AGENTS.md", "kimi_json", False, "kimi"),
    "grok": ("AGENTS.md", "grok_toml", True, "grok"),
    "glm": ("CLAUDE.md", "mcp_json", False, "claude"),
    "cursor": ("AGENTS.md", "cursor_json", False, "cursor-agent"),
}


@pytest.mark.parametrize("vendor", sorted(DECLARED))
def test_declared_capabilities(vendor):
    b = make(vendor, registry.get(vendor).modes[0])
    caps = b.capabilities
    assert (caps.instruction_file, caps.mcp_format, caps.vision, b.binary) == DECLARED[vendor]


def test_glm_through_opencode_declares_opencode_files():
    caps = make("glm", "opencode").capabilities
    assert (caps.instruction_file, caps.mcp_format, caps.effort_values["high"]) == (
        "AGENTS.md",
        "opencode_json",
        "max",
    )


@pytest.mark.parametrize(("vendor", "mode"), VENDOR_MODES)
def test_probe_names_no_model_and_leaks_no_unrelated_secret(vendor, mode):
    runner = ScriptedRunner([RunOutput(exit_code=0, stdout="")])
    make(vendor, mode, runner).probe()
    call = runner.calls[0]
    assert "--model" not in call.argv and "-m" not in call.argv
    if (vendor, mode) != ("kimi", "api_key"):  # the one CLI with no default model: see below
        assert "KIMI_MODEL_NAME" not in call.env
    assert "UNRELATED_SECRET" not in call.env
    assert call.env["PATH"] == ALL_KEYS["PATH"]
    others = {"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "XAI_API_KEY"}
    own = set(
        registry.get(vendor)
        .factory(mode, VendorConfig(vendor=vendor), runner, FakeLogin(), ALL_KEYS)
        .credential_env()
    )
    assert not (others - own) & set(call.env), "another vendor's key reached this CLI"


@pytest.mark.parametrize(("vendor", "mode"), VENDOR_MODES)
def test_turn_passes_model_and_effort_knob(vendor, mode, tmp_path):
    runner = ScriptedRunner(
        [
            RunOutput(
                exit_code=0,
                stdout=fixture_text(
                    "glm_opencode_ok.jsonl" if mode == "opencode" else OK_FIXTURE[vendor]
                ),
            )
        ]
    )
    b = make(vendor, mode, runner)
    value = b.capabilities.effort_values.get("high")
    b.run(
        Turn(prompt="do it", workdir=str(tmp_path), model="m-1", effort="high", effort_value=value)
    )
    call = runner.calls[0]
    assert "m-1" in call.argv or call.env.get("KIMI_MODEL_NAME") == "m-1"
    if value:
        knob_in_argv = any(a == value or a.endswith(f'="{value}"') for a in call.argv)
        assert knob_in_argv or call.env.get("KIMI_MODEL_THINKING_EFFORT") == value
    assert call.cwd == str(tmp_path)
    assert delivered_prompt(call) == "do it"


def delivered_prompt(call) -> str | None:
    """The prompt as the CLI got it: its stdin, or the file its argv names (read at spawn)."""
    return call.stdin if call.stdin is not None else call.prompt_file_text


EXPECTED_ARGV = {
    "claude": ["claude", "-p", "--output-format", "stream-json", "--verbose"],
    "codex": ["codex", "exec", "--json"],
    "gemini": ["gemini", "-o", "stream-json", "--yolo"],
    "kimi": ["kimi", "-p"],
    "grok": ["grok", "--prompt-file"],
    "cursor": ["cursor-agent", "-p", "--output-format", "stream-json"],
}


@pytest.mark.parametrize("vendor", sorted(EXPECTED_ARGV))
def test_headless_invocation(vendor, tmp_path):
    b = make(vendor, registry.get(vendor).modes[0])
    argv = b.build_argv(Turn(prompt="do it", workdir=str(tmp_path)))
    assert argv[: len(EXPECTED_ARGV[vendor])] == EXPECTED_ARGV[vendor]


def test_binary_and_base_url_override_point_claude_at_a_stand_in(tmp_path):
    runner = ScriptedRunner([RunOutput(exit_code=0, stdout=fixture_text("claude_stream_ok.jsonl"))])
    b = make(
        "claude",
        "api_key",
        runner,
        binary="/opt/sim/fake-claude",
        base_url="http://127.0.0.1:4010",
        env={"ANTHROPIC_API_KEY": "VERANDA_SIM_KEY"},
    )
    b.environ = {"VERANDA_SIM_KEY": "sim-key", "PATH": "/bin"}
    b.run(Turn(prompt="x", workdir=str(tmp_path)))
    call = runner.calls[0]
    assert call.argv[0] == "/opt/sim/fake-claude"
    assert call.env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:4010"
    assert call.env["ANTHROPIC_API_KEY"] == "sim-key"  # read from the mapped variable
    assert call.env["DISABLE_TELEMETRY"] == "1" and call.env["DISABLE_AUTOUPDATER"] == "1"


@pytest.mark.parametrize(
    ("vendor", "mode", "var"),
    [
        ("claude", "bedrock", "ANTHROPIC_BEDROCK_BASE_URL"),
        ("kimi", "login", "KIMI_CODE_BASE_URL"),
        ("kimi", "api_key", "KIMI_MODEL_BASE_URL"),
        ("grok", "api_key", "GROK_MODELS_BASE_URL"),
        ("codex", "api_key", "OPENAI_BASE_URL"),
        ("gemini", "api_key", "GOOGLE_GEMINI_BASE_URL"),
        ("glm", "api_key", "ANTHROPIC_BASE_URL"),
        ("cursor", "api_key", "CURSOR_API_BASE_URL"),
    ],
)
def test_base_url_variable_per_mode(vendor, mode, var):
    env = make(vendor, mode, base_url="http://127.0.0.1:9").env()
    assert env[var] == "http://127.0.0.1:9"


def test_cloud_modes_set_their_switches():
    assert make("claude", "bedrock").env()["CLAUDE_CODE_USE_BEDROCK"] == "1"
    assert make("claude", "vertex").env()["CLAUDE_CODE_USE_VERTEX"] == "1"
    assert make("gemini", "vertex").env()["GOOGLE_GENAI_USE_VERTEXAI"] == "true"


def test_glm_maps_zai_key_to_anthropic_token_and_defaults_to_zai():
    env = make("glm", "api_key").env()
    assert env["ANTHROPIC_AUTH_TOKEN"] == "zai-test" and "ZAI_API_KEY" not in env
    assert env["ANTHROPIC_BASE_URL"] == "https://api.z.ai/api/anthropic"
    assert "ANTHROPIC_API_KEY" not in env


@pytest.mark.parametrize(
    ("vendor", "mode", "drop"),
    [
        ("claude", "api_key", "ANTHROPIC_API_KEY"),
        ("codex", "api_key", "OPENAI_API_KEY"),
        ("gemini", "api_key", "GEMINI_API_KEY"),
        ("kimi", "api_key", "KIMI_MODEL_API_KEY"),
        ("grok", "api_key", "XAI_API_KEY"),
        ("glm", "api_key", "ZAI_API_KEY"),
        ("glm", "opencode", "ZHIPU_API_KEY"),
        ("cursor", "api_key", "CURSOR_API_KEY"),
        ("claude", "bedrock", "AWS_REGION"),
        ("gemini", "vertex", "GOOGLE_CLOUD_PROJECT"),
    ],
)
def test_missing_key_is_auth_without_spawning(vendor, mode, drop, tmp_path):
    runner = ScriptedRunner([RunOutput(exit_code=0)])
    env = {k: v for k, v in ALL_KEYS.items() if k != drop}
    b = make(vendor, mode, runner, environ=env)
    assert b.probe().verdict == "auth"
    with pytest.raises(VendorError) as err:
        b.run(Turn(prompt="x", workdir=str(tmp_path)))
    assert err.value.verdict == "auth" and drop in err.value.detail
    assert runner.calls == []
    assert "sk-" not in err.value.detail


def test_claude_login_accepts_a_setup_token_without_a_stored_session():
    login = FakeLogin(ok=False)
    b = make("claude", "login", login=login)
    assert b.precheck() is None and login.asked == []
    assert b.env()["CLAUDE_CODE_OAUTH_TOKEN"] == "oauth-test"


def test_images_reach_each_vision_cli_its_own_way(tmp_path):
    img = tmp_path / "shot.png"
    img.write_bytes(b"\x89PNG")
    turn = Turn(prompt="look", workdir=str(tmp_path), images=[str(img)])
    claude = make("claude", "api_key")
    assert str(img) in claude.stdin_for(turn) and str(img) not in " ".join(claude.build_argv(turn))
    assert ["--image", str(img)] == make("codex", "api_key").build_argv(turn)[-4:-2]
    assert f"@{img}" in make("gemini", "api_key").build_argv(turn)[2]
    grok = make("grok", "api_key").build_argv(turn)
    assert grok[1] == "--prompt-json" and '"type": "image"' in grok[2]


def test_grok_images_past_the_argv_bound_are_named_in_the_prompt_file(tmp_path):
    img = tmp_path / "huge.png"
    img.write_bytes(b"\x89PNG" + b"\0" * MAX_CLI_ARGV_BYTES)
    turn = Turn(prompt="look", workdir=str(tmp_path), images=[str(img)])
    grok = make("grok", "api_key")
    argv = grok.build_argv(turn)
    assert argv[1] == "--prompt-file" and argv_bytes(argv) < MAX_CLI_ARGV_BYTES
    assert str(img) in grok.full_prompt(turn)


MEGABYTE_TICKET = "Role: implementer\n" + ("A customer pasted this log line. " * 32_768)


@pytest.mark.parametrize(("vendor", "mode"), VENDOR_MODES)
def test_a_megabyte_prompt_never_rides_in_the_argv(vendor, mode, tmp_path):
    """The kernel refuses one argument over 128 KiB (E2BIG): every CLI gets the prompt by
    stdin or a staged file, and its argv stays inside the named bound."""
    assert len(MEGABYTE_TICKET) > 1_000_000
    ok = "glm_opencode_ok.jsonl" if mode == "opencode" else OK_FIXTURE[vendor]
    runner = ScriptedRunner([RunOutput(exit_code=0, stdout=fixture_text(ok))])
    b = make(vendor, mode, runner)
    turn = Turn(prompt=MEGABYTE_TICKET, workdir=str(tmp_path), model="m-1")
    assert argv_bytes(b.build_argv(turn)) < MAX_CLI_ARGV_BYTES
    b.run(turn)
    (call,) = runner.calls
    assert argv_bytes(call.argv) < MAX_CLI_ARGV_BYTES
    assert all(len(a) < 4_096 for a in call.argv)
    assert delivered_prompt(call) == MEGABYTE_TICKET
    if call.stdin is None:  # the pointer keeps the seat's Role line and names the file
        pointer = next(a for a in call.argv if "Role: implementer" in a or a.endswith(".md"))
        assert "Role: implementer" in pointer or pointer.endswith(".md")
        assert list(tmp_path.iterdir()) == [], "the staged prompt file outlives the turn"


def test_the_prompt_file_sits_in_the_clones_git_folder(tmp_path):
    (tmp_path / ".git").mkdir()
    kimi = make("kimi", "api_key")
    turn = Turn(prompt="Role: reviewer\nlook", workdir=str(tmp_path))
    pointer = kimi.build_argv(turn)[2]
    assert pointer.startswith("Role: reviewer\n") and str(tmp_path / ".git") in pointer


@pytest.mark.parametrize("length", [MAX_ROLE_LINE_CHARS, MAX_ROLE_LINE_CHARS + 1])
def test_a_role_line_is_repeated_in_the_pointer_up_to_its_bound(tmp_path, length):
    """``MAX_ROLE_LINE_CHARS``: a ``Role:`` first line of exactly the bound is repeated in the
    pointer a text-only CLI gets; one character longer it is ticket text, not a seat, and the
    pointer carries only where the prompt is."""
    (tmp_path / ".git").mkdir()
    role = "Role: reviewer " + "r" * (length - len("Role: reviewer "))
    turn = Turn(prompt=f"{role}\nlook", workdir=str(tmp_path))
    pointer = make("kimi", "api_key").build_argv(turn)[2]
    assert pointer.startswith(role + "\n") is (length <= MAX_ROLE_LINE_CHARS)
    assert str(tmp_path / ".git") in pointer and (role in pointer) is (
        length <= MAX_ROLE_LINE_CHARS
    )


def test_codex_pins_the_shell_env_policy_so_keys_never_reach_tools():
    argv = make("codex", "api_key").build_argv(Turn(prompt="x", workdir="/w"))
    assert 'shell_environment_policy.inherit="core"' in argv
    assert "shell_environment_policy.ignore_default_excludes=false" in argv


def test_codex_runs_the_agents_commands_without_a_login_shell():
    """Recorded from Codex 0.171.0 before the fix: its ``exec_command`` ran ``bash -lc``, whose
    /etc/profile reset PATH, so the agent's ``make test`` ran the system Python (no pytest)
    while the pipeline validated the same tree on the worker's PATH."""
    events = [
        json.loads(x)
        for x in fixture_text("codex_exec_login_shell_loses_venv.jsonl").split("\n")
        if x
    ]
    ran = [e["item"] for e in events if e.get("item", {}).get("type") == "command_execution"]
    assert ran[-1]["command"] == "/bin/bash -lc 'make test'"
    assert "No module named pytest" in ran[-1]["aggregated_output"]
    argv = make("codex", "api_key").build_argv(Turn(prompt="x", workdir="/w"))
    assert argv[argv.index("allow_login_shell=false") - 1] == "-c"


def test_grok_in_an_owned_home_gives_the_agents_shell_the_workers_path(tmp_path):
    """Grok 0.2.111 runs commands in an interactive login shell's environment (system dirs
    first; no switch), so the home the vendor owns gets a shell profile restoring PATH."""
    b = make("grok", "api_key", home=str(tmp_path))
    env = b.env_for(Turn(prompt="x", workdir=str(tmp_path)))
    assert env["VERANDA_AGENT_PATH"] == ALL_KEYS["PATH"]
    for name in (".bash_profile", ".bashrc"):
        profile = (tmp_path / name).read_text()
        assert 'PATH="$VERANDA_AGENT_PATH"' in profile
    shell = subprocess.run(
        ["bash", "-lic", "echo $PATH"],
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "VERANDA_AGENT_PATH": "/w/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert shell.stdout.strip().splitlines()[-1] == "/w/bin:/bin"
    assert "VERANDA_AGENT_PATH" not in make("grok", "api_key").env_for(
        Turn(prompt="x", workdir="/")
    )


def test_glm_binary_override_runs_the_mode_whose_cli_it_names():
    opencode = make("glm", "opencode", binary="/opt/npm/.bin/opencode")
    assert opencode.build_argv(Turn(prompt="x", workdir="/w"))[0] == "/opt/npm/.bin/opencode"
    assert make("glm", "api_key", binary="/opt/npm/.bin/opencode").binary == "claude"
    assert make("glm", "opencode", binary="/opt/claude").binary == "opencode"
    assert make("glm", "api_key", binary="/opt/claude").binary == "/opt/claude"


def test_timeout_is_the_smaller_of_turn_and_vendor_cap(tmp_path):
    runner = ScriptedRunner([RunOutput(exit_code=0, stdout=fixture_text("codex_exec_ok.jsonl"))])
    make("codex", "api_key", runner, timeout_s=30).run(
        Turn(prompt="x", workdir=str(tmp_path), timeout_s=600)
    )
    assert runner.calls[0].timeout == 30


def test_gemini_base_url_override_names_the_auth_type_in_a_home_it_owns(tmp_path):
    import json as _json

    b = make("gemini", "api_key", base_url="http://127.0.0.1:9", home=str(tmp_path))
    env = b.env_for(Turn(prompt="x", workdir=str(tmp_path)))
    assert env["GOOGLE_GEMINI_BASE_URL"] == "http://127.0.0.1:9" and env["HOME"] == str(tmp_path)
    settings = _json.loads((tmp_path / ".gemini" / "settings.json").read_text())
    assert settings["security"]["auth"]["selectedType"] == "gemini-api-key"
    assert env["GEMINI_CLI_TRUST_WORKSPACE"] == "true"


def test_codex_base_url_override_is_a_custom_provider():
    argv = make("codex", "api_key", base_url="http://127.0.0.1:9/v1").build_argv(
        Turn(prompt="x", workdir="/w")
    )
    assert 'model_providers.veranda.base_url="http://127.0.0.1:9/v1"' in argv
    assert 'model_provider="veranda"' in argv


@pytest.mark.parametrize("vendor", registry.vendors())
def test_every_declared_mcp_format_renders(vendor):
    """The vendors' format ids and the one renderer must agree, or a fallback vendor would get
    no browser/observability tools at all."""
    from veranda_dagster.domain.core.mcp_config import PLAYWRIGHT_MCP, render_mcp_config

    for mode in registry.get(vendor).modes:
        fmt = make(vendor, mode).capabilities.mcp_format
        path, content = render_mcp_config([PLAYWRIGHT_MCP], fmt)
        assert path and PLAYWRIGHT_MCP.name in content


def test_kimi_api_key_probe_names_a_model_because_kimi_has_no_default(tmp_path):
    """Recorded from Kimi Code 2.1.0 with no KIMI_MODEL_NAME (the probe as it was): exit 1,
    "No model configured" -> ``auth``, so the resolver skipped Kimi before any turn."""
    recorded = RunOutput(
        exit_code=1,
        stdout=fixture_text("kimi_probe_no_model_configured.jsonl"),
        stderr="error: failed to run prompt: No model configured. Run `kimi` and use /login to "
        "sign in, then retry; or set default_model in config.toml.",
    )
    runner = ScriptedRunner(
        respond=lambda call: (
            RunOutput(exit_code=0, stdout=fixture_text("kimi_stream_ok.jsonl"))
            if call.env.get("KIMI_MODEL_NAME")
            else recorded
        )
    )
    assert make("kimi", "api_key", runner).probe().verdict == "ok"
    assert runner.calls[-1].env["KIMI_MODEL_NAME"] == "kimi-k2.6"  # the cheap tier
    configured = make("kimi", "api_key", runner, environ={**ALL_KEYS, "KIMI_MODEL_NAME": "k-x"})
    assert configured.probe().verdict == "ok" and runner.calls[-1].env["KIMI_MODEL_NAME"] == "k-x"
    make("kimi", "login", runner).probe()  # login mode: the plan's own default model
    assert "KIMI_MODEL_NAME" not in runner.calls[-1].env


def test_glm_opencode_base_url_is_written_as_opencode_provider_config():
    """opencode has no base-URL variable: the vendor's old ``OC_BASE`` was read by nothing and
    the turn hung for its whole bound with no request reaching the server (reference §4.3)."""
    import json as _json

    env = make("glm", "opencode", base_url="http://127.0.0.1:9/v1").env()
    assert "OC_BASE" not in env and env["OPENCODE_DISABLE_MODELS_FETCH"] == "1"
    config = _json.loads(env["OPENCODE_CONFIG_CONTENT"])
    plan = config["provider"]["zai-coding-plan"]["options"]
    assert plan == {"baseURL": "http://127.0.0.1:9/v1"}  # the provider the tier ids name
    default = _json.loads(make("glm", "opencode").env()["OPENCODE_CONFIG_CONTENT"])
    assert default["provider"]["zai-coding-plan"]["options"] == {"baseURL": ZAI_CODING_URL}
