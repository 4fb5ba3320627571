"""LangGraph's own checkpointer conformance suite (`langgraph-checkpoint-conformance`)
against `ForestSaver` on every backend: the five base capabilities and the three
extended ones it implements (copy_thread, prune, delete_for_runs), each run in full."""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import AsyncGenerator

import pytest
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import (
    ALL_CAPABILITIES,
    BASE_CAPABILITIES,
    Capability,
    DetectedCapabilities,
)

from sessionforest import Forest
from sessionforest.integrations.langgraph import AsyncForestSaver, ForestSaver

# The suite's own list of tests per capability, so a new release's tests count too.
SUITES = {
    Capability.PUT: ("test_put", "ALL_PUT_TESTS"),
    Capability.PUT_WRITES: ("test_put_writes", "ALL_PUT_WRITES_TESTS"),
    Capability.GET_TUPLE: ("test_get_tuple", "ALL_GET_TUPLE_TESTS"),
    Capability.LIST: ("test_list", "ALL_LIST_TESTS"),
    Capability.DELETE_THREAD: ("test_delete_thread", "ALL_DELETE_THREAD_TESTS"),
    Capability.COPY_THREAD: ("test_copy_thread", "ALL_COPY_THREAD_TESTS"),
    Capability.PRUNE: ("test_prune", "ALL_PRUNE_TESTS"),
    Capability.DELETE_FOR_RUNS: ("test_delete_for_runs", "ALL_DELETE_FOR_RUNS_TESTS"),
}


def suite_size(capability: Capability) -> int:
    module, name = SUITES[capability]
    spec = importlib.import_module(f"langgraph.checkpoint.conformance.spec.{module}")
    return len(getattr(spec, name))


def test_every_capability_is_implemented(forest: Forest) -> None:
    detected = DetectedCapabilities.from_instance(ForestSaver(forest))
    assert detected.detected == ALL_CAPABILITIES and not detected.missing
    assert set(SUITES) == set(ALL_CAPABILITIES)


@pytest.mark.parametrize("saver_type", [ForestSaver, AsyncForestSaver])
@pytest.mark.parametrize("capability", sorted(Capability, key=lambda c: c.value))
def test_the_conformance_suite_passes(
    forest: Forest, capability: Capability, saver_type: type[ForestSaver]
) -> None:
    async def fresh() -> AsyncGenerator[ForestSaver, None]:
        saver = saver_type(forest)
        yield saver
        saver.close()

    registered = checkpointer_test(name=f"{saver_type.__name__} {capability.value}")(fresh)
    report = asyncio.run(validate(registered, capabilities={capability.value}))
    result = report.results[capability.value]
    assert result.detected
    assert result.failures == [] and result.tests_failed == 0, "\n".join(result.failures)
    assert result.tests_passed == suite_size(capability)
    if capability in BASE_CAPABILITIES:
        assert result.passed is True
