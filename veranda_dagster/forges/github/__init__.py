"""GitHub, a forge plugin: everything about it in one folder (``client``, ``shapes`` its REST
vocabulary, ``code_search``, ``links`` its URL grammar, ``limits``; ``plugin`` declares it)."""
