"""What the notebooks and exercises show and grade: :mod:`~harness.workbook.views` (tables and
widgets) and :mod:`~harness.workbook.grading` (one grader per exercise).
"""
