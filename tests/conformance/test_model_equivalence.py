"""The durable forest and the in-memory Session agree on every tree operation.

Hypothesis drives the same random append/seek/checkpoint programs through both;
the Session is the reference model (a port of the Rust tree). Each program runs
in a session of its own in one store per test (a store per program spent most
of the time migrating), so every check also holds beside the earlier sessions.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessionforest import Forest, Session

Op = tuple[str, Any]
ops = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.text(min_size=1, max_size=12)),
        st.tuples(st.just("seek"), st.integers(min_value=0, max_value=10_000)),
        st.tuples(st.just("checkpoint"), st.sampled_from(["a", "b", "c"])),
        st.tuples(st.just("seek_checkpoint"), st.sampled_from(["a", "b", "c"])),
    ),
    max_size=40,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(program=ops)
def test_forest_matches_the_session_model(forest: Forest, program: list[Op]) -> None:
    model = Session()
    ids: dict[str, str] = {}  # model id -> forest id
    sid = forest.create_session()
    for op, arg in program:
        if op == "append":
            message = {"content": [{"type": "text", "text": arg}]}
            ids[model.append(message)] = forest.append(sid, "user.message", message).id
        elif op == "seek" and len(model):
            target = model.entries()[arg % len(model)].id
            model.seek(target)
            forest.move_head(sid, ids[target])
        elif op == "checkpoint" and model.head is not None:
            # The model labels its head; the forest records a checkpoint entry
            # under the head. Mirror that as an extra model entry so the trees align.
            entry = forest.checkpoint(sid, arg)
            ids[model.append({"checkpoint": arg})] = entry.id
            model.checkpoint(arg)
        elif op == "seek_checkpoint":
            labelled = [e for e in model.entries() if e.label == arg]
            if labelled:
                model.seek_checkpoint(arg)
                assert forest.seek_checkpoint(sid, arg).id == ids[model.head or ""]
    assert [ids[i] for i in model.path_ids()] == [e.id for e in forest.active_path(sid)]
    assert [ids[i] for i in model.branch_tips()] == [e.id for e in forest.tips(sid)]
    assert forest.head(sid) == (ids[model.head] if model.head else None)
    entries = forest.entries(sid)
    assert [e.sequence for e in entries] == list(range(1, len(model) + 1))
    assert forest.check().ok
