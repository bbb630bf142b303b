"""Measuring: retrieval metrics, labelled data and splits, scenarios and task success, the tool
cliff, the scale curve, prompt caching, public catalogs as tools.

Introduced in Chapters 1, 3, 5, 6 and 8; imports the layers it measures, never the experiments.
"""
