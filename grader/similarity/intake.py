"""A class's submissions read, fingerprinted and compared, lab by lab.

`compare_class` reads each submission with `grader.grade.submission.read_submission` (a
folder, a git checkout at its commit, or a zip, as hostile data: only
``labs/labNN/student.py`` is taken), names them as ``minillm grade`` does
(`grader.grade.batch.display_names`), fingerprints every lab's file with that lab's stub
set aside (``labs/labNN/student.py`` of this course and its ``.stub.py``) and ranks every
pair (`grader.similarity.rank`). A submission that cannot be read, or a lab's file that is
not taken (a link, not UTF-8, an encrypted zip entry...), is one line in
`Comparison.problems` and is left out; nothing a submission holds stops the run.

What it does not do: run any student code, or judge: the ranking is a lead for a human.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from grader.grade.batch import display_names
from grader.grade.submission import SubmissionError, Taken, read_submission
from grader.i18n import Text, tr
from grader.labs import LabInfo
from grader.similarity.rank import Document, Pair, Settings, fingerprint, rank_lab, stub_hashes

__all__ = ["READ_SECONDS", "Comparison", "compare_class", "stub_texts"]

READ_SECONDS = 60.0  # reading one submission may take this long (a huge git checkout)


@dataclass
class Comparison:
    """A compared class.

    Attributes:
        labs: the lab ids compared, in order.
        names: every submission's name, in the order given (skipped ones included).
        docs: lab id → its documents, in the order the submissions were given.
        pairs: lab id → every pair of its documents, highest score first.
        problems: one line per submission, or lab of a submission, left out: why.
        settings: how the documents were fingerprinted and scored.
    """

    labs: tuple[str, ...]
    names: list[str]
    docs: dict[str, list[Document]] = field(default_factory=dict)
    pairs: dict[str, list[Pair]] = field(default_factory=dict)
    problems: list[Text] = field(default_factory=list)
    settings: Settings = field(default_factory=Settings)

    def document(self, lab: str, name: str) -> Document:
        """The document of submission `name` for `lab`.

        Raises:
            KeyError: if that submission has no file for that lab.
        """
        for doc in self.docs.get(lab, []):
            if doc.name == name:
                return doc
        raise KeyError(f"{name!r} has no file for {lab}")


def stub_texts(info: LabInfo) -> list[str]:
    """The texts of the lab's stub as handed out: ``student.py`` and ``.stub.py``, those
    of the two that exist and read as UTF-8."""
    texts: list[str] = []
    for path in (info.student, info.dir / ".stub.py"):
        try:
            texts.append(_lines(path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            continue
    return texts


def _lines(text: str) -> str:
    """`text` with every line break ``\\n`` (as Python reads a source file)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _read(path: Path, name: str, lab_ids: Sequence[str], problems: list[Text]) -> Taken | None:
    """The files taken from one submission, or None (and a line in `problems`)."""
    try:
        return read_submission(path, lab_ids, deadline=time.monotonic() + READ_SECONDS)
    except SubmissionError as e:
        problems.append(name + tr("：", ": ") + e.text)
    except Exception as e:  # never let one submission stop the class
        why = f"{type(e).__name__}: {e}"
        problems.append(name + tr(f"：读取时出错（{why}）", f": error while reading ({why})"))
    return None


def compare_class(
    paths: Sequence[Path], labs: Sequence[LabInfo], settings: Settings | None = None
) -> Comparison:
    """Read, fingerprint and rank the submissions at `paths` for `labs`."""
    settings = settings or Settings()
    lab_ids = tuple(info.id for info in labs)
    names = display_names(paths)
    result = Comparison(lab_ids, names, settings=settings)
    stubs = {info.id: stub_hashes(stub_texts(info), settings.k) for info in labs}
    result.docs = {lab_id: [] for lab_id in lab_ids}
    for path, name in zip(paths, names, strict=True):
        taken = _read(path, name, lab_ids, result.problems)
        if taken is None:
            continue
        for lab_id in lab_ids:
            if lab_id in taken.problems:
                result.problems.append(
                    f"{name}: {lab_id}" + tr("：", ": ") + taken.problems[lab_id]
                )
            elif lab_id in taken.files:
                text = _lines(taken.files[lab_id])
                doc = fingerprint(name, lab_id, text, stubs[lab_id], settings)
                result.docs[lab_id].append(doc)
    result.pairs = {lab_id: rank_lab(result.docs[lab_id], settings) for lab_id in lab_ids}
    return result
