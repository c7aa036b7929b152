"""Intake and repo detection: a ticket read to its bounds, the org's catalog and the evidence that
picks the repository.
"""
