"""Benchmarks: speed side by side with the floor, and recall quality on LoCoMo.

Benchmarks are not tests. `python -m benchmarks.run` (or `make bench`) measures and writes
`benchmarks/results/*.json` and `docs/benchmarks.md`; the tests only run a seconds-long smoke of it.
"""
