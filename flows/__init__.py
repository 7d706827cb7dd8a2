"""Prefect flows that schedule each generation, the gate, promotion and rollback."""
