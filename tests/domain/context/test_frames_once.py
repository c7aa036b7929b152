"""A file with several traceback frames counts once, at its strongest frame: a traceback that
passes through one file's helpers four times is one report of that file and must not outweigh
the deepest frame of another (docs/retrieval.md, twelfth round); every frame stays an anchor."""

from __future__ import annotations

import pytest

from veranda_dagster.domain.context.pack_signals import (
    FRAME_DECAY,
    FRAME_WEIGHT,
    FrameAnchor,
    TicketEvidence,
)
from veranda_dagster.domain.context.retrieval import rank_files


def _frames(*paths: str) -> list[FrameAnchor]:
    """Frames deepest first, each outer one ``FRAME_DECAY`` of the one below, as gathered."""
    return [
        FrameAnchor(path, 10 * (i + 1), FRAME_WEIGHT * FRAME_DECAY**i)
        for i, path in enumerate(paths)
    ]


@pytest.mark.parametrize(
    ("paths", "first"),
    [
        # the deepest frame in utils, four outer frames through the caller's helpers
        (("pkg/utils.py", "pkg/caller.py", "pkg/caller.py", "pkg/caller.py", "pkg/caller.py"),
         "pkg/utils.py"),
        (("pkg/caller.py", "pkg/utils.py", "pkg/utils.py", "pkg/utils.py"), "pkg/caller.py"),
        # twin: a file with several frames is not pushed down for them when it has the deepest
        (("pkg/caller.py", "pkg/utils.py", "pkg/caller.py", "pkg/caller.py"), "pkg/caller.py"),
    ],
)  # fmt: skip
def test_a_files_frames_count_once(paths, first):
    ranked = rank_files([], TicketEvidence(frames=_frames(*paths)))
    assert ranked[0].path == first


def test_every_frame_is_still_an_anchor_and_the_strongest_counts():
    frames = _frames("pkg/utils.py", "pkg/caller.py", "pkg/caller.py", "pkg/caller.py")
    ranked = {ev.path: ev for ev in rank_files([], TicketEvidence(frames=frames))}
    caller = ranked["pkg/caller.py"]
    assert sorted(caller.lines) == [20, 30, 40] and caller.strong == {20, 30, 40}
    assert caller.score == pytest.approx(FRAME_WEIGHT * FRAME_DECAY)
    assert ranked["pkg/utils.py"].score == pytest.approx(FRAME_WEIGHT)
