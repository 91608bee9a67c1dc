"""From rows to numbers: ``summary`` (a run's summary, NumPy only, no pandas), ``stats`` (plot-free
statistics over tidy DataFrames), ``published`` (the source articles' figures)."""
