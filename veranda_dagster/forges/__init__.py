"""The forges, one folder each: ``forges/<name>/`` holds everything about the forge ``<name>``
(client, code search, URL grammar, limits, token shapes) and ``plugin.py`` declares it.

What every forge shares lives beside them: the declaration's shape and the registry
(``registry``) and the client that routes each call to an org's forge (``routed``).
"""
