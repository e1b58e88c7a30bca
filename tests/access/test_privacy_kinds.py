"""Export and erase (mnemo.access.privacy) reach every kind under a user's
label that mnemo.core.namespaces names, with no list of kinds of their own:
both start from one listing of the user's root, so a new kind needs no edit there."""

from __future__ import annotations

import ast
import inspect

from mnemo.access.privacy import CONTROL_KINDS, aerase_user, aexport_user
from mnemo.audit import Origin
from mnemo.core import AUDIT_HEAD, NOTE_INDEX, namespaces

ADMIN = Origin(source="admin", actor="admin-1")


def user_kinds() -> list[str]:
    """The kinds named between "Kinds under a user's label." and the shared kinds."""
    source = inspect.getsource(namespaces)
    block = source.split("# Kinds under a user's label.")[1].split("# Kinds under the shared root.")[0]
    return [
        getattr(namespaces, node.targets[0].id)  # type: ignore[attr-defined]
        for node in ast.parse(block).body
        if isinstance(node, ast.Assign)
    ]


async def test_every_user_kind_is_exported_and_erased(store, user):
    kinds = user_kinds()
    assert {"profile", "notes", "episodes", "audit", "usage"} <= set(kinds)
    for kind in kinds:
        value = {"text": f"an item of {kind}", "value": f"an item of {kind}", "source": "user_said"}
        await store.aput(user.namespace(kind), "city" if kind == "profile" else "k1", value, index=False)

    exported = await aexport_user(store, user)
    text = repr(exported)
    missing = [kind for kind in kinds if f"an item of {kind}" not in text]
    # Derived kinds: the note index is exported as the notes, the audit head as the audit records.
    assert sorted(missing) == sorted([NOTE_INDEX, AUDIT_HEAD])

    report = await aerase_user(store, user, origin=ADMIN, include_entitlements=True)
    assert set(report["deleted"]) == set(kinds)
    assert report["kept"] == []
    assert set(CONTROL_KINDS) <= set(kinds)
