"""``veranda catalog``: an org's repository catalog built from its forge, as one JSON object.

Repository detection chooses from a closed catalog; writing it by hand goes stale at the first
new repository or rename. This asks the org's forge (the orgs file's connection for the org, else
the deployment's forge) for every repository of the org (a GitLab group's subgroups included),
merges the hand-kept file's aliases and service names (``--hand-kept``, which win over the
forge's description), drops archived repositories, keeps a former name only if the forge
still serves it as that repository, and reads each repository's vocabulary (its package, import
and command names, hooks, actions, public names) from its files (``--no-vocabulary`` skips it).
The catalog goes to ``--out`` (replaced whole) or stdout; what the build left out or dropped
goes to stderr, a line each.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--org", required=True, help="the org (GitHub org, GitLab group)")
    parser.add_argument("--hand-kept", help="CATALOG.json/.yaml with aliases and service names")
    parser.add_argument("--out", help="write the catalog here (default: stdout)")
    parser.add_argument(
        "--include-archived", action="store_true", help="keep archived repositories"
    )
    parser.add_argument(
        "--no-vocabulary",
        action="store_true",
        help="do not read each repository's files for its vocabulary (keep the hand-kept one)",
    )


def run(args: argparse.Namespace) -> int:
    from veranda_dagster.domain.core.errors import ConfigError
    from veranda_dagster.domain.intake.catalog import load_catalog
    from veranda_dagster.domain.intake.catalog_builder import build_catalog_from_forge
    from veranda_dagster.resources.forge import ForgeResource
    from veranda_dagster.resources.orgs import orgs_from_env
    from veranda_dagster.storage.value_stores import write_atomically

    org = args.org.strip("/")
    hand_kept = load_catalog(args.hand_kept) if args.hand_kept else None
    if hand_kept is not None and not hand_kept.is_org(org):
        raise ConfigError(f"--hand-kept {args.hand_kept} is the {hand_kept.org} catalog, not {org}")
    out = Path(args.out) if args.out else None
    if out is not None and not out.parent.is_dir():
        raise ConfigError(f"--out {out}: {out.parent} is not a directory")
    configured = ForgeResource.from_env(orgs=orgs_from_env())
    forge = configured.process_config_and_initialize().for_owner(org)  # tokens read from env
    if not forge.configured:
        raise ConfigError(
            f"the {forge.forge} forge for {org} is not configured: set {forge.token_env}"
        )
    client = forge.client()
    try:
        catalog, notes = build_catalog_from_forge(
            org,
            client,
            hand_kept,
            include_archived=args.include_archived,
            vocabulary=not args.no_vocabulary,
        )
    finally:
        client.close()
    text = json.dumps(catalog.model_dump(exclude_defaults=True), indent=2, ensure_ascii=False)
    if out is None:
        sys.stdout.write(text + "\n")
    else:
        write_atomically(out, text + "\n")  # a detection never reads half a catalog
    for note in notes:
        print(f"veranda catalog: {note}", file=sys.stderr)
    return 0
