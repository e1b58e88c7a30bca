"""The operator's service: one function per operator command (export, erase,
entitle, consolidate, the learned instructions' decisions...), run on a
:class:`Target` store by ``python -m mnemo`` on PostgreSQL and by the server
for ``POST /memory/operator/<name>`` (:mod:`web.operator`) alike.
"""

from mnemo.operator.operations import OPERATIONS, Target

__all__ = ["OPERATIONS", "Target"]
