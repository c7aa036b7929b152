"""The package registries a deployment allows a setup step to read from, and their keys.

``VERANDA_REGISTRIES`` is a JSON object, one entry per registry::

    {"pypi":  {"url": "https://pypi.org/simple", "kind": "pypi"},
     "files": {"url": "https://files.pythonhosted.org"},
     "corp":  {"url": "https://pkgs.corp.example/simple", "kind": "pypi",
               "auth_env": "VERANDA_REGISTRY_CORP_AUTH"}}

A setup step reaches each one as ``http://127.0.0.1:<port>/<name>/...`` through the registry
proxy (``registry_proxy.py``) and nothing else. ``auth_env`` names the worker variable (Vault
injects it like every other secret) holding the ``Authorization`` header value for a private
registry (``Basic ...`` or ``Bearer ...``): the proxy adds it on the way out, so it never enters
the sandbox. ``kind`` says which tool's configuration the setup step gets pointed at the
registry (``pypi``: ``PIP_INDEX_URL``, ``npm``: ``npm_config_registry``, ``go``: ``GOPROXY``);
a registry without one is still reachable (a file host the index links to).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Literal
from urllib.parse import urlsplit

from veranda_dagster.domain.core.errors import ConfigError

REGISTRIES_ENV = "VERANDA_REGISTRIES"
RegistryKind = Literal["pypi", "npm", "go", ""]
KINDS: tuple[RegistryKind, ...] = ("pypi", "npm", "go", "")
MAX_REGISTRIES: Final = 32
"""Registries in one deployment's allowance; a list longer than this is a config mistake."""
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")


@dataclass(frozen=True)
class Registry:
    name: str
    url: str
    """The base URL, no trailing slash: requests must stay under it."""
    kind: RegistryKind = ""
    auth: str = field(default="", repr=False)
    """The ``Authorization`` value the proxy adds (read from ``auth_env``); never inside."""

    @property
    def origin(self) -> str:
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}".lower()


def _registry(name: str, raw: object, environ: Mapping[str, str]) -> Registry:
    if not _NAME.match(name):
        raise ConfigError(f"{REGISTRIES_ENV}: registry name {name!r} is not [a-z0-9_-]")
    if not isinstance(raw, dict) or not isinstance(raw.get("url"), str):
        raise ConfigError(f'{REGISTRIES_ENV}: registry {name!r} needs a "url" string')
    url = raw["url"].rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{REGISTRIES_ENV}: registry {name!r} url is not http(s)")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise ConfigError(
            f"{REGISTRIES_ENV}: registry {name!r} url carries credentials or a query; "
            "put the credential in the variable auth_env names"
        )
    kind = raw.get("kind", "")
    if kind not in KINDS:
        raise ConfigError(
            f"{REGISTRIES_ENV}: registry {name!r} kind {kind!r} is not one of "
            f"{', '.join(k for k in KINDS if k)}"
        )
    auth = ""
    auth_env = raw.get("auth_env")
    if auth_env is not None:
        if not isinstance(auth_env, str) or not environ.get(auth_env):
            raise ConfigError(
                f"{REGISTRIES_ENV}: registry {name!r} names auth_env {auth_env!r}, which is not set"
            )
        auth = environ[auth_env].strip()
    return Registry(name, url, kind, auth)


def load_registries(environ: Mapping[str, str] | None = None) -> list[Registry]:
    """The configured registries (none when ``VERANDA_REGISTRIES`` is unset), or a
    ``ConfigError`` naming the setting and the entry."""
    env = os.environ if environ is None else environ
    text = env.get(REGISTRIES_ENV, "").strip()
    if not text:
        return []
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{REGISTRIES_ENV} is not JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{REGISTRIES_ENV} must be a JSON object of name -> registry")
    if len(data) > MAX_REGISTRIES:
        raise ConfigError(f"{REGISTRIES_ENV} lists {len(data)} registries (max {MAX_REGISTRIES})")
    return [_registry(name, raw, env) for name, raw in data.items()]
