"""Thin httpx clients for Linear, Slack and GitHub.

Each takes a base URL and an injectable ``transport`` (or ready ``httpx.Client``): tests pass
``httpx.MockTransport`` or point the base URL at a loopback fake, and exercise the real request
building and response parsing.
"""
