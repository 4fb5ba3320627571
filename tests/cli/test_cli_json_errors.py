"""A command run with `--json` that fails prints `{"error": {...}}` on stdout for scripts.

The object carries the error's type, message, exit code and the fields the error
sets (session_id, entry_id, path, line, ...); stderr keeps its one `error:` line.
Usage errors (bad option values, unknown options) answer the same way.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import pytest

from sessionforest import errors

if TYPE_CHECKING:
    from conftest import ForestCli

MISSING = "01nosuchsession0000000000"


def failed(forest: ForestCli, code: int, *args: str) -> dict[str, Any]:
    """Run a failing --json command; return its `error` object after checking both streams."""
    result = forest.run(*args)
    assert result.exit_code == code, (result.stdout, result.stderr)
    document = orjson.loads(result.stdout)  # exactly one JSON document
    assert list(document) == ["error"]
    error: dict[str, Any] = document["error"]
    assert error["exit_code"] == code
    assert result.stderr == f"error: {error['message']}\n"  # the same words on both streams
    return error


def test_an_unknown_session(forest: ForestCli) -> None:
    forest.create_store()
    error = failed(forest, 3, "log", MISSING, "--json")
    assert error == {
        "type": "UnknownSession",
        "message": f"unknown session: {MISSING}",
        "exit_code": 3,
        "session_id": MISSING,
        "suggestions": [],
    }


def test_an_unknown_entry_carries_both_ids(forest: ForestCli, session: str) -> None:
    error = failed(forest, 3, "seek", session, "nope", "--json")
    assert (error["type"], error["entry_id"], error["session_id"]) == (
        "UnknownEntry",
        "nope",
        session,
    )


def test_head_moved_carries_expected_and_actual(
    forest: ForestCli, branched: dict[str, str]
) -> None:
    sid = branched["session"]
    args = ["append", sid, "-k", "user.message", "-t", "x", "--expect-head", branched["hi"]]
    error = failed(forest, 4, *args, "--json")
    assert error["type"] == "HeadMoved"
    assert (error["expected"], error["actual"]) == (branched["hi"], branched["second"])


def test_an_invalid_payload_names_kind_and_field(forest: ForestCli, session: str) -> None:
    args = ["append", session, "-k", "user.message", "-p", '{"content": "hi"}', "--json"]
    error = failed(forest, 1, *args)
    assert (error["type"], error["kind"], error["field"]) == (
        "InvalidPayload",
        "user.message",
        "content",
    )


def test_a_rejected_import_names_path_and_line(forest: ForestCli, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "session", "id": "s", "format_version": 1}\nnot json\n')
    error = failed(forest, 1, "import", "jsonl", str(bad), "--json")
    assert error["type"] == "ImportRejected"
    assert error["path"] == str(bad)
    assert isinstance(error["line"], int)
    assert error["reason"]


@pytest.mark.parametrize(
    ("args", "kind", "fields"),
    [
        (
            ["append", "s", "-k", "user.message", "-t", "x", "--visibility", "sometimes"],
            "BadParameter",
            {"param": "--visibility", "command": "forest append"},
        ),
        (["find", "x", "--limit", "many"], "BadParameter", {"param": "--limit"}),
        (["log", "--bogus"], "NoSuchOption", {"option": "--bogus", "command": "forest log"}),
        (["log"], "MissingParameter", {"param": "session"}),
        (["--bogus", "sessions"], "NoSuchOption", {"option": "--bogus", "command": "forest"}),
        (["append", "s", "-k", "user.message"], "UsageError", {"command": "forest append"}),
    ],
)
def test_usage_errors_are_json_too(
    forest: ForestCli, args: list[str], kind: str, fields: dict[str, str]
) -> None:
    error = failed(forest, 2, *args, "--json")
    assert error["type"] == kind
    assert error.items() >= fields.items()
    assert error["message"]


def test_without_json_stdout_stays_empty(forest: ForestCli) -> None:
    forest.create_store()
    result = forest.run("log", MISSING)
    assert result.exit_code == 3
    assert result.stdout == ""


def test_json_after_a_double_dash_is_an_argument_not_the_flag(forest: ForestCli) -> None:
    forest.create_store()
    result = forest.run("log", "--", "--json")
    assert result.exit_code == 3
    assert result.stdout == ""
    assert result.stderr == "error: unknown session: --json\n"


def _sample(cls: type[errors.ForestError]) -> errors.ForestError:
    """An instance built from placeholder arguments: ints where a count or line is asked."""
    numbers = {"line", "index", "version", "count"}
    args: list[Any] = []
    for name, param in inspect.signature(cls.__init__).parameters.items():
        if name == "self" or param.default is not inspect.Parameter.empty:
            continue
        if name == "candidates":
            args.append([{"id": "a", "title": "t"}, {"id": "b", "sequence": 2, "kind": "k"}])
        elif cls is errors.ProviderError and name == "reason":
            args.append(errors.PROVIDER_REASONS[0])  # a closed set: refuses placeholders
        else:
            args.append(7 if name in numbers else f"<{name}>")
    return cls(*args)


ERROR_CLASSES = [
    cls
    for _, cls in inspect.getmembers(errors, inspect.isclass)
    if issubclass(cls, errors.ForestError) and cls.__module__ == errors.__name__
]


@pytest.mark.parametrize("cls", ERROR_CLASSES, ids=lambda cls: cls.__name__)
def test_every_error_exposes_the_fields_it_sets(cls: type[errors.ForestError]) -> None:
    err = _sample(cls)
    body = err.to_json()
    assert (body["type"], body["message"]) == (cls.__name__, str(err))
    public = {name for name in vars(err) if not name.startswith("_")}
    assert set(body) - {"type", "message"} == public
    for name in public:
        if isinstance(getattr(err, name), str | int):
            assert body[name] == getattr(err, name)
    assert orjson.loads(orjson.dumps(body)) == body  # plain JSON all the way down


def test_json_as_an_option_value_is_not_the_flag(forest: ForestCli, session: str) -> None:
    # `-t --json` appends the text "--json"; a failure of that command is plain text.
    appended = forest.ok("append", session, "-k", "user.message", "-t", "--json").strip()
    assert forest.json("log", session)[0]["payload"]["content"][0]["text"] == "--json"
    assert len(appended) == 26
    result = forest.run("append", session, "-k", "user.message", "-t", "--json", "--parent", "zz")
    assert result.exit_code == 3
    assert result.stdout == ""
