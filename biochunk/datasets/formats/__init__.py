"""One converter module per source format; importing this package registers them all.

Each module's ``@converter(name)`` decorator runs on import and adds the converter to
``biochunk.datasets.convert.CONVERTERS``, where a registry entry's ``format:`` finds it.
"""

from biochunk.datasets.formats import beir, bioasq, biomedrag, folder, jats, squad

__all__ = ["beir", "bioasq", "biomedrag", "folder", "jats", "squad"]
