"""Without docker the container step skips, except under ``CI``, where it fails: a skipped
step would hide exactly what it exists to show. In the default suite (no docker needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.container import conftest, docker_engine


@pytest.fixture
def no_engine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No engine answers and no ``dockerd`` is installed; locks in a private folder."""
    monkeypatch.setattr(docker_engine, "engine_answers", lambda: False)
    monkeypatch.setattr(docker_engine, "DOCKERD", str(tmp_path / "missing-dockerd"))
    monkeypatch.setattr(docker_engine, "START_LOCK", tmp_path / "start.lock")
    monkeypatch.setattr(docker_engine, "ENGINE_LOCK", tmp_path / "engine.lock")
    return tmp_path / "dockerd.log"


def test_no_engine_and_none_to_start_is_reported(no_engine: Path) -> None:
    missing = pytest.raises(docker_engine.EngineUnavailable, match=r"apt-get install docker\.io")
    with missing, docker_engine.docker_engine(no_engine):
        pass


def test_without_docker_ci_fails_and_a_developer_skips(
    no_engine: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI: the container step must run"):
        conftest.unavailable("no engine")
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="no engine"):
        conftest.unavailable("no engine")
