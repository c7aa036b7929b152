"""Acme Forge, a worked example of a forge plugin: copy this folder to
``veranda_dagster/forges/<name>/`` (and rename ``acmeforge`` everywhere in it)."""
