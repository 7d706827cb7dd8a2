"""Short self-play job ids (g<generation>-sp<index>): made from the pipeline's long ids, resolved back, with one
clear error for an unknown or an ambiguous one."""
from __future__ import annotations

import pytest

from shared.layout import JobIds
from shared.shards import ShardError
from shared.shards.short_ids import parse_short_id, resolve_short_id, short_id

IDS = JobIds("a80d03b1888e", "tictactoe")
GEN3 = [IDS.selfplay(3, "000003", i) for i in range(3)]


def test_the_short_id_is_generation_and_index_of_the_long_one() -> None:
    assert GEN3[0] == "zf-a80d03b1888e-tictactoe-g000003-m000003-sp0000"
    assert [short_id(job) for job in GEN3] == ["g3-sp0", "g3-sp1", "g3-sp2"]
    assert short_id(IDS.selfplay(12, "000011", 140)) == "g12-sp140"
    assert short_id("first-games") is None and short_id(IDS.gate(3, "000004", "000003", 0)) is None
    assert parse_short_id("g3-sp0") == parse_short_id(" G3-SP0 ") == parse_short_id("g000003-sp0000") == (3, 0)
    for not_short in ("3:0", "g3/0", "g3-sp", "gx-sp1", "g3-sp0-x", "first-games"):
        assert parse_short_id(not_short) is None, not_short


def test_resolving_a_short_id() -> None:
    others = [IDS.selfplay(2, "000002", 1), IDS.gate(3, "000004", "000003", 1), "first-games"]
    assert resolve_short_id("g3-sp1", GEN3 + others) == GEN3[1]
    assert resolve_short_id("g2-sp1", GEN3 + others) == others[0]
    with pytest.raises(ShardError, match=r"no shard of job g3-sp7 \(generation 3 has g3-sp0, g3-sp1, g3-sp2\)"):
        resolve_short_id("g3-sp7", GEN3 + others)
    with pytest.raises(ShardError, match=r"no shard of job g9-sp0 \(no self-play job of generation 9 has a shard\)"):
        resolve_short_id("g9-sp0", GEN3)
    # after a rollback in the middle of generation 3, its job 1 ran again with another model version
    rerun = IDS.selfplay(3, "000002", 1)
    with pytest.raises(ShardError, match=rf"short job id g3-sp1 is ambiguous: 2 jobs .*{rerun}, {GEN3[1]}.*full job id"):
        resolve_short_id("g3-sp1", GEN3 + [rerun])
    with pytest.raises(ShardError, match="not a short job id; write g<generation>-sp<index>"):
        resolve_short_id("3:0", GEN3)
