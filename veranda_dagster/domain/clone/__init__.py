"""The per-ticket clone: how the product runs git in a repository it does not trust, moves objects
with the forge, and reads the clone's files as data.
"""
