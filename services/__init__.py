"""zeroforge services: the self-play, trainer and gatekeeper job entry points, the rq worker and the CLI."""
