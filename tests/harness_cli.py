"""The real harness CLIs, run in a temporary HOME against tests/standin.py (test tools only).

scripts/test installs them pinned from tests/tools/package-lock.json
(`npm ci --prefix tests/tools`); nothing here is a runtime dependency of
sessionforest. A test takes the `real_cli` fixture (tests/conftest.py) and
scripts the model's turns:

    cli = real_cli("codex")                     # claude | codex | gemini | opencode
    cli.script(Reply(tools=[cli.shell("echo hi")]), Reply(text="done"))
    cli.run("run echo hi")                      # the CLI runs the command itself
    cli.run("and again", resume=True)           # the same session, resumed
    cli.transcripts()                           # what it wrote, under cli.home

Only the model-loop requests (those offering tools) take the scripted
replies, in order; a CLI's side requests (titles, summaries, next-speaker
checks) get `SIDE_TEXT`, so a script is the conversation and nothing else.
When the script runs out the model answers "ok".
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from standin import ProviderStandIn, Reply, ToolCall

TOOLS = Path(__file__).parent / "tools"
BIN = TOOLS / "node_modules" / ".bin"
SIDE_TEXT = "Stand-in title"
NAMES = ("claude", "codex", "gemini", "opencode", "copilot")

# The versions tests/tools/package.json pins (a test checks each CLI reports it).
VERSIONS = {
    "claude": "2.1.197",
    "codex": "0.171.0",
    "gemini": "0.61.0",
    "opencode": "1.18.33",
    "copilot": "1.0.102",
}
# The model each CLI is told to use (the stand-in answers any).
MODELS = {
    "claude": "claude-sonnet-4-5",
    "codex": "gpt-standin",
    "gemini": "gemini-2.5-flash",
    "opencode": "standin/standin-model",
    "copilot": "gpt-4.1",
}
# Each CLI's shell tool: its name and how it takes the command.
SHELL = {
    "claude": ("Bash", lambda c: {"command": c, "description": "run a command"}),
    "codex": ("exec_command", lambda c: {"cmd": c}),
    "gemini": ("run_shell_command", lambda c: {"command": c, "description": "run a command"}),
    "opencode": ("bash", lambda c: {"command": c, "description": "run a command"}),
    "copilot": ("bash", lambda c: {"command": c, "description": "run a command"}),
}


def git_repo(where: Path, branch: str, remote: str | None = None) -> str:
    """Make `where` a git repository on `branch` with one commit (and `origin` at
    `remote`); returns the commit, for a test to find in what a CLI recorded."""
    where.mkdir(parents=True, exist_ok=True)
    steps = [
        ["init", "-q", "-b", branch],
        ["-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q",
         "--allow-empty", "-m", "first"],
    ]  # fmt: skip
    if remote is not None:
        steps.append(["remote", "add", "origin", remote])
    for args in steps:
        subprocess.run(["git", *args], cwd=where, check=True, capture_output=True)
    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=where, check=True,
                          capture_output=True, text=True)  # fmt: skip
    return done.stdout.strip()


class MissingTool(RuntimeError):
    """The pinned CLIs are not installed (scripts/test installs them)."""


def binary(name: str) -> Path:
    path = BIN / name
    if not path.exists():
        raise MissingTool(
            f"{path} is missing: the harness CLIs are test tools installed by scripts/test "
            "(or by hand: npm ci --prefix tests/tools)"
        )
    return path


def _offers_tools(body: dict[str, Any]) -> bool:
    tools = body.get("tools")
    return isinstance(tools, list) and len(tools) > 0


@dataclass
class RealCLI:
    """One harness CLI in its own HOME (and working directory `cwd`), talking to `standin`."""

    name: str
    standin: ProviderStandIn
    home: Path
    cwd: Path
    env: dict[str, str] = field(default_factory=dict)
    runs: list[subprocess.CompletedProcess[str]] = field(default_factory=list)
    _turns: deque[Reply] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        if self.name not in NAMES:
            raise ValueError(f"expected one of {NAMES}; got {self.name!r}")
        binary(self.name)
        self.home.mkdir(parents=True, exist_ok=True)
        self.cwd.mkdir(parents=True, exist_ok=True)
        self.standin.responder = self._respond
        self.env = self._environment() | self.env
        getattr(self, f"_setup_{self.name}")()

    # --- scripting ---------------------------------------------------------------

    def script(self, *replies: Reply) -> None:
        """The model's next answers to the CLI's model-loop requests, in order."""
        with self._lock:
            self._turns.extend(replies)

    def shell(self, command: str) -> ToolCall:
        """A call of this CLI's own shell tool running `command`."""
        tool, args = SHELL[self.name]
        return ToolCall(tool, args(command))

    def _respond(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            if _offers_tools(body) and self._turns:
                return self._turns.popleft()
        return Reply(text=SIDE_TEXT if not _offers_tools(body) else "ok")

    @property
    def pending(self) -> int:
        """Scripted replies not asked for yet (0 after a run that used them all)."""
        with self._lock:
            return len(self._turns)

    def model_requests(self) -> list[dict[str, Any]]:
        """The bodies of the model-loop requests the stand-in received, in order."""
        return [r.body for r in self.standin.requests if _offers_tools(r.body)]

    # --- running -----------------------------------------------------------------

    def run(
        self, prompt: str, *, resume: bool | str = False, timeout: float = 180, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run one non-interactive turn; `resume`: True continues the latest session,
        a string resumes that session id. Raises AssertionError when the CLI fails
        (unless `check` is False)."""
        args = getattr(self, f"_args_{self.name}")(prompt, resume)
        done = subprocess.run(
            args,
            cwd=self.cwd,
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        self.runs.append(done)
        if check and done.returncode != 0:
            raise AssertionError(
                f"{self.name} exited {done.returncode}\n--- stdout\n{done.stdout[-4000:]}"
                f"\n--- stderr\n{done.stderr[-4000:]}"
            )
        return done

    def version(self) -> str:
        done = subprocess.run(
            [str(binary(self.name)), "--version"],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        return done.stdout.strip()

    def transcripts(self) -> list[Path]:
        """The transcript files (or database) this CLI wrote under its HOME."""
        patterns = {
            "claude": ".claude/projects/**/*.jsonl",
            "codex": ".codex/sessions/**/rollout-*.jsonl",
            "gemini": ".gemini/tmp/*/chats/**/*.json*",
            "opencode": ".local/share/opencode/opencode.db",
            "copilot": ".copilot/session-state/**/events.jsonl",
        }
        return sorted(self.home.glob(patterns[self.name]))

    def tui(self, *args: str) -> CodexTUI:
        """Codex's interactive TUI in a pseudo-terminal (what a rewind needs); `args`
        before its flags (`"fork", THREAD` forks a thread)."""
        if self.name != "codex":
            raise ValueError("only Codex's TUI is driven here")
        return CodexTUI(self, args)

    # --- per CLI -----------------------------------------------------------------

    def _environment(self) -> dict[str, str]:
        path = f"{BIN}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"
        return {
            "HOME": str(self.home),
            "PATH": path,
            "TERM": "dumb",
            "NO_COLOR": "1",
            "LANG": "C.UTF-8",
            "TMPDIR": str(self.home / "tmp"),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
        }

    def _setup_claude(self) -> None:
        self.env |= {
            "ANTHROPIC_BASE_URL": self.standin.url,
            "ANTHROPIC_API_KEY": "sk-ant-standin",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        }
        (self.home / "tmp").mkdir(exist_ok=True)

    def _args_claude(self, prompt: str, resume: bool | str) -> list[str]:
        args = [str(binary("claude")), "-p", "--model", MODELS["claude"]]
        args.append("--allowedTools=Bash")
        if resume is True:
            args.append("--continue")
        elif resume:
            args += ["--resume", resume]
        return [*args, prompt]

    def _setup_codex(self) -> None:
        codex_home = self.home / ".codex"
        codex_home.mkdir(exist_ok=True)
        (codex_home / "config.toml").write_text(
            f'model_provider = "standin"\nmodel = "{MODELS["codex"]}"\n'
            "[model_providers.standin]\n"
            'name = "standin"\n'
            f'base_url = "{self.standin.url}/v1"\n'
            'wire_api = "responses"\n'
            'env_key = "STANDIN_API_KEY"\n'
        )
        self.env |= {"CODEX_HOME": str(codex_home), "STANDIN_API_KEY": "sk-standin"}
        (self.home / "tmp").mkdir(exist_ok=True)

    def _args_codex(self, prompt: str, resume: bool | str) -> list[str]:
        args = [str(binary("codex")), "exec"]
        if resume is True:
            args += ["resume", "--last"]
        elif resume:
            args += ["resume", resume]
        flags = ["--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"]
        return [*args, *flags, prompt]

    def _setup_gemini(self) -> None:
        settings = self.home / ".gemini" / "settings.json"
        settings.parent.mkdir(exist_ok=True)
        settings.write_text(
            json.dumps(
                {
                    "security": {"auth": {"selectedType": "gemini-api-key"}},
                    "privacy": {"usageStatisticsEnabled": False},
                    "general": {"disableAutoUpdate": True},
                }
            )
        )
        self.env |= {
            "GOOGLE_GEMINI_BASE_URL": self.standin.url,
            "GEMINI_API_KEY": "standin",
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
        }
        (self.home / "tmp").mkdir(exist_ok=True)

    def _args_gemini(self, prompt: str, resume: bool | str) -> list[str]:
        args = [str(binary("gemini")), "-m", MODELS["gemini"], "--approval-mode", "yolo"]
        if resume is True:
            args += ["--resume", "latest"]
        elif resume:
            args += ["--resume", resume]
        return [*args, "-p", prompt]

    def _setup_opencode(self) -> None:
        config = {
            "$schema": "https://opencode.ai/config.json",
            "model": MODELS["opencode"],
            "small_model": MODELS["opencode"],
            "autoupdate": False,
            "share": "disabled",
            "permission": {"bash": "allow", "edit": "allow"},
            "provider": {
                "standin": {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": "Stand-in",
                    "options": {"baseURL": f"{self.standin.url}/v1", "apiKey": "sk-standin"},
                    "models": {"standin-model": {"name": "Stand-in model", "tool_call": True}},
                }
            },
        }
        self.env |= {
            "OPENCODE_CONFIG_CONTENT": json.dumps(config),
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
            "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
            "OPENCODE_DISABLE_SHARE": "1",
            "OPENCODE_DISABLE_CLAUDE_CODE": "1",
            # OpenCode looks its plugin packages up on the npm registry as it starts;
            # offline, it goes on with the ones it bundles (no test fetches anything).
            "npm_config_offline": "true",
            "npm_config_registry": "http://127.0.0.1:9/",
        }
        (self.home / "tmp").mkdir(exist_ok=True)

    def _args_opencode(self, prompt: str, resume: bool | str) -> list[str]:
        args = [str(binary("opencode")), "run", "--model", MODELS["opencode"]]
        if resume is True:
            args.append("--continue")
        elif resume:
            args += ["--session", resume]
        return [*args, prompt]

    def _setup_copilot(self) -> None:
        # BYOK against the stand-in, offline: no GitHub sign-in, no telemetry, no update.
        self.env |= {
            "COPILOT_HOME": str(self.home / ".copilot"),
            "COPILOT_OFFLINE": "true",
            "COPILOT_AUTO_UPDATE": "false",
            "COPILOT_PROVIDER_BASE_URL": f"{self.standin.url}/v1",
            "COPILOT_PROVIDER_TYPE": "openai",
            "COPILOT_PROVIDER_API_KEY": "sk-standin",
            "COPILOT_MODEL": MODELS["copilot"],
            "COPILOT_ALLOW_ALL": "1",
        }
        (self.home / "tmp").mkdir(exist_ok=True)

    def _args_copilot(self, prompt: str, resume: bool | str) -> list[str]:
        args = [str(binary("copilot")), "--no-auto-update", "--disable-client-telemetry"]
        if resume is True:
            args.append("--continue")
        elif resume:
            args.append(f"--resume={resume}")
        return [*args, "--allow-all-tools", "-p", prompt]


# What a terminal answers the TUI's start-up queries with (cursor position, device
# attributes, keyboard flags, colours): unanswered, crossterm waits, then fails.
_ANSWERS = {
    "\x1b[6n": "\x1b[1;1R",
    "\x1b[c": "\x1b[?62;c",
    "\x1b[?u": "\x1b[?0u",
    "\x1b]10;?": "\x1b]10;rgb:ffff/ffff/ffff\x1b\\",
    "\x1b]11;?": "\x1b]11;rgb:0000/0000/0000\x1b\\",
}


class CodexTUI:
    """`codex` (the interactive TUI) in a pseudo-terminal, driven by keys: `ask` sends a
    prompt and waits for its turn to be recorded, `rewind(back)` is Esc Esc, `back`
    prompts to the left, Enter (the rewind Codex 0.171 writes as a new segment file).

    Waits are on what Codex writes (a turn's `task_complete`, a new rollout file), never
    on the screen. The managed app-server daemon is off (`daemon_auto_start`), so
    nothing outlives `close`."""

    def __init__(self, cli: RealCLI, args: tuple[str, ...] = ()) -> None:
        import pexpect

        self.cli = cli
        config = cli.home / ".codex" / "config.toml"
        tables = f'\n[features]\ndaemon_auto_start = false\n\n[projects."{cli.cwd}"]\n'
        config.write_text(config.read_text() + tables + 'trust_level = "trusted"\n')
        env = dict(cli.env) | {"TERM": "xterm-256color"}
        env.pop("NO_COLOR", None)
        self._timeout = pexpect.TIMEOUT
        self._eof = pexpect.EOF
        self.child = pexpect.spawn(
            str(binary("codex")),
            [*args, "--dangerously-bypass-approvals-and-sandbox"],
            cwd=str(cli.cwd),
            env=env,
            dimensions=(40, 120),
            encoding="utf-8",
            codec_errors="replace",
        )
        self.screen: list[str] = []
        self._pump(3)

    def _pump(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end and self.child.isalive():
            try:
                data = self.child.read_nonblocking(65536, timeout=0.2)
            except self._timeout:
                continue
            except self._eof:
                return
            self.screen.append(data)
            for query, answer in _ANSWERS.items():
                if query in data:
                    self.child.send(answer)

    def _until(self, done: Any, what: str, seconds: float = 90) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self._pump(0.3)
            if done():
                self._pump(0.5)
                return
        tail = re.sub(r"\x1b\[[0-9;?>=$]*[A-Za-z]", " ", "".join(self.screen))[-2000:]
        raise AssertionError(f"codex TUI: {what} did not happen\n--- screen\n{tail}")

    def _completed(self) -> int:
        return sum(p.read_text().count('"type":"task_complete"') for p in self.cli.transcripts())

    def ask(self, prompt: str) -> None:
        before = self._completed()
        self.child.sendcontrol("u")  # what a rewind put back in the composer
        self._pump(0.3)
        self.child.send(prompt)
        self._pump(0.5)
        self.child.send("\r")
        self._until(lambda: self._completed() > before, f"the turn {prompt!r}")

    def rewind(self, back: int = 0) -> None:
        files = len(self.cli.transcripts())
        self.child.send("\x1b")
        self._pump(0.4)
        self.child.send("\x1b")
        self._pump(1)
        for _ in range(back):
            self.child.send("\x1b[D")
            self._pump(0.7)
        self.child.send("\r")
        self._until(lambda: len(self.cli.transcripts()) > files, "the rewind")

    def close(self) -> None:
        for _ in range(2):
            if self.child.isalive():
                self.child.sendcontrol("c")
                self._pump(1)
        self.child.close(force=True)
