"""Episodic memory: successful past cases, kept as few-shot examples for
similar requests (promoted by a user's feedback, screened for personal data).
Plain functions over ``BaseStore``.
"""

from mnemo.episodes.cases import (
    EPISODE_CHAR_BUDGET,
    EPISODE_INDEX,
    EPISODE_LIMIT,
    EPISODE_MIN_SCORE,
    EPISODES_PART,
    Episode,
    apromote_episode,
    arecord_episode,
    build_episode,
    check_episode,
)

__all__ = [
    "EPISODES_PART",
    "EPISODE_CHAR_BUDGET",
    "EPISODE_INDEX",
    "EPISODE_LIMIT",
    "EPISODE_MIN_SCORE",
    "Episode",
    "apromote_episode",
    "arecord_episode",
    "build_episode",
    "check_episode",
]
