import pytest
from langgraph.store.base import InvalidNamespaceError
from langgraph.store.memory import InMemoryStore

from mnemo import InvalidInputError, MissingUserError, User
from mnemo.core import RESERVED_ROOTS, Caller, InvalidTokenError, resolve_user, user_label
from nodes.context import current_user


@pytest.mark.parametrize("uid", ["u_42", "alice", "A-b_c:d@e+f", "x" * 128])
def test_valid_ids_are_used_verbatim(uid):
    assert user_label(uid) == uid


@pytest.mark.parametrize("uid", ["zhou.wang@x.com", "小周", "has space", "x" * 129, "langgraph", "org", "ORG", "agent"])
def test_invalid_ids_are_mapped_deterministically_to_valid_labels(uid):
    label = user_label(uid)
    assert label != uid
    assert label == user_label(uid)  # deterministic
    assert label.startswith("~") and len(label) == 33
    # and the store accepts it (the raw id would be rejected or collide with shared data)
    InMemoryStore().put((label, "profile"), "name", {"value": "x"})


def test_mapped_labels_never_collide_with_verbatim_ids():
    mapped = user_label("zhou.wang@x.com")
    assert user_label(mapped) != mapped  # '~' is outside the verbatim alphabet
    assert user_label("a.b") != user_label("a.c")


def test_raw_email_would_be_rejected_by_the_store():
    with pytest.raises(InvalidNamespaceError):
        InMemoryStore().put(("zhou.wang@x.com", "profile"), "k", {"v": 1})


@pytest.mark.parametrize("uid", ["", "   ", None])
def test_missing_user_is_a_clear_error(uid):
    with pytest.raises(MissingUserError, match="user_id"):
        user_label(uid)


def test_reserved_roots_cover_shared_namespaces():
    assert "org" in RESERVED_ROOTS and "langgraph" in RESERVED_ROOTS


def test_resolve_user_from_context():
    user = current_user({"user_id": "u1"}, {"configurable": {}})
    assert user == User(id="u1", label="u1", authenticated=False)


def test_authenticated_identity_wins_over_client_user_id():
    config = {
        "configurable": {
            "langgraph_auth_user_id": "real-user",
            "langgraph_auth_user": {"identity": "real-user", "role": "user"},
        }
    }
    user = current_user({"user_id": "someone-else"}, config)
    assert user.id == "real-user" and user.authenticated


def test_an_identity_mnemo_did_not_issue_fails_the_run():
    config = {"configurable": {"langgraph_auth_user_id": "x", "langgraph_auth_user": {"identity": "x"}}}
    with pytest.raises(InvalidTokenError, match="not issued by mnemo"):
        current_user({"user_id": "u1"}, config)


def test_unauthenticated_placeholder_and_studio_user_do_not_override():
    noauth = {"configurable": {"langgraph_auth_user_id": ""}}
    assert current_user({"user_id": "u1"}, noauth).id == "u1"
    studio = {
        "configurable": {
            "langgraph_auth_user_id": "langgraph-studio-user",
            "langgraph_auth_user": {"kind": "StudioUser", "identity": "langgraph-studio-user"},
        }
    }
    assert current_user({"user_id": "u1"}, studio).id == "u1"


def test_resolve_user_without_any_id_fails():
    with pytest.raises(MissingUserError):
        current_user({"user_id": ""}, {"configurable": {"langgraph_auth_user_id": ""}})


def test_user_namespaces_put_the_user_first():
    user = User.of("u1")
    assert user.namespace("notes") == ("u1", "notes")
    assert user.root == ("u1",)


def test_an_authenticated_user_cannot_be_redirected_but_an_admin_acts_for_the_named_user():
    user = {
        "configurable": {"langgraph_auth_user_id": "bob", "langgraph_auth_user": {"identity": "bob", "role": "user"}}
    }
    assert current_user({"user_id": "alice"}, user).id == "bob"
    admin = {
        "configurable": {
            "langgraph_auth_user_id": "backend",
            "langgraph_auth_user": {"identity": "backend", "role": "admin"},
        }
    }
    assert current_user({"user_id": "alice"}, admin) == User(id="alice", label="alice", authenticated=True)
    with pytest.raises(MissingUserError):
        current_user({"user_id": ""}, admin)


def test_one_rule_of_who_acts_for_whom():
    """resolve_user is the rule the graph, the REST handlers and the custom routes share."""
    assert resolve_user(None, "alice") == User.of("alice")
    assert resolve_user(Caller("bob"), "alice") == User.of("bob", authenticated=True)
    assert resolve_user(Caller("bob"), None) == User.of("bob", authenticated=True)
    assert resolve_user(Caller("backend", "admin"), "alice") == User.of("alice", authenticated=True)
    with pytest.raises(MissingUserError):
        resolve_user(Caller("backend", "admin"), None)
    with pytest.raises(MissingUserError):
        resolve_user(None, "")


def test_a_user_id_that_is_not_text_gets_a_precise_error():
    from mnemo import InvalidInputError

    with pytest.raises(InvalidInputError, match="a user id is a string, got int"):
        user_label(123)
    with pytest.raises(InvalidInputError, match="unpaired UTF-16 surrogate"):
        user_label("zhou\ud800")
    with pytest.raises(InvalidInputError, match="got int"):
        current_user({"user_id": 123}, {})


def test_a_refused_user_id_says_what_to_send():
    with pytest.raises(MissingUserError) as missing:
        User.of("  ")
    assert str(missing.value) == (
        "No user id: pass context={'user_id': ...} with the run (mnemo has no shared default user)."
    )
    with pytest.raises(InvalidInputError) as surrogate:
        User.of("u_\ud800")
    assert str(surrogate.value) == (
        "the user id contains an unpaired UTF-16 surrogate, which is not text; send valid Unicode"
    )


def test_inside_a_run_the_caller_comes_from_the_runs_own_config():
    from langchain_core.runnables import RunnableLambda

    config = {
        "configurable": {
            "langgraph_auth_user_id": "real-user",
            "langgraph_auth_user": {"identity": "real-user", "role": "user"},
        }
    }
    named = RunnableLambda(lambda _: current_user({"user_id": "someone-else"})).invoke(None, config=config)
    unnamed = RunnableLambda(lambda _: current_user(None)).invoke(None, config=config)  # no context at all
    assert named == unnamed == User(id="real-user", label="real-user", authenticated=True)
