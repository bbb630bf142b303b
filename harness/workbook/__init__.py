"""What the notebooks and exercises show, check and grade: :mod:`~harness.workbook.views` (tables and
widgets), :mod:`~harness.workbook.evidence` (an evidence cell's prose figures checked in one call) and
:mod:`~harness.workbook.grading` (one grader per exercise).
"""
