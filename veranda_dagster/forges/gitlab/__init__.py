"""GitLab, a forge plugin: everything about it in one folder (``base``, ``client``, ``ci``,
``code_search``, ``links`` its URL grammar; ``plugin`` declares it)."""
