"""Change capture end to end: a real PostgreSQL table (or a landing folder) receives seeded
random inserts, updates and deletes round after round; after each round a job reads the changes
incrementally (``read_jdbc(..., mode="updated")`` / ``read_files``) and merges them into a Delta
table (``merge_keys``, ``delete_when``, ``order_by``); after every run the Delta table equals the
source exactly.

Three ways a database hands over its changes:

* ``flag`` / ``op``: the table itself is the feed. A delete is soft (``deleted = true`` and
  ``op = 'D'``) and moves the ``updated_at`` cursor like any change; the cursor is
  ``(updated_at, id)`` and all changes of a round share one ``updated_at`` (ties, broken by
  ``id``). The Delta table must equal the source's rows that are not deleted.
* ``log``: the table is deleted from for real; a trigger appends every change to a change log
  (``seq``, ``op`` 'I'/'U'/'D', the row's values, ``changed_at = now()``, the same for a whole
  transaction); the job reads the log with the cursor ``(changed_at, seq)`` and orders versions
  of a key by ``["changed_at", "seq"]``. The Delta table's row values must equal the table's.

Each round also makes the tricky cases on purpose: a key inserted, updated and deleted in one
round (a delete of a key the target never saw), a re-insert of a deleted key (in a later round,
and in the ``log`` case also within one round), several versions of a key in one batch, and
ties of the cursor. The files scenario lands JSON files whose later rows carry newer versions
(and deletes), sometimes two files per run. The default run has short variants; the
``long`` marker runs 25 rounds of each.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable
from pgtest import PgSchema, jdbc_url, need_postgres

from lakemark import Job
from lakemark.errors import SinkError
from lakemark.state import open_store

pytestmark = [pytest.mark.spark, pytest.mark.services]

FAST_ROUNDS, LONG_ROUNDS = 5, 25
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


class Pg(PgSchema):
    """A throw-away ``cdc_…`` schema in the test database."""

    def __init__(self, user: str) -> None:
        super().__init__(user, "cdc_")


@pytest.fixture
def pg() -> Iterator[Pg]:
    db = Pg(need_postgres())
    yield db
    db.close()


def delta_rows(target: Path, columns: list[str]) -> list[tuple[Any, ...]]:
    """The Delta table's rows (those columns), sorted; fails if a key occurs twice."""
    if not (target / "_delta_log").exists():
        return []
    got = sorted(tuple(r[c] for c in columns) for r in DeltaTable(str(target))
                 .to_pyarrow_table(columns=columns).to_pylist())
    assert len({r[0] for r in got}) == len(got), "a key occurs twice in the Delta table"
    return got


class Changes:
    """Seeded random changes, with the tricky cases made deliberately every round."""

    def __init__(self, seed: int) -> None:
        self.rnd = random.Random(seed)
        self.next_id = 1
        self.live: set[int] = set()
        self.dead: set[int] = set()

    def new_id(self) -> int:
        self.next_id += 1
        return self.next_id - 1

    def round(self) -> list[tuple[str, int]]:
        """One round's changes as ``(op, id)`` in order: 'I' insert, 'U' update, 'D' delete."""
        rnd, out = self.rnd, []
        for _ in range(rnd.randint(2, 6)):
            out.append(("I", self.new_id()))
        for key in rnd.sample(sorted(self.live), min(len(self.live), rnd.randint(1, 4))):
            out.append(("U", key))
            if rnd.random() < 0.4:
                out.append(("U", key))  # two versions of one key in one batch
        for key in rnd.sample(sorted(self.live), min(len(self.live), rnd.randint(0, 3))):
            if ("U", key) not in out:
                out.append(("D", key))
        for key in rnd.sample(sorted(self.dead), min(len(self.dead), rnd.randint(0, 2))):
            out.append(("I", key))  # re-insert after a delete in an earlier round
        ghost = self.new_id()  # inserted, updated and deleted within the round: never seen
        out += [("I", ghost), ("U", ghost), ("D", ghost)]
        if self.live and rnd.random() < 0.5:  # deleted and re-inserted within the round
            key = rnd.choice(sorted(self.live - {k for _, k in out}) or [ghost])
            if key != ghost:
                out += [("D", key), ("I", key)]
        for op, key in out:
            if op == "D":
                self.live.discard(key)
                self.dead.add(key)
            else:
                self.live.add(key)
                self.dead.discard(key)
        return out

    def values(self, key: int) -> tuple[str, Decimal]:
        return f"n{key}-{self.rnd.randint(0, 999)}", Decimal(self.rnd.randint(0, 99999)) / 100


