"""One agent turn wired through the credential proxy: what the sandboxed command gets instead.

Given the vendor's ``Egress`` and the argv and environment it built (real keys, the upstream
base URL), ``through_proxy`` starts the turn's proxy and yields the command as the sandbox must
run it: each key replaced by its placeholder, the base URL replaced by the bridge's loopback
address (keeping the path prefix) wherever the vendor put it (a variable, a ``-c`` override in
the argv, a JSON config in a variable), the bridge as a launcher in front, and the proxy's
socket folder to bind read-only. It fails closed: a real key still anywhere in the argv or the
environment, or a command the base URL was never given to, is an ``EgressError``.
"""

from __future__ import annotations

import secrets
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from veranda_dagster.sandbox import bridge
from veranda_dagster.sandbox.egress import Egress, Substitution, Upstream
from veranda_dagster.sandbox.metering import RequestMeter
from veranda_dagster.sandbox.policy import SandboxError
from veranda_dagster.sandbox.proxy import SOCKET_NAME, CredentialProxy

SOCKET_DIR_INSIDE: Final = "/run/veranda"
BRIDGE_PORTS: Final = range(20_000, 60_000)
"""Where the bridge listens inside the sandbox's own namespace (nothing else is there but what
the agent starts itself, so a random port in a high range does not collide in practice)."""


class EgressError(SandboxError):
    """A turn cannot be wired through the proxy without a key or the network in the sandbox."""


@dataclass(frozen=True)
class ProxiedCommand:
    launcher: list[str]
    """The bridge, to run in front of the CLI's argv inside the sandbox."""
    argv: list[str]
    env: dict[str, str]
    ro_binds: dict[str, str]
    proxy: CredentialProxy = field(repr=False)


@contextmanager
def through_proxy(
    egress: Egress,
    argv: Sequence[str],
    env: Mapping[str, str],
    meter: RequestMeter | None = None,
) -> Iterator[ProxiedCommand]:
    """``meter``: what admits and meters each model request (a budgeted turn's)."""
    if egress.refused is not None:
        raise EgressError(egress.refused)
    try:
        upstream = Upstream.of(egress.base_url)
    except ValueError as exc:
        raise EgressError(f"no upstream for the credential proxy: {exc}") from None
    subs = egress.substitutions()
    if not subs:
        raise EgressError("no key to put behind the credential proxy")
    port = BRIDGE_PORTS[secrets.randbelow(len(BRIDGE_PORTS))]
    local = f"http://127.0.0.1:{port}{upstream.prefix}"
    inner_env = {name: _rewrite(value, egress.base_url, local, subs) for name, value in env.items()}
    for sub in subs:
        inner_env[sub.env] = sub.placeholder
    inner_argv = [_rewrite(arg, egress.base_url, local, subs) for arg in argv]
    _check(inner_argv, inner_env, local, subs)
    with CredentialProxy(upstream, subs, meter=meter) as proxy:
        launcher = [
            sys.executable, "-I", str(Path(bridge.__file__).resolve()),
            "--socket", f"{SOCKET_DIR_INSIDE}/{SOCKET_NAME}", "--port", str(port), "--",
        ]  # fmt: skip
        yield ProxiedCommand(
            launcher, inner_argv, inner_env, {str(proxy.folder): SOCKET_DIR_INSIDE}, proxy
        )


def _rewrite(text: str, base_url: str, local: str, subs: Sequence[Substitution]) -> str:
    text = text.replace(base_url, local)
    for sub in subs:
        text = text.replace(sub.real, sub.placeholder)
    return text


def _check(
    argv: Sequence[str], env: Mapping[str, str], local: str, subs: Sequence[Substitution]
) -> None:
    texts = [*argv, *env.values(), *env.keys()]
    for sub in subs:
        if any(sub.real in text for text in texts):
            raise EgressError(f"the key for {sub.env} would still be inside the sandbox")
    if not any(local in text for text in texts):
        raise EgressError("the command was never given the upstream base URL to rewrite")
