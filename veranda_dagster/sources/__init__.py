"""The ticket sources, one folder each: ``sources/<name>/`` holds everything about the source
``<name>`` (its client, port adapter, resource, sensor and limits) and ``plugin.py`` declares it.

What every source shares lives beside them: the registry (``registry``) that derives the
routing, the listed sensors and the secrets from the declarations, the intake sensor's walk
(``intake``, ``dedup``, ``sensor_status``), the resource contract (``resource``) and the channel
that posts back (``channel``). ``source_names`` only lists the folders, without importing them
(or Dagster), so ``veranda detect-repo`` can check a ticket file's source at the cost of a
directory listing.
"""

from __future__ import annotations

import pkgutil


def source_names() -> tuple[str, ...]:
    """Every ticket source this build knows, by name, sorted (a ticket naming another one is
    refused); the registry checks that each folder's plugin declares its own name."""
    return tuple(sorted(m.name for m in pkgutil.iter_modules(__path__) if m.ispkg))
