"""The CLI and the server on a postgresql:// store: FOREST_DB, --db and serve --db."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

from click.testing import CliRunner

from sessionforest.cli.main import cli


def test_forest_demo_through_forest_db_then_reads_through_db(pg_url: str) -> None:
    runner = CliRunner()
    built = runner.invoke(cli, ["demo"], env={"FOREST_DB": pg_url})
    assert built.exit_code == 0, built.output
    [sid] = re.findall(r"Built demo session (\S+) in postgresql://", built.output)
    assert "forest find 'database locked': confident" in built.output
    log = runner.invoke(cli, ["--db", pg_url, "log", sid, "--json"])
    assert log.exit_code == 0, log.output
    assert len(json.loads(log.stdout)) == 12  # the active path, root to head
    found = runner.invoke(cli, ["--db", pg_url, "find", "nightly import locked", "--json"])
    assert json.loads(found.stdout)["hits"][0]["session_id"] == sid


def test_forest_serve_serves_a_postgresql_store(pg_url: str) -> None:
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "forest"), "serve", "--db", pg_url, "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        url = re.search(r"http://[\d.]+:\d+", line)
        assert url is not None, line
        assert "store postgresql://" in line

        def call(method: str, params: dict[str, object]) -> dict[str, object]:
            body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
            request = urllib.request.Request(
                url[0] + "/rpc", body.encode(), {"content-type": "application/json"}
            )
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.loads(response.read())["result"]  # type: ignore[no-any-return]

        created = call("sessions/create", {"title": "over the server"})
        listed = call("sessions/list", {})
        assert [s["id"] for s in listed["sessions"]] == [created["id"]]  # type: ignore[index]
    finally:
        server.terminate()
        server.wait(timeout=30)
