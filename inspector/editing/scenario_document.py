"""A scenario TOML file edited in place: the user's comments, blank lines and key order survive.

``ScenarioDocument`` wraps a tomlkit document. Reading gives plain Python values; writing a value
replaces only that item, so a comment beside or above another key stays where it is. Arrays of
tables (``[[validators]]``, ``[[tools]]``) are updated table by table: a table that survives an
edit keeps its comments, and the comment block written just above a table's header moves with it
when tables are reordered or removed (tomlkit files that block under the previous table).

Saving checks the edited scenario with the core first (``ScenarioError``: the same one-line
``file: field: problem`` the CLI prints) and leaves the file untouched when it is invalid.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.container import Container
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import AoT, Comment, Item, Table, Whitespace
from tomlkit.toml_document import TOMLDocument

from inspector.core.errors import ScenarioError
from inspector.core.files import write_atomically
from inspector.core.loading import split_ref
from inspector.core.scenario import Scenario, scenario_from_dict
from inspector.editing.toml_values import inline_item

# Top-level arrays of tables the editors replace as a whole.
TABLE_ARRAYS = ("validators", "tools")
_Trailing = list[tuple[Any, Item]]
_TRIVIA = (Comment, Whitespace)


def _parse(text: str, source: str) -> TOMLDocument:
    try:
        return tomlkit.parse(text)
    except TOMLKitError as exc:
        raise ScenarioError(f"{source}: not valid TOML: {exc}") from None


def _detach_trailing(table: Table) -> _Trailing:
    """Removes and returns the comments and blank lines after the table's last key: in a file
    they sit above the next header and describe what follows, not this table."""
    body = table.value.body
    cut = len(body)
    while cut > 0 and body[cut - 1][0] is None and isinstance(body[cut - 1][1], _TRIVIA):
        cut -= 1
    trailing = body[cut:]
    del body[cut:]
    return trailing


def _attach_trailing(table: Table, trailing: _Trailing) -> None:
    table.value.body.extend(trailing)


@contextlib.contextmanager
def _keys_appended_before_trailing(container: Container | Table) -> Iterator[None]:
    """A key added to a table goes after its last key, above the next header's comment block."""
    if not isinstance(container, Table):
        yield
        return
    trailing = _detach_trailing(container)
    try:
        yield
    finally:
        _attach_trailing(container, trailing)


def _same(item: Any, value: Any) -> bool:
    plain = item.unwrap() if isinstance(item, Item) else item
    return bool(plain == value and type(plain) is type(value))


def _update_table(table: Table, values: dict[str, Any]) -> None:
    """Sets ``table`` to ``values`` key by key: unchanged keys (and their comments) stay."""
    for key in [k for k in table if k not in values or values[k] is None]:
        del table[key]
    for key, value in values.items():
        if value is None or (key in table and _same(table[key], value)):
            continue
        table[key] = inline_item(value)


def _with_trivia_first(table: Table, trivia: _Trailing) -> Table:
    """``table`` with ``trivia`` (comments) just under its header. Rebuilt: tomlkit has no way
    to insert a comment before a table's first key."""
    body = Container(True)
    for key, item in [*trivia, *table.value.body]:
        body.append(key, item)
    return Table(body, table.trivia, True, name=table.name, display_name=table.display_name)


def _blank_line() -> _Trailing:
    return [(None, Whitespace("\n"))]


def _spaced(tables: list[Table]) -> list[Table]:
    """New tables, each but the last followed by a blank line."""
    for table in tables[:-1]:
        _attach_trailing(table, _blank_line())
    return tables


def _new_table(values: dict[str, Any]) -> Table:
    table = tomlkit.table()
    _update_table(table, values)
    return table


