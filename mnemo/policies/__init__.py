"""Shared knowledge: the organisation's policies, seeded from a file, read
by every user and written by none. Plain functions over ``BaseStore``.
"""

from mnemo.policies.shared import (
    aensure_policies,
    asearch_policies,
    aseed_policies,
    load_policy_file,
)

__all__ = ["aensure_policies", "asearch_policies", "aseed_policies", "load_policy_file"]
