"""The workbook's own models: the offline stand-in (:mod:`~workbook.providers.offline`), the real small models
run by llama.cpp (:mod:`~workbook.providers.local_llama`), and the chapters' default choice between them and
Claude (:mod:`~workbook.providers.default`). Introduced in Chapters 0 and 1.
"""
