"""The work loop, one module per phase, each a pure function of its inputs and its ports.

``red_tests`` → ``patch`` (with the separate ``test_writer`` seat) → ``pull_request`` →
``review`` → ``ci``, and ``feedback`` downstream of the PR. Phases talk to the model only
through ``AgentPort`` (a role and a tier, never a vendor), to the forge only through ``Forge``,
and to the repository through ``Workspace`` and ``validation``; none imports dagster or httpx.
"""
