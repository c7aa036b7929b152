"""Repository facts read off fixture repositories (tests/fixtures/context/facts/<name>)."""

import shutil
import time
from pathlib import Path

import pytest

from veranda_dagster.domain.context.facts import MAX_PACKAGE_JSON_DEPTH, read_repo_facts
from veranda_dagster.domain.context.setup_facts import MAX_SETUP_COMMANDS
from veranda_dagster.domain.core.bounds import MAX_FACT_SCAN_FILES, MAX_REPO_FILE_BYTES

FIXTURES = Path(__file__).parents[2] / "fixtures" / "context" / "facts"


def test_makefile_targets_win_over_ecosystem_commands():
    facts = read_repo_facts(FIXTURES / "make_python")
    assert facts.test == ["make test"]
    assert facts.lint == ["make lint"]
    assert facts.build == ["make build"]
    assert facts.coverage == ["python -m pytest --cov --cov-report=term"]
    assert facts.languages == ["python"]
    assert "pyproject.toml [tool.ruff]" in facts.lint_config
    assert "pyproject.toml [tool.mypy]" in facts.lint_config
    assert not facts.frontend and not facts.needs_containers


def test_package_json_scripts_use_the_lockfiles_package_manager_and_detect_react():
    facts = read_repo_facts(FIXTURES / "node_react")
    assert facts.build == ["pnpm run build"]
    assert facts.lint == ["pnpm run lint"]
    assert facts.test == ["pnpm run test"]
    assert facts.coverage == ["pnpm run test:coverage"]
    assert "eslint.config.js" in facts.lint_config
    assert facts.frontend is True
    assert facts.languages == ["javascript"]


def test_npm_is_the_default_package_manager(tmp_path):
    shutil.copy(FIXTURES / "node_react" / "package.json", tmp_path / "package.json")
    assert read_repo_facts(tmp_path).test == ["npm run test"]


def test_pyproject_pytest_and_flake8_without_a_makefile():
    facts = read_repo_facts(FIXTURES / "python_tox")
    assert facts.test == ["python -m pytest"]
    assert facts.lint == ["flake8"]
    assert facts.coverage == []


def test_go_module_build_tags_and_testcontainers():
    facts = read_repo_facts(FIXTURES / "go_service")
    assert facts.build == ["go build ./..."]
    assert facts.test == ["go test ./..."]
    assert facts.lint == ["go vet ./...", "golangci-lint run"]
    assert facts.coverage == ["go test -coverprofile=coverage.out ./..."]
    assert facts.build_tags == ["e2e", "integration"]
    assert ".golangci.yml" in facts.lint_config
    assert facts.needs_containers is True


def test_cargo_crate():
    facts = read_repo_facts(FIXTURES / "rust_crate")
    assert (facts.build, facts.lint, facts.test) == (
        ["cargo build"],
        ["cargo clippy"],
        ["cargo test"],
    )


def test_monorepo_compose_file_partial_makefile_and_nested_frontend():
    facts = read_repo_facts(FIXTURES / "monorepo")
    assert facts.test == ["make test"]
    assert facts.lint == ["go vet ./..."]
    assert facts.needs_containers is True
    assert facts.frontend is True


def test_an_empty_directory_has_no_facts(tmp_path):
    facts = read_repo_facts(tmp_path)
    assert facts.model_dump() == {
        "build": [], "lint": [], "test": [], "coverage": [], "lint_config": [],
        "build_tags": [], "languages": [], "needs_containers": False, "frontend": False,
        "dev_server": None, "refused_files": [], "setup": [], "setup_source": "",
    }  # fmt: skip


def test_vendored_and_fixture_trees_do_not_count(tmp_path):
    (tmp_path / "node_modules" / "x").mkdir(parents=True)
    (tmp_path / "node_modules" / "x" / "package.json").write_text('{"dependencies":{"react":"1"}}')
    (tmp_path / "tests" / "fixtures").mkdir(parents=True)
    (tmp_path / "tests" / "fixtures" / "it.py").write_text("from testcontainers import x\n")
    facts = read_repo_facts(tmp_path)
    assert not facts.frontend and not facts.needs_containers


def test_a_python_testcontainers_import_needs_containers(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "it.py").write_text(
        "from testcontainers.postgres import PostgresContainer\n"
    )
    assert read_repo_facts(tmp_path).needs_containers is True


def test_broken_manifests_are_ignored_not_fatal(tmp_path):
    (tmp_path / "package.json").write_text("{not json")
    (tmp_path / "pyproject.toml").write_text("[broken")
    facts = read_repo_facts(tmp_path)
    assert facts.test == [] and not facts.frontend


