"""Loopback fakes of Linear, Slack, GitHub and a scripted model, for the demo and tests.

The product reaches these only through its normal configuration (base URLs and tokens).
"""
