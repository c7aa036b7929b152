"""``DAGSTER_HOME`` checked before Dagster reads it: a FIFO or ``/dev/zero`` as ``dagster.yaml``
would hang or fill memory inside Dagster's own loader, and a bad path ends in a long traceback."""

from __future__ import annotations

import os
from pathlib import Path

from veranda_dagster.domain.core.bounds import MAX_CONFIG_FILE_BYTES
from veranda_dagster.domain.core.errors import ConfigError
from veranda_dagster.domain.core.input_files import parse_document, read_input_text


def check_dagster_home(environ: dict[str, str] | None = None) -> Path:
    home = (os.environ if environ is None else environ).get("DAGSTER_HOME", "")
    if not home:
        raise ConfigError("DAGSTER_HOME is not set: point it at the instance's folder")
    path = Path(home)
    if not path.is_absolute():
        raise ConfigError(f"DAGSTER_HOME {home}: must be an absolute path")
    if not path.is_dir():
        raise ConfigError(f"DAGSTER_HOME {home}: is not a directory")
    config = path / "dagster.yaml"
    if config.exists() or config.is_symlink():
        text = read_input_text(
            config,
            what="dagster.yaml",
            max_bytes=MAX_CONFIG_FILE_BYTES,
            error=ConfigError,
            allow_empty=True,
        )
        parse_document(text, where=f"dagster.yaml {config}", as_json=False, error=ConfigError)
    return path
