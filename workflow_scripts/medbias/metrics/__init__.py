"""Bias and fairness metrics."""
