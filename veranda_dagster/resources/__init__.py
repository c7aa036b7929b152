"""Dagster ConfigurableResources wrapping the clients and the backends, configured from EnvVar."""
