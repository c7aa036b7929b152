"""The ticket sources, one module each: ``sources/<name>.py`` registers the source ``<name>``.

A module here is a source's whole declaration (see ``registry``); what every source shares,
from the routing of a key to the sensors the Definitions list, is derived from those
declarations. ``source_names`` only lists the modules, without importing them (or Dagster), so
``veranda detect-repo`` can check a ticket file's source at the cost of a directory listing.
"""

from __future__ import annotations

import pkgutil

REGISTRY_MODULE = "registry"


def source_names() -> tuple[str, ...]:
    """Every ticket source this build knows, by name, sorted (a ticket naming another one is
    refused); ``registry.load_builtin`` checks that each module registers its own name."""
    return tuple(
        sorted(
            m.name
            for m in pkgutil.iter_modules(__path__)
            if not m.name.startswith("_") and m.name != REGISTRY_MODULE
        )
    )
