"""The audit trail every memory write appends to: the chain of records, its
head, and where a write comes from (:class:`Origin`, the :data:`Source` of a
value). Below the memory kinds and notes, which all write it.
"""

from mnemo.audit.chain import (
    AuditAction,
    AuditRecord,
    abatch_audited,
    audit_op,
    averify,
    head_op,
)
from mnemo.audit.origin import SOURCES, Origin, Source, default_origin, stated

__all__ = [
    "SOURCES",
    "AuditAction",
    "AuditRecord",
    "Origin",
    "Source",
    "abatch_audited",
    "audit_op",
    "averify",
    "default_origin",
    "head_op",
    "stated",
]
