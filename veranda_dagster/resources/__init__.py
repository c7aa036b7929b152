"""Dagster ConfigurableResources wrapping the clients and the vendors, configured from EnvVar."""
