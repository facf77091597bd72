"""Inputs and outputs: the real inputs' formats and readers (MIMIC-III, PubMed, reference resources,
word vectors), the input manifest, and the writers of JSON and paper tables."""
