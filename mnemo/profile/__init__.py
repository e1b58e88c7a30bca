"""The user's profile: one merged record (name, city, language, answer
style), written field by field with its history and provenance, never
clobbered by a value the user did not state. Plain functions over ``BaseStore``.
"""

from mnemo.profile.address import house_address, in_address, is_no_town, is_street_address
from mnemo.profile.languages import LANGUAGE_NAMES, language_code
from mnemo.profile.record import (
    FIELD_CHOICES,
    FIELD_MAX_CHARS,
    FIELD_PROMPTS,
    MAX_FIELD_CHARS,
    MAX_HISTORY,
    PROFILE_FIELDS,
    PROFILE_PART,
    SAID_FIELDS,
    STYLE_WORDS,
    HistoryEntry,
    Profile,
    ProfileChange,
    ProfileEntry,
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

__all__ = [
    "FIELD_CHOICES",
    "FIELD_MAX_CHARS",
    "FIELD_PROMPTS",
    "LANGUAGE_NAMES",
    "MAX_FIELD_CHARS",
    "MAX_HISTORY",
    "PROFILE_FIELDS",
    "PROFILE_PART",
    "SAID_FIELDS",
    "STYLE_WORDS",
    "HistoryEntry",
    "Profile",
    "ProfileChange",
    "ProfileEntry",
    "ProfileField",
    "aget_profile",
    "aprofile_ops",
    "aupdate_profile",
    "format_profile",
    "house_address",
    "in_address",
    "is_no_town",
    "is_street_address",
    "language_code",
    "normalize_field",
    "plan_profile_update",
    "profile_audit_ops",
    "profile_from_items",
]
