"""Redaction of model-bound text with detect-secrets, on whole bodies and on parts."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sessionforest.deep import redacted_window, window
from sessionforest.redact import REDACTED, available, redact, redact_lines

AWS = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
KEY = """-----BEGIN RSA PRIVATE KEY-----
MIIEpAIBAAKCAQEAx4mH0ZcUs1Jn3kqXw
bm90IGEgcmVhbCBrZXkgYXQgYWxs
-----END RSA PRIVATE KEY-----"""


def test_detect_secrets_is_installed_with_the_dev_extra() -> None:
    assert available()


def test_secrets_are_replaced_and_ordinary_text_is_kept() -> None:
    text = (
        f"the deploy failed\naws_access_key = '{AWS}'\n"
        f'aws_secret_access_key = "{AWS_SECRET}"\n'
        "db url https://admin:correcthorsebattery@db.example.com/app\n"
        "let me check the logs first"
    )
    out = redact(text)
    for secret in (AWS, AWS_SECRET, "correcthorsebattery"):
        assert secret not in out.text
    assert out.secrets >= 3 and out.text.count(REDACTED) >= 3
    lines = out.text.splitlines()
    assert lines[0] == "the deploy failed" and lines[-1] == "let me check the logs first"


def test_a_private_key_block_goes_whole() -> None:
    out = redact(f"here is the key:\n{KEY}\nthanks")
    assert out.text == f"here is the key:\n{REDACTED}\nthanks"
    # An unterminated block runs to the end of the text.
    cut = redact("key:\n" + KEY.rsplit("\n", 1)[0])
    assert "MIIEpAIB" not in cut.text and "bm90IGEg" not in cut.text


def test_pasted_config_without_quotes_and_yaml_binary() -> None:
    out = redact(
        "password: hunter2hunter2\nsecret: !!binary MmIwMDA0MmY3NDgxYzdiMDU2YzRiNDEwZDI4ZjMzY2Y="
    )
    assert "hunter2hunter2" not in out.text and "MmIwMDA0" not in out.text


def test_empty_and_plain_text_pass_through() -> None:
    assert redact("").text == ""
    plain = "we should add a test for that\nthe build is green\n"
    assert redact(plain).text == plain and redact(plain).secrets == 0


LINES = [
    "the deploy failed\n",
    f"aws_access_key = '{AWS}'\n",
    f'aws_secret_access_key = "{AWS_SECRET}"\n',
    "db url https://admin:correcthorsebattery@db.example.com/app\n",
    *(line + "\n" for line in KEY.splitlines()),
    "-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXktdjEAAAAA\n",
    "let me check the logs first\n",
    "\n",
]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(LINES), max_size=14), st.data())
def test_a_part_is_redacted_as_the_whole_redacts_it(lines: list[str], data: st.DataObject) -> None:
    """Any split of the lines, each part redacted alone (redact_lines), puts the whole's
    redaction back together: what a card's excerpt shows is redacted as in the body."""
    cut = data.draw(st.integers(0, len(lines)))
    parts = redact_lines(lines, 0, cut).text + redact_lines(lines, cut, len(lines)).text
    assert parts == redact("".join(lines)).text


def test_a_long_body_s_excerpt_is_redacted_and_around_the_word() -> None:
    closed = [line for line in LINES if "OPENSSH" not in line]  # no block left open
    body = "".join(closed * 30) + "the flaky retry test is here\n" + "".join(closed * 30)
    excerpt = redacted_window(body, ["flaky"], 200)
    assert "flaky retry" in excerpt and excerpt.startswith("…") and excerpt.endswith("…")
    for secret in (AWS, AWS_SECRET, "correcthorsebattery", "MIIEpAIB", "b3BlbnNzaC1rZXk"):
        assert secret not in excerpt
    assert excerpt == window(redact(body).text, ["flaky"], 200)
