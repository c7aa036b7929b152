"""The shared core every phase stands on: the phase values and registry, bounds, errors, the
scrubber and the ports (agent seat, ticket source, forge).
"""
