"""The build stage: red tests, the patch, and the repository's own validation, each a pure function
of its inputs and ports.
"""
