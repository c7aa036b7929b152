"""Pure domain logic: pydantic models and functions, no Dagster and no httpx imports.

Everything here is unit-testable in milliseconds; the Dagster shell only calls into it.
"""
