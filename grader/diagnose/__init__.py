"""Known bugs recognised from their output: fingerprints of what a failed check saw, and
each lab's catalogue of what its known wrong implementations return (`catalogue`)."""

from grader.diagnose.catalogue import Catalogue, CatalogueError, diagnose, load_for
from grader.diagnose.evidence import evidence_of, fingerprint, matches, message_fingerprint

__all__ = [
    "Catalogue",
    "CatalogueError",
    "diagnose",
    "evidence_of",
    "fingerprint",
    "load_for",
    "matches",
    "message_fingerprint",
]
