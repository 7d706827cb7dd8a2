"""zeroforge services: the job functions (self-play, training, match chunks) with their typed payloads, the rq
worker that runs nothing else, the job queue helpers and the Redis launcher. Imports shared/ only."""
