"""Fuzzing every method's params against a real server: only JSON-RPC answers come back
(a result or an error the spec or the error families define), never a 500, an internal
error or a traceback."""

from __future__ import annotations

from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessionforest.kinds import KINDS
from sessionforest.server.api import METHODS as REGISTRY

from .conftest import TEXT, Running, call

ALLOWED = {-32700, -32600, -32601, -32602, -32001, -32002, -32003, -32004, -32005}

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=10,
)


def _params(method: str, ids: list[str]) -> st.SearchStrategy[Any]:
    fields = list(REGISTRY[method].params.__struct_fields__)
    hints = {
        "session_id": st.sampled_from(ids) | json_values,
        "kind": st.sampled_from(sorted(KINDS)) | json_values,
        "payload": st.just({"content": TEXT}) | json_values,
    }
    value = {name: hints.get(name, json_values) for name in fields}
    by_name = st.fixed_dictionaries({}, optional=value)
    by_position = st.lists(json_values, max_size=len(fields) + 1)
    return by_name | by_position | json_values


def test_fuzzed_params_get_only_json_rpc_answers(server: Running, http: httpx.Client) -> None:
    sid = call(http, "sessions/create")["id"]
    call(http, "sessions/append", [sid, "user.message", {"content": TEXT}])
    methods = sorted(REGISTRY)

    @settings(
        max_examples=400,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(data=st.data())
    def one(data: st.DataObject) -> None:
        method = data.draw(st.sampled_from(methods))
        params = data.draw(_params(method, [sid]))
        body = {"jsonrpc": "2.0", "method": method, "params": params, "id": 1}
        response = http.post("/rpc", json=body)
        assert response.status_code == 200, response.text
        assert "Traceback" not in response.text and 'File "' not in response.text
        reply = response.json()
        assert reply["jsonrpc"] == "2.0" and reply["id"] in (1, None)
        if "error" in reply:
            assert reply["error"]["code"] in ALLOWED, reply
            assert isinstance(reply["error"]["message"], str)
        else:
            assert "result" in reply

    one()