# -- the table is the feed (soft deletes) -----------------------------------------------------
def soft_round(pg: Pg, changes: Changes, number: int) -> None:
    """Apply one round to the soft-delete table, in one transaction, one ``updated_at``."""
    s = pg.schema
    stamp = T0 + dt.timedelta(minutes=number)
    with pg.conn.transaction():
        for op, key in changes.round():
            name, amount = changes.values(key)
            if op == "D":
                pg.sql(f'UPDATE "{s}".items SET deleted = true, op = \'D\', updated_at = %s '
                       'WHERE id = %s', (stamp, key))
            else:
                pg.sql(f'INSERT INTO "{s}".items VALUES (%s, %s, %s, %s, false, %s) '
                       'ON CONFLICT (id) DO UPDATE SET name = excluded.name, '
                       'amount = excluded.amount, op = excluded.op, deleted = false, '
                       'updated_at = excluded.updated_at', (key, name, amount, op, stamp))


SOFT_COLUMNS = ["id", "name", "amount", "op", "deleted", "updated_at"]


def run_soft(spark: Any, pg: Pg, state: str, target: Path, delete_when: str) -> Any:
    with Job("cdc", state=state, spark=spark) as job:
        df = job.read_jdbc(jdbc_url(), f"{pg.schema}.items", ctx="items", user=pg.user,
                           keys=["updated_at", "id"], mode="updated")
        return job.write(df, str(target), format="delta", ctx="lake", merge_keys=["id"],
                         delete_when=delete_when, order_by="updated_at")


def soft_scenario(spark: Any, pg: Pg, tmp: Path, rounds: int, how: str) -> None:
    s = pg.schema
    pg.sql(f'CREATE TABLE "{s}".items (id bigint PRIMARY KEY, name text, '
           'amount numeric(12,2), op text NOT NULL, deleted boolean NOT NULL, '
           'updated_at timestamptz NOT NULL)')
    delete_when, gone = {"flag": ("deleted", "deleted"), "op": ("op = 'D'", "op = 'D'")}[how]
    changes, target, state = Changes(21), tmp / "items", f"sqlite:///{tmp / 's.db'}"
    for number in range(rounds):
        soft_round(pg, changes, number)
        run_soft(spark, pg, state, target, delete_when)
        cols = ", ".join(SOFT_COLUMNS)
        source = sorted(pg.sql(f'SELECT {cols} FROM "{s}".items WHERE NOT ({gone})'))
        assert delta_rows(target, SOFT_COLUMNS) == source, f"round {number}"
    # the soft-deleted ghosts were never in the target, the others left it
    assert pg.sql(f'SELECT count(*) FROM "{s}".items WHERE deleted')[0][0] > rounds
    again = run_soft(spark, pg, state, target, delete_when)  # nothing changed: nothing to do
    assert again.rows == 0


@pytest.mark.parametrize("how", ["op", pytest.param("flag", marks=pytest.mark.long)])
def test_soft_deletes_from_postgres_merge_into_delta(spark: Any, pg: Pg, tmp_path: Path,
                                                     how: str) -> None:
    soft_scenario(spark, pg, tmp_path, FAST_ROUNDS, how)


@pytest.mark.long
@pytest.mark.parametrize("how", ["op", "flag"])
def test_soft_deletes_from_postgres_many_rounds(spark: Any, pg: Pg, tmp_path: Path,
                                                how: str) -> None:
    soft_scenario(spark, pg, tmp_path, LONG_ROUNDS, how)


# -- a change log fed by a trigger (hard deletes) ---------------------------------------------
LOG_DDL = """
CREATE TABLE "{s}".accounts (id bigint PRIMARY KEY, name text, amount numeric(12,2));
CREATE TABLE "{s}".accounts_log (seq bigserial PRIMARY KEY, op text NOT NULL, id bigint NOT NULL,
    name text, amount numeric(12,2), changed_at timestamptz NOT NULL DEFAULT now());
CREATE FUNCTION "{s}".capture() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    INSERT INTO "{s}".accounts_log (op, id, name, amount)
    VALUES ('D', OLD.id, OLD.name, OLD.amount);
  ELSE
    INSERT INTO "{s}".accounts_log (op, id, name, amount)
    VALUES (left(TG_OP, 1), NEW.id, NEW.name, NEW.amount);
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER capture AFTER INSERT OR UPDATE OR DELETE ON "{s}".accounts
    FOR EACH ROW EXECUTE FUNCTION "{s}".capture();
"""
LOG_COLUMNS = ["id", "name", "amount"]


