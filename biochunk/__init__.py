"""biochunk: a DVC pipeline library for chunking strategies in biomedical RAG.

Stage scripts under ``stages/`` are thin doors into this package; the package
never imports them. Importing it pins the float kernels (``biochunk.numerics``) before
torch, MKL, FAISS or NumPy first run.
"""

from biochunk import numerics as _numerics  # noqa: F401  (sets the pins on import)

__version__ = "0.1.0"
