"""Which ticket sources a deployment takes tickets from: ``VERANDA_SOURCES``, the older switches,
and the orgs file, read together in one place.

Above the source registry, because the orgs file (``resources.orgs``) is checked against both
the sources and the forges; the registry itself only knows what each source declares.
"""

from __future__ import annotations

from collections.abc import Mapping

from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.orgs import OrgsConfig
from veranda_dagster.resources.orgs import ORGS_ENV, orgs_from_env, sources_missing_from
from veranda_dagster.settings import listing, setting
from veranda_dagster.sources.registry import SOURCES, sources

SOURCES_ENV = "VERANDA_SOURCES"
"""Comma list of the sources a deployment takes tickets from (default: the on-by-default ones)."""


def requested_sources(environ: Mapping[str, str] | None = None) -> list[str]:
    """``VERANDA_SOURCES`` as written (lowercased, each once), plus every source whose
    ``alias_env`` is ``1``; unknown names are kept, for the caller to refuse or show. Unset,
    it is every source the orgs file's orgs take tickets from (``VERANDA_ORGS``), else the
    on-by-default sources; an orgs file that does not load leaves that default to
    ``enabled_sources``, which refuses it."""
    return _requested(environ, _read_orgs(environ)[0])


def enabled_sources(environ: Mapping[str, str] | None = None) -> list[str]:
    """The requested sources; an unknown name is a ``ConfigError`` naming the choices (raised
    where the Definitions are built, so a typo stops the code location from loading), and so
    is an orgs file that does not load, or whose orgs take tickets from a source left out."""
    orgs, unreadable = _read_orgs(environ)
    names = _requested(environ, orgs)
    unknown = [n for n in names if n not in SOURCES]
    if unknown:
        raise ConfigError(
            f"{SOURCES_ENV}: unknown source(s) {', '.join(unknown)}; "
            f"choose from {', '.join(i.name for i in sources())}"
        )
    if unreadable is not None:
        raise unreadable
    missing = sources_missing_from(names, orgs) if orgs else []
    if missing:
        raise ConfigError(
            f"{ORGS_ENV}: an org takes tickets from {', '.join(missing)}, which {SOURCES_ENV} "
            "does not enable (add it there, or leave it unset to enable the orgs' sources)"
        )
    return names


def _requested(environ: Mapping[str, str] | None, orgs: OrgsConfig | None) -> list[str]:
    default = ",".join(orgs.sources() if orgs else [i.name for i in sources() if i.on_by_default])
    names = [n.lower() for n in listing(SOURCES_ENV, default, environ)]
    names += [i.name for i in sources() if i.alias_env and setting(i.alias_env, "", environ) == "1"]
    return list(dict.fromkeys(names))


def _read_orgs(
    environ: Mapping[str, str] | None,
) -> tuple[OrgsConfig | None, ConfigError | None]:
    """The orgs file, read once per call that needs it: ``(orgs, None)``, ``(None, None)``
    without one, or ``(None, why)`` when it does not load, for the caller to show or raise."""
    try:
        return orgs_from_env(environ), None
    except ConfigError as exc:
        return None, exc
