"""The .git the product composes before any git runs outside the sandbox."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from veranda_dagster.domain.clone.git_transport import (
    GitDirError,
    fresh_config,
    harden_git_dir,
    transport_config,
    url_protocol,
)
from veranda_dagster.domain.clone.nested_repos import added_gitlinks, gitlinks


@pytest.mark.parametrize(
    ("url", "protocol"),
    [
        ("https://github.com/acme/app.git", "https"),
        ("http://127.0.0.1:8080/acme/app.git", "http"),
        ("git@github.com:acme/app.git", "ssh"),
        ("/srv/git/acme/app.git", "file"),
        ("file:///srv/git/app.git", "file"),
    ],
)
def test_only_the_configured_remotes_protocol_is_allowed(url: str, protocol: str) -> None:
    assert url_protocol(url) == protocol
    flags = transport_config(url)
    assert "protocol.allow=never" in flags and f"protocol.{protocol}.allow=always" in flags
    assert "submodule.recurse=false" in flags and "core.hooksPath=/dev/null" in flags
    assert "gc.auto=0" in flags and "maintenance.auto=false" in flags


def test_the_config_is_written_from_scratch_and_quotes_the_url(tmp_path: Path) -> None:
    repo = tmp_path / "clone"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    config = repo / ".git" / "config"
    config.write_text("[include]\n\tpath = /tmp/evil\n[core]\n\tsshCommand = touch /tmp/x\n")
    url = 'https://forge.example/a "b"\\c.git'
    harden_git_dir(repo, url)
    assert config.read_text() == fresh_config(url)
    got = subprocess.run(
        ["git", "-C", str(repo), "config", "--get", "remote.origin.url"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert got == url
    with pytest.raises(GitDirError, match="control character"):
        fresh_config("https://forge.example/a\n[core]\n\tpager = x")


def test_a_config_that_is_a_link_is_replaced_not_written_through(tmp_path: Path) -> None:
    repo = tmp_path / "clone"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    victim = tmp_path / "victim"
    victim.write_text("worker file\n")
    (repo / ".git" / "config").unlink()
    (repo / ".git" / "config").symlink_to(victim)
    with pytest.raises(GitDirError, match=r"\.git/config is a link"):
        harden_git_dir(repo, "https://forge.example/a.git")
    assert victim.read_text() == "worker file\n"


def test_gitlinks_are_read_from_listings_and_raw_diffs() -> None:
    listing = b"160000 commit abc\tvendor/lib\x00100644 blob def\tapp.py\x00"
    assert gitlinks(listing) == {"vendor/lib"}
    raw = (
        b":000000 160000 0000 abcd A\x00sub\x00"
        b":100644 100644 aaaa bbbb M\x00app.py\x00"
        b":160000 160000 aaaa bbbb M\x00old-sub\x00"
        b":100644 160000 aaaa bbbb T\x00was-a-file\x00"
    )
    assert added_gitlinks(raw) == ["sub", "was-a-file"]
