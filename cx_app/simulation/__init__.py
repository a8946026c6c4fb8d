"""Survey simulators with a known true model (tests, backtests and benchmarks)."""
