"""The sample repositories declare their setup like any other repository (``.veranda/setup.sh``).

The worker image holds no repository's tools, so each sample says how to get its own; the
setup step runs the script in the sandbox with the deployment's registries behind the proxy.
"""

from __future__ import annotations


def python_tools_setup(modules: dict[str, str]) -> str:
    """A sample repository's ``.veranda/setup.sh``: its Python tools (import name -> package)
    in a venv of its own, installed from the registry the deployment configures, unless the
    machine's Python already has every one of them (a developer checkout of the product)."""
    imports = " ".join(modules)
    packages = " ".join(modules.values())
    return f"""\
#!/bin/sh
# How acme prepares this repository for its tests and linters (the worker image has none of
# them). Run by the product's setup step, and by CI, before anything else.
set -e
have_all=1
for module in {imports}; do
  python3 -c "import $module" 2>/dev/null || have_all=0
done
[ "$have_all" = 1 ] && exit 0
python3 -m venv --without-pip "$VERANDA_ENV/venv"
python3 -m pip --python "$VERANDA_ENV/venv/bin/python" install {packages}
"""
