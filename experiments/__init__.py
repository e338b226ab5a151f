"""Research scripts: each measured one idea once, for the research log (docs/experiments.md),
where its figure and the decision it led to are written. They are not benchmarks (``bastra bench``
does not list them) and may read a run of their own; run them from a checkout as
``python experiments/NAME.py``."""
