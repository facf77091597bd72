"""Worker processes started fresh (spawn) from a rule script.

Fresh processes, not forked ones: a forked child inherits the parent's CUDA and OpenMP state, which
breaks both. But a spawned child first re-runs the parent's main module when that module is a file,
and a rule script is one (Snakemake runs ``python <tmp>/script.py``, its own preamble included): every
worker would run the whole rule again. The pool is therefore started with the main module's file name
hidden, so the children import only what their initializer and tasks name.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def spawned_map(
    function: Callable, items: Iterable, workers: int, initializer: Callable | None = None, initargs: tuple = ()
) -> Iterator[Iterator[Any]]:
    """``function`` over ``items`` in ``workers`` spawned processes: yields the results in the items'
    order; unfinished work is cancelled when the block is left (an error included)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    main = sys.modules["__main__"]
    hidden = main.__dict__.pop("__file__", None)
    try:
        pool = ProcessPoolExecutor(
            workers, mp_context=multiprocessing.get_context("spawn"), initializer=initializer, initargs=initargs
        )
        results = pool.map(function, items)  # submits everything, which starts the processes
    finally:
        if hidden is not None:
            main.__file__ = hidden
    try:
        yield results
    finally:
        pool.shutdown(cancel_futures=True)
