"""The demo world's checks on the tests themselves: measured error rates of every bias test on
constructed null worlds and planted effects (``error_rates``) and their figure. The statistics they
use (trends across conditions, Clopper-Pearson intervals, replicate seeds) are in
``medbias.metrics.replication``."""
