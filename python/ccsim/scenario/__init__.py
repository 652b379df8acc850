"""Scenarios: the schema of a scenario file, its units, topologies and overrides, checked against
the engine's registry of models and compiled to the engine's configuration (config.rs)."""
