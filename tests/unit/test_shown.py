"""File names in human lines: control characters escaped, everything else as it is."""

from __future__ import annotations

from lakemark._shown import shown


def test_control_characters_are_escaped_and_other_text_kept() -> None:
    assert shown("a\nb\rc\td") == "a\\nb\\rc\\td"
    assert shown("x\x1b[31my\x00\x7f\x85") == "x\\x1b[31my\\x00\\x7f\\x85"
    assert shown("p\u2028q\u2029r") == "p\\u2028q\\u2029r"
    assert shown("bad\udcffbyte") == "bad\\udcffbyte"  # os.fsdecode of a byte not UTF-8
    plain = "s3://bucket/dir with space/été\\ü [x].json"
    assert shown(plain) == plain
    assert shown(42) == "42"
