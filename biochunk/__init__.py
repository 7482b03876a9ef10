"""biochunk: a DVC pipeline library for chunking strategies in biomedical RAG.

Stage scripts under ``stages/`` are thin doors into this package; the package
never imports them.
"""

__version__ = "0.1.0"
