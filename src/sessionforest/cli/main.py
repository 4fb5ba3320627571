"""The `forest` command: the group, its global `--db` option and the error boundary.

Every error a command lets escape is turned into one `error: <message>` line on
stderr and an exit code from `EXIT_CODES`, here and nowhere else; a command run
with `--json` also prints `{"error": {...}}` on stdout for scripts to read.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import click

from ..errors import ForestError, family
from ..text import escape
from .common import JSON_KEY, State, emit_json, store_location

# Each command, by name, as "module:attribute" of this package. A command line
# imports only the module of the command it runs (a CLI call should start as
# fast as git's: benchmarks/bench_cli.py); `--help` imports them all.
COMMANDS = {
    "new": "sessions:new",
    "sessions": "sessions:sessions",
    "bind": "sessions:bind",
    "rename": "sessions:rename",
    "append": "entries:append",
    "seek": "entries:seek",
    "checkpoint": "entries:checkpoint",
    "seek-checkpoint": "entries:seek_checkpoint",
    "log": "entries:log",
    "tree": "entries:tree",
    "tips": "entries:tips",
    "status": "status:status",
    "diff": "diff:diff",
    "resume": "resume:resume",
    "export": "io:export",
    "import": "io:import_group",
    "sources": "io:sources",
    "copy": "io:copy",
    "check": "admin:check",
    "migrate": "admin:migrate",
    "index": "admin:index",
    "repair": "admin:repair",
    "demo": "admin:demo",
    "serve": "serve:serve",
    "mcp": "mcp:mcp",
    "watch": "watch:watch",
    "hooks": "hooks:hooks_group",
    "hook": "hooks:hook_group",
    "recall": "search:recall",
    "find": "search:find",
    "usage": "search:usage",
    "end": "search:end",
    "archive": "search:archive",
    "unarchive": "search:unarchive",
}


def exit_code_for(exc: BaseException) -> int:
    """A ForestError's family decides (errors.FAMILIES); click's usage errors exit 2."""
    if isinstance(exc, ForestError):
        return family(exc).exit_code
    if isinstance(exc, click.UsageError):
        return 2
    return 1


def _message(exc: BaseException) -> str:
    if isinstance(exc, click.UsageError):
        text = exc.format_message().rstrip(".")
        if exc.ctx is not None:
            text += f" (see '{exc.ctx.command_path} --help')"
        return text
    if isinstance(exc, click.ClickException):
        return exc.format_message()
    return str(exc)


def _click_fields(exc: click.ClickException) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if isinstance(exc, click.UsageError) and exc.ctx is not None:
        fields["command"] = exc.ctx.command_path
    if isinstance(exc, click.BadParameter) and exc.param is not None:
        fields["param"] = exc.param.opts[0] if exc.param.opts else exc.param.name
    if isinstance(exc, click.NoSuchOption):
        fields["option"] = exc.option_name
        fields["possibilities"] = list(exc.possibilities or ())
    return fields


def error_json(exc: BaseException) -> dict[str, Any]:
    """The `error` object of a failed `--json` command: type, message, exit code, fields."""
    code = exit_code_for(exc)
    if isinstance(exc, ForestError):
        body = exc.to_json()
        return {"type": body.pop("type"), "message": body.pop("message"), "exit_code": code, **body}
    fields = _click_fields(exc) if isinstance(exc, click.ClickException) else {}
    return {"type": type(exc).__name__, "message": _message(exc), "exit_code": code, **fields}


def wants_json(args: Sequence[str]) -> bool:
    """Whether the command line asks for `--json` (options end at a bare `--`)."""
    end = args.index("--") if "--" in args else len(args)
    return "--json" in args[:end]


@contextmanager
def _converted(as_json: Callable[[], bool]) -> Iterator[None]:
    try:
        yield
    except (ForestError, click.ClickException) as exc:
        if as_json():
            emit_json({"error": error_json(exc)})
        # Escaped: one line, whatever a message quotes (titles, paths, file lines).
        click.echo("error: " + escape(_message(exc)), err=True)
        # Exit, not a ClickException: click's main exits with it and prints nothing more.
        raise click.exceptions.Exit(exit_code_for(exc)) from exc


class ForestGroup(click.Group):
    """A group whose parsing and invocation errors pass through `_converted`.

    Parsing the group's own options happens in `make_context`, a subcommand's
    (and running it) in `invoke`; the two overrides cover every error path.
    Whether to answer in JSON is read from the whole command line up front, so
    an error while parsing it (an unknown option) is JSON too; once the command's
    `--json` flag is parsed (it is eager), its value decides.
    """

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, attribute = COMMANDS[cmd_name].split(":")
            command = getattr(importlib.import_module(f"{__package__}.{module}"), attribute)
            self.add_command(command, cmd_name)
        return self.commands.get(cmd_name)

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        as_json = wants_json(args)
        with _converted(lambda: as_json):
            ctx = super().make_context(info_name, args, parent, **extra)
        ctx.meta[JSON_KEY] = as_json
        return ctx

    def invoke(self, ctx: click.Context) -> Any:
        with _converted(lambda: bool(ctx.meta.get(JSON_KEY))):
            return super().invoke(ctx)


@click.group("forest", cls=ForestGroup)
@click.option(
    "--db",
    callback=store_location,
    metavar="PATH|URL",
    help=(
        "Store to use: a SQLite file (or sqlite:///PATH) or a postgresql:// URL "
        "(default: $FOREST_DB, else forest.db in the user data dir). "
        "Read commands open it read-only and never create it; only the default store's "
        "directory is ever created."
    ),
)
@click.version_option(package_name="sessionforest", prog_name="forest")
@click.pass_context
def cli(ctx: click.Context, db: Path | str | None) -> None:
    """Durable, branchable AI-agent conversation history.

    Start with `forest demo` to build and draw a sample session. A SESSION or
    ENTRY argument takes a unique prefix of its id, as git takes a short hash;
    an ENTRY also takes the sequence number `log` and `tree` print. With
    --json, a failure prints {"error": {...}} on stdout too.
    """
    state = State(db)
    ctx.obj = state
    ctx.call_on_close(state.close)


def main(args: Sequence[str] | None = None) -> NoReturn:
    """The console-script entry point (`forest = sessionforest.cli.main:main`)."""
    cli.main(args=args, prog_name="forest")


if __name__ == "__main__":  # python -m sessionforest.cli.main (a hook without the script)
    main()
