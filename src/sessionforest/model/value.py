"""`Value`: the base of every value a surface returns, defined once as a msgspec Struct.

A value's fields, in order, are its JSON document (`to_json`, what the CLI's
`--json` prints and the server answers), its JSON Schema (msgspec emits it;
the OpenRPC document publishes it under the value's `wire_name`, and the web
client's types are generated from that) and the names its rows are read by
(`from_columns`: a query selects each field under its own name). Adding a
field is adding it here and to the query that reads it.

Values are frozen. One whose JSON puts a field with a default before a
required one declares `kw_only=True` (its fields then keep the JSON's order). A
field whose value follows from the others (a report's `ok`) is set once, in
`__post_init__`, with `derive`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar, Self

import msgspec
from msgspec.structs import force_setattr


class Value(msgspec.Struct, frozen=True):
    """A frozen value whose msgspec encoding is its JSON document."""

    # The name its schema has in the OpenRPC document (and the web client's type).
    wire_name: ClassVar[str]
    # Fields holding a value whose JSON keys this value's JSON takes in their place
    # (a snapshot's divergence): one document composed of two values.
    flattened: ClassVar[tuple[str, ...]] = ()

    def to_json(self) -> dict[str, Any]:
        """The value as JSON types: every field, in definition order."""
        document: dict[str, Any] = msgspec.to_builtins(self)
        if not self.flattened:
            return document
        composed: dict[str, Any] = {}
        for key, item in document.items():
            if key in self.flattened:
                composed.update(item)
            else:
                composed[key] = item
        return composed

    @classmethod
    def from_columns(cls, columns: Mapping[str, Any]) -> Self:
        """The value of a row read as {column name: value}; names are field names."""
        return cls(**columns)

    @classmethod
    def from_rows(cls, names: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[Self]:
        """Each row (in the column order `names`) as a value, by column name."""
        build = cls.from_columns
        return [build(dict(zip(names, row, strict=True))) for row in rows]


def derive(value: Value, name: str, result: Any) -> None:
    """Set a derived field of a frozen value (from its `__post_init__` only)."""
    force_setattr(value, name, result)


def schema_components(
    types: Sequence[Any], ref_template: str
) -> tuple[tuple[dict[str, Any], ...], dict[str, Any]]:
    """msgspec's JSON Schemas of `types` and their components, with each value's
    schema named (and titled) by its `wire_name` and every field required, no
    default: a value's JSON always holds every field (a default only matters
    to whoever builds one). `required` is sorted, as msgspec sorts a TypedDict's."""
    schemas, components = msgspec.json.schema_components(types, ref_template=ref_template)
    values = {cls.__name__: cls for cls in _subclasses(Value) if cls.__name__ in components}
    names = {name: cls.wire_name for name, cls in values.items() if "wire_name" in cls.__dict__}
    prefix = ref_template.format(name="")
    for name, cls in values.items():
        schema = components[name]
        schema["title"] = names.get(name, name)
        properties: dict[str, Any] = {}
        for key, field in schema.get("properties", {}).items():
            if key in cls.flattened:  # the flattened value's properties, in its place
                properties.update(components[field["$ref"].removeprefix(prefix)]["properties"])
            else:
                properties[key] = field
        for field in properties.values():
            field.pop("default", None)
        schema["properties"] = properties
        schema["required"] = sorted(properties)
    refs = {
        ref_template.format(name=old): ref_template.format(name=new) for old, new in names.items()
    }
    renamed = {names.get(name, name): schema for name, schema in components.items()}
    return _with_refs(schemas, refs), _with_refs(renamed, refs)


def _subclasses(cls: type[Value]) -> list[type[Value]]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


def _with_refs(value: Any, refs: Mapping[str, str]) -> Any:
    if isinstance(value, dict):
        return {k: refs.get(v, v) if k == "$ref" else _with_refs(v, refs) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_with_refs(v, refs) for v in value)
    return value
