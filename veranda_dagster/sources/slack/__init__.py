"""Slack, a ticket source plugin: everything about it in one folder (``client``, ``ticket`` the
port adapter, ``resource``, ``sensor``, ``limits``; ``plugin`` declares it)."""
