"""Measuring retrieval: labelled data (the shared format, public or your own), development/test splits, and the
metrics — recall, completeness, MRR, nDCG — with intervals.

Introduced in Chapter 6a. The chapters' other measurements (scenarios judged on effects, the tool cliff, prompt
caching, the scale curve) are the workbook's: :mod:`workbook.evaluation`.
"""
