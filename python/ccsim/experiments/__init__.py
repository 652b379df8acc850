"""Experiments made of many runs: parameter sweeps, statistical model checking, the ``compare``
matrix and the reproductions of published papers."""
