"""Self-play shards: one HDF5 file per self-play job (format in schema.py), written atomically, read validated.

    write_shard(directory, job_id, game, records, attrs) -> Path      writer.py
    read_shard(path, game=None) -> Shard                               reader.py
    list_shards(directory, recursive=True) -> list[ShardInfo]          reader.py (scan_shards also reports damaged files)
    load_replay_window(shards_dir, quarantine_dir, game, max_positions, max_generations=None,
                       up_to_generation=None) -> ReplayWindow                                  replay.py
"""
from shared.shards.reader import DamagedShard, Shard, ShardInfo, ShardScan, list_shards, read_shard, read_shard_info, scan_shards
from shared.shards.replay import ReplayWindow, generation_positions, load_replay_window, quarantine_shard
from shared.shards.schema import FORMAT_VERSION, ShardError
from shared.shards.validate import RecordArrays, validate_records
from shared.shards.writer import check_job_id, remove_stale_temp_files, write_shard

__all__ = [
    "FORMAT_VERSION", "DamagedShard", "RecordArrays", "ReplayWindow", "Shard", "ShardError", "ShardInfo", "ShardScan",
    "check_job_id", "generation_positions", "list_shards", "load_replay_window", "quarantine_shard", "read_shard", "read_shard_info",
    "remove_stale_temp_files", "scan_shards", "validate_records", "write_shard",
]