def log_round(pg: Pg, changes: Changes) -> None:
    s = pg.schema
    with pg.conn.transaction():  # one transaction: one changed_at for the whole round (ties)
        for op, key in changes.round():
            name, amount = changes.values(key)
            if op == "I":
                pg.sql(f'INSERT INTO "{s}".accounts VALUES (%s, %s, %s)', (key, name, amount))
            elif op == "U":
                pg.sql(f'UPDATE "{s}".accounts SET name = %s, amount = %s WHERE id = %s',
                       (name, amount, key))
            else:
                pg.sql(f'DELETE FROM "{s}".accounts WHERE id = %s', (key,))


def run_log(spark: Any, pg: Pg, state: str, target: Path,
            order_by: str | list[str] = ["changed_at", "seq"]) -> Any:  # noqa: B006
    with Job("cdc", state=state, spark=spark) as job:
        df = job.read_jdbc(jdbc_url(), f"{pg.schema}.accounts_log", ctx="log", user=pg.user,
                           keys=["changed_at", "seq"], mode="updated")
        return job.write(df, str(target), format="delta", ctx="lake", merge_keys=["id"],
                         delete_when="op = 'D'", order_by=order_by)


def log_scenario(spark: Any, pg: Pg, tmp: Path, rounds: int) -> None:
    pg.sql(LOG_DDL.format(s=pg.schema))
    changes, target, state = Changes(2121), tmp / "accounts", f"sqlite:///{tmp / 's.db'}"
    for number in range(rounds):
        log_round(pg, changes)
        if number == 1:
            # every change of a round has the same changed_at: ordering by it alone is a tie
            # for a key changed twice; the run fails naming it, before anything is written
            version = DeltaTable(str(target)).version()
            with pytest.raises(SinkError, match=r"key id=\d+ has two rows with the same latest "
                                                r"'changed_at'.*nothing was written"):
                run_log(spark, pg, state, target, order_by="changed_at")
            assert DeltaTable(str(target)).version() == version
        run_log(spark, pg, state, target)
        source = sorted(pg.sql(f'SELECT id, name, amount FROM "{pg.schema}".accounts'))
        assert delta_rows(target, LOG_COLUMNS) == source, f"round {number}"
    seqs = pg.sql(f'SELECT max(seq) FROM "{pg.schema}".accounts_log')[0][0]
    assert seqs > 10 * rounds  # the log really held several versions per round


def test_change_log_from_postgres_merges_into_delta(spark: Any, pg: Pg, tmp_path: Path) -> None:
    log_scenario(spark, pg, tmp_path, FAST_ROUNDS)


@pytest.mark.long
def test_change_log_from_postgres_many_rounds(spark: Any, pg: Pg, tmp_path: Path) -> None:
    log_scenario(spark, pg, tmp_path, LONG_ROUNDS)


# -- files whose later rows carry newer versions ---------------------------------------------
FILE_COLUMNS = ["id", "name", "amount", "op", "ts"]


def files_scenario(spark: Any, tmp: Path, rounds: int) -> None:
    landing, target, state = tmp / "landing", tmp / "customers", f"sqlite:///{tmp / 's.db'}"
    landing.mkdir()
    changes, truth, ts, waiting = Changes(7), {}, 0, 0
    for number in range(rounds):
        lines = []
        for op, key in changes.round():
            ts += 1
            name, amount = changes.values(key)
            row = {"id": key, "name": name, "amount": int(amount * 100), "op": op, "ts": ts}
            lines.append(json.dumps(row))
            if op == "D":
                truth.pop(key, None)
            else:
                truth[key] = tuple(row[c] for c in FILE_COLUMNS)
        changes.rnd.shuffle(lines)  # order within a file says nothing; ts does
        (landing / f"changes-{number:04d}.json").write_text("\n".join(lines) + "\n")
        waiting += 1
        if waiting < 2 and changes.rnd.random() < 0.4 and number < rounds - 1:
            continue  # two files in one run: versions of a key across files
        waiting = 0
        with Job("files", state=state, spark=spark) as job:
            df = job.read_files(str(landing), format="json", ctx="landing")
            job.write(df, str(target), format="delta", ctx="lake", merge_keys=["id"],
                      delete_when="op = 'D'", order_by="ts")
        assert delta_rows(target, FILE_COLUMNS) == sorted(truth.values()), f"round {number}"
    store = open_store(state)
    try:
        assert store.get_bookmark("files").to_json()["run"] <= rounds
    finally:
        store.close()


def test_files_with_newer_versions_merge_into_delta(spark: Any, tmp_path: Path) -> None:
    files_scenario(spark, tmp_path, FAST_ROUNDS)


@pytest.mark.long
def test_files_with_newer_versions_many_rounds(spark: Any, tmp_path: Path) -> None:
    files_scenario(spark, tmp_path, LONG_ROUNDS)
