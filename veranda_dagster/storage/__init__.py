"""Durable storage for asset values: JSON on a filesystem by default, PostgreSQL at scale."""

from veranda_dagster.storage.io_manager import ValueStore, VerandaIOManager

__all__ = ["ValueStore", "VerandaIOManager"]
