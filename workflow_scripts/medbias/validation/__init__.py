"""The demo world's checks on the tests themselves: every test's decisions on the studies and on
constructed null worlds, the error rates they give, and the planted recovery of every effect the demo
world planted (``truth``, ``decisions``, ``null_worlds``, ``error_rates``, ``recovery``, ``figures``)."""
