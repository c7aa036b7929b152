"""Jira, a ticket source plugin: everything about it in one folder (``client``, ``adf`` its rich
text, ``ticket`` the port adapter, ``resource``, ``sensor``; ``plugin`` declares it)."""
