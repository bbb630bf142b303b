"""The workbook's own models: the offline stand-in (:mod:`~workbook.providers.offline`), the real small models
run by llama.cpp (:mod:`~workbook.providers.local_llama`), and the chapters' default choice between them and
Claude (:mod:`~workbook.providers.default`). Introduced in Chapters 0 and 1. Beside them, fakes of the two APIs
(:mod:`~workbook.providers.fake_anthropic`, :mod:`~workbook.providers.fake_openai`): real HTTP servers on 127.0.0.1
with scripted replies, which the tests and Chapter 7 run the README's own loops against.
"""