def test_a_plain_html_app_with_a_dev_script_is_a_frontend_with_a_dev_server(tmp_path):
    """No framework dependency to go by: an index.html and a script that serves it."""
    (tmp_path / "public").mkdir()
    (tmp_path / "public" / "index.html").write_text("<h1>Cart</h1>\n")
    scripts = '{"scripts": {"start": "node s.js", "dev": "node s.js"}}'
    (tmp_path / "package.json").write_text(scripts)
    facts = read_repo_facts(tmp_path)
    assert facts.frontend is True and facts.dev_server == "npm run dev"
    (tmp_path / "public" / "index.html").unlink()
    assert read_repo_facts(tmp_path).frontend is False
    assert read_repo_facts(tmp_path).dev_server is None


def test_a_framework_frontend_names_its_start_script_as_the_dev_server(tmp_path):
    (tmp_path / "package.json").write_text(
        '{"dependencies": {"react": "19"}, "scripts": {"start": "vite"}}'
    )
    (tmp_path / "pnpm-lock.yaml").write_text("")
    facts = read_repo_facts(tmp_path)
    assert facts.frontend is True and facts.dev_server == "pnpm run start"


@pytest.mark.parametrize(
    ("line", "needs"),
    [
        ("from testcontainers.postgres import PostgresContainer\n", True),
        ("    import testcontainers\n", True),
        ("import org.testcontainers.containers.PostgreSQLContainer;\n", True),
        ('\t"github.com/testcontainers/testcontainers-go"\n', True),
        ("const { GenericContainer } = require('testcontainers');\n", True),
        ('import { GenericContainer } from "testcontainers";\n', True),
        # twins: the word alone is no container suite
        ("# we could use testcontainers here one day\n", False),
        ("x = 'testcontainers'\n", False),
        ("    fromtestcontainers = 1\n", False),
    ],
)
def test_each_testcontainers_form_and_its_twin(tmp_path, line: str, needs: bool) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "it.py").write_text(line)
    assert read_repo_facts(tmp_path).needs_containers is needs


TESTCONTAINERS_BOUND_S = 5.0
"""A megabyte of whitespace beside the word: linear work takes milliseconds; the old pattern's
backtracking took about 6 s for 32 kB, hours for the megabyte."""


def test_a_hostile_file_costs_the_testcontainers_scan_linear_work(tmp_path):
    (tmp_path / "tests").mkdir()
    body = "testcontainers\n" + " \t" * (MAX_REPO_FILE_BYTES // 2 - 16)
    (tmp_path / "tests" / "it.py").write_text(body)
    started = time.process_time()
    assert read_repo_facts(tmp_path).needs_containers is False
    assert time.process_time() - started < TESTCONTAINERS_BOUND_S


@pytest.mark.parametrize(
    ("case", "depth", "frontend"),
    [
        ("at the bound: apps/web/package.json", MAX_PACKAGE_JSON_DEPTH, True),
        ("one deeper: a sample's package.json", MAX_PACKAGE_JSON_DEPTH + 1, False),
    ],
)
def test_a_package_json_counts_for_the_frontend_down_to_its_depth_bound(
    tmp_path, case, depth, frontend
):
    """``MAX_PACKAGE_JSON_DEPTH``: a React ``package.json`` that many folders down makes the
    repository a frontend; one folder deeper it is a sample or fixture and does not."""
    folder = tmp_path.joinpath(*[f"level{i}" for i in range(depth)])
    folder.mkdir(parents=True)
    (folder / "package.json").write_text('{"dependencies": {"react": "18"}}')
    assert read_repo_facts(tmp_path).frontend is frontend, case


@pytest.mark.parametrize(
    ("case", "filler", "needs"),
    [
        ("the import in the last file the scan reads", MAX_FACT_SCAN_FILES - 1, True),
        ("the import one file past the bound", MAX_FACT_SCAN_FILES, False),
    ],
)
def test_the_source_scan_reads_at_most_its_bound_of_files(tmp_path, case, filler, needs):
    """``MAX_FACT_SCAN_FILES``: the scan for imports reads files in path order up to the bound;
    a testcontainers import in the file at the bound is seen, one file later it is not (a
    monorepo is sampled, not read whole)."""
    for i in range(filler):
        (tmp_path / f"a{i:05d}.py").touch()
    (tmp_path / "z_it.py").write_text("from testcontainers.postgres import PostgresContainer\n")
    assert read_repo_facts(tmp_path).needs_containers is needs, case


@pytest.mark.parametrize("count", [MAX_SETUP_COMMANDS, MAX_SETUP_COMMANDS + 1])
def test_a_devcontainer_keeps_at_most_its_bound_of_setup_commands(tmp_path, count):
    """``MAX_SETUP_COMMANDS``: a devcontainer map of one command more than the bound declares
    the first ``MAX_SETUP_COMMANDS`` in order; its twin, exactly the bound, declares them all."""
    import json

    named = {f"step{i:02d}": f"echo {i}" for i in range(count)}
    (tmp_path / ".devcontainer.json").write_text(json.dumps({"postCreateCommand": named}))
    facts = read_repo_facts(tmp_path)
    assert facts.setup == [f"echo {i}" for i in range(min(count, MAX_SETUP_COMMANDS))]
    assert facts.setup_source == ".devcontainer.json"
