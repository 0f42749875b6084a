"""Measuring answers: the evaluation command's dataset, fixtures, judge and scores."""
