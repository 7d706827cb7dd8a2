"""zeroforge's common library: games, batched search, network, shard format, registry, config and statistics.

`services/` and `flows/` import from here; nothing here imports them.
"""
