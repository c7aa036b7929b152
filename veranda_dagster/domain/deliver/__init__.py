"""The deliver stage: the pull request, self-review rounds, one grounded CI repair and revisions on
human comments.
"""
