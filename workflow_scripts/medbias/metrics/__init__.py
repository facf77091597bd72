"""Bias and fairness metrics and the statistics of their tests: association tests (WEAT, SEAT, ECT,
RIPA, Direct Bias), log-probability scores and Table 3's tests, StereoSet-style scores, fairness gaps,
counterfactual metrics, bootstrap intervals, trends, error rates and word similarity."""
