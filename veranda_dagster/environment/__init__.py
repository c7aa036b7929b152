"""A repository's own environment: declared by the repository, prepared once per lockfile.

The worker image holds the product, the vendor CLIs, the sandbox and git; everything a
repository's build, lint and tests need arrives through its setup step (``setup.py``), run in
the sandbox with network only to the deployment's package registries (``registry_proxy.py``,
read-only, private credentials added outside), cached per repository and lockfile hash, and
shown read-only to every later command of the ticket (``active.py``).
"""
