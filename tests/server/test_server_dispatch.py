"""The dispatcher in-process: a handler's unexpected exception answers -32603 with no detail;
the depth check's shortcut never lets a too-deep request through."""

from __future__ import annotations

import asyncio
from pathlib import Path

import orjson
from hypothesis import given
from hypothesis import strategies as st

from sessionforest import Forest
from sessionforest.server.context import Client, Server
from sessionforest.server.limits import depth_exceeds, may_nest
from sessionforest.server.registry import Group, NoParams, Registry
from sessionforest.server.rpc import Dispatcher


def test_unexpected_exception_is_an_internal_error_without_traceback(tmp_path: Path) -> None:
    group = Group("test")

    @group.method("test/broken", NoParams, None, "read")
    def broken(call: object, params: object) -> None:
        raise RuntimeError("secret detail /home/user/path")

    server = Server(Forest.open(tmp_path / "s.db"))
    out: list[bytes] = []
    try:
        message = b'{"jsonrpc": "2.0", "method": "test/broken", "id": 9}'
        dispatcher = Dispatcher(server, Registry(group))
        asyncio.run(dispatcher.handle(message, Client("test"), out.append))
    finally:
        server.close()
    reply = orjson.loads(out[0])
    assert reply["id"] == 9 and reply["error"]["code"] == -32603
    assert "secret" not in out[0].decode() and "Traceback" not in out[0].decode()


@given(
    st.recursive(
        st.none() | st.text('[]{}x"'),
        lambda c: st.lists(c) | st.dictionaries(st.text("[{x"), c),
        max_leaves=40,
    ),
    st.integers(0, 12),
)
def test_a_text_with_few_brackets_never_nests_too_deep(value: object, limit: int) -> None:
    # may_nest answers most requests without walking them: it must never say no wrongly.
    text = orjson.dumps(value)
    if depth_exceeds(orjson.loads(text), limit):
        assert may_nest(text, limit) and may_nest(text.decode(), limit)
