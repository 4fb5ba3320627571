"""Redaction of model-bound text with detect-secrets, on whole bodies."""

from __future__ import annotations

from sessionforest.redact import REDACTED, available, redact

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
