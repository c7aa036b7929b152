"""The work stage (the phase registry's ``build`` group): red tests, the patch and the
repository's own validation, each a pure function of its inputs and its ports.

Named ``work``, not ``build``: tools treat a ``build/`` folder as generated output (ruff and
pytest skip it by default).
"""
