"""The root of the product's exception tree, below every layer (the sandbox included).

``domain.core.errors`` grows the rest of the tree on it; the sandbox, the lowest layer, raises a
``ConfigError`` (a sandbox that cannot run is a deployment's configuration), and a caller
decides retryability by type without caring which layer raised.
"""


class VerandaError(Exception):
    """Root of every error this product raises on purpose."""

    retryable: bool = False


class ConfigError(VerandaError):
    """Configuration is missing or malformed; the message names the setting."""
