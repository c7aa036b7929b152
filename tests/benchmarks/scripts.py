"""The benchmark scripts, loaded for their tests: ``benchmarks/`` is a script directory run as
``python benchmarks/<name>.py``, not a package, so its modules are loaded from their files."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def load_script(name: str) -> ModuleType:
    """Load ``benchmarks/<name>.py`` under a private name (its own imports of sibling scripts
    work because the script puts its directory on ``sys.path``)."""
    spec = importlib.util.spec_from_file_location(
        f"_bench_{name}", ROOT / "benchmarks" / f"{name}.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
