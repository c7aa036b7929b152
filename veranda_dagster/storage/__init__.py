"""Durable storage for asset values: JSON on a filesystem by default, PostgreSQL at scale."""