class ScenarioDocument:
    """One scenario file's TOML, edited without losing its formatting."""

    def __init__(self, doc: TOMLDocument, source: str, path: Path | None = None) -> None:
        """``source`` names the scenario in errors; ``path`` is where ``save()`` writes."""
        self._doc = doc
        self.source = source
        self.path = path

    @classmethod
    def from_text(cls, text: str, source: str, path: Path | None = None) -> ScenarioDocument:
        return cls(_parse(text, source), source, path)

    @classmethod
    def load(cls, path: str | Path, source: str | None = None) -> ScenarioDocument:
        p = Path(path)
        name = source or str(p)
        try:
            # Bytes, not read_text: a CRLF file must come back byte for byte.
            text = p.read_bytes().decode("utf-8")
        except OSError as exc:
            raise ScenarioError(f"{name}: cannot read: {exc.strerror or exc}") from None
        except UnicodeDecodeError as exc:
            raise ScenarioError(f"{name}: not UTF-8 text (byte {exc.start})") from None
        return cls.from_text(text, name, p)

    @property
    def base_dir(self) -> Path:
        return self.path.resolve().parent if self.path is not None else Path(".")

    def dumps(self) -> str:
        return self._doc.as_string()

    def to_dict(self) -> dict[str, Any]:
        """The whole scenario as plain Python values (what ``tomllib`` would read)."""
        plain: dict[str, Any] = self._doc.unwrap()
        return plain

    # ---- reading and writing values --------------------------------------------------------

    def get(self, path: str, default: Any = None) -> Any:
        """The plain value at a dotted path (``prompt.system``, ``model.name``), or ``default``."""
        node: Any = self.to_dict()
        for part in path.split("."):
            if not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return node

    def set(self, path: str, value: Any) -> None:
        """Writes one value at a dotted path, creating its tables as needed; ``None`` removes
        the key. An array of tables (``validators``, ``tools``) is updated table by table."""
        *parents, key = path.split(".")
        if not parents and key in TABLE_ARRAYS and value is not None:
            self.set_tables(key, value)
            return
        container: Container | Table = self._doc
        for part in parents:
            child = container.get(part)
            if child is None:
                if value is None:
                    return
                child = tomlkit.table()
                container[part] = child
                child = container[part]
            if not isinstance(child, Table):
                raise ScenarioError(f"{self.source}: {part}: is not a table, cannot set {path}")
            container = child
        with _keys_appended_before_trailing(container):
            if value is None:
                if key in container:
                    del container[key]
            elif key in container and _same(container[key], value):
                pass  # unchanged: keep its spelling (literal strings, hex numbers...)
            else:
                container[key] = inline_item(value)

    def tables(self, key: str) -> list[dict[str, Any]]:
        """A top-level array of tables as plain dicts (``[]`` when absent)."""
        value = self.get(key, [])
        return [dict(t) for t in value] if isinstance(value, list) else []

    def set_tables(
        self, key: str, rows: Sequence[dict[str, Any]], origins: Sequence[int | None] | None = None
    ) -> None:
        """Replaces the array of tables ``key`` with ``rows``. ``origins[i]`` is the index of the
        existing table row ``i`` was edited from (None: a new table); without it rows match
        tables by position. Each matched table is updated in place and keeps its comments."""
        current = self._doc.get(key)
        if not isinstance(current, AoT):
            if key in self._doc:
                del self._doc[key]  # an inline array: nothing of its formatting to keep
            if rows:
                self._doc[key] = AoT(_spaced([_new_table(r) for r in rows]), parsed=True)
            return
        old: list[Table] = list(current.body)
        if origins is None:
            origins = [i if i < len(old) else None for i in range(len(rows))]
        if len(origins) != len(rows) or any(
            o is not None and not 0 <= o < len(old) for o in origins
        ):
            raise ValueError("origins must name an existing table for each row (or None)")
        if not rows:
            del self._doc[key]
            return
        # The block above table i's header is filed under table i-1; detach them all so each
        # block can follow its own table.
        trailing = [_detach_trailing(t) for t in old]
        above: list[_Trailing] = [[], *trailing[:-1]]  # none for the first: it is not ours
        tables: list[Table] = []
        blocks: list[_Trailing] = []
        for row, origin in zip(rows, origins, strict=True):
            if origin is None:
                tables.append(_new_table(row))
                blocks.append(_blank_line())
            else:
                _update_table(old[origin], row)
                tables.append(old[origin])
                blocks.append(above[origin] or _blank_line())
        for i, table in enumerate(tables):
            _attach_trailing(table, blocks[i + 1] if i + 1 < len(tables) else trailing[-1])
        # A table moved to the front: its block would go above the array, which belongs to what
        # precedes it. Its comments go just under its header rather than being lost.
        comments = [item for item in blocks[0] if isinstance(item[1], Comment)]
        if comments:
            tables[0] = _with_trivia_first(tables[0], comments)
        # In place: a fresh AoT would add its own line breaks between the tables.
        current.body[:] = tables
        list.__setitem__(current, slice(None), tables)

    # ---- the sections the editors change ---------------------------------------------------

    @property
    def validators(self) -> list[dict[str, Any]]:
        return self.tables("validators")

    def set_validators(
        self, rows: Sequence[dict[str, Any]], origins: Sequence[int | None] | None = None
    ) -> None:
        self.set_tables("validators", rows, origins)

    @property
    def tools(self) -> list[dict[str, Any]]:
        return self.tables("tools")

    def set_tools(
        self, rows: Sequence[dict[str, Any]], origins: Sequence[int | None] | None = None
    ) -> None:
        self.set_tables("tools", rows, origins)

    def referenced_files(self) -> list[str]:
        """The ``file.py`` of every ``function = "file.py:name"`` (validators and tools), as
        written: relative to the scenario's folder unless absolute."""
        files: list[str] = []
        for row in self.validators + self.tools:
            ref = row.get("function")
            if isinstance(ref, str):
                with contextlib.suppress(ScenarioError):
                    files.append(split_ref(ref, "function")[0])
        return list(dict.fromkeys(files))

    # ---- checking and saving ---------------------------------------------------------------

    def validate(self) -> Scenario:
        """The scenario the document describes; ``ScenarioError`` (one line) when it is invalid."""
        return scenario_from_dict(self.to_dict(), source=self.source, base_dir=self.base_dir)

    def problem(self) -> str | None:
        try:
            self.validate()
        except ScenarioError as exc:
            return str(exc)
        return None

    def save(self, path: str | Path | None = None) -> Path:
        """Writes the document (to ``path``, which then becomes its file) atomically: a
        temporary file in the same folder replaces the old one, so a crash never leaves half a
        file. An invalid scenario raises ``ScenarioError`` and writes nothing."""
        target = Path(path) if path is not None else self.path
        if target is None:
            raise ScenarioError(f"{self.source}: has no file to save to")
        previous = self.path
        self.path = target  # references resolve beside the file being written
        try:
            self.validate()
            _write_atomically(target, self.dumps())
        except BaseException:
            self.path = previous
            raise
        if path is not None:
            self.source = str(target)
        return target


def _write_atomically(target: Path, text: str) -> None:
    try:
        write_atomically(target, [text.encode("utf-8")])
    except OSError as exc:
        raise ScenarioError(f"{target}: cannot write: {exc.strerror or exc}") from None
