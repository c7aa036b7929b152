"""The orgs file (``VERANDA_ORGS``), read once at load and checked against this build.

Its forges must be registered forge rows and its sources registered ticket sources, so a typo
is a ``ConfigError`` when the code location loads, naming the org and the choices, instead of
a ticket failing hours later. Without the variable there is no orgs file: one forge
(``VERANDA_FORGE``) and one catalog (``VERANDA_CATALOG``) serve everything, as before.
"""

from __future__ import annotations

from collections.abc import Mapping

from veranda_dagster.clients.forges import FORGES
from veranda_dagster.domain.orgs import OrgsConfig, load_orgs
from veranda_dagster.resources._env import setting
from veranda_dagster.sources import source_names

ORGS_ENV = "VERANDA_ORGS"


def orgs_from_env(environ: Mapping[str, str] | None = None) -> OrgsConfig | None:
    path = setting(ORGS_ENV, "", environ)
    if not path:
        return None
    orgs = load_orgs(path)
    orgs.check_names(FORGES, source_names(), f"{ORGS_ENV} {path}")
    return orgs
