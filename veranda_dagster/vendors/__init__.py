"""Vendor coding CLIs behind a three-operation port; tiers, measured health, fallback and cost.

Plain Python: no Dagster import. Nothing above this package knows which vendor ran.
"""
