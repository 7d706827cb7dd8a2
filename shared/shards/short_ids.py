"""Short names of self-play jobs: `g<generation>-sp<index>` (e.g. "g3-sp0") for the pipeline's long job ids
(`zf-<data id>-<game>-g000003-m000003-sp0000`, shared.layout.JobIds.selfplay), the generation and the job's
index without the zero padding, the data directory, the game or the model version.

Within one game's shards a short name usually names one job; after a promotion or rollback in the middle of a
generation the remaining jobs play with the new best, and then two jobs (two model versions) share a short
name, which `resolve_short_id` reports as ambiguous.
"""
from __future__ import annotations

import re
from typing import Iterable

from shared.shards.schema import ShardError

_LONG = re.compile(r"-g(\d+)-m\d+-sp(\d+)$")
_SHORT = re.compile(r"g(\d+)-sp(\d+)", re.IGNORECASE)


def short_id(job_id: str) -> str | None:
    """The short name of pipeline self-play job `job_id` ("...-g000003-m000003-sp0000" -> "g3-sp0"); None for a
    job id of another form (a job named by hand with `zeroforge selfplay --job-id`)."""
    match = _LONG.search(job_id)
    return None if match is None else f"g{int(match.group(1))}-sp{int(match.group(2))}"


def parse_short_id(text: str) -> tuple[int, int] | None:
    """(generation, index) of a short name such as "g3-sp0" (or "G3-SP0", "g000003-sp0000"); None when `text`
    is not one."""
    match = _SHORT.fullmatch(text.strip())
    return None if match is None else (int(match.group(1)), int(match.group(2)))


def resolve_short_id(text: str, job_ids: Iterable[str]) -> str:
    """The one job id of `job_ids` whose short name is `text` (a short name, see parse_short_id).

    ShardError when no job has that name (naming the generation's jobs, or saying the generation has none) or
    several do (naming them, so that one can be given in full)."""
    wanted = parse_short_id(text)
    if wanted is None:
        raise ShardError(f"{text!r} is not a short job id; write g<generation>-sp<index>, e.g. g3-sp0")
    generation, index = wanted
    name = f"g{generation}-sp{index}"
    ids = sorted(set(job_ids))
    matches = [job for job in ids if short_id(job) == name]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise ShardError(f"short job id {name} is ambiguous: {len(matches)} jobs of generation {generation} have "
                         f"index {index} ({', '.join(matches)}: one per model version); give the full job id")
    same_generation = sorted({short for job in ids if (short := short_id(job)) and
                              short.startswith(f"g{generation}-")}, key=lambda s: int(s.rsplit("sp", 1)[1]))
    hint = (f"generation {generation} has {', '.join(same_generation)}" if same_generation
            else f"no self-play job of generation {generation} has a shard")
    raise ShardError(f"no shard of job {name} ({hint}); see `zeroforge shards ls`")
