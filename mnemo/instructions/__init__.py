"""Procedural memory: the assistant's learned instructions (versions an admin
approves, rollback), each user's own instructions, proposals for everyone,
and the hard rules every rewrite passes. Plain functions over ``BaseStore``.
"""

from mnemo.instructions.assistant import (
    DEFAULT_ASSISTANT,
    Learned,
    alist_every_version,
    alist_versions,
    aload_learned,
    amigrate_legacy,
    arollback,
    assistant_of,
)
from mnemo.instructions.hard_rules import (
    HARD_RULES,
)
from mnemo.instructions.own import (
    alearn_for_user,
    check_own_item,
)
from mnemo.instructions.proposals import (
    aapprove,
    alist_proposals,
    apropose,
    areject,
)

__all__ = [
    "DEFAULT_ASSISTANT",
    "HARD_RULES",
    "Learned",
    "aapprove",
    "alearn_for_user",
    "alist_every_version",
    "alist_proposals",
    "alist_versions",
    "aload_learned",
    "amigrate_legacy",
    "apropose",
    "areject",
    "arollback",
    "assistant_of",
    "check_own_item",
]
