"""Acme Desk, a worked example of a ticket source plugin: copy this folder to
``veranda_dagster/sources/<name>/`` (and rename ``acmedesk`` everywhere in it).

Acme Desk is a made-up helpdesk with a small REST API: ``GET /tickets?since=<iso>`` lists the
tickets assigned to the bot (each with its ``key``, ``DESK-42``), ``GET /tickets/<key>`` reads
one, ``GET``/``POST /tickets/<key>/comments`` read and write its comments. One folder holds
everything about it: ``client`` (the API), ``ticket`` (the port: key grammar, fetch, post once),
``resource`` (its settings and secret), ``sensor`` (its intake) and ``plugin`` (the declaration
the registry reads).
"""
