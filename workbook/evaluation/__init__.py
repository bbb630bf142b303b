"""The chapters' measurements: scenarios run and judged on effects, the tool cliff, prompt caching, the scale
curve, where a query's time goes, public catalogs as tools and the held-out sets they share.

Introduced in Chapters 1, 3, 5, 6 and 8. The library's own measuring (retrieval metrics, labelled data, splits)
is :mod:`harness.evaluation`.
"""

import workbook.research  # noqa: F401,E402  (the research retrievers, registered by name: the measurements name them)
