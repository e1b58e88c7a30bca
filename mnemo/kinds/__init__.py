"""The memory kinds besides notes: the user's profile, episodes, the
learned instructions (the assistant's, approved by an admin; each user's own;
proposals) and their hard rules, and shared policies (the audit trail they
write is :mod:`mnemo.audit`). Plain functions over ``BaseStore``.
"""

from mnemo.kinds.episodes import (
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
from mnemo.kinds.hard_rules import (
    HARD_RULES,
)
from mnemo.kinds.instructions import (
    DEFAULT_ASSISTANT,
    alist_every_version,
    alist_versions,
    aload_learned,
    amigrate_legacy,
    arollback,
    assistant_of,
)
from mnemo.kinds.own_instructions import (
    alearn_for_user,
    check_own_item,
)
from mnemo.kinds.part import Ask, Block, Part
from mnemo.kinds.policies import (
    aensure_policies,
    asearch_policies,
    aseed_policies,
    load_policy_file,
)
from mnemo.kinds.profile import (
    FIELD_CHOICES,
    FIELD_MAX_CHARS,
    FIELD_PROMPTS,
    MAX_FIELD_CHARS,
    MAX_HISTORY,
    PROFILE_FIELDS,
    PROFILE_PART,
    SAID_FIELDS,
    Profile,
    ProfileChange,
    ProfileField,
    aget_profile,
    aprofile_ops,
    aupdate_profile,
    format_profile,
    normalize_field,
    plan_profile_update,
    profile_audit_ops,
    profile_from_items,
)
from mnemo.kinds.proposals import (
    aapprove,
    alist_proposals,
    apropose,
    areject,
)

__all__ = [
    "DEFAULT_ASSISTANT",
    "EPISODES_PART",
    "EPISODE_CHAR_BUDGET",
    "EPISODE_INDEX",
    "EPISODE_LIMIT",
    "EPISODE_MIN_SCORE",
    "FIELD_CHOICES",
    "FIELD_MAX_CHARS",
    "FIELD_PROMPTS",
    "HARD_RULES",
    "MAX_FIELD_CHARS",
    "MAX_HISTORY",
    "PROFILE_FIELDS",
    "PROFILE_PART",
    "SAID_FIELDS",
    "Ask",
    "Block",
    "Episode",
    "Part",
    "Profile",
    "ProfileChange",
    "ProfileField",
    "aapprove",
    "aensure_policies",
    "aget_profile",
    "alearn_for_user",
    "alist_every_version",
    "alist_proposals",
    "alist_versions",
    "aload_learned",
    "amigrate_legacy",
    "aprofile_ops",
    "apromote_episode",
    "apropose",
    "arecord_episode",
    "areject",
    "arollback",
    "asearch_policies",
    "aseed_policies",
    "assistant_of",
    "aupdate_profile",
    "build_episode",
    "check_episode",
    "check_own_item",
    "format_profile",
    "load_policy_file",
    "normalize_field",
    "plan_profile_update",
    "profile_audit_ops",
    "profile_from_items",
]
