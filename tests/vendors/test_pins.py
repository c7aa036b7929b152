"""The image and CI install exactly the versions the vendor registry declares (each vendor's
``installs``), so a pin bumped in one place and not the others fails here, not in production.

The Dockerfile is read through ``tests/observability/test_dockerfile`` (instructions with
continuations joined, its ARGs); ``.ci/run`` through its pin arrays and ``==`` pins.
"""

from __future__ import annotations

import re

import pytest

from tests.observability.render import ROOT
from tests.observability.test_dockerfile import DOCKERFILE
from veranda_dagster.domain.core.mcp_config import PLAYWRIGHT_MCP_VERSION
from veranda_dagster.vendors import registry
from veranda_dagster.vendors.plugins._base import Install

CI_RUN = (ROOT / ".ci/run").read_text()
INSTALLS = [i for vendor in registry.installs().values() for i in vendor]


def dockerfile_args(text: str) -> dict[str, str]:
    """Every ``ARG NAME=value`` of every stage."""
    return dict(re.findall(r"^ARG ([A-Z0-9_]+)=(\S+)$", text, flags=re.M))


def dockerfile_drift(text: str, installs: list[Install]) -> list[str]:
    """What the Dockerfile ``text`` installs other than ``installs``: a pin with another value,
    a package installed from no ARG of the registry's, a vendor npm CLI the registry lacks."""
    pins = dockerfile_args(text)
    drift = []
    for i in installs:
        if pins.get(i.docker_arg) != i.version:
            drift.append(f"ARG {i.docker_arg}={pins.get(i.docker_arg)}, registry: {i.version}")
        joiner = "@" if i.registry == "npm" else "=="
        if f"{i.package}{joiner}${{{i.docker_arg}}}" not in text:
            drift.append(f"{i.package} is not installed from ${{{i.docker_arg}}}")
    installed_npm = set(re.findall(r'"((?:@[\w.-]+/)?[\w.-]+)@\$\{[A-Z_]+_VERSION\}"', text))
    installed_npm |= set(re.findall(r"\b([\w.-]+)@\$\{NODE_VERSION\}", text))
    declared = {i.package for i in installs} | {"@playwright/mcp"}
    drift += [f"{p} is installed but no vendor declares it" for p in installed_npm - declared]
    return drift


def ci_pins(text: str) -> dict[str, str]:
    """``package -> version`` of ``.ci/run``: its ``NPM_PINS`` array and each ``pip install
    "package==${VAR}"`` with ``VAR=version``."""
    array = re.search(r"NPM_PINS=\(\n(.*?)\n\)", text, flags=re.S)
    pins = {}
    for spec in array.group(1).split() if array else []:
        package, _, version = spec.rpartition("@")
        pins[package] = version
    for package, var in re.findall(r'"([\w.-]+)==\$\{([A-Z_]+)\}"', text):
        value = re.search(rf"^{var}=(\S+)$", text, flags=re.M)
        pins[package] = value.group(1) if value else "(unset)"
    return pins


def ci_drift(text: str, installs: list[Install]) -> list[str]:
    pins = ci_pins(text)
    drift = [
        f"{i.package}: .ci/run pins {pins.get(i.package)}, registry: {i.version}"
        for i in installs
        if pins.get(i.package) != i.version
    ]
    declared = {i.package for i in installs} | {"@playwright/mcp"}
    return drift + [
        f"{p} is pinned in .ci/run but no vendor declares it" for p in pins.keys() - declared
    ]


def test_every_vendor_declares_its_installs_and_a_cli_on_no_registry_says_so() -> None:
    assert set(registry.installs()) == set(registry.vendors())
    assert INSTALLS and all(re.fullmatch(r"\d+\.\d+\.\d+", i.version) for i in INSTALLS)


def test_the_dockerfile_installs_exactly_the_registry_s_pins() -> None:
    assert dockerfile_drift(DOCKERFILE, INSTALLS) == []


def test_ci_installs_exactly_the_registry_s_pins() -> None:
    assert ci_drift(CI_RUN, INSTALLS) == []


def test_the_browser_server_is_pinned_alike_in_the_image_ci_and_the_code() -> None:
    assert dockerfile_args(DOCKERFILE)["PLAYWRIGHT_MCP_VERSION"] == PLAYWRIGHT_MCP_VERSION
    assert re.search(rf"^PLAYWRIGHT_MCP_PIN={re.escape(PLAYWRIGHT_MCP_VERSION)}$", CI_RUN, re.M)


@pytest.mark.parametrize("install", INSTALLS, ids=[i.package for i in INSTALLS])
def test_a_pin_bumped_in_one_place_only_is_drift(install: Install) -> None:
    """Each check fails for the right reason: a registry version the files do not hold."""
    bumped = [i if i is not install else Install(i.registry, i.package, "9.9.9", i.docker_arg)
              for i in INSTALLS]  # fmt: skip
    assert dockerfile_drift(DOCKERFILE, bumped) == [
        f"ARG {install.docker_arg}={install.version}, registry: 9.9.9"
    ]
    assert ci_drift(CI_RUN, bumped) == [
        f"{install.package}: .ci/run pins {install.version}, registry: 9.9.9"
    ]


def test_a_cli_installed_that_no_vendor_declares_is_drift() -> None:
    extra = DOCKERFILE.replace(
        '"opencode-ai@${OPENCODE_VERSION}"',
        '"opencode-ai@${OPENCODE_VERSION}" "@acme/acme-code@${ACME_VERSION}"',
    )
    assert dockerfile_drift(extra, INSTALLS) == [
        "@acme/acme-code is installed but no vendor declares it"
    ]
    ci = CI_RUN.replace("  opencode-ai@", "  @acme/acme-code@1.0.0\n  opencode-ai@")
    assert ci_drift(ci, INSTALLS) == [
        "@acme/acme-code is pinned in .ci/run but no vendor declares it"
    ]
