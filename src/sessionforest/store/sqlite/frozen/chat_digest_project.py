"""The exact statements the released `chat_digest_project` migration runs.

A chat's project (the last two components of the directory it was recorded
in, or is bound to) joins its title in the digest, so the tokenizer splits
`coderabbit-review-helper` into words a query finds like title words.
Never edited once released: change the schema with a new migration.
"""

from typing import Final


def _last(path: str) -> str:
    # rtrim(p, every character of p but '/') leaves p up to its last '/'.
    return f"substr({path}, length(rtrim({path}, replace({path}, '/', ''))) + 1)"


def _parent(path: str) -> str:
    return f"rtrim(rtrim({path}, replace({path}, '/', '')), '/')"


# `{s}` is a sessions row (NEW or s): its directory, backslashes as slashes,
# trailing slashes gone; then its parent's last component and its own.
_DIR = "rtrim(replace(coalesce({s}.cwd, {s}.origin_cwd, ''), char(92), '/'), '/')"


def project_words(row: str) -> str:
    path = _DIR.format(s=row)
    return f"trim({_last(_parent(path))} || ' ' || {_last(path)})"


def digest_title(row: str) -> str:
    """The digest's title column of a sessions row: its title, then its project."""
    words = project_words(row)
    return f"{row}.title || CASE WHEN {words} <> '' THEN char(10) || {words} ELSE '' END"


REPLACE_TRIGGERS: Final = (
    "DROP TRIGGER search_session_added",
    "DROP TRIGGER search_session_retitled",
    f"""CREATE TRIGGER search_session_added AFTER INSERT ON sessions BEGIN
        INSERT OR IGNORE INTO search_sessions(session_id) VALUES (NEW.id);
        INSERT OR REPLACE INTO chat_digest_fts(rowid, title, first_message, first_reply, summary)
        VALUES ((SELECT num FROM search_sessions WHERE session_id = NEW.id),
                {digest_title("NEW")}, '', '', '');
    END""",
    f"""CREATE TRIGGER search_session_retitled
    AFTER UPDATE OF title, cwd, origin_cwd ON sessions BEGIN
        UPDATE chat_digest_fts SET title = {digest_title("NEW")}
        WHERE rowid = (SELECT num FROM search_sessions WHERE session_id = NEW.id);
    END""",
)

BACKFILL: Final = (
    f"""UPDATE chat_digest_fts SET title = (
        SELECT {digest_title("s")} FROM sessions s JOIN search_sessions m ON m.session_id = s.id
        WHERE m.num = chat_digest_fts.rowid)
    WHERE rowid IN (SELECT m.num FROM sessions s JOIN search_sessions m ON m.session_id = s.id
                    WHERE coalesce(s.cwd, s.origin_cwd, '') <> '')""",
)
