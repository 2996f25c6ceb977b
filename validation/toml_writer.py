"""A dict as TOML text: the one writer of the study specs the validation drivers write."""

import re

BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
ESCAPES = {"\\": "\\\\", '"': '\\"', "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f",
           "\r": "\\r"}


def to_toml(table: dict) -> str:
    """TOML text of `table`: first its plain values, one `key = value` line each in the dict's
    order, then each dict value as a `[key]` table and each list of dicts as one `[[key]]`
    entry per dict, their own tables named `[key.sub]`. Plain values are strings, booleans,
    integers, floats and lists of them; anything else is a TypeError."""
    return "".join(_table_lines(table, ()))


def _table_lines(table: dict, path: tuple) -> list:
    lines = [f"{_key(key)} = {_value(value)}\n" for key, value in table.items()
             if not _is_table(value) and not _is_table_list(value)]
    for key, value in table.items():
        name = ".".join(_key(part) for part in path + (key,))
        if _is_table(value):
            lines.append(f"[{name}]\n")
            lines += _table_lines(value, path + (key,))
        elif _is_table_list(value):
            for entry in value:
                lines.append(f"[[{name}]]\n")
                lines += _table_lines(entry, path + (key,))
    return lines


def _is_table(value) -> bool:
    return isinstance(value, dict)


def _is_table_list(value) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _key(key: str) -> str:
    return key if BARE_KEY.fullmatch(key) else _string(key)


def _value(value) -> str:
    # bool before int: True is an int to Python, not to TOML.
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)  # the shortest text that reads back as the same float; inf, nan
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    raise TypeError(f"no TOML form for {type(value).__name__} {value!r}")


def _string(text: str) -> str:
    def escape(ch: str) -> str:
        if ch in ESCAPES:
            return ESCAPES[ch]
        return f"\\u{ord(ch):04x}" if ord(ch) < 0x20 or ord(ch) == 0x7F else ch

    return '"' + "".join(escape(ch) for ch in text) + '"'
