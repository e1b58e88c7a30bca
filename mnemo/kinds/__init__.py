"""The memory kinds besides notes: the user's profile, episodes, the
learned instructions and their hard rules, shared policies, and the audit
trail every write appends to. Plain functions over ``BaseStore``.
"""

from mnemo.kinds.audit import (
    AUDIT_HEAD,
    AuditAction,
    AuditCheck,
    AuditRecord,
    Origin,
    abatch_audited,
    audit_op,
    averify,
)
from mnemo.kinds.episodes import (
    EPISODE_CHAR_BUDGET,
    EPISODE_LIMIT,
    EPISODE_MIN_SCORE,
    Episode,
    apromote_episode,
    arecord_episode,
    build_episode,
    pick_similar,
    render_episodes,
    similar_ops,
)
from mnemo.kinds.hard_rules import (
    HARD_RULES,
)
from mnemo.kinds.instructions import (
    DEFAULT_ASSISTANT,
    aget_instructions,
    arewrite_from_feedback,
    assistant_of,
)
from mnemo.kinds.policies import (
    aensure_policies,
    asearch_policies,
    aseed_policies,
    load_policy_file,
)
from mnemo.kinds.profile import (
    MAX_HISTORY,
    PROFILE_FIELDS,
    SOURCES,
    Profile,
    ProfileChange,
    ProfileField,
    ResponseStyle,
    Source,
    aget_profile,
    aupdate_profile,
    format_profile,
    normalize_field,
    plan_profile_update,
    profile_audit_ops,
    profile_from_items,
)

__all__ = [
    "DEFAULT_ASSISTANT",
    "abatch_audited",
    "AUDIT_HEAD",
    "AuditCheck",
    "averify",
    "MAX_HISTORY",
    "aensure_policies",
    "aget_instructions",
    "aget_profile",
    "apromote_episode",
    "arecord_episode",
    "arewrite_from_feedback",
    "asearch_policies",
    "aseed_policies",
    "assistant_of",
    "audit_op",
    "AuditAction",
    "AuditRecord",
    "aupdate_profile",
    "build_episode",
    "Episode",
    "EPISODE_CHAR_BUDGET",
    "EPISODE_LIMIT",
    "EPISODE_MIN_SCORE",
    "format_profile",
    "HARD_RULES",
    "load_policy_file",
    "normalize_field",
    "Origin",
    "pick_similar",
    "plan_profile_update",
    "Profile",
    "profile_audit_ops",
    "PROFILE_FIELDS",
    "profile_from_items",
    "ProfileChange",
    "ProfileField",
    "render_episodes",
    "ResponseStyle",
    "similar_ops",
    "Source",
    "SOURCES",
]
