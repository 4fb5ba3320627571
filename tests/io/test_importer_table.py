"""The importers' table names each format as its module does (io/importers.READERS is
keyed by name so that reading one format imports only that format's module)."""

from __future__ import annotations

import importlib

import pytest

from sessionforest.io import importers


@pytest.mark.parametrize("fmt", importers.FORMATS)
def test_each_format_is_read_by_the_module_of_that_name(fmt: str) -> None:
    module = importlib.import_module(importers.reader_for(fmt).read.__module__)
    assert getattr(module, "SOURCE_FORMAT", module.FORMAT) == fmt
