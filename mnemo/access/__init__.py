"""Who may do what: bearer tokens, entitlements and quotas, the user's word
before a tool call ends memory (consent), and a user's rights over their data
(export, erase).
"""

from mnemo.access.consent import consent_refusal, declare, effect_of, held
from mnemo.access.entitlements import (
    aadmit,
    aavailable_tools,
    aclear_entitlement,
    aget_entitlements,
    aset_entitlement,
    ausage_today,
)
from mnemo.access.imports import aimport_user
from mnemo.access.migrate import amigrate_langgraph, namespace_of, source_items
from mnemo.access.privacy import (
    aerase_threads,
    aerase_user,
    aexport_user,
)
from mnemo.access.tokens import (
    DEV_SECRET_PATH,
    SECRET_ENV,
    caller_from_authorization,
    check_secret,
    ensure_dev_secret,
    mint_token,
    parse_ttl,
    secret_from_env,
)

__all__ = [
    "DEV_SECRET_PATH",
    "SECRET_ENV",
    "aadmit",
    "aavailable_tools",
    "aclear_entitlement",
    "aerase_threads",
    "aerase_user",
    "aexport_user",
    "aget_entitlements",
    "aimport_user",
    "amigrate_langgraph",
    "aset_entitlement",
    "ausage_today",
    "caller_from_authorization",
    "check_secret",
    "consent_refusal",
    "declare",
    "effect_of",
    "ensure_dev_secret",
    "held",
    "mint_token",
    "namespace_of",
    "parse_ttl",
    "secret_from_env",
    "source_items",
]
