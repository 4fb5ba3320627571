"""Why msgspec refused a payload, in the forest's words: kind, field path, reason.

Runs only after `kinds.validate_payload` failed. It walks the payload beside
the kind's own type (msgspec.inspect), so it needs no second copy of any
contract and never parses msgspec's messages; the first problem in field
order wins.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import inspect as mi

from .errors import InvalidPayload
from .kinds import Rule

Found = tuple[str, str]  # (field path, reason)

_NAMES: dict[type[mi.Type], str] = {
    mi.StrType: "a string",
    mi.IntType: "an integer",
    mi.BoolType: "true or false",
    mi.DictType: "an object",
    mi.NoneType: "null",
    mi.FloatType: "a number",
}


def refusal(kind: str, cls: type, payload: Any, error: msgspec.ValidationError) -> InvalidPayload:
    """The InvalidPayload for `payload`, which msgspec refused as a `cls` with `error`."""
    found = _check(mi.type_info(cls), payload, "")
    if found is None:  # cannot happen while both read the same types; say what msgspec said
        return InvalidPayload(kind, "$", str(error))
    return InvalidPayload(kind, found[0] or "$", found[1])


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _check(t: mi.Type, value: Any, path: str) -> Found | None:
    if isinstance(t, mi.Metadata):  # extra JSON Schema only: check the type beneath
        t = t.type
    if isinstance(t, mi.AnyType):
        return None
    if isinstance(t, mi.StructType):
        return _block([t], value, path) if t.tag_field is not None else _struct(t, value, path)
    if isinstance(t, mi.UnionType):
        return _union(t, value, path)
    if isinstance(t, mi.ListType):
        return _list(t, value, path)
    if isinstance(t, mi.LiteralType):
        if value in t.values and type(value) is type(t.values[0]):
            return None
        allowed = ", ".join(map(str, t.values))
        return path, f"must be one of {allowed}, got {value!r}"
    if isinstance(t, mi.StrType):
        if not isinstance(value, str):
            return path, f"must be a string, got {_type_name(value)}"
        if t.min_length and len(value) < t.min_length:
            return path, "must not be empty"
        return None
    if isinstance(t, mi.IntType):
        if isinstance(value, int) and not isinstance(value, bool):
            return None
        return path, f"must be an integer, got {_type_name(value)}"
    if isinstance(t, mi.BoolType):
        return (
            None
            if isinstance(value, bool)
            else (path, f"must be true or false, got {_type_name(value)}")
        )
    if isinstance(t, mi.DictType):
        return (
            None
            if isinstance(value, dict)
            else (path, f"must be an object, got {_type_name(value)}")
        )
    if isinstance(t, mi.NoneType):
        return None if value is None else (path, f"must be null, got {_type_name(value)}")
    return None


def _struct(t: mi.StructType, value: Any, path: str) -> Found | None:
    if not isinstance(value, dict):
        return path, f"must be an object, got {_type_name(value)}"
    for field in t.fields:
        name = field.encode_name
        if name in value:
            found = _check(field.type, value[name], _join(path, name))
            if found is not None:
                return found
        elif field.required:
            return _join(path, name), "is required"
    try:
        msgspec.convert(value, t.cls)
    except msgspec.ValidationError as exc:
        rule = exc.__cause__
        if isinstance(rule, Rule):
            return (_join(path, rule.field) if rule.field else path), rule.reason
        raise
    return None


def _blocks(t: mi.Type) -> list[mi.StructType] | None:
    """The tagged Structs of a union of blocks (None: not such a union)."""
    if isinstance(t, mi.StructType) and t.tag_field is not None:
        return [t]
    if isinstance(t, mi.UnionType) and all(
        isinstance(m, mi.StructType) and m.tag_field is not None for m in t.types
    ):
        return [m for m in t.types if isinstance(m, mi.StructType)]
    return None


def _union(t: mi.UnionType, value: Any, path: str) -> Found | None:
    tagged = _blocks(t)
    if tagged is not None:
        return _block(tagged, value, path)
    for member in t.types:
        if _accepts(member, value):
            return _check(member, value, path)
    names = [_NAMES.get(type(m), "a list") for m in t.types]
    return path, f"must be {' or '.join(names)}, got {_type_name(value)}"


def _accepts(t: mi.Type, value: Any) -> bool:
    """Whether `value` is of the JSON type of union member `t` (its details aside)."""
    if isinstance(t, mi.Metadata):
        t = t.type
    if isinstance(t, mi.StrType):
        return isinstance(value, str)
    if isinstance(t, mi.ListType):
        return isinstance(value, list)
    if isinstance(t, mi.NoneType):
        return value is None
    if isinstance(t, mi.IntType):
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(t, mi.BoolType):
        return isinstance(value, bool)
    if isinstance(t, mi.DictType | mi.StructType):
        return isinstance(value, dict)
    return True


def _block(tagged: list[mi.StructType], value: Any, path: str) -> Found | None:
    if not isinstance(value, dict):
        return path, f"must be an object, got {_type_name(value)}"
    tag_field = tagged[0].tag_field or "type"
    tag = value.get(tag_field)
    for member in tagged:
        if member.tag == tag:
            return _struct(member, value, path)
    allowed = ", ".join(str(m.tag) for m in tagged)
    return _join(path, tag_field), f"must be one of {allowed}, got {tag!r}"


def _list(t: mi.ListType, value: Any, path: str) -> Found | None:
    blocks = _blocks(t.item_type) is not None
    if not isinstance(value, list):
        what = "a list of blocks" if blocks else "a list"
        return path, f"must be {what}, got {_type_name(value)}"
    if t.min_length and len(value) < t.min_length:
        return path, "must hold at least one block" if blocks else "must not be empty"
    for i, item in enumerate(value):
        found = _check(t.item_type, item, f"{path}[{i}]")
        if found is not None:
            return found
    return None
