"""Which cases a shard runs: a split any CI matrix can drive, with no shared state.

Every shard reads the whole argument stream, so every shard numbers the cases the same way;
a case belongs to shard ``sha1(canonical repro line) mod N``. The hash is of the line, not
of the case's position, so adding a case to a batch moves no other case between shards,
and it is a stable hash (Python's hash() of a string changes from one process to the
next). Result lines keep the case index of the unsharded run, which is how ``merge`` puts
the shards' cases back in order.

Without --shard, GoogleTest's variables choose the shard: GTEST_TOTAL_SHARDS and
GTEST_SHARD_INDEX (0-based); a runner that sets GTEST_SHARD_STATUS_FILE learns that the
split was honoured from that file being created.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path

from ..errors import UsageError
from ..reports.results import selection_options
from .settings import Shard, parse_shard

INDEX_ENV = "GTEST_SHARD_INDEX"
TOTAL_ENV = "GTEST_TOTAL_SHARDS"
STATUS_FILE_ENV = "GTEST_SHARD_STATUS_FILE"


def canonical_line(case, prb) -> str:
    """The case as one line with every descriptor field: driver, implementation filter,
    driver options, canonical descriptor. Global options are left out, so that --mode=L
    lists exactly the cases the same shard runs in any other mode."""
    desc = prb.repro(True) if prb is not None else case.unparsed_repro
    return " ".join([f"--{case.driver.name}", *selection_options(case.values), desc])


def owner(line: str, total: int) -> int:
    """The shard (0..total-1) a canonical line belongs to."""
    digest = hashlib.sha1(line.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % total


def from_env(env: Mapping[str, str]) -> Shard | None:
    """The shard GTEST_SHARD_INDEX / GTEST_TOTAL_SHARDS name, or None when neither is set."""
    index, total = env.get(INDEX_ENV, "").strip(), env.get(TOTAL_ENV, "").strip()
    if not index and not total:
        return None
    if not index or not total:
        missing, given = (INDEX_ENV, TOTAL_ENV) if not index else (TOTAL_ENV, INDEX_ENV)
        raise UsageError(f"{given} is set but {missing} is not: set both, or neither")
    try:
        return parse_shard(f"{index}/{total}", what="--shard")
    except UsageError:
        raise UsageError(f"{INDEX_ENV}={index} {TOTAL_ENV}={total}: expected 0 <= "
                         f"{INDEX_ENV} < {TOTAL_ENV}") from None


def acknowledge(env: Mapping[str, str]) -> None:
    """GoogleTest's handshake: create GTEST_SHARD_STATUS_FILE when it is set."""
    path = env.get(STATUS_FILE_ENV, "").strip()
    if path:
        try:
            Path(path).touch()
        except OSError as exc:
            raise UsageError(f"{STATUS_FILE_ENV}={path}: cannot create: "
                             f"{exc.strerror}") from None
