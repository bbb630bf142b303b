"""Retrievers the chapters measure and the library does not ship: zero-shot ideas, learned ones, published
systems reimplemented, the real model's tool documents.

Introduced in Chapters 6a, 6c, 8a and 8b. Importing this package registers each one with
:func:`harness.retrieval.named.register`, so every name works wherever the library takes a retriever's name
(``harness search --retriever NAME``, the proxy, a search) once the workbook is on the path.
"""

from workbook.research import registry  # noqa: F401  (importing it registers the research retrievers)
