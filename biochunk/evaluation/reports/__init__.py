"""Each paper pipeline's report: its tables, built from tracked metrics and per-item scores.

A report module turns the evaluate stages' outputs of one paper pipeline into
``evaluation.papers.PaperTable`` blocks (``papers.publish`` writes them into
``docs/results/<paper>.md`` and its JSON); ``stages/report.py`` runs it. Nothing here
measures: every number comes from the files the pipeline tracks, so a page is rebuilt,
and its intervals recomputed, from them alone.
"""
